"""Own the disk space of a recording: free space, the low-disk warning, the reserve file.

Kept apart from retention (gc) so ``shellkeep run`` can check the disk before the child
starts without loading the retention rules. Every function is one or two syscalls and
never raises.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "DISK_FULL",
    "READ_ONLY",
    "RESERVE_BYTES",
    "RESERVE_FILE",
    "free_bytes",
    "has_no_room",
    "is_read_only",
    "low_disk_warning",
    "release_space",
    "reserve_space",
]

DISK_FULL = "the disk is full"
"""How a message says that a write found no space: the fix is freeing space, not a reindex."""

READ_ONLY = "the file system is read-only"
"""How a message says that ``is_read_only`` held: the fix is a remount, not a chmod or a reindex."""


def free_bytes(path: Path) -> int | None:
    """Return the bytes free to this user on ``path``'s filesystem (``os.statvfs``), or None."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


NO_ROOM_BYTES = 1024 * 1024
"""Below this much free space a write may fail for want of room: SQLite grows its shared
memory (32 KiB) and write-ahead log beside the page it writes, and reports a failure there as
a "disk I/O error", not as a full disk."""


def has_no_room(path: Path) -> bool:
    """Return whether the file system holding ``path`` (or, when it does not exist, its nearest
    parent) has less than ``NO_ROOM_BYTES`` free to this user; False when that cannot be told."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            free = free_bytes(candidate)
            return free is not None and free < NO_ROOM_BYTES
    return False


def is_read_only(path: Path) -> bool:
    """Return whether ``path`` (or, when it does not exist, its nearest parent) is on a file system
    mounted read-only (``os.statvfs`` flag ``ST_RDONLY``); False when that cannot be told."""
    for candidate in (path, *path.parents):
        try:
            return bool(os.statvfs(candidate).f_flag & os.ST_RDONLY)
        except FileNotFoundError:
            continue
        except OSError:
            return False
    return False


def low_disk_warning(path: Path, min_free_mb: int) -> str | None:
    """Return a one-line warning when ``path``'s disk has less than ``min_free_mb`` MB free.

    One ``os.statvfs`` call; None when there is enough, the check is off (0) or fails.
    """
    if min_free_mb <= 0:
        return None
    free = free_bytes(path)
    if free is None or free >= min_free_mb * 1024 * 1024:
        return None
    return (
        f"only {free // (1024 * 1024)} MB free on the disk holding {path} (below record.min_free_mb = "
        f"{min_free_mb}); recording may stop when it is full: run 'shellkeep gc' or free some space"
    )


RESERVE_FILE = ".reserve"
RESERVE_BYTES = 64 * 1024
"""Space held in a session's folder while it records, given back before the final
``meta.json`` is written: on a disk that filled up meanwhile, the metadata can still say
that the recording is incomplete."""


def reserve_space(folder: Path, nbytes: int = RESERVE_BYTES) -> bool:
    """Allocate ``nbytes`` in ``folder/.reserve`` (``posix_fallocate``; one syscall); never raises.

    Returns False when the space could not be had (the disk is already full).
    """
    path = folder / RESERVE_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:
        return False
    try:
        os.posix_fallocate(fd, 0, nbytes)
        return True
    except (OSError, AttributeError):
        try:
            os.unlink(path)
        except OSError:
            pass
        return False
    finally:
        os.close(fd)


def release_space(folder: Path) -> None:
    """Give back the space ``reserve_space`` held (remove ``.reserve``); never raises."""
    try:
        os.unlink(folder / RESERVE_FILE)
    except OSError:
        pass
