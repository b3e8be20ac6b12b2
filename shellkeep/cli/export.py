"""``shellkeep export``: write a session as cast, txt, md, json or a self-contained html page."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shellkeep.cli.options import cwd, paths, require_ref, session_argument

_FORMATS = ("cast", "txt", "md", "json", "html")


@click.command()
@session_argument
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default=None, help="Output format (default: from -o's suffix, else txt).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write to FILE instead of stdout.")
def export(ref: str | None, last: bool, fmt: str | None, output: Path | None) -> None:
    """Export a session: cast (asciicast v2), txt (transcript), md (the conversation),
    json (metadata, exchanges, markers) or html (a page for audit, viewable offline, with
    the screen at each exchange in colour).

    Example: shellkeep export --last --format html -o session.html
    """
    from shellkeep.export import export_session, export_to_file
    from shellkeep.store.audit import record_read
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.session import resolve_session

    require_ref(ref, last)
    if fmt is None:
        suffix = output.suffix.lstrip(".").lower() if output else ""
        fmt = suffix if suffix in _FORMATS else "txt"
    where = paths()
    meta = resolve_session(where, project_root_of(cwd()), ref, last=last)
    record_read(where, "export", meta, detail=f"format={fmt}")
    if output is None:
        out = sys.stdout.buffer
        export_session(meta, fmt, out)
        out.flush()
        return
    export_to_file(meta, fmt, output)
    click.echo(f"wrote {output}", err=True)
