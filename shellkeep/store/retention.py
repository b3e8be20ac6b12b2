"""Own what is kept on disk: retention limits, garbage collection, pins and free space.

Limits (``[retention]`` in the config, each 0 or "" for none): ``max_age_days`` (age
from a session's end, else its start; for an imported one, from its import at the earliest), ``max_sessions`` (the newest are kept) and
``max_total_size`` (the newest are kept until the sum of their folders' sizes would pass
it). A policy applies to all sessions together and, where one is given, to one project's
sessions (``project_policies``); a session goes when any applicable limit says so.

Never removed: a running session (or one still marked running on another host), an
interrupted session no other session has resumed yet (none has it as ``parent``), and a
pinned one (a ``pinned`` file in its folder: ``shellkeep pin``). Protected sessions still
count towards ``max_sessions`` and ``max_total_size``, so the limits hold where they can.

Automatic gc runs at most once a day (a stamp file ``<home>/gc.stamp``). The free-space
check at start is one ``os.statvfs``. Nothing heavy is imported at module level: the
runner imports this module before the child starts.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.git.snapshot import drop_refs
from shellkeep.store.checkpoints import read_checkpoints
from shellkeep.store.chunks import read_ref, ref_files, sweep
from shellkeep.store.paths import Paths
from shellkeep.errors import DataError
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.session import META_FILE, Recover, SessionMeta, Status, list_sessions, parse_iso, read_meta
from shellkeep.logs import get_logger
from shellkeep.store.session import iso, utc_now

log = get_logger(__name__)

PIN_FILE = "pinned"
"""A file of this name in a session's folder pins it (its content is the pin time)."""
AUTO_GC_INTERVAL_S = 24 * 3600.0
STAMP_FILE = "gc.stamp"


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Retention limits: ``max_age_days`` (0 = none), ``max_sessions`` (0 = none),
    ``max_total_bytes`` (None = none)."""

    max_age_days: int = 0
    max_sessions: int = 0
    max_total_bytes: int | None = None

    @property
    def is_empty(self) -> bool:
        """Return whether no limit is set."""
        return not self.max_age_days and not self.max_sessions and not self.max_total_bytes

    @classmethod
    def from_config(cls, config: object) -> RetentionPolicy:
        """Build from a ``config.RetentionConfig`` (duck-typed to keep imports light)."""
        return cls(
            max_age_days=int(getattr(config, "max_age_days", 0) or 0),
            max_sessions=int(getattr(config, "max_sessions", 0) or 0),
            max_total_bytes=getattr(config, "max_total_bytes", None) or None,
        )


@dataclass(frozen=True, slots=True)
class GcEntry:
    """One session gc removes (or would): field names are the ``gc --json`` contract.

    age_days: float days since the session ended (else started); size_bytes: its folder's
    files and its transcript copies (``session_size``); reason: which limit removes it (``max_age_days``, ``max_sessions``, ``max_total_size``).
    """

    session_id: str
    project: str
    name: str | None
    started_at: str
    age_days: float
    size_bytes: int
    reason: str


@dataclass(frozen=True, slots=True)
class GcResult:
    """What ``collect_garbage`` did (``gc --json``).

    removed: the sessions removed (or that would be, on a dry run), oldest first.
    freed_bytes: their total size. kept / protected: counts of sessions left, and of those
    left only because they are protected. errors: one line per session that could not go.
    """

    dry_run: bool
    removed: tuple[GcEntry, ...]
    freed_bytes: int
    kept: int
    protected: int
    errors: tuple[str, ...] = ()


def folder_size(folder: Path) -> int:
    """Return the total size in bytes of the files below ``folder`` (0 if it is gone)."""
    total = 0
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total


def session_size(folder: Path) -> int:
    """Return a session's size in bytes: its folder and the copies its references name.

    A copy's chunks may be shared with other sessions of its chain (``store.chunks``); each
    session counts its whole copy, so limits err on the side of removing sooner.
    """
    total = folder_size(folder)
    for path in ref_files(folder):
        try:
            total += read_ref(path).size
        except (OSError, DataError):
            continue
    return total


def is_pinned(meta: SessionMeta) -> bool:
    """Return whether the session is pinned (has a ``pinned`` file in its folder)."""
    return (meta.folder / PIN_FILE).is_file()


def set_pinned(meta: SessionMeta, pinned: bool) -> bool:
    """Pin or unpin a session; return whether that changed anything. Raises OSError."""
    marker = meta.folder / PIN_FILE
    if pinned:
        if marker.is_file():
            return False
        write_bytes_atomic(marker, (iso(utc_now()) + "\n").encode("ascii"))
        return True
    try:
        marker.unlink()
    except FileNotFoundError:
        return False
    return True


def protection(meta: SessionMeta, resumed: set[str]) -> str | None:
    """Return why a session may not be removed ("running", "interrupted", "pinned"), or None.

    resumed: the ids some session names as its ``parent``.
    """
    if meta.status == Status.RUNNING.value:
        return "running"
    if meta.status == Status.INTERRUPTED.value and meta.id not in resumed:
        return "interrupted"
    if is_pinned(meta):
        return "pinned"
    return None


def _last_activity(meta: SessionMeta) -> float:
    """Return when the session was last active here (epoch seconds): its end, else its start.

    An imported session keeps its recording's dates, but its age counts from the import at
    the earliest (``imported_at`` in ``meta.json``, set by ``shellkeep import``), so an old
    recording imported today is not removed by ``max_age_days`` today.
    """
    imported = meta.extra.get("imported_at")
    since_import = None
    if isinstance(imported, str):
        try:
            since_import = parse_iso(imported).timestamp()
        except ValueError:
            since_import = None
    for text in (meta.ended_at, meta.started_at):
        if text:
            try:
                at = parse_iso(text).timestamp()
            except ValueError:
                continue
            return at if since_import is None else max(at, since_import)
    if since_import is not None:
        return since_import
    try:
        return (meta.folder / META_FILE).stat().st_mtime
    except OSError:
        return time.time()


@dataclass(frozen=True, slots=True)
class _Item:
    meta: SessionMeta
    size: int
    last_s: float
    protected: str | None


def _apply(policy: RetentionPolicy, items: list[_Item], now_s: float, doomed: dict[str, str]) -> None:
    """Mark in ``doomed`` (id → reason) what ``policy`` removes from ``items`` (newest first)."""
    if policy.is_empty:
        return
    kept_count = 0
    kept_bytes = 0
    for item in items:
        sid = item.meta.id
        reason = None
        if policy.max_age_days and now_s - item.last_s > policy.max_age_days * 86400:
            reason = "max_age_days"
        elif policy.max_sessions and kept_count + 1 > policy.max_sessions:
            reason = "max_sessions"
        elif policy.max_total_bytes is not None and kept_bytes + item.size > policy.max_total_bytes:
            reason = "max_total_size"
        if reason is not None and item.protected is None and sid not in doomed:
            doomed[sid] = reason
        if sid not in doomed:
            kept_count += 1
            kept_bytes += item.size


def plan_gc(
    sessions: Iterable[SessionMeta],
    policy: RetentionPolicy,
    *,
    project_policies: Mapping[str, RetentionPolicy] | None = None,
    now: datetime | None = None,
) -> tuple[list[GcEntry], int, int]:
    """Return (sessions to remove oldest first, sessions kept, kept only as protected).

    ``policy`` applies to all of ``sessions`` together; ``project_policies`` (project key
    → policy) to each project's own sessions. Pure apart from reading folder sizes and pins.
    """
    metas = list(sessions)
    resumed = {m.parent for m in metas if m.parent}
    now_s = (now or datetime.now(timezone.utc)).timestamp()
    items = [_Item(m, session_size(m.folder), _last_activity(m), protection(m, resumed)) for m in metas]
    items.sort(key=lambda it: (it.meta.started_at, it.meta.id), reverse=True)
    doomed: dict[str, str] = {}
    _apply(policy, items, now_s, doomed)
    for project, project_policy in (project_policies or {}).items():
        _apply(project_policy, [it for it in items if it.meta.project == project], now_s, doomed)
    entries = [
        GcEntry(
            session_id=it.meta.id,
            project=it.meta.project,
            name=it.meta.name,
            started_at=it.meta.started_at,
            age_days=round(max(0.0, now_s - it.last_s) / 86400, 2),
            size_bytes=it.size,
            reason=doomed[it.meta.id],
        )
        for it in reversed(items)
        if it.meta.id in doomed
    ]
    kept = len(items) - len(entries)
    would_go = _would_go_unprotected(policy, project_policies, items, now_s)
    protected = sum(1 for it in items if it.protected is not None and it.meta.id in would_go)
    return entries, kept, protected


def _would_go_unprotected(
    policy: RetentionPolicy, project_policies: Mapping[str, RetentionPolicy] | None, items: list[_Item], now_s: float
) -> set[str]:
    """Return the ids the limits would remove if nothing were protected (for the count)."""
    bare = [_Item(it.meta, it.size, it.last_s, None) for it in items]
    doomed: dict[str, str] = {}
    _apply(policy, bare, now_s, doomed)
    for project, project_policy in (project_policies or {}).items():
        _apply(project_policy, [it for it in bare if it.meta.project == project], now_s, doomed)
    return set(doomed)


def remove_session(paths: Paths, meta: SessionMeta) -> None:
    """Delete a session's folder: ``meta.json`` first (so it is never half listed), then the rest.

    The git refs keeping its checkpoints' snapshots (``refs/shellkeep/<id>/<n>``) are deleted
    first, so git gc can drop the snapshots; a ref that cannot be deleted is left.

    Refuses (ValueError) a folder outside ``paths.projects``. Raises OSError.
    """
    folder = meta.folder.resolve()
    projects = paths.projects.resolve()
    if projects not in folder.parents or folder.parent.parent != projects:
        raise ValueError(f"{folder} is not a session folder under {projects}")
    _drop_checkpoint_refs(folder)
    try:
        (folder / META_FILE).unlink()
    except FileNotFoundError:
        pass
    shutil.rmtree(folder)
    try:
        folder.parent.rmdir()  # the project's folder, once its last session is gone
    except OSError:
        pass


def _drop_checkpoint_refs(folder: Path) -> None:
    try:
        checkpoints = read_checkpoints(folder)
    except OSError:
        return
    by_root: dict[str, list[str]] = {}
    for checkpoint in checkpoints:
        if checkpoint.ref and checkpoint.git_root:
            by_root.setdefault(checkpoint.git_root, []).append(checkpoint.ref)
    for root, refs in by_root.items():
        if Path(root).is_dir():
            drop_refs(Path(root), refs)


def collect_garbage(
    paths: Paths,
    policy: RetentionPolicy,
    *,
    dry_run: bool = False,
    project_root: Path | None = None,
    project_policies: Mapping[str, RetentionPolicy] | None = None,
    now: datetime | None = None,
    recover: Recover | None = None,
) -> GcResult:
    """Apply the limits: remove (or, with ``dry_run``, only list) the sessions they name.

    project_root: only this project's sessions are considered (None: every project).
    Each session is re-read just before it goes and left alone if it became protected.
    A session that cannot be removed is reported in ``errors``; the others still go.
    Then the chunks of transcript copies that no remaining session names are removed
    (``store.chunks.sweep``; a chunk another session's copy names stays), counted in
    ``freed_bytes``; skipped when a copy is being written meanwhile (the next gc does it).
    recover: repairs interrupted sessions on the way (``store.session.list_sessions``).
    """
    sessions = list_sessions(paths, project_root, recover=recover)
    entries, kept, protected = plan_gc(sessions, policy, project_policies=project_policies, now=now)
    if dry_run:
        return GcResult(True, tuple(entries), sum(e.size_bytes for e in entries), kept, protected)
    by_id = {m.id: m for m in sessions}
    resumed = {m.parent for m in sessions if m.parent}
    removed: list[GcEntry] = []
    errors: list[str] = []
    freed = 0
    for entry in entries:
        meta = by_id[entry.session_id]
        try:
            fresh = read_meta(meta.folder)
        except (OSError, DataError) as exc:
            errors.append(f"{entry.session_id}: {exc}")
            continue
        why = protection(fresh, resumed)
        if why is not None:
            kept += 1
            continue
        own = folder_size(fresh.folder)  # its copies' chunks are freed by the sweep, if no one else names them
        try:
            remove_session(paths, fresh)
        except (OSError, ValueError) as exc:
            errors.append(f"{entry.session_id}: {getattr(exc, 'strerror', None) or exc}")
            continue
        removed.append(entry)
        freed += own
    if removed:
        try:
            freed += sweep(paths, wait=False).freed_bytes  # the copies' chunks no session names now
        except OSError as exc:
            errors.append(f"could not sweep the transcript copies' chunks: {exc.strerror or exc}")
    return GcResult(False, tuple(removed), freed, kept, protected, tuple(errors))
