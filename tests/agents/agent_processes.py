"""Find and end the processes an agent test left behind, by the private folder they use.

Agent CLIs start helpers that outlive the program a test drove: Codex 0.171.0 leaves a
``codex app-server --managed-daemon`` and its ``pid-update-loop`` running, re-parented to
PID 1, from a copy of its binary under ``$CODEX_HOME/packages/``. Every agent test runs with
its own temporary HOME, so a process is the test's own exactly when its command line, working
directory, executable or environment names that folder. Linux only (reads ``/proc``).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def processes_using(marker: Path) -> list[int]:
    """Return the pids whose cmdline, cwd, exe or environment mention the path *marker*.

    The calling process and its ancestors are never returned. Processes that vanish or that
    cannot be read while scanning are skipped.
    """
    needle = os.fsencode(os.path.realpath(marker))
    spared = _self_and_ancestors()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in spared:
            continue
        if _mentions(entry, needle):
            found.append(pid)
    return sorted(found)


def end_processes(pids: list[int], timeout_s: float = 5.0) -> list[int]:
    """Send SIGTERM to each pid, then SIGKILL to those still alive after *timeout_s*.

    Blocks until every pid is gone (or a further *timeout_s* after SIGKILL).
    Returns the pids that had to be killed with SIGKILL.
    """
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    alive = _wait_gone(pids, timeout_s)
    for pid in alive:
        _signal(pid, signal.SIGKILL)
    _wait_gone(alive, timeout_s)
    return alive


def reap(marker: Path, timeout_s: float = 5.0) -> list[int]:
    """End every process that uses the folder *marker*; return the pids that were found."""
    pids = processes_using(marker)
    if pids:
        end_processes(pids, timeout_s)
    return pids


def _mentions(proc: Path, needle: bytes) -> bool:
    for name in ("cmdline", "environ"):
        try:
            if needle in (proc / name).read_bytes():
                return True
        except OSError:
            pass
    for name in ("cwd", "exe"):
        try:
            if os.fsencode(os.readlink(proc / name)).startswith(needle):
                return True
        except OSError:
            pass
    return False


def _self_and_ancestors() -> set[int]:
    spared = {os.getpid()}
    pid = os.getpid()
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        # Field 4 is the parent pid; the command name in field 2 may hold spaces.
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        spared.add(pid)
    return spared


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _is_gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    """Poll until every pid is gone or *timeout_s* passes; return those still alive."""
    deadline = time.monotonic() + timeout_s
    alive = [pid for pid in pids if not _is_gone(pid)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if not _is_gone(pid)]
    return alive


def group_members(pgid: int) -> list[int]:
    """Return the live processes of process group *pgid* (zombies left out)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members
