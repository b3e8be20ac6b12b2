"""Compressed recordings as independent zstd frames with a seek table, read from any point.

The layout is zstd's seekable format (facebook/zstd, contrib/seekable_format): ordinary
zstd frames of about ``FRAME_BYTES`` of asciicast each, cut after a newline so each frame
holds whole event lines, followed by one skippable frame (magic ``0x184D2A5E``, which every
zstd decoder skips) holding the seek table::

    per frame   compressed size u32 LE, decompressed size u32 LE   (no checksum: the frames
                                                                     carry their own)
    footer      number of frames u32 LE, descriptor u8 (0), seekable magic 0x8F92EAB1 LE

Any zstd decoder reads such a file as one stream. ``FrameStream`` (what
``vault.recording.open_stream`` returns for one) decodes frame after frame and, when one is
damaged, skips to the next: only that frame's span is lost, and the damage is raised once the
rest has been read. ``SeekableFrames`` reads the table from the end and decompresses only the
frames a read touches, so the last screen of a long recording is found without the rest.
Files compressed before this format (one frame, no table) are streamed as they always were.
``zstandard`` is imported by the callers and passed in (this module imports no C extension).
"""

from __future__ import annotations

import io
import struct
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, TYPE_CHECKING

from shellkeep.errors import DataError
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

log = get_logger(__name__)

FRAME_BYTES = 1 << 20
"""Plain bytes per frame (about; a frame ends after the last newline of what was read): the
unit decompressed to reach any point. 1 MiB frames make a file about 2.4 % larger than one
frame at the same level (bench/RESULTS-last-screen.md)."""
_SKIPPABLE_MAGIC = 0x184D2A5E
_SEEKABLE_MAGIC = 0x8F92EAB1
_FOOTER = struct.Struct("<IBI")  # frames, descriptor, seekable magic
_ENTRY = struct.Struct("<II")  # compressed size, decompressed size
_FRAME_HEADER = struct.Struct("<II")  # skippable magic, frame size
_CACHE_BYTES = 8 << 20
"""Decompressed frames kept at once (about 8 frames): the tail reader searches a block of up
to 1 MiB once per needle, so the frames under one block must stay decoded."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a seekable file: where it lies compressed (``at``, ``size``) and what it
    holds decompressed (``start``, ``length``); all in bytes."""

    at: int
    size: int
    start: int
    length: int


def compressed_frames(compressor: object, src: IO[bytes], *, frame_bytes: int = FRAME_BYTES) -> Iterator[bytes]:
    """Yield ``src``'s bytes as seekable zstd: one frame per ~``frame_bytes``, then the seek table.

    compressor: a ``zstandard.ZstdCompressor``. Nothing is yielded for an empty ``src``
    except an empty seek table. Raises OSError from reading ``src``.
    """
    entries: list[tuple[int, int]] = []
    pending = b""
    while True:
        block = src.read(frame_bytes)
        data = pending + block
        if not data:
            break
        if block:
            cut = data.rfind(b"\n") + 1 or len(data)
            if cut < len(data) // 2:  # a very long line: do not let frames grow without bound
                cut = len(data)
        else:
            cut = len(data)
        frame, pending = data[:cut], data[cut:]
        out = compressor.compress(frame)  # type: ignore[attr-defined]
        entries.append((len(out), len(frame)))
        yield out
        if not block:
            break
    yield seek_table(entries)


def seek_table(entries: list[tuple[int, int]]) -> bytes:
    """Return the skippable frame holding ``entries`` (compressed, decompressed sizes)."""
    body = b"".join(_ENTRY.pack(c, d) for c, d in entries) + _FOOTER.pack(len(entries), 0, _SEEKABLE_MAGIC)
    return _FRAME_HEADER.pack(_SKIPPABLE_MAGIC, len(body)) + body


def read_seek_table(fh: IO[bytes]) -> list[Frame] | None:
    """Return the frames listed by the seek table at the end of ``fh``, or None.

    None when there is no table (a single-frame file from before), or when it does not
    add up to the file's size (then the file is streamed, which names any damage).
    ``fh`` must be seekable; its position is left anywhere.
    """
    total = fh.seek(0, 2)
    if total < _FRAME_HEADER.size + _FOOTER.size:
        return None
    fh.seek(total - _FOOTER.size)
    count, descriptor, magic = _FOOTER.unpack(fh.read(_FOOTER.size))
    if magic != _SEEKABLE_MAGIC or descriptor & 0x7F:
        return None
    entry = _ENTRY.size + (4 if descriptor & 0x80 else 0)
    body = count * entry + _FOOTER.size
    table_at = total - body - _FRAME_HEADER.size
    if table_at < 0:
        return None
    fh.seek(table_at)
    head = fh.read(_FRAME_HEADER.size + count * entry)
    skippable, size = _FRAME_HEADER.unpack_from(head)
    if skippable != _SKIPPABLE_MAGIC or size != body:
        return None
    frames: list[Frame] = []
    at = start = 0
    for i in range(count):
        csize, dsize = _ENTRY.unpack_from(head, _FRAME_HEADER.size + i * entry)
        frames.append(Frame(at, csize, start, dsize))
        at += csize
        start += dsize
    return frames if at == table_at else None


def _decode_frame(dctx: object, raw: bytes, frame: Frame, error: type[Exception]) -> bytes | str:
    """Return the frame's plaintext, or the reason it cannot be decoded."""
    try:
        data: bytes = dctx.decompress(raw, max_output_size=frame.length)  # type: ignore[attr-defined]
    except error as exc:
        return str(exc).removeprefix("zstd decompress error: ").removeprefix("zstd decompressor error: ")
    if len(data) != frame.length:
        return f"{len(data)} bytes instead of {frame.length}"
    return data


