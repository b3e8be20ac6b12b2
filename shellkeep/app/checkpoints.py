"""Checkpoints of a session: ``mark``, the checkpoint of each exchange, ``diff`` and ``restore-files``.

A checkpoint is a line of the session's ``checkpoints.jsonl`` (``store.checkpoints``) and,
inside a git work tree, a snapshot commit of its files (``git.snapshot``) kept by the ref
``refs/shellkeep/<session-id>/<n>``. Outside one it is a marker only. A running session's
recorder writes each new checkpoint into the recording as a marker ``checkpoint N: LABEL``
(``app.live_marks``).

Exchanges: while an agent runs, ``app.live_snapshots`` checkpoints each exchange as it
completes, with a snapshot (``record.snapshots``). The exchanges it did not see get theirs
when the conversation is collected, after they happened, so their trees cannot be known:
the last exchange of a run that has just ended gets a snapshot (the files as the session
left them), the others are markers at the exchange's time (``git_root`` set, no snapshot:
``show`` says they were added after the session). An exchange without an answer
(``app.unanswered``) gets none: its files are in flight, not an exchange's.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.agents.base import Exchange
from shellkeep.app.context import Context
from shellkeep.archive.timeline import exchange_offset_s
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.git.snapshot import Snapshot, changed_paths, diff_text, keep_ref, restore, take_snapshot, work_tree
from shellkeep.logs import get_logger
from shellkeep.store.checkpoints import Checkpoint, append_checkpoint, read_checkpoints
from shellkeep.store.session import SessionMeta, Status, parse_iso, read_meta, readable_text
from shellkeep.store.space import READ_ONLY

__all__ = [
    "DiffResult",
    "MarkResult",
    "NoSnapshot",
    "RestorePlan",
    "add_checkpoint",
    "add_exchange_checkpoints",
    "before_exchange",
    "diff",
    "mark",
    "plan_restore",
    "restore_files",
]

log = get_logger(__name__)


class NoSnapshot(ShellkeepError):
    """The session's checkpoints hold no snapshot of files (outside a git work tree), exit 1."""


@dataclass(frozen=True, slots=True)
class DiffResult:
    """What changed in the files between two points: ``text`` is a git patch ('' when nothing);
    ``from_label`` / ``to_label`` name the points (``checkpoint 1 'before edit'``, ``now``)."""

    text: str
    from_label: str
    to_label: str


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """What ``restore_files`` would do: ``changes`` are ``(status, path)`` of files that
    differ from the checkpoint (``A`` added since: removed; else written back)."""

    checkpoint: Checkpoint
    root: Path
    changes: tuple[tuple[str, str], ...]
    head_now: str | None


def add_checkpoint(
    folder: Path,
    session_id: str,
    cwd: Path,
    label: str,
    *,
    time_s: float | None = None,
    auto: bool = False,
    exchange: int | None = None,
    snapshot: bool = True,
    root: Path | None = None,
) -> Checkpoint:
    """Add a checkpoint to the session in ``folder``; return it.

    cwd: where the files are (its git work tree is snapshotted, when it is in one and
    ``snapshot``). root: that work tree when the caller knows it (without ``snapshot`` it is
    noted, so a marker in a work tree is not taken for one outside git). time_s: seconds
    since the session's start (None: now). Raises OSError (the session folder cannot be
    written) and GitFailed (a git command failed).
    """
    if time_s is None:
        time_s = _seconds_since_start(folder, session_id)
    if root is None and snapshot:
        root = work_tree(cwd)
    snap: Snapshot | None = None
    if root is not None and snapshot:
        snap = take_snapshot(root, f"shellkeep checkpoint of session {session_id}: {label}".rstrip(": "))

    def make(n: int) -> Checkpoint:
        ref = None
        if snap is not None and root is not None:
            ref = f"refs/shellkeep/{session_id}/{n}"
            keep_ref(root, ref, snap.commit)
        return Checkpoint(
            n=n,
            time_s=round(max(0.0, time_s), 3),
            label=label,
            auto=auto,
            exchange=exchange,
            head=snap.head if snap else None,
            branch=snap.branch if snap else None,
            snapshot=snap.commit if snap else None,
            ref=ref,
            git_root=str(root) if root is not None else None,
        )

    made = append_checkpoint(folder, make)
    assert made is not None
    return made


