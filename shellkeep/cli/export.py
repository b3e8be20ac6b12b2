"""``shellkeep export``: write a session as cast, txt, md, json, a self-contained html page, or its agent transcript."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shellkeep.app.reads import read_session
from shellkeep.archive.export import export_session, export_to_file
from shellkeep.cli.options import context, require_ref, session_argument

_FORMATS = ("cast", "txt", "md", "json", "html", "agent")


@click.command()
@session_argument
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default=None, help="Output format (default: from -o's suffix, else txt).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default=None, help="Write to FILE instead of stdout ('-': stdout; a symlink's target is written; a pipe or device directly).")
def export(ref: str | None, last: bool, fmt: str | None, output: str | None) -> None:
    """Export a session: cast (asciicast v2), txt (transcript), md (the conversation),
    json (metadata, exchanges, markers), html (a page for audit, viewable offline, with
    the screen at each exchange in colour) or agent (shellkeep's redacted copy of the
    agent's own transcript, as the agent wrote it).

    Example: shellkeep export --last --format html -o session.html
    """
    require_ref(ref, last)
    if fmt is None:
        suffix = Path(output).suffix.lstrip(".").lower() if output else ""
        fmt = suffix if suffix in _FORMATS else "txt"
    ctx = context()
    meta, _ = read_session(ctx, ref, last=last, command="export", detail=f"format={fmt}")
    if output is None or output == "-":
        out = sys.stdout.buffer
        export_session(meta, fmt, out, ctx.vault)
        out.flush()
        return
    export_to_file(meta, fmt, output, ctx.vault)
    click.echo(f"wrote {output}", err=True)