def _damage(name: str, frame: Frame, reason: str) -> str:
    return (
        f"{name}: recording is damaged at byte {frame.at} (zstd: {reason}, in the zstd frame from byte "
        f"{frame.at} to {frame.at + frame.size}); its {frame.length} bytes of events are skipped"
    )


class FrameStream(io.RawIOBase):
    """The plaintext of a seekable zstd file, frame after frame, as a raw stream.

    Each frame is decoded whole (at most its ``length`` from the seek table) before any of
    it is returned, so a damaged frame yields nothing: it is skipped, and once every other
    frame has been read a DataError names the first damaged one. Closing it closes ``src``.
    """

    def __init__(self, src: IO[bytes], frames: list[Frame], name: str, zstd: ModuleType) -> None:
        self._src = src
        self._frames = iter(frames)
        self._name = name
        self._dctx = zstd.ZstdDecompressor()
        self._zstd_error: type[Exception] = zstd.ZstdError
        self._out = b""
        self._pos = 0
        self._error: DataError | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        while self._pos >= len(self._out):
            frame = next(self._frames, None)
            if frame is None:
                if self._error is not None:
                    error, self._error = self._error, None
                    raise error
                return 0
            self._src.seek(frame.at)
            decoded = _decode_frame(self._dctx, self._src.read(frame.size), frame, self._zstd_error)
            if isinstance(decoded, str):
                if self._error is None:
                    self._error = DataError(_damage(self._name, frame, decoded))
                continue
            self._out, self._pos = decoded, 0
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._out) - self._pos)
        view[:n] = self._out[self._pos : self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        try:
            self._src.close()
        finally:
            super().close()


class SeekableFrames:
    """The plaintext of a seekable zstd recording as a read-only byte sequence, decoded lazily.

    Offers what ``asciicast.tail.TailReader`` uses of a memory map: ``len``, slices,
    ``find`` and ``rfind`` (with start and end), all in decompressed bytes. Each operation
    decompresses only the frames it touches (the last ``_CACHE_BYTES`` are kept). A frame
    that does not decode (flipped bytes, a wrong size) reads as newlines, which hold no
    event: only its span is lost, and a warning names it once. The file is opened for each
    frame read, so the object needs no closing; raises OSError when the file is gone.
    """

    def __init__(self, path: Path, frames: list[Frame], zstd: ModuleType) -> None:
        self._path = path
        self._frames = frames
        self._starts = [frame.start for frame in frames]
        self._length = frames[-1].start + frames[-1].length if frames else 0
        self._dctx = zstd.ZstdDecompressor()
        self._error = zstd.ZstdError
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cached_bytes = 0
        self.frames_read = 0  # frames decompressed so far (for benchmarks and tests)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: slice) -> bytes:
        start, stop, step = index.indices(self._length)
        if step != 1:
            raise ValueError("only contiguous slices are supported")
        if stop <= start:
            return b""
        pieces = []
        for i in range(self._frame_index(start), self._frame_index(stop - 1) + 1):
            frame = self._frames[i]
            data = self._frame(i)
            pieces.append(data[max(0, start - frame.start) : stop - frame.start])
        return b"".join(pieces)

    def find(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        """Return the lowest offset of ``sub`` in [start, end), or -1; frame by frame, no copies."""
        start, end, _ = slice(start, end).indices(self._length)
        lo = start
        while lo < end:
            i = self._frame_index(lo)
            frame, data = self._frames[i], self._frame(i)
            frame_end = frame.start + frame.length
            pos = data.find(sub, lo - frame.start, min(end, frame_end) - frame.start)
            if pos >= 0:
                return frame.start + pos
            if frame_end < end and len(sub) > 1:  # a match across the boundary
                at = max(lo, frame_end - len(sub) + 1)
                pos = self[at : min(end, frame_end + len(sub) - 1)].find(sub)
                if pos >= 0:
                    return at + pos
            lo = frame_end
        return -1

    def rfind(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        """Return the highest offset of ``sub`` in [start, end), or -1; frame by frame from the end."""
        start, end, _ = slice(start, end).indices(self._length)
        hi = end
        while hi > start:
            i = self._frame_index(hi - 1)
            frame = self._frames[i]
            lo = max(start, frame.start)
            if hi < end and len(sub) > 1:  # a match across the boundary at ``hi``
                at = max(lo, hi - len(sub) + 1)
                pos = self[at : min(end, hi + len(sub) - 1)].rfind(sub)
                if pos >= 0:
                    return at + pos
            pos = self._frame(i).rfind(sub, lo - frame.start, hi - frame.start)
            if pos >= 0:
                return frame.start + pos
            hi = lo
        return -1

    def _frame_index(self, offset: int) -> int:
        lo, hi = 0, len(self._starts) - 1
        while lo < hi:  # the last frame starting at or before offset
            mid = (lo + hi + 1) // 2
            if self._starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _frame(self, i: int) -> bytes:
        cached = self._cache.get(i)
        if cached is not None:
            self._cache.move_to_end(i)
            return cached
        frame = self._frames[i]
        with open(self._path, "rb") as fh:
            fh.seek(frame.at)
            raw = fh.read(frame.size)
        self.frames_read += 1
        decoded = _decode_frame(self._dctx, raw, frame, self._error)
        if isinstance(decoded, str):
            log.warning("%s", _damage(str(self._path), frame, decoded))
            decoded = b"\n" * frame.length
        data = decoded
        self._cache[i] = data
        self._cached_bytes += len(data)
        while self._cached_bytes > _CACHE_BYTES and len(self._cache) > 1:
            self._cached_bytes -= len(self._cache.popitem(last=False)[1])
        return data
