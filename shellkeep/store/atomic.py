"""Replace files atomically: a temporary file in the same folder, fsync, rename (0600).

Every whole-file write of shellkeep (meta.json, the config, key files, rewritten and sealed
session files) goes through ``write_bytes_atomic``, so a crash leaves the old file or the
new one, never a mix.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from shellkeep.store.paths import FILE_MODE

FileIdentity = tuple[int, int, int]
"""(inode, mtime in ns, size) of a file: changes whenever the file is replaced or written."""


class FileChanged(OSError):
    """The file was replaced or written by someone else while it was being rewritten."""


def file_identity(path: Path) -> FileIdentity:
    """Return ``path``'s identity (see ``FileIdentity``); raises OSError."""
    st = os.stat(path)
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def write_bytes_atomic(
    path: Path,
    data: bytes | Iterable[bytes],
    *,
    expect: FileIdentity | None = None,
    follow_symlink: bool = False,
) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder, fsync and rename (0600).

    data: the bytes, or an iterable of pieces written in order (streamed).
    expect: the identity ``path`` had when its old content was read; if it differs just
    before the rename (another process rewrote it meanwhile: compression after a session,
    ``redact``, ``key rotate``), nothing is replaced and FileChanged is raised, so no
    rewrite ever puts back content older than what is there.
    follow_symlink: when ``path`` is a symlink, replace its target rather than the link.
    Raises OSError; the temporary file is removed on failure and ``path`` is untouched.
    """
    if follow_symlink and path.is_symlink():
        path = path.resolve()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)  # the umask may have narrowed or widened it
            if isinstance(data, (bytes, bytearray, memoryview)):
                fh.write(data)
            else:
                for part in data:
                    fh.write(part)
            fh.flush()
            os.fsync(fh.fileno())
        if expect is not None and file_identity(path) != expect:
            raise FileChanged(errno.EAGAIN, "changed by another process while being rewritten", str(path))
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def write_json_atomic(path: Path, obj: object) -> None:
    """Write ``obj`` as indented UTF-8 JSON to ``path`` atomically (mode 0600).

    Raises OSError when the folder is not writable or the disk is full.
    """
    write_bytes_atomic(path, (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
