"""``shellkeep export``: write a session as cast, txt, md, json, a self-contained html page, or its agent transcript."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shellkeep.cli.options import context, require_ref, session_argument

_FORMATS = ("cast", "txt", "md", "json", "html", "agent")
_TABLE_FORMATS = ("jsonl", "csv")  # --all: one row per session and per exchange
_KEPT_FORMATS = ("md", "json", "agent")  # need no recording: also for a session that kept none


@click.command()
@session_argument
@click.option("--format", "fmt", type=click.Choice(_FORMATS + _TABLE_FORMATS), default=None, help="Output format (default: from -o's suffix, else txt; with --all: jsonl).")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, allow_dash=True), default=None, help="Write to FILE instead of stdout ('-': stdout; a symlink's target is written; a pipe or device directly).")
@click.option("--all", "every", is_flag=True, help="Every session of every project as one table (jsonl or csv): a row per session and per exchange.")
@click.option("--since", "since", default=None, metavar="WHEN", help="With --all: sessions started since WHEN (2024-05-01, yesterday, 7d).")
@click.option("--remote", "remote", is_flag=True, help="With --all: the sessions pulled from other machines ('shellkeep sync pull') instead of this one's.")
@click.option("--machine", metavar="M", help="With --all: only the sessions pulled from machine M (id prefix or host name; implies --remote).")
def export(
    ref: str | None, last: bool, fmt: str | None, output: str | None, every: bool, since: str | None, remote: bool,
    machine: str | None,
) -> None:
    """Export a session: cast (asciicast v2), txt (transcript), md (the conversation),
    json (metadata, exchanges, markers), html (a page for audit, viewable offline, with
    the screen at each exchange in colour) or agent (shellkeep's redacted copy of the
    agent's own transcript, as the agent wrote it). With --all, every session as one
    table for BI tools: jsonl or csv (docs/export.md lists the columns); with --all --remote,
    the sessions pulled from other machines (their host column says which).

    Example: shellkeep export --last --format html -o session.html
    """
    from shellkeep.app.reads import read_kept, read_session
    from shellkeep.archive.export import export_session, export_to_file

    if every or since is not None or fmt in _TABLE_FORMATS or remote or machine is not None:
        _export_all(ref, last, fmt, output, every, since, remote, machine)
        return
    require_ref(ref, last)
    if fmt is None:
        suffix = Path(output).suffix.lstrip(".").lower() if output else ""
        if suffix in _TABLE_FORMATS:
            raise click.UsageError(f"-o {output}: {suffix} is the table of every session (add --all), or give --format for this one")
        fmt = suffix if suffix in _FORMATS else "txt"
    ctx = context()
    if fmt in _KEPT_FORMATS:
        meta = read_kept(ctx, ref, last=last, command="export", detail=f"format={fmt}")
    else:
        meta, _ = read_session(ctx, ref, last=last, command="export", detail=f"format={fmt}")
    if output is None or output == "-":
        out = sys.stdout.buffer
        export_session(meta, fmt, out, ctx.vault)
        out.flush()
        return
    export_to_file(meta, fmt, output, ctx.vault)
    click.echo(f"wrote {output}", err=True)


def _export_all(
    ref: str | None, last: bool, fmt: str | None, output: str | None, every: bool, since: str | None, remote: bool,
    machine: str | None,
) -> None:
    """``export --all [--remote [--machine M]] [--format jsonl|csv] [--since WHEN] [-o FILE]``: the table of every session."""
    from shellkeep.app.tables import export_table, export_table_to_file
    from shellkeep.archive.since import parse_time

    if not every:
        if remote or machine is not None:
            raise click.UsageError("--remote and --machine export the table of every pulled session; add --all")
        if since is not None:
            raise click.UsageError("--since needs --all")
        raise click.UsageError(f"--format {fmt} is the table of every session; add --all")
    if machine == "":
        raise click.UsageError("--machine needs a machine id (a prefix) or host name; 'shellkeep ls --remote' lists them")
    if ref or last:
        raise click.UsageError("--all exports every session; leave out SESSION and --last")
    if fmt is None:
        suffix = Path(output).suffix.lstrip(".").lower() if output else ""
        if suffix in _FORMATS:
            raise click.UsageError(f"-o {output}: --all writes jsonl or csv, not {suffix}; name the file .jsonl or .csv, or give --format")
        fmt = suffix if suffix in _TABLE_FORMATS else "jsonl"
    if fmt not in _TABLE_FORMATS:
        raise click.UsageError(f"--all writes jsonl or csv, not {fmt}")
    bound = parse_time(since) if since is not None else None
    ctx = context()
    if output is None or output == "-":
        out = sys.stdout.buffer
        export_table(ctx, fmt, out, since=bound, remote=remote, machine=machine)
        out.flush()
        return
    rows = export_table_to_file(ctx, fmt, output, since=bound, remote=remote, machine=machine)
    click.echo(f"wrote {rows} rows to {output}", err=True)
