"""Remove one session on the user's word (``shellkeep rm``): folder, index rows, an audit entry.

The folder goes the way gc removes one (``store.retention.remove_session``: ``meta.json``
first, its checkpoints' git refs, then the chunks of transcript copies no other session
names). A running session and a pinned one are refused; an interrupted one may go, as
the user asked for it by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from shellkeep.app.context import Context
from shellkeep.archive.index import forget_sessions
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.audit import record
from shellkeep.store.chunks import sweep
from shellkeep.store.retention import folder_size, is_pinned, remove_session
from shellkeep.store.session import SessionMeta, Status, read_meta

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Removed:
    """What ``remove`` did (``rm --json``): the session's id, project, and bytes freed."""

    session_id: str
    project: str
    freed_bytes: int


def check_removable(meta: SessionMeta) -> None:
    """Raise ShellkeepError (one line) when ``meta`` must not be removed: pinned or running."""
    if is_pinned(meta):
        raise ShellkeepError(f"session {meta.id} is pinned; run 'shellkeep unpin {meta.id}' first to remove it")
    if meta.status == Status.RUNNING.value:
        raise ShellkeepError(f"session {meta.id} is still running; end it first, then remove it")


def remove(ctx: Context, meta: SessionMeta) -> Removed:
    """Remove ``meta``'s session: its folder, its index rows, its unshared copy chunks.

    The metadata is re-read just before (a pin set meanwhile still refuses). An audit
    entry (command ``rm``) records the removal; failing to write it, or the index, only
    logs: the session is gone from disk either way and ``reindex`` drops stale rows.
    Raises ShellkeepError as ``check_removable``, or when the folder cannot be removed.
    """
    try:
        fresh = read_meta(meta.folder)
    except OSError as exc:
        raise ShellkeepError(f"cannot read {meta.folder}: {exc.strerror or exc}; check the folder") from exc
    check_removable(fresh)
    freed = folder_size(fresh.folder)
    try:
        remove_session(ctx.paths, fresh)
    except (OSError, ValueError) as exc:
        raise ShellkeepError(
            f"could not remove {fresh.id}: {getattr(exc, 'strerror', None) or exc}; check {fresh.folder}"
        ) from exc
    try:
        forget_sessions(ctx.paths, [fresh.id])
    except ShellkeepError as exc:
        log.warning("could not drop %s from the index (%s); 'shellkeep reindex' will", fresh.id, exc)
    try:
        freed += sweep(ctx.paths, wait=False).freed_bytes
    except OSError as exc:
        log.warning("could not sweep the transcript copies' chunks: %s", exc.strerror or exc)
    try:
        record(ctx.paths, "rm", fresh.id, project=fresh.project, detail=f"removed freed_bytes={freed}")
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", ctx.paths.audit_log, exc.strerror or exc)
    return Removed(fresh.id, fresh.project, freed)
