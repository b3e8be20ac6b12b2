"""Read asciicast event lines from the end of a recording's bytes, last line first.

A ``TailReader`` works on the plain bytes of a whole recording held as random-access
``Searchable`` bytes (a memory map, or the frames of a seekable zstd file decoded on demand:
opening and mapping files is the vault's job). It yields event lines backwards, finds lines
holding a byte string by a backwards search without decoding what lies between, and decodes
lines into events, treating a cut last line as the end of the recording, as the forward reader
(``asciicast.reader``) does.

Formats: asciicast v2 (docs.asciinema.org/manual/asciicast/v2) and v3
(docs.asciinema.org/manual/asciicast/v3: ``#`` comment lines are skipped; times are kept as
stored, intervals for v3). v1 is one JSON document and cannot be read from its end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Protocol

from shellkeep.asciicast.model import Event
from shellkeep.errors import DataError
from shellkeep.termsize import TermSize

__all__ = ["SEARCH_BLOCK_BYTES", "Searchable", "TailReader", "decode_line"]

SEARCH_BLOCK_BYTES = 1 << 20
"""Bytes searched at once when looking backwards for a line holding a byte string."""

_RESIZE_NEEDLES = (b', "r", "', b',"r","')


class Searchable(Protocol):
    """A recording's plain bytes with random access: what the tail reader uses of a memory map.

    ``mmap.mmap``, ``bytes`` and ``vault.seekable.SeekableFrames`` (a seekable zstd file's
    frames decoded on demand) all fit. Offsets are 0-based byte offsets.
    """

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...
    def rfind(self, sub: bytes, start: int = ..., end: int = ..., /) -> int: ...


def decode_line(line: bytes) -> Event | None:
    """Decode one event line ``[time, code, data]`` as stored; None when it is not one.

    ``time`` is taken as written (for v3, the interval since the previous event).
    """
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(obj, list) and len(obj) == 3):
        return None
    t, code, data = obj
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not isinstance(code, str) or not isinstance(data, str):
        return None
    return Event(float(t), code, data)


class TailReader:
    """The event lines of a plain asciicast v2/v3 recording, read from its end.

    data: the whole recording, header line included. name: where it came from, for messages.
    version: the header's asciicast version (2 or 3). ``searched`` counts the bytes covered
    by backwards searches so far (for benchmarks and tests).
    """

    def __init__(self, data: Searchable, version: int, name: str) -> None:
        self.data = data
        self.version = version
        self.name = name
        newline = data.find(b"\n")
        self.body_start = newline + 1 if newline >= 0 else len(data)
        self.searched = 0
        self._at_end = True  # no line decoded yet: the next one is the recording's last

    def lines_backwards(self) -> Iterator[tuple[int, bytes]]:
        """Yield (offset, line) of the non-empty event lines, last first, lines stripped."""
        data = self.data
        end = len(data)
        while end > self.body_start:
            nl = data.rfind(b"\n", self.body_start, end)
            begin = nl + 1 if nl >= 0 else self.body_start
            line = data[begin:end].strip()
            end = nl if nl >= 0 else self.body_start
            if line and not (self.version == 3 and line.startswith(b"#")):
                yield begin, line

    def decode(self, offset: int, line: bytes) -> Event | None:
        """Decode a line from ``lines_backwards``, the first one decoded being the last.

        Returns None for a last line that is not an event (a recorder cut mid-write: the
        end of the recording, not an error). Raises DataError for any other such line.
        """
        event = decode_line(line)
        if event is None:
            if self._at_end:
                self._at_end = False
                return None
            raise DataError(f"{self.name}: the line at byte {offset} is not a valid asciicast v{self.version} event")
        self._at_end = False
        return event

    def line_at(self, pos: int) -> tuple[int, bytes]:
        """Return (offset, line) of the line holding byte ``pos``."""
        begin = self.data.rfind(b"\n", self.body_start, pos) + 1 or self.body_start
        end = self.data.find(b"\n", pos)
        return begin, self.data[begin : end if end >= 0 else len(self.data)].strip()

    def lines_holding(self, needles: Sequence[bytes], limit: int) -> Iterator[tuple[int, bytes]]:
        """Yield (offset, line) of lines before byte ``limit`` holding any of ``needles``, last first.

        Searches backwards block by block, so the cost grows with the distance to the hit.
        """
        data = self.data
        longest = max(len(needle) for needle in needles)
        high = limit
        while high > self.body_start:
            low = max(self.body_start, high - SEARCH_BLOCK_BYTES)
            # Needles that straddle ``low`` are found here; they do not fit the next block.
            from_ = max(self.body_start, low - longest + 1)
            pos = max(data.rfind(needle, from_, high) for needle in needles)
            if pos < 0:
                self.searched += high - low
                high = low
                continue
            begin, line = self.line_at(pos)
            self.searched += high - begin
            yield begin, line
            high = begin

    def size_before(self, limit: int, fallback: TermSize) -> TermSize:
        """Return the size set by the last resize event before byte ``limit``, else ``fallback``."""
        for _, line in self.lines_holding(_RESIZE_NEEDLES, limit):
            event = decode_line(line)
            if event is not None and event.code == "r":
                try:
                    return TermSize.parse(event.data)
                except ValueError:
                    continue
        return fallback
