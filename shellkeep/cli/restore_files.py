"""``shellkeep restore-files``: put a session's files back as they were at a checkpoint."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, count, require_ref, session_argument, warn


@click.command("restore-files")
@session_argument
@click.option("--checkpoint", "n", type=count(), default=None, metavar="N", help="The checkpoint to go back to.")
@click.option("--before-exchange", "k", type=count(), default=None, metavar="K", help="Go back to the files before exchange K (as 'show' numbers them).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def restore_files(ref: str | None, last: bool, n: int | None, k: int | None, yes: bool) -> None:
    """Put the files of the session's git work tree back as they were at checkpoint N,
    after a checkpoint of them as they are now. Files added since are removed; ignored
    files, the index, HEAD, branches and the stash are left alone. --before-exchange K
    takes the checkpoint of the files before exchange K. A session still running is named
    in a warning (its agent may write the files again).

    Example: shellkeep restore-files --last --checkpoint 1
    """
    from shellkeep.app.checkpoints import before_exchange, plan_restore, restore_files as restore
    from shellkeep.store.session import Status

    require_ref(ref, last)
    if n is not None and k is not None:
        raise click.UsageError("give one of --checkpoint N and --before-exchange K, not both")
    if n is None and k is None:
        raise click.UsageError("give --checkpoint N or --before-exchange K")
    meta = context().resolve(ref, last=last)
    asked = f"--before-exchange {k}" if k is not None else None
    n = n if n is not None else before_exchange(meta, k or 0)
    plan = plan_restore(meta, n)
    if not plan.changes:
        click.echo(f"the files of {plan.root} are as at checkpoint {n} already", err=True)
        return
    if meta.status == Status.RUNNING.value:  # resolve marks a session whose recorder is gone interrupted
        warn(f"session {meta.id} is still running: its agent may write these files again after the restore")
    removed = sum(1 for status, _ in plan.changes if status == "A")
    gone = sum(1 for status, _ in plan.changes if status == "D")
    if not yes:
        click.echo("\n".join(_change_lines(plan.changes)), err=True)
        back = f"change {_files(len(plan.changes) - removed - gone)}" + (f", restore {gone} deleted since" if gone else "")
        question = f"{back} and delete {removed} in {plan.root}, back to checkpoint {n}?"
        try:
            confirmed = click.confirm(question, err=True)
        except click.Abort:  # no answer (end of input)
            confirmed = False
        if not confirmed:
            click.echo("shellkeep: not restored; the files are as they were", err=True)
            raise SystemExit(1)
    done, before = restore(meta, n, asked)
    click.echo(f"restored {_files(len(done.changes))} of {done.root} to checkpoint {n}; the files before are checkpoint {before.n}")
    if done.checkpoint.head != done.head_now:
        now, then = (done.head_now or "unborn")[:10], (done.checkpoint.head or "unborn")[:10]
        click.echo(f"HEAD is {now}, was {then} at checkpoint {n}; left as it is", err=True)


_SHOWN = 20
"""At most this many files of each kind are named before the question; the rest are counted."""


def _change_lines(changes: tuple[tuple[str, str], ...]) -> list[str]:
    """Return the lines naming the files a restore changes (written back), restores (deleted
    since: written again) and deletes (added since)."""
    lines: list[str] = []
    for verb, paths in (
        ("change", [path for status, path in changes if status not in ("A", "D")]),
        ("restore", [path for status, path in changes if status == "D"]),
        ("delete", [path for status, path in changes if status == "A"]),
    ):
        lines += [f"  {verb} {path}" for path in paths[:_SHOWN]]
        if len(paths) > _SHOWN:
            lines.append(f"  ... and {len(paths) - _SHOWN} more to {verb}")
    return lines


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"
