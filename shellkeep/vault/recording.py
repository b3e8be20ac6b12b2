"""Open a stored recording, whatever its container: plain, zstd-compressed, sealed, or both.

This is the one place a recording file is opened for reading: it undoes the sealing
(``vault.crypto``, shellkeep's encrypted-record format) and the compression (zstd, RFC 8878,
recognised by its magic number) and hands ``asciicast.reader`` a stream of plain asciicast
bytes. Audited reads (``app.reads``) call it too.
"""

from __future__ import annotations

import io
import mmap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

from shellkeep.asciicast.reader import Cast, read_cast
from shellkeep.asciicast.tail import Searchable
from shellkeep.errors import DataError, ShellkeepError
from shellkeep.store.session import recording_path
from shellkeep.vault.crypto import MAGIC, KeySource, open_decrypting, open_plain
from shellkeep.vault.seekable import FrameStream, SeekableFrames, read_seek_table

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""The first four bytes of a zstd frame (RFC 8878, section 3.1.1)."""


def is_compressed(path: Path, vault: KeySource | None = None) -> bool:
    """Return whether the plaintext of ``path`` starts with a zstd frame.

    A sealed file's first record is decrypted with ``vault``'s keys; False when the file
    is unreadable or its key cannot be found.
    """
    try:
        with open_plain(path, vault.key if vault is not None else None) as fh:
            return fh.read(4) == ZSTD_MAGIC
    except (OSError, ValueError, ShellkeepError):
        return False


def open_stream(path: Path, vault: KeySource | None = None) -> IO[bytes]:
    """Open a recording for binary reading, decrypting and decompressing zstd transparently.

    A sealed file is decrypted with its key from ``vault`` (None: no key is available); a
    cut last record ends the stream. What it holds, or the plain file, is then
    decompressed when it is zstd: a plain seekable file (``vault.seekable``) frame by frame,
    skipping a damaged frame (DataError once the rest is read); else as one stream that
    stops at the damage. The caller always reads plain asciicast bytes.
    A session's ``session.cast`` that is gone is read as the ``session.cast.zst`` beside it
    and the other way round (``store.session.recording_path``: a compression renamed it
    after its metadata was read).
    Raises FileNotFoundError; DataError when an encrypted record is damaged (also while
    reading); ``KeyUnavailable`` (exit 1) when the file's key cannot be found.
    """
    try:
        fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    except FileNotFoundError:
        moved = recording_path(path.parent, path.name)
        if moved == path:
            raise
        path, fh = moved, open(moved, "rb")  # noqa: SIM115
    magic = fh.read(len(MAGIC))
    fh.seek(0)
    sealed = magic == MAGIC
    if sealed:
        fh = open_decrypting(fh, str(path), vault.key if vault is not None else None)
        try:
            magic = fh.peek(4)[:4]
        except BaseException:
            fh.close()
            raise
    if magic[:4] != ZSTD_MAGIC:
        return fh
    try:
        import zstandard
    except ImportError as exc:  # pragma: no cover - zstandard is a dependency
        fh.close()
        raise DataError(f"{path} is zstd-compressed and zstandard is not installed; pip install zstandard") from exc
    if sealed:  # the decrypting stream cannot seek
        return io.BufferedReader(_ZstdFrames(fh, str(path), zstandard), buffer_size=1 << 16)
    try:
        frames = read_seek_table(fh)
        fh.seek(0)
    except BaseException:
        fh.close()
        raise
    if frames is not None:
        return io.BufferedReader(FrameStream(fh, frames, str(path), zstandard), buffer_size=1 << 16)
    return io.BufferedReader(_ZstdFrames(fh, str(path), zstandard), buffer_size=1 << 16)


_READ_BYTES = 1 << 12
"""Compressed bytes fed to zstd at a time: bounds what one read decodes (4 MiB even for
output that compresses 1000x) and how precisely damage is located. Smaller pieces cost
no speed (bench: 80 MB in 0.08 s either way) while larger ones slow the decoder down."""
_WRITE_BYTES = 1 << 16


class _ZstdFrames(io.RawIOBase):
    """Decompress the zstd frames of ``src`` one after another (RFC 8878), as a raw stream.

    Each frame is decoded with its own decompression object, so its checksum is checked
    at its end and the next frame starts afresh. A damaged frame (a bad block, a checksum
    that does not match, bytes that are no frame) or a stream cut inside a frame raises
    DataError naming the byte of ``src`` where decoding stopped and where that frame starts
    (the frames before it are intact): everything decoded before it has been returned by
    then. Closing it closes ``src``.
    """

    def __init__(self, src: IO[bytes], name: str, zstd: ModuleType) -> None:
        self._src = src
        self._name = name
        self._zstd = zstd
        self._dctx = zstd.ZstdDecompressor()
        self._frame = self._dctx.decompressobj(write_size=_WRITE_BYTES)
        self._in_frame = False  # bytes of the current frame have been fed
        self._frame_at = 0  # where the current frame starts in src
        self._consumed = 0  # bytes read from src
        self._out = bytearray()
        self._done = False
        self._error: DataError | None = None  # raised once what came before it is read

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        while not self._out and not self._done:
            if self._error is not None:
                raise self._error
            self._fill()
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._out))
        view[:n] = self._out[:n]
        del self._out[:n]
        return n

    def close(self) -> None:
        try:
            self._src.close()
        finally:
            super().close()

    def _fill(self) -> None:
        data = self._src.read(_READ_BYTES)
        if not data:
            if self._in_frame:
                self._error = self._damaged(self._consumed, "the file ends")
                return
            self._done = True
            return
        at = self._consumed
        self._consumed += len(data)
        while data:
            try:
                self._out += self._frame.decompress(data)
            except self._zstd.ZstdError as exc:
                self._error = self._damaged(at, _zstd_reason(exc))
                self._error.__cause__ = exc
                return
            self._in_frame = True
            if not self._frame.eof:
                return
            data = self._frame.unused_data  # the next frame starts in this read
            at = self._frame_at = self._consumed - len(data)
            self._frame = self._dctx.decompressobj(write_size=_WRITE_BYTES)
            self._in_frame = False

    def _damaged(self, at: int, reason: str) -> DataError:
        """at: where the decoder stopped; the damage is there or earlier in the frame, never before it."""
        return DataError(
            f"{self._name}: recording is damaged at byte {at} ({reason}, in the zstd frame from byte "
            f"{self._frame_at}); only what comes before it can be read"
        )


def open_recording(path: Path, vault: KeySource | None = None) -> Cast:
    """Open a recording file of any asciicast version and container and parse its header.

    vault: the keys for a sealed file (None: only plain and zstd files can be read).
    Raises DataError when the file is empty, not asciicast, or of an unknown version;
    FileNotFoundError when it does not exist; KeyUnavailable as ``open_stream``.
    """
    return read_cast(lambda: open_stream(path, vault), str(path))


def plain_file(path: Path) -> Path | None:
    """Return ``path`` when it holds plain asciicast (neither sealed nor compressed), else None.

    A plain file can be mapped and read from its end (``open_tail_source``).
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError:
        return None
    return None if head == MAGIC or head[:4] == ZSTD_MAGIC else path


