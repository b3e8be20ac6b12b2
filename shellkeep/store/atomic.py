"""Replace files atomically: a temporary file in the same folder, fsync, rename (0600).

Every whole-file write of shellkeep (meta.json, the config, key files, rewritten and sealed
session files) goes through ``write_bytes_atomic``, so a crash leaves the old file or the
new one, never a mix. ``deferred_sync`` lets a caller that writes many new files in a hidden
folder (an import) make them durable with one ``os.sync`` before it renames the folder into
place, instead of one fsync a file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.store.paths import FILE_MODE

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import BinaryIO

FileIdentity = tuple[int, int, int]
"""(inode, mtime in ns, size) of a file: changes whenever the file is replaced or written."""


class FileChanged(OSError):
    """The file was replaced or written by someone else while it was being rewritten."""


def file_identity(path: Path) -> FileIdentity:
    """Return ``path``'s identity (see ``FileIdentity``); raises OSError."""
    st = os.stat(path)
    return (st.st_ino, st.st_mtime_ns, st.st_size)


_deferred = threading.local()


@contextmanager
def deferred_sync() -> Iterator[None]:
    """Within the block, ``write_bytes_atomic`` in this thread does not fsync each file.

    The caller makes what was written durable (``os.sync()``) before anything points at it;
    for files in a folder nothing names yet (renamed into place after the sync).
    """
    before = getattr(_deferred, "on", False)
    _deferred.on = True
    try:
        yield
    finally:
        _deferred.on = before


def write_bytes_atomic(
    path: Path,
    data: bytes | Iterable[bytes],
    *,
    expect: FileIdentity | None = None,
    follow_symlink: bool = False,
    mode: int = FILE_MODE,
) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder, fsync and rename (0600).

    data: the bytes, or an iterable of pieces written in order (streamed).
    expect: the identity ``path`` had when its old content was read; if it differs just
    before the rename (another process rewrote it meanwhile: compression after a session,
    ``redact``, ``key rotate``), nothing is replaced and FileChanged is raised, so no
    rewrite ever puts back content older than what is there.
    follow_symlink: when ``path`` is a symlink, replace its target rather than the link.
    mode: the new file's permission bits (0600 unless a caller keeps another file's mode).
    Raises OSError; the temporary file is removed on failure and ``path`` is untouched.
    """
    if follow_symlink and path.is_symlink():
        path = path.resolve()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)  # the umask may have narrowed or widened it
            if isinstance(data, (bytes, bytearray, memoryview)):
                fh.write(data)
            else:
                for part in data:
                    fh.write(part)
            fh.flush()
            if not getattr(_deferred, "on", False):
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


@contextmanager
def open_output(path: Path | str) -> Iterator[BinaryIO]:
    """Open a file the user named (``export -o``, ``key export``) for binary writing.

    A regular file, or a new one, is written to a temporary file in its folder, synced and
    renamed over it when the block ends without error (mode 0600): a failure leaves the old
    file as it was. A symlink's target is written that way, in the target's folder; the link
    stays. A device, FIFO or socket (``/dev/stdout``, ``/dev/null``, ``/dev/fd/1``, a named
    pipe) is opened and written directly, never replaced or removed.
    Raises UserInputError for an empty path or a folder; ShellkeepError naming ``path``
    (what the user typed) when it cannot be written: a missing folder, no permission, a
    full disk. Nothing is left behind on failure.
    """
    shown = str(path)
    if not shown:
        raise UserInputError("the output file name is empty; give a file name, or leave the option out to write to stdout")
    target = Path(os.path.expanduser(shown)).absolute()
    try:
        st: os.stat_result | None = os.stat(target)  # follows a symlink to what it names
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise ShellkeepError(f"cannot write '{shown}' ({exc.strerror or exc}); check the path") from exc
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UserInputError(f"'{shown}' is a folder; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            fh = open(target, "wb")  # noqa: SIM115 - a device or pipe: written in place
        except OSError as exc:
            raise ShellkeepError(f"cannot write '{shown}' ({exc.strerror or exc})") from exc
        try:
            with fh:
                yield fh
        except OSError as exc:
            raise ShellkeepError(f"cannot write '{shown}' ({exc.strerror or exc})") from exc
        return
    if os.path.islink(target):
        target = Path(os.path.realpath(target))  # the link's target, also when it is not there yet
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(3).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except OSError as exc:
        raise ShellkeepError(f"cannot write '{shown}' ({exc.strerror or exc}); check that its folder exists and is writable") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), FILE_MODE)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ShellkeepError(f"cannot write '{shown}' ({exc.strerror or exc}); check the disk and the folder") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
