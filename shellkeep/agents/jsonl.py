"""Read agents' JSONL transcripts defensively: backwards in blocks, cut lines, NUL padding, zstd.

Agents append one JSON object per line and can be killed mid-write, so a transcript may
end in half a line, hold runs of NUL bytes where a crash left a hole, or (Codex) be stored
compressed as ``.jsonl.zst``. Every whole record is used wherever it sits (after a NUL
run, after a record cut in half on the same line); what is not a whole record is skipped.
Transcripts reach gigabytes: ``read_exchanges`` with a limit reads from the end of the file,
block by block, until enough prompts are in hand, and ``read_transcript`` reads a whole one
as a stream, reporting where it is damaged (``TranscriptDamage``).
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from shellkeep.agents.base import Exchange, JsonValue
from shellkeep.agents.records import JsonObject, as_str, last, parse_time
from shellkeep.logs import get_logger

__all__ = [
    "BLOCK_SIZE",
    "DamagedSpan",
    "RecordLink",
    "TranscriptDamage",
    "TranscriptFormat",
    "TranscriptReading",
    "conversation_order",
    "iter_lines_backwards",
    "open_transcript",
    "parse_line",
    "read_exchanges",
    "read_exchanges_from",
    "read_head",
    "read_records",
    "read_transcript",
    "tail_lines",
]

log = get_logger(__name__)

BLOCK_SIZE = 64 * 1024
"""Bytes read per step when reading a file backwards."""


@dataclass(frozen=True, slots=True)
class RecordLink:
    """Where a record hangs in a transcript that links its records into a tree.

    Claude Code's records name their own ``uuid`` and their parent's (``parentUuid``,
    ``logicalParentUuid`` across a compaction). uuid / parent: None when the record has
    none; timestamp: ISO 8601 text ("" when absent), to pick the newest leaf; aside: the
    record is off the main conversation (a sidechain) and is left out of it.
    """

    uuid: str | None
    parent: str | None
    timestamp: str = ""
    aside: bool = False


@dataclass(frozen=True, slots=True)
class TranscriptFormat:
    """How to read one agent's JSONL transcript.

    is_prompt: whether a record opens an exchange; used to count how far back to read.
    It may also accept records that only sometimes do: reading goes on until ``build``
    returns enough exchanges. build: turn records in conversation order into exchanges;
    records before the first prompt are a partial exchange and must be dropped.
    link: for transcripts whose records form a tree (Claude Code), where a record hangs;
    records are then put in conversation order (``conversation_order``) before ``build``.
    streams: ``build`` only iterates over its records (at most a few times, never by index),
    so a whole transcript is handed to it as a stream read from the file again instead of
    a list held in memory.
    """

    is_prompt: Callable[[JsonObject], bool]
    build: Callable[[Iterable[JsonObject]], list[Exchange]]
    link: Callable[[JsonObject], RecordLink | None] | None = None
    streams: bool = False


@dataclass(frozen=True, slots=True)
class DamagedSpan:
    """One damaged place of a transcript, found reading it whole.

    kind: ``unreadable`` (a line, or part of one, that holds no whole record), ``nul`` (a
    run of NUL bytes), ``cut`` (the last line, torn: no newline, no whole record) or
    ``broken-link`` (a whole record whose parent record is missing). line: 1-based line
    number; start / end: 0-based byte offsets in the file, end exclusive.
    """

    kind: str
    line: int
    start: int
    end: int


_KIND_WORDS = {
    "unreadable": ("record unreadable", "records unreadable"),
    "cut": ("last line cut", "last line cut"),
    "broken-link": ("record links to a missing parent", "records link to a missing parent"),
}
_MAX_LISTED = 5
_MAX_STORED_SPANS = 100


@dataclass(frozen=True, slots=True)
class TranscriptDamage:
    """What was wrong with a transcript read whole: its damaged places and the records kept.

    spans: in file order, at most ``_MAX_STORED_SPANS`` (``more`` counts the rest);
    records: whole records read.
    """

    spans: tuple[DamagedSpan, ...]
    records: int
    more: int = 0

    def summary(self) -> str:
        """Return one line: ``2 records unreadable at lines 14, 15 (bytes 5120-6143); ...``."""
        parts: list[str] = []
        for kind in ("unreadable", "nul", "cut", "broken-link"):
            spans = [s for s in self.spans if s.kind == kind]
            if not spans:
                continue
            where = f"bytes {spans[0].start}-{spans[-1].end - 1}"
            lines = _listed([s.line for s in spans])
            if kind == "nul":
                total = sum(s.end - s.start for s in spans)
                parts.append(f"{total} NUL byte{'s' if total != 1 else ''} at line{'s' if len(spans) > 1 else ''} {lines} ({where})")
                continue
            one, many = _KIND_WORDS[kind]
            count = len(spans)
            label = f"{count} {one if count == 1 else many}" if kind != "cut" else one
            if kind == "broken-link":
                where = f"byte{'s' if count > 1 else ''} {', '.join(str(s.start) for s in spans[:_MAX_LISTED])}"
            parts.append(f"{label} at line{'s' if count > 1 else ''} {lines} ({where})")
        if self.more:
            parts.append(f"and {self.more} more damaged places")
        return "; ".join(parts)

    def to_json(self) -> dict[str, JsonValue]:
        """Return ``{"summary", "records", "spans": [{"kind", "line", "start", "end"}], "more"}``."""
        return {
            "summary": self.summary(),
            "records": self.records,
            "spans": [{"kind": s.kind, "line": s.line, "start": s.start, "end": s.end} for s in self.spans],
            "more": self.more,
        }


def _listed(numbers: list[int]) -> str:
    """Return ``14, 15, 16`` (at most ``_MAX_LISTED`` numbers, then ``and N more``)."""
    unique = sorted(set(numbers))
    shown = ", ".join(str(n) for n in unique[:_MAX_LISTED])
    return shown + (f" and {len(unique) - _MAX_LISTED} more" if len(unique) > _MAX_LISTED else "")


@dataclass(frozen=True, slots=True)
class TranscriptReading:
    """A transcript read whole: its exchanges (oldest first) and its damage (None when intact)."""

    exchanges: tuple[Exchange, ...]
    damage: TranscriptDamage | None = None


def iter_lines_backwards(fh: BinaryIO, block_size: int = BLOCK_SIZE) -> Iterator[bytes]:
    """Yield the lines of a seekable binary file from the last to the first, without newlines.

    Reads ``block_size`` bytes per step from the end, so stopping after a few lines costs
    a few blocks whatever the file's size. The text after the last newline (a cut line, or
    ``b""`` when the file ends with a newline) comes first. Blocks on disk reads.
    """
    end = fh.seek(0, os.SEEK_END)
    position = end
    pending: list[bytes] = []  # pieces of the line being assembled, rightmost first
    while position > 0:
        step = min(block_size, position)
        position -= step
        fh.seek(position)
        block = fh.read(step)
        parts = block.split(b"\n")
        if len(parts) == 1:
            pending.append(block if block.strip(b"\x00") else b"\x00")  # a hole: one NUL stands for it
            continue
        pending.append(parts[-1])
        yield b"".join(reversed(pending))
        yield from reversed(parts[1:-1])
        pending = [parts[0]]
    if pending:
        yield b"".join(reversed(pending))


def tail_lines(path: Path, max_lines: int, block_size: int = BLOCK_SIZE) -> list[bytes]:
    """Return the last ``max_lines`` non-blank lines of ``path`` in file order, without newlines.

    Reads backwards from the end (see ``iter_lines_backwards``). Raises OSError when the
    file cannot be opened.
    """
    lines: list[bytes] = []
    if max_lines <= 0:
        return lines
    with path.open("rb") as fh:
        for line in iter_lines_backwards(fh, block_size):
            if line.strip(b" \t\r\x00"):
                lines.append(line)
                if len(lines) >= max_lines:
                    break
    lines.reverse()
    return lines


def parse_line(line: bytes) -> list[JsonObject]:
    """Return the JSON objects on one transcript line; [] for a blank, cut or foreign line.

    NUL runs (left by a crash in the middle of a write) split a line into pieces that are
    parsed apart, so a record written after the hole is still found; so is a whole record
    written right after a cut one (``{"a": 1{"b": 2}``: the writer was killed mid-line and
    the next write went on from there).
    """
    return _line_records(line)[0]


_MAX_RECOVERY_TRIES = 4096
"""Most positions tried when looking for whole records inside one damaged line piece."""


def _line_records(line: bytes) -> tuple[list[JsonObject], bool]:
    """Return the JSON objects on one line and whether any of it was unreadable (damage)."""
    pieces = line.split(b"\x00") if b"\x00" in line else [line]
    records: list[JsonObject] = []
    damaged = False
    for piece in pieces:
        piece = piece.strip()
        if not piece:
            continue
        found, whole = _piece_records(piece)
        records.extend(found)
        damaged = damaged or not whole
    return records, damaged


def _piece_records(piece: bytes) -> tuple[list[JsonObject], bool]:
    """Return the objects in a stripped, NUL-free piece and whether all of it was whole records."""
    try:
        value = json.loads(piece)
    except ValueError:
        pass
    else:
        return ([value], True) if isinstance(value, dict) else ([], False)
    # A cut record with whole ones after it: find the first '{"' from which the rest
    # decodes as objects up to the end of the piece.
    try:
        text = piece.decode("utf-8", "surrogateescape")
    except UnicodeDecodeError:  # pragma: no cover - surrogateescape decodes any bytes
        return [], False
    decoder = json.JSONDecoder()
    position = text.find('{"', 1)
    tries = 0
    while position != -1 and tries < _MAX_RECOVERY_TRIES:
        tries += 1
        found = _objects_to_end(decoder, text, position)
        if found:
            return found, False
        position = text.find('{"', position + 1)
    return [], False


def _objects_to_end(decoder: json.JSONDecoder, text: str, position: int) -> list[JsonObject]:
    """Return the objects that fill ``text`` from ``position`` to its end, else []."""
    found: list[JsonObject] = []
    end = len(text)
    while position < end:
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            return []
        if not isinstance(value, dict):
            return []
        found.append(value)
        while position < end and text[position] in " \t\r\n":
            position += 1
        if position < end and text[position] != "{":
            return []
    return found


def open_transcript(path: Path) -> BinaryIO | None:
    """Open a transcript for reading bytes: plain, or decompressed when it ends in ``.zst``.

    zstd needs the ``zstandard`` package, or ``compression.zstd`` (Python 3.14); without
    either the file is skipped with a warning and None is returned. Raises OSError when the
    file cannot be opened.
    """
    if path.suffix != ".zst":
        return path.open("rb")
    raw = path.open("rb")
    try:
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
        return io.BufferedReader(reader)  # type: ignore[arg-type,unused-ignore]
    except ImportError:
        pass
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]  # Python 3.14

        raw.close()
        return zstd.open(path, "rb")  # type: ignore[no-any-return,unused-ignore]
    except ImportError:
        raw.close()
        log.warning("skipping compressed transcript %s: install 'zstandard' to read .zst files", path)
        return None


def read_records(path: Path) -> list[JsonObject]:
    """Return every JSON object record of a transcript in file order (``.zst`` decompressed).

    Raises OSError when the file cannot be read; returns [] for a ``.zst`` file that cannot
    be decompressed (warned).
    """
    return _records_of(_Scan(path))


def conversation_order(links: Sequence[RecordLink | None]) -> tuple[list[int], list[int]]:
    """Return the positions of linked records in conversation order, and those of broken links.

    links: one per record in file order (None: the record is not in the tree).
    The current branch ends at the newest leaf (latest ``timestamp``, then the last in the
    file) and is followed back to its root. Where it stops at a parent that is not among
    the records (one lost to damage, or the start of a window read from the end), it goes
    on from the nearest leaf before that record in the file whose own chain does not stop
    at the same missing parent (that would be an abandoned sibling branch); each such
    break is returned in the second list. Records not in the tree keep their file order,
    ahead of the branch; when no record names another as parent, the file order is kept.
    """
    by_uuid: dict[str, int] = {}
    for index, link in enumerate(links):
        if link is not None and link.uuid is not None and not link.aside:
            by_uuid[link.uuid] = index
    everything = list(range(len(links)))
    if not by_uuid:
        return everything, []
    parents = {links[i].parent for i in by_uuid.values()}  # type: ignore[union-attr]
    if not parents & by_uuid.keys():
        return everything, []
    leaves = [i for u, i in by_uuid.items() if u not in parents]
    if not leaves:  # a cycle: the file's order
        return everything, []

    def parent_of(index: int) -> str | None:
        return links[index].parent  # type: ignore[union-attr]

    seen: set[int] = set()

    def walk(start: int) -> tuple[list[int], str | None]:
        """Follow parents from ``start``; return the records (newest first) and the missing parent."""
        chain: list[int] = []
        current: int | None = start
        while current is not None and current not in seen:
            seen.add(current)
            chain.append(current)
            parent = parent_of(current)
            if parent is None:
                return chain, None
            current = by_uuid.get(parent)
            if current is None:
                return chain, parent
        return chain, None

    leaf = max(leaves, key=lambda i: (links[i].timestamp, i))  # type: ignore[union-attr]
    branch, missing = walk(leaf)
    broken: list[int] = []
    candidates = sorted(leaves, reverse=True)
    while missing is not None:
        at = branch[-1]
        for candidate in candidates:
            if candidate >= at or candidate in seen:
                continue
            segment, end = walk(candidate)
            if end == missing or not segment:
                continue  # a sibling of the same missing parent: an abandoned branch
            broken.append(at)
            branch.extend(segment)
            missing = end
            break
        else:
            break
    branch.reverse()
    unlinked = [i for i, link in enumerate(links) if link is None or link.uuid is None]
    return unlinked + branch, sorted(broken)


def read_exchanges_from(fh: BinaryIO, fmt: TranscriptFormat, limit: int | None) -> list[Exchange]:
    """Return the exchanges of an open, seekable JSONL transcript; the last ``limit`` when given.

    With a limit the file is read backwards until ``limit`` records that ``fmt.is_prompt``
    accepts are in hand and ``fmt.build`` turns them into at least ``limit`` exchanges
    (or the file's start is reached); the bytes before that are never read.
    """
    if limit is None:
        fh.seek(0)
        return last(_build_ordered(fmt, [record for line in fh for record in parse_line(line)]), None)
    if limit <= 0:
        return []
    collected: list[JsonObject] = []  # newest first
    prompts = 0
    target = limit
    lines = iter_lines_backwards(fh)
    while True:
        exhausted = True
        for line in lines:
            found = parse_line(line)
            found.reverse()
            collected.extend(found)
            prompts += sum(1 for record in found if fmt.is_prompt(record))
            if prompts >= target:
                exhausted = False
                break
        exchanges = _build_ordered(fmt, collected[::-1])
        if exhausted or len(exchanges) >= limit:
            return last(exchanges, limit)
        target = prompts + (limit - len(exchanges))


def _build_ordered(fmt: TranscriptFormat, records: list[JsonObject]) -> list[Exchange]:
    """Build exchanges from records in file order, put in conversation order first when linked."""
    if fmt.link is not None:
        order, _ = conversation_order([fmt.link(record) for record in records])
        records = [records[i] for i in order]
    return fmt.build(records)


def read_exchanges(path: Path, fmt: TranscriptFormat, limit: int | None, agent: str) -> list[Exchange]:
    """Return the exchanges of a transcript file, or [] with a warning when it cannot be read.

    Plain files are read from the end when ``limit`` is given (``read_exchanges_from``);
    without a limit, or for ``.zst`` files, the file is read whole as ``read_transcript``
    does. ``agent`` names the agent in the warning.
    """
    if limit is None or path.suffix == ".zst":
        return last(list(read_transcript(path, fmt, agent).exchanges), limit)
    try:
        with path.open("rb") as fh:
            return read_exchanges_from(fh, fmt, limit)
    except FileNotFoundError:
        log.warning("%s transcript %s does not exist", agent, path)
    except Exception as exc:  # another program's file: whatever breaks, the caller gets []
        log.warning("cannot read %s transcript %s: %s", agent, path, exc, exc_info=log.isEnabledFor(logging.DEBUG))
    return []


def read_transcript(
    path: Path, fmt: TranscriptFormat, agent: str, *, upto_bytes: int | None = None, warn_damage: bool = True
) -> TranscriptReading:
    """Read a whole transcript record by record, streamed: its exchanges and where it is damaged.

    Every whole record is used, whatever is around it (a torn last line, NUL runs, a
    record cut in half, a broken parent link: see ``TranscriptDamage``). Memory follows the
    exchanges, not the file: the records are read twice from the file (once to find
    damage and, for linked formats, the conversation order; once to build), never all held.
    upto_bytes: read only the file's first bytes (the part a session ended at, when the
    agent goes on appending). Never raises: an unreadable file gives no exchange and a
    warning naming ``agent``. Formats: see each adapter's module (JSON Lines, optionally zstd).
    warn_damage: log a warning when the file is damaged (False: the caller reports ``damage``).
    """
    scan = _Scan(path, upto_bytes)
    try:
        if fmt.link is not None and path.suffix != ".zst":
            places: list[tuple[int, int, int]] = []  # (line, start, index on the line)
            links: list[RecordLink | None] = []
            for line_no, start, records in scan.lines():
                for k, record in enumerate(records):
                    places.append((line_no, start, k))
                    links.append(fmt.link(record))
            order, broken = conversation_order(links)
            for position in broken:
                line_no, start, _ = places[position]
                scan.note("broken-link", line_no, start, start + 1)
            exchanges = fmt.build(_Replay(path, [places[i] for i in order]))
        elif fmt.streams:
            exchanges = fmt.build(_Rescan(scan))
            if not scan.done:
                for _ in scan.lines():  # build stopped early: finish the damage check
                    pass
        else:
            exchanges = _build_ordered(fmt, _records_of(scan))
    except FileNotFoundError:
        log.warning("%s transcript %s does not exist", agent, path)
        return TranscriptReading(())
    except Exception as exc:  # another program's file: whatever breaks, the caller gets nothing
        log.warning("cannot read %s transcript %s: %s", agent, path, exc, exc_info=log.isEnabledFor(logging.DEBUG))
        return TranscriptReading(())
    damage = scan.damage()
    if damage is not None and warn_damage:
        log.warning("the %s transcript %s is damaged: %s", agent, path, damage.summary())
    return TranscriptReading(tuple(last(exchanges, None)), damage)


def _records_of(scan: _Scan) -> list[JsonObject]:
    """Return every record ``scan`` reads, in file order."""
    return [record for _, _, records in scan.lines() for record in records]


class _Scan:
    """Read a transcript forwards, line by line, noting damage (see ``TranscriptDamage``).

    ``lines`` may be called again: each call reads the file from its start, and damage is
    noted on the first complete pass only.
    """

    def __init__(self, path: Path, upto_bytes: int | None = None) -> None:
        self.path = path
        self.upto_bytes = upto_bytes
        self.done = False
        self._spans: list[DamagedSpan] = []
        self._more = 0
        self._records = 0

    def note(self, kind: str, line: int, start: int, end: int) -> None:
        """Record one damaged place."""
        if len(self._spans) < _MAX_STORED_SPANS:
            self._spans.append(DamagedSpan(kind, line, start, end))
        else:
            self._more += 1

    def damage(self) -> TranscriptDamage | None:
        """Return what the first pass found, or None when the transcript was intact."""
        if not self._spans and not self._more:
            return None
        spans = tuple(sorted(self._spans, key=lambda s: (s.start, s.kind)))
        return TranscriptDamage(spans, self._records, self._more)

    def lines(self) -> Iterator[tuple[int, int, list[JsonObject]]]:
        """Yield ``(line number, start offset, records)`` for every line that holds records.

        Raises OSError when the file cannot be read; a ``.zst`` file that cannot be
        decompressed (no decompressor) gives nothing, a corrupt frame ends the lines there.
        """
        noting = not self.done
        if noting:  # a fresh pass notes afresh (an earlier one was stopped part-way)
            self._spans, self._more, self._records = [], 0, 0
        fh = open_transcript(self.path)
        if fh is None:
            self.done = True
            return
        offset = 0
        line_no = 0
        with fh:
            try:
                for line in _raw_lines(fh, 0, self.upto_bytes):
                    line_no += 1
                    offset = line.end
                    records, damaged = _line_records(line.raw)
                    if noting:
                        self._check(line, line_no, records, damaged)
                    if records:
                        yield line_no, line.start, records
            except Exception as exc:  # a corrupt zstd frame: keep what came before it
                if isinstance(exc, OSError) and self.path.suffix != ".zst":
                    raise
                log.warning("transcript %s is cut or corrupt after line %d: %s", self.path, line_no, exc)
                if noting:
                    self.note("unreadable", line_no + 1, offset, offset + 1)
        if noting:
            self.done = True

    def _check(self, line: _RawLine, line_no: int, records: list[JsonObject], damaged: bool) -> None:
        self._records += len(records)
        for start, end in line.nul_runs:
            self.note("nul", line_no, start, end)
        if damaged:
            torn = not line.raw.endswith(b"\n")
            self.note("cut" if torn else "unreadable", line_no, line.start, line.end)


_PIECE_BYTES = 1 << 20
"""Most bytes read at a time within one line (a long line is joined from such pieces)."""


@dataclass(frozen=True, slots=True)
class _RawLine:
    """One line as read: its bytes (a NUL run longer than a piece kept as one NUL), where it
    starts and ends in the file (0-based, end exclusive) and its NUL runs there."""

    raw: bytes
    start: int
    end: int
    nul_runs: tuple[tuple[int, int], ...]


def _raw_lines(fh: BinaryIO, offset: int, limit: int | None, *, count: int | None = None) -> Iterator[_RawLine]:
    """Yield the lines of ``fh`` from its position ``offset`` (up to byte ``limit``; ``count`` lines).

    Reads at most ``_PIECE_BYTES`` at a time, and a piece that is all NUL bytes (a hole a crash
    left, which can be gigabytes with no newline) is kept as a single NUL: memory follows the
    longest real record, never the hole.
    """
    pieces: list[bytes] = []
    runs: list[tuple[int, int]] = []
    start = offset
    emitted = 0
    while count is None or emitted < count:
        size = _PIECE_BYTES if limit is None else min(_PIECE_BYTES, limit - offset)
        piece = fh.readline(size) if size > 0 else b""
        if piece:
            if b"\x00" in piece:
                for run in re.finditer(rb"\x00+", piece):
                    at, to = offset + run.start(), offset + run.end()
                    if runs and runs[-1][1] == at:
                        runs[-1] = (runs[-1][0], to)
                    else:
                        runs.append((at, to))
            if piece.strip(b"\x00"):
                pieces.append(piece)
            elif not pieces or pieces[-1] != b"\x00":
                pieces.append(b"\x00")
            offset += len(piece)
        if pieces and (not piece or piece.endswith(b"\n")):
            yield _RawLine(b"".join(pieces), start, offset, tuple(runs))
            emitted += 1
            pieces, runs, start = [], [], offset
        if not piece:
            return


class _Replay:
    """The records at given places of a transcript, read again from the file in that order."""

    def __init__(self, path: Path, places: list[tuple[int, int, int]]) -> None:
        self._path = path
        self._places = places

    def __iter__(self) -> Iterator[JsonObject]:
        cached_at = -1
        cached: list[JsonObject] = []
        with self._path.open("rb") as fh:
            for _, start, k in self._places:
                if start != cached_at:
                    fh.seek(start)
                    line = next(_raw_lines(fh, start, None, count=1), None)
                    cached, cached_at = (parse_line(line.raw) if line else []), start
                if k < len(cached):
                    yield cached[k]


class _Rescan:
    """Every record of a transcript in file order, read from the file at each iteration."""

    def __init__(self, scan: _Scan) -> None:
        self._scan = scan

    def __iter__(self) -> Iterator[JsonObject]:
        for _, _, records in self._scan.lines():
            yield from records


def head_start(path: Path, max_records: int) -> tuple[datetime | None, str | None]:
    """Return the first ``timestamp`` and the first ``cwd`` among a transcript's first records.

    Claude Code and Qwen Code put both on their records (ISO 8601 text); (None, None) when
    the file cannot be read or holds neither.
    """
    started: datetime | None = None
    cwd: str | None = None
    for record in read_head(path, max_records=max_records):
        started = started or parse_time(record.get("timestamp"))
        cwd = cwd or as_str(record.get("cwd"))
    return started, cwd


def read_head(path: Path, max_records: int = 8, max_bytes: int = 256 * 1024) -> list[JsonObject]:
    """Return the first ``max_records`` records of a transcript, reading at most ``max_bytes``.

    Used to learn a transcript's session id, start time and cwd from its first lines.
    Returns [] when the file cannot be read.
    """
    records: list[JsonObject] = []
    try:
        fh = open_transcript(path)
        if fh is None:
            return records
        with fh:
            seen = 0
            for line in fh:
                seen += len(line)
                records.extend(parse_line(line))
                if len(records) >= max_records or seen >= max_bytes:
                    break
    except Exception as exc:  # foreign file: any failure means "no head"
        log.debug("cannot read the head of %s: %s", path, exc)
    return records[:max_records]
