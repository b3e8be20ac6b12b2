"""Read agents' JSONL transcripts defensively: backwards in blocks, cut lines, NUL padding, zstd.

Agents append one JSON object per line and can be killed mid-write, so a transcript may
end in half a line, hold runs of NUL bytes where a crash left a hole, or (Codex) be stored
compressed as ``.jsonl.zst``. Lines that do not parse as a JSON object are skipped.
Transcripts reach hundreds of megabytes: ``read_exchanges`` with a limit reads from the
end of the file, block by block, until enough prompts are in hand.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from shellkeep.agents.base import Exchange
from shellkeep.agents.records import JsonObject, as_str, last, parse_time
from shellkeep.logs import get_logger

__all__ = [
    "BLOCK_SIZE",
    "TranscriptFormat",
    "iter_lines_backwards",
    "open_transcript",
    "parse_line",
    "read_exchanges",
    "read_exchanges_from",
    "read_head",
    "read_records",
    "tail_lines",
]

log = get_logger(__name__)

BLOCK_SIZE = 64 * 1024
"""Bytes read per step when reading a file backwards."""


@dataclass(frozen=True, slots=True)
class TranscriptFormat:
    """How to read one agent's JSONL transcript.

    is_prompt: whether a record opens an exchange; used to count how far back to read.
    It may also accept records that only sometimes do: reading goes on until ``build``
    returns enough exchanges. build: turn records in file order into exchanges; records
    before the first prompt are a partial exchange and must be dropped.
    """

    is_prompt: Callable[[JsonObject], bool]
    build: Callable[[list[JsonObject]], list[Exchange]]


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
            pending.append(block)
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
    parsed apart, so a record written after the hole is still found.
    """
    pieces = line.split(b"\x00") if b"\x00" in line else [line]
    records: list[JsonObject] = []
    for piece in pieces:
        piece = piece.strip()
        if not piece.startswith(b"{"):
            continue
        try:
            value = json.loads(piece)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


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
    fh = open_transcript(path)
    if fh is None:
        return []
    records: list[JsonObject] = []
    with fh:
        try:
            for line in fh:
                records.extend(parse_line(line))
        except Exception as exc:  # a corrupt zstd frame: keep what came before it
            if isinstance(exc, OSError) and path.suffix != ".zst":
                raise
            log.warning("transcript %s is cut or corrupt after %d records: %s", path, len(records), exc)
    return records


def read_exchanges_from(fh: BinaryIO, fmt: TranscriptFormat, limit: int | None) -> list[Exchange]:
    """Return the exchanges of an open, seekable JSONL transcript; the last ``limit`` when given.

    With a limit the file is read backwards until ``limit`` records that ``fmt.is_prompt``
    accepts are in hand and ``fmt.build`` turns them into at least ``limit`` exchanges
    (or the file's start is reached); the bytes before that are never read.
    """
    if limit is None:
        fh.seek(0)
        records = [record for line in fh for record in parse_line(line)]
        return last(fmt.build(records), None)
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
        exchanges = fmt.build(collected[::-1])
        if exhausted or len(exchanges) >= limit:
            return last(exchanges, limit)
        target = prompts + (limit - len(exchanges))


def read_exchanges(path: Path, fmt: TranscriptFormat, limit: int | None, agent: str) -> list[Exchange]:
    """Return the exchanges of a transcript file, or [] with a warning when it cannot be read.

    Plain files are read from the end when ``limit`` is given (``read_exchanges_from``);
    ``.zst`` files are decompressed as a stream and only the last ``limit`` exchanges kept.
    ``agent`` names the agent in the warning.
    """
    try:
        if path.suffix == ".zst":
            return last(fmt.build(read_records(path)), limit)
        with path.open("rb") as fh:
            return read_exchanges_from(fh, fmt, limit)
    except FileNotFoundError:
        log.warning("%s transcript %s does not exist", agent, path)
    except Exception as exc:  # another program's file: whatever breaks, the caller gets []
        log.warning("cannot read %s transcript %s: %s", agent, path, exc, exc_info=log.isEnabledFor(logging.DEBUG))
    return []


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
