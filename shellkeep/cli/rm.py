"""``shellkeep rm``: remove one session after asking (``--yes`` skips the question)."""

from __future__ import annotations

import sys

import click

from shellkeep.cli.options import context, require_ref, session_argument
from shellkeep.cli.output import format_size
from shellkeep.errors import ShellkeepError


@click.command()
@session_argument
@click.option("-y", "--yes", is_flag=True, help="Do not ask; remove at once.")
def rm(ref: str | None, last: bool, yes: bool) -> None:
    """Remove a session: its folder, its index rows; the audit log records it.

    Pinned sessions are refused ('shellkeep unpin' first), running ones too.
    Without a terminal to ask on, --yes is needed.

    Example: shellkeep rm fix-login
    """
    from shellkeep.app.removal import check_removable, remove

    require_ref(ref, last)
    ctx = context()
    meta = ctx.resolve(ref, last=last)
    check_removable(meta)
    if not yes:
        if not sys.stdin.isatty():
            raise ShellkeepError(f"not removing {meta.id} without confirmation; run 'shellkeep rm {meta.id} --yes'")
        label = f"{meta.id} ({meta.name})" if meta.name else meta.id
        if not click.confirm(f"remove session {label}, started {meta.started_at}?", default=False, err=True):
            click.echo("nothing removed", err=True)
            raise click.exceptions.Exit(1)
    done = remove(ctx, meta)
    click.echo(f"removed {done.session_id}, freed {format_size(done.freed_bytes)}")
