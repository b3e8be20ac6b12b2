"""``shellkeep watch``: follow a live session read-only in this terminal."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, require_ref, session_argument


@click.command()
@session_argument
def watch(ref: str | None, last: bool) -> None:
    """Follow a session that is recording now, read-only: its current screen at once, then
    live output; q or Ctrl-C leaves. A session bigger than this terminal is cropped.

    SESSION is an id, a unique prefix, a name, or --last. Works over ssh.

    Example: shellkeep watch --last
    """
    from shellkeep.app.watch import watch_session

    require_ref(ref, last)
    ctx = context()
    meta = ctx.resolve(ref, last=last)  # raises SessionNotFound
    result = watch_session(meta, paths=ctx.paths, inside=ctx.env.get("SHELLKEEP_SESSION"))  # raises SessionEnded: not live
    if result.end is not None and result.stopped:
        click.echo(f"the recorder of session {result.session} stopped ({result.end.status}); "
                   f"replay what it recorded with: shellkeep replay {result.session}", err=True)
    elif result.end is not None:
        how = result.end.status or "ended"
        code = f", exit code {result.end.exit_code}" if result.end.exit_code is not None else ""
        click.echo(f"session {result.session} has ended ({how}{code}); replay it with: shellkeep replay {result.session}", err=True)