def add_exchange_checkpoints(meta: SessionMeta, exchanges: Sequence[Exchange], *, snapshot_last: bool) -> int:
    """Add a checkpoint for each answered exchange that has none yet; return how many were added.

    Labels are ``exchange K`` (1-based; no prompt text: ``checkpoints.jsonl`` is never
    sealed). snapshot_last: snapshot the files for the last exchange (the run has just
    ended, so its files are the last exchange's). A last exchange without an answer
    (``app.unanswered.last_unanswered``) gets no checkpoint, and then no exchange a
    snapshot (the files hold its work in flight). Raises OSError, GitFailed.
    """
    from shellkeep.app.unanswered import last_unanswered  # deferred: only when collecting

    done = {c.exchange for c in read_checkpoints(meta.folder) if c.auto}
    answered = list(exchanges[:-1]) if last_unanswered(exchanges) is not None else list(exchanges)
    if all(position in done for position in range(1, len(answered) + 1)):
        return 0
    root = work_tree(Path(meta.cwd))
    # A work tree gone since the session (a removed 'git worktree') is still where it ran: its
    # markers note the project's root, and are not taken for markers of a session outside git.
    noted = root if root is not None or meta.git_start is None else Path(meta.project_root)
    added = 0
    previous_s = 0.0
    for position, exchange in enumerate(answered, 1):
        offset = exchange_offset_s(meta, exchange)
        previous_s = offset if offset is not None else previous_s
        if position in done:
            continue
        last = position == len(exchanges)
        add_checkpoint(
            meta.folder,
            meta.id,
            Path(meta.cwd),
            f"exchange {position}",
            time_s=previous_s,
            auto=True,
            exchange=position,
            snapshot=snapshot_last and last and root is not None,
            root=noted,
        )
        added += 1
    return added


def diff(meta: SessionMeta, from_n: int | None, to_n: int | None) -> DiffResult:
    """Return what changed in the files from checkpoint ``from_n`` to ``to_n``.

    Defaults: from the session's earliest snapshot; to its latest, or to the files as they
    are now when the start is the latest. Raises NoSnapshot (outside git: markers only),
    UserInputError (an unknown or marker-only checkpoint), GitFailed.
    """
    snaps = _snapshots(meta)
    start = _pick(meta, snaps, from_n) if from_n is not None else min(snaps, key=lambda c: (c.time_s, c.n))
    root = Path(start.git_root or ".")
    if to_n is not None:
        end = _pick(meta, snaps, to_n)
        if end.git_root != start.git_root:
            raise UserInputError(f"checkpoints {start.n} and {end.n} are of different work trees ({start.git_root}, {end.git_root})")
        return DiffResult(diff_text(root, _commit(start), _commit(end)), _name(start), _name(end))
    latest = max(snaps, key=lambda c: (c.time_s, c.n))
    if latest.n != start.n and latest.time_s >= start.time_s and latest.git_root == start.git_root:
        return DiffResult(diff_text(root, _commit(start), _commit(latest)), _name(start), _name(latest))
    now = take_snapshot(_existing(root), "shellkeep: the files now (for diff)")
    return DiffResult(diff_text(root, _commit(start), now.commit), _name(start), "now")


def before_exchange(meta: SessionMeta, k: int) -> int:
    """Return the number of the checkpoint holding the files before exchange ``k`` (1-based):
    that of exchange ``k - 1`` (0: the session's start, ``app.live_snapshots``), the last one
    when there are several. Raises NoSnapshot, UserInputError (none with files)."""
    snaps = _snapshots(meta)
    found = [c for c in snaps if c.auto and c.exchange == k - 1]
    if not found:
        takes = sorted({c.exchange + 1 for c in snaps if c.auto and c.exchange is not None})
        choices = f"--before-exchange takes {_values(takes)} here" if takes else "give --checkpoint N"
        raise UserInputError(
            f"session {meta.id} has no snapshot of the files before exchange {k}; {choices}; see 'shellkeep show {meta.id}'"
        )
    return found[-1].n


