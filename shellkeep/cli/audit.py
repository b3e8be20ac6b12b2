"""``shellkeep audit``: list the audit log of recording reads, or verify its hash chain."""

from __future__ import annotations

import click

from shellkeep.cli.options import count, json_option, paths
from shellkeep.cli.output import format_local_time, print_json


_MAX_CELL_CHARS = 48
"""The widest command (an MCP client's name), user or host the table shows."""


@click.group(invoke_without_command=True)
@click.option("--session", "session", default=None, metavar="ID", help="Only entries about this session (id or prefix).")
@click.option("--limit", type=count(), default=None, help="Only the last N entries.")
@json_option
@click.pass_context
def audit(ctx: click.Context, session: str | None, limit: int | None, as_json: bool) -> None:
    """List who read which recording, when, and with which command (oldest first).

    'shellkeep audit verify' checks that no entry was edited or removed.

    Example: shellkeep audit --limit 20
    """
    from shellkeep.store.audit import read_entries

    if ctx.invoked_subcommand is not None:
        return

    entries = read_entries(paths())
    if session:
        entries = [e for e in entries if e.session and e.session.startswith(session)]
    if limit:
        entries = entries[-limit:]
    if as_json:
        print_json(entries)
        return
    if not entries:
        click.echo("the audit log is empty", err=True)
        return

    commands = [_cell(e.command) for e in entries]
    width = max(7, *(len(c) for c in commands))
    for e, command in zip(entries, commands):
        detail = f"  {_cell(e.detail, 200)}" if e.detail else ""
        click.echo(f"{e.seq:>6}  {format_local_time(e.time)}  {_cell(e.user)}@{_cell(e.host)}  {command:<{width}}  {e.session or '-'}{detail}")


def _cell(text: str, max_chars: int = _MAX_CELL_CHARS) -> str:
    """Return ``text`` as one cell of the table: printable, on one line, cut to ``max_chars`` with ``…``."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


@audit.command()
@json_option
def verify(as_json: bool) -> None:
    """Check the audit log's hash chain; exit 3 naming the first line edited or removed.

    Example: shellkeep audit verify
    """
    from shellkeep.store.audit import verify as verify_log

    result = verify_log(paths())
    if as_json:
        print_json(result)
        return
    click.echo(f"audit log intact: {result.entries} {'entry' if result.entries == 1 else 'entries'}")
