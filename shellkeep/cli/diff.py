"""``shellkeep diff``: what changed in the files during a session or between two checkpoints."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, count, require_ref, session_argument


@click.command()
@session_argument
@click.option("--from", "from_n", type=count(), default=None, metavar="N", help="From checkpoint N (default: the first).")
@click.option("--to", "to_n", type=count(), default=None, metavar="M", help="To checkpoint M (default: the last; from the last, the files now).")
@click.option("--in-flight", is_flag=True, help="From the last exchange that completed to the files now (the files in flight).")
def diff(ref: str | None, last: bool, from_n: int | None, to_n: int | None, in_flight: bool) -> None:
    """Show what changed in the session's git work tree, as a patch, between two
    checkpoints (see 'shellkeep show' for their numbers). Untracked files count.
    With --in-flight: what changed since the agent last finished an answer.

    Example: shellkeep diff --last --from 1 --to 2
    """
    from shellkeep.app.checkpoints import diff as checkpoint_diff

    require_ref(ref, last)
    if in_flight and (from_n is not None or to_n is not None):
        raise click.UsageError("give --in-flight or --from/--to, not both")
    meta = context().resolve(ref, last=last)
    if in_flight:
        from shellkeep.app.in_flight import in_flight_diff

        result = in_flight_diff(meta)
    else:
        result = checkpoint_diff(meta, from_n, to_n)
    click.echo(f"{result.from_label} -> {result.to_label}" + ("" if result.text else ": no change"), err=True)
    click.echo(result.text, nl=False)