def _values(numbers: Sequence[int]) -> str:
    """Return ``1, 2, 3`` (runs of three or more as ``1-5``)."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            run = numbers[start:i]
            parts += [f"{run[0]}-{run[-1]}"] if len(run) >= 3 else [str(n) for n in run]
            start = i
    return ", ".join(parts)


def plan_restore(meta: SessionMeta, n: int) -> RestorePlan:
    """Return what restoring checkpoint ``n``'s files would change (nothing is written
    besides git objects). Raises NoSnapshot, UserInputError, GitFailed."""
    checkpoint = _pick(meta, _snapshots(meta), n)
    root = _existing(Path(checkpoint.git_root or "."))
    now = take_snapshot(root, "shellkeep: the files now (for restore-files)")
    return RestorePlan(checkpoint, root, tuple(changed_paths(root, _commit(checkpoint), now.commit)), now.head)


def restore_files(meta: SessionMeta, n: int, asked: str | None = None) -> tuple[RestorePlan, Checkpoint]:
    """Put back the files of checkpoint ``n``, after a checkpoint of the files as they are.

    asked: what the user asked for, for that checkpoint's label (``--before-exchange 2``;
    None: ``--checkpoint N``). Returns the plan carried out (computed again, the files may
    have changed since a ``plan_restore``) and the checkpoint made first. Ignored files, the index, HEAD,
    branches and the stash are left as they are. Raises NoSnapshot, UserInputError,
    GitFailed, OSError.
    """
    checkpoint = _pick(meta, _snapshots(meta), n)
    root = _existing(Path(checkpoint.git_root or "."))
    before = add_checkpoint(meta.folder, meta.id, root, f"before restore-files {asked or f'--checkpoint {n}'}")
    plan = RestorePlan(checkpoint, root, tuple(changed_paths(root, _commit(checkpoint), _commit(before))), before.head)
    restore(root, _commit(checkpoint), plan.changes)
    return plan, before


def _snapshots(meta: SessionMeta) -> list[Checkpoint]:
    checkpoints = read_checkpoints(meta.folder)
    snaps = [c for c in checkpoints if c.has_snapshot]
    if not snaps:
        if any(c.git_root for c in checkpoints):
            raise NoSnapshot(
                f"session {meta.id} has no snapshot of its files: its checkpoints are markers only, added after the session had ended"
            )
        if checkpoints:
            raise NoSnapshot(
                f"session {meta.id} was not in a git work tree: its {len(checkpoints)} checkpoints are markers only, with no files to compare"
            )
        if meta.status == Status.RUNNING.value:
            raise NoSnapshot(f"session {meta.id} has no checkpoints; add one with 'shellkeep mark' inside it")
        raise NoSnapshot(f"session {meta.id} has no checkpoints, and it has ended: no snapshot of its files can be taken now")
    return snaps


def _pick(meta: SessionMeta, snaps: Sequence[Checkpoint], n: int) -> Checkpoint:
    for checkpoint in snaps:
        if checkpoint.n == n:
            return checkpoint
    shown = ", ".join(str(c.n) for c in snaps[:10])
    known = {c.n for c in read_checkpoints(meta.folder)}
    if n in known:
        raise UserInputError(f"checkpoint {n} of session {meta.id} is a marker only (no files); checkpoints with files: {shown}")
    raise UserInputError(f"session {meta.id} has no checkpoint {n}; checkpoints with files: {shown}; see 'shellkeep show {meta.id}'")


def _commit(checkpoint: Checkpoint) -> str:
    assert checkpoint.snapshot is not None
    return checkpoint.snapshot


def _name(checkpoint: Checkpoint) -> str:
    return f"checkpoint {checkpoint.n}" + (f" '{checkpoint.label}'" if checkpoint.label else "")


def _existing(root: Path) -> Path:
    if work_tree(root) is None:
        raise UserInputError(f"{root} is no longer a git work tree; the checkpoint's files cannot be compared")
    return root


def _seconds_since_start(folder: Path, session_id: str) -> float:
    """Return seconds from the session's start to now: from ``meta.json``, else from the id
    (``YYYYmmdd-HHMMSS-mmm``, the start in UTC), as meta.json is written once the child runs."""
    now = datetime.now(timezone.utc)
    try:
        return (now - parse_iso(read_meta(folder).started_at)).total_seconds()
    except (OSError, ShellkeepError, ValueError):
        pass
    try:
        started = datetime.strptime(session_id[:19], "%Y%m%d-%H%M%S-%f").replace(tzinfo=timezone.utc)
        return (now - started).total_seconds()
    except ValueError:
        return 0.0



@dataclass(frozen=True, slots=True)
class MarkResult:
    """A checkpoint ``mark`` added to the session ``session_id``; ``live`` when the session
    was found through the environment (the recorder writes its marker)."""

    session_id: str
    checkpoint: Checkpoint
    live: bool


def mark(ctx: Context, ref: str | None, label: str, cwd: Path, *, last: bool = False) -> MarkResult:
    """Add a checkpoint labelled ``label`` to the session ``ref`` (or the project's newest, ``last``),
    else to the recorded session this process runs in (``SHELLKEEP_SESSION`` / ``SHELLKEEP_SESSION_DIR``).

    cwd: where the files are when inside the session (else the session's own directory).
    The label is redacted with the ``[redact]`` rules unless redaction is off.
    Raises UserInputError (no session: not inside one and no ``ref``), SessionNotFound,
    GitFailed, ShellkeepError (the session folder cannot be written).
    """
    if ref is not None or last:
        meta = ctx.resolve(ref, last=last)
        folder, session_id, where, live = meta.folder, meta.id, Path(meta.cwd), False
    else:
        session_id = ctx.env.get("SHELLKEEP_SESSION", "")
        folder_text = ctx.env.get("SHELLKEEP_SESSION_DIR", "")
        if not session_id or not folder_text or session_id == "unrecorded":
            raise UserInputError("not inside a recorded session; run 'shellkeep mark' in one, or give --session SESSION or --last")
        folder, where, live = Path(folder_text), cwd, True
        if not folder.is_dir():
            raise UserInputError(f"the session folder {folder} is gone; give --session SESSION")
    label = readable_text(label)  # bytes that were not UTF-8 show as \xNN (store.session)
    if ctx.config.redact.enabled:  # the label reaches the recording, checkpoints.jsonl and git
        label = redactor_for(ctx.config.redact).redact(label)
    try:
        checkpoint = add_checkpoint(folder, session_id, where, label)
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise ShellkeepError(f"cannot add a checkpoint to {session_id}: {READ_ONLY} ({folder}); remount it read-write") from exc
        raise ShellkeepError(f"cannot add a checkpoint to {session_id}: {exc.strerror or exc}; check {folder}") from exc
    return MarkResult(session_id, checkpoint, live)
