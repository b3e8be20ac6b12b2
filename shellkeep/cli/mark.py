"""``shellkeep mark``: add a checkpoint (git snapshot and marker) to a recorded session."""

from __future__ import annotations

from pathlib import Path

import click

from shellkeep.cli.options import context


@click.command()
@click.argument("label", required=False, default="")
@click.option("--session", "ref", default=None, metavar="SESSION", help="The session (id, prefix or name); default: the one this shell runs in.")
@click.option("--last", "last", is_flag=True, help="The newest session of this project.")
def mark(label: str, ref: str | None, last: bool) -> None:
    """Add a checkpoint: a marker in the recording and, in a git work tree, a snapshot
    of the files (tracked and untracked, not ignored) that 'shellkeep diff' and
    'shellkeep restore-files' use. Your index, branches and stash are not touched.

    Example: shellkeep mark "before refactor" --last
    """
    from shellkeep.app.checkpoints import mark as add_mark

    if ref == "--last":  # '--session --last': --session took it as its value
        ref, last = None, True
    if ref and last:
        raise click.UsageError(f"give --session SESSION or --last, not both ('{ref}' and --last)")
    result = add_mark(context(), ref, label, Path.cwd(), last=last)
    cp = result.checkpoint
    where = f" of {cp.git_root} ({(cp.branch or 'detached')} {(cp.head or 'no commit')[:10]})" if cp.has_snapshot else ""
    click.echo(f"checkpoint {cp.n} of session {result.session_id}{where}")
    if not cp.has_snapshot:
        click.echo("not in a git work tree: the checkpoint is a marker only", err=True)