def tail_source(path: Path) -> Path | SeekableFrames | None:
    """Return how ``path`` can be read from its end, or None (see ``open_tail_source``).

    The path itself for plain asciicast (to be mapped); the lazily decompressed frames of a
    seekable zstd file (``vault.seekable``: written by the upkeep since frames got a seek
    table); None for a sealed file or a single-frame zstd file, which are streamed instead.
    A renamed recording is found as ``open_stream`` finds it.
    """
    path = recording_path(path.parent, path.name)
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
            if head == MAGIC:
                return None
            if head[:4] != ZSTD_MAGIC:
                return path
            frames = read_seek_table(fh)
    except OSError:
        return None
    if frames is None:
        return None
    import zstandard

    return SeekableFrames(path, frames, zstandard)


@contextmanager
def open_tail_source(path: Path) -> Iterator[Searchable | None]:
    """Yield the plain bytes of the recording at ``path`` with random access, or None.

    What ``terminal.tail.read_tail`` reads a recording from its end with: a plain file
    mapped in memory (unmapped on exit), the frames of a seekable zstd file decoded on
    demand; None (the recording is to be streamed from its start) for a sealed or a
    single-frame zstd file, or a file that cannot be opened (opening the recording names why).
    """
    source = tail_source(path)
    if not isinstance(source, Path):
        yield source
        return
    try:
        fh = open(source, "rb")
    except OSError:
        yield None
        return
    with fh:
        try:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            yield b""
            return
        with data:
            yield data


def _zstd_reason(exc: BaseException) -> str:
    """Return zstandard's message without its 'zstd decompress(or) error:' prefix."""
    text = str(exc)
    for prefix in ("zstd decompressor error: ", "zstd decompress error: "):
        text = text.removeprefix(prefix)
    return f"zstd: {text}"
