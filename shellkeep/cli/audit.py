"""``shellkeep audit``: list the audit log of recording reads, or verify its hash chain."""

from __future__ import annotations

import click

from shellkeep.cli.options import count, json_option, paths
from shellkeep.cli.output import format_local_time, print_json


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

    for e in entries:
        detail = f"  {e.detail}" if e.detail else ""
        click.echo(f"{e.seq:>6}  {format_local_time(e.time)}  {e.user}@{e.host}  {e.command:<7} {e.session or '-'}{detail}")


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
