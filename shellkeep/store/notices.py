"""Keep the notice file: the sessions a shell may report when it enters their project.

``notices.tsv`` in the data folder holds one line per session that is running or was cut
short (interrupted, or its terminal closed) and not resumed yet, oldest first; nothing else.
The shell snippets (``shellkeep/shell/init.*``) read it with builtins only, so a shell
entering a folder never starts a process to learn that there is nothing to say.

Format (version 1): a first line ``# shellkeep notices 1``, then one line per session
(an empty file when there is none),
tab-separated: project root (absolute, symlinks resolved), state (``running`` or ``cut``),
recorder pid, boot id, host, start time (integer seconds since the epoch, UTC), agent,
session id. An empty field is written ``-``; a session whose root or agent holds a tab or a
line break is left out. A root that is not UTF-8 is written as its exact bytes (the shell
compares bytes with ``$PWD``), so the file is UTF-8 except in such roots. A ``running`` line whose recorder is gone (another boot, or the pid
is no shellkeep process) counts as cut short: a recorder killed with ``kill -9`` cannot say so.

Every change is a read-modify-write under ``fcntl.flock`` on ``notices.lock`` and an atomic
replace (``store.atomic``); lines of sessions whose folder is gone are dropped on the way.
Callers treat an ``OSError`` as a lost notice, never as a failed recording.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import SessionMeta, Status, exact_meta, parse_iso

HEADER = "# shellkeep notices 1"
RUNNING = "running"
CUT = "cut"

CUT_SHORT = frozenset({Status.INTERRUPTED.value, Status.HANGUP.value})
"""The statuses a notice reports: the recorder died, or the terminal was closed."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One line of the notice file (see the module docstring); ``started`` in epoch seconds."""

    project_root: str
    state: str
    pid: int
    boot_id: str
    host: str
    started: int
    agent: str
    session_id: str

    def to_line(self) -> str:
        """Return the line, without its line break."""
        fields = (self.project_root, self.state, str(self.pid), self.boot_id, self.host, str(self.started), self.agent, self.session_id)
        return "\t".join(field or "-" for field in fields)

    @classmethod
    def from_line(cls, line: str) -> Notice | None:
        """Parse a line; None for a malformed one."""
        parts = ["" if p == "-" else p for p in line.split("\t")]
        if len(parts) != 8 or not parts[0] or parts[1] not in (RUNNING, CUT):
            return None
        try:
            return cls(parts[0], parts[1], int(parts[2] or 0), parts[3], parts[4], int(parts[5] or 0), parts[6], parts[7])
        except ValueError:
            return None


def notice_of(meta: SessionMeta, state: str) -> Notice | None:
    """Return the notice of a session in ``state``; None when a field cannot be written."""
    meta = exact_meta(meta)  # the root as the OS gives it, bytes that are not UTF-8 included
    try:
        started = int(parse_iso(meta.started_at).timestamp())
    except ValueError:
        started = 0
    notice = Notice(meta.project_root, state, meta.pid, meta.boot_id or "", meta.host, started, meta.agent, meta.id)
    if any(c in f for f in (notice.project_root, notice.agent, notice.host, notice.boot_id, notice.session_id) for c in "\t\r\n"):
        return None
    return notice


def read_notices(paths: Paths) -> list[Notice]:
    """Return the notices stored, oldest first ([] when the file is missing or unreadable)."""
    try:
        text = paths.notices.read_bytes().decode("utf-8", "surrogateescape")
    except OSError:
        return []
    found = [Notice.from_line(line) for line in text.splitlines() if line and not line.startswith("#")]
    return [n for n in found if n is not None]


def note_running(paths: Paths, meta: SessionMeta) -> None:
    """Record that ``meta``'s session is running (its recorder is ``meta.pid``); raises OSError."""
    notice = notice_of(meta, RUNNING)
    _update(paths, lambda kept: _put(kept, meta.id, notice))


def note_ended(paths: Paths, meta: SessionMeta) -> None:
    """Record how ``meta``'s session ended: kept as cut short (``CUT_SHORT``), else dropped; raises OSError."""
    notice = notice_of(meta, CUT) if meta.status in CUT_SHORT else None
    _update(paths, lambda kept: _put(kept, meta.id, notice))


def forget(paths: Paths, session_id: str) -> None:
    """Drop the notice of a session (it is being resumed); raises OSError."""
    _update(paths, lambda kept: _put(kept, session_id, None))


def rewrite_notices(paths: Paths, sessions: Iterable[SessionMeta]) -> None:
    """Rebuild the file from every session: running ones and those cut short and not resumed; raises OSError."""
    sessions = list(sessions)
    resumed = {m.parent for m in sessions if m.parent and not m.resume_failed}
    found: dict[str, Notice] = {}
    for meta in sessions:
        if meta.status == Status.RUNNING.value:
            notice = notice_of(meta, RUNNING)
        elif meta.status in CUT_SHORT and meta.id not in resumed:
            notice = notice_of(meta, CUT)
        else:
            continue
        if notice is not None:
            found[meta.id] = notice

    def replace_all(kept: dict[str, Notice]) -> None:
        kept.clear()
        kept.update(found)

    _update(paths, replace_all)


def _put(kept: dict[str, Notice], session_id: str, notice: Notice | None) -> None:
    if notice is None:
        kept.pop(session_id, None)
    else:
        kept[session_id] = notice


def _update(paths: Paths, change: Callable[[dict[str, Notice]], None]) -> None:
    """Apply ``change`` to the notices by session id and store the result, under the lock."""
    ensure_dir(paths.home)
    fd = os.open(paths.notices_lock, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        before = read_notices(paths)
        kept = {n.session_id: n for n in before}
        change(kept)
        after = sorted(
            (n for n in kept.values() if _folder_exists(paths, n)), key=lambda n: (n.started, n.session_id)
        )
        # Empty when there is nothing to say: the shell's first test (a non-empty file) stops there.
        text = "".join(f"{line}\n" for line in (HEADER, *(n.to_line() for n in after))) if after else ""
        data = text.encode("utf-8", "surrogateescape")
        try:
            if paths.notices.read_bytes() == data:
                return
        except FileNotFoundError:
            if not text:
                return
        write_bytes_atomic(paths.notices, data)
    finally:
        os.close(fd)  # releases the lock


def _folder_exists(paths: Paths, notice: Notice) -> bool:
    return paths.session_dir(Path(notice.project_root), notice.session_id).is_dir()
