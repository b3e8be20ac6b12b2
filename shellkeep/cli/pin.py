"""``shellkeep pin`` and ``shellkeep unpin``: keep a session from gc, or let it go again."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, require_ref, session_argument
from shellkeep.errors import ShellkeepError


def _set(ref: str | None, last: bool, pinned: bool) -> None:
    from shellkeep.store.retention import set_pinned

    require_ref(ref, last)
    meta = context().resolve(ref, last=last)
    try:
        changed = set_pinned(meta, pinned)
    except OSError as exc:
        raise ShellkeepError(f"cannot change the pin of {meta.id}: {exc.strerror or exc}; check {meta.folder}") from exc
    word = "pinned" if pinned else "unpinned"
    click.echo(f"{word} {meta.id}" if changed else f"{meta.id} was already {word}")


@click.command()
@session_argument
def pin(ref: str | None, last: bool) -> None:
    """Pin a session: gc and the retention limits never remove it.

    Example: shellkeep pin --last
    """
    _set(ref, last, True)


@click.command()
@session_argument
def unpin(ref: str | None, last: bool) -> None:
    """Unpin a session: the retention limits apply to it again.

    Example: shellkeep unpin fix-login
    """
    _set(ref, last, False)
