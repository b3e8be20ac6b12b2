"""Damaged transcripts are read record by record: real files damaged as a crash damages them.

Each case writes a Claude Code or Codex transcript in the real format, damages the file on
disk (os.truncate mid-line, os.pwrite of a NUL block over the middle, a parentUuid pointing
nowhere, a record cut in half with a whole one after it), and reads it whole and from its end.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession
from shellkeep.agents.claude import ClaudeAdapter
from shellkeep.agents.codex import CodexAdapter
from shellkeep.agents.jsonl import TranscriptReading
from tests.transcripts import claude_lines, claude_uuid, codex_lines

SID = "3f2a9c1e-7b4d-4e21-9a0f-5c6d7e8f9a01"
TID = "019ad3c2-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
CLAUDE = ClaudeAdapter()
CODEX = CodexAdapter()
N = 5


def _write(tmp_path: Path, agent: str) -> tuple[Path, list[bytes]]:
    """Write a five-exchange transcript of ``agent``; return its path and lines."""
    if agent == "claude":
        lines = list(claude_lines(N, session_id=SID, cwd="/home/alice/src/app"))
        path = tmp_path / f"{SID}.jsonl"
    else:
        lines = list(codex_lines(N, thread_id=TID, cwd="/home/alice/src/app"))
        path = tmp_path / f"rollout-2026-11-29T10-15-00-{TID}.jsonl"
    path.write_bytes(b"".join(lines))
    return path, lines


def _read(agent: str, path: Path) -> TranscriptReading:
    adapter = CLAUDE if agent == "claude" else CODEX
    return adapter.read_transcript(AgentSession(agent, SID if agent == "claude" else TID, path))


def _tail(agent: str, path: Path, limit: int) -> list[tuple[str, str]]:
    adapter = CLAUDE if agent == "claude" else CODEX
    found = adapter.read_exchanges(AgentSession(agent, SID if agent == "claude" else TID, path), limit)
    return [(e.prompt, e.answer) for e in found]


def _offset(lines: list[bytes], index: int) -> int:
    """Return the byte offset of line ``index`` (0-based)."""
    return sum(len(line) for line in lines[:index])


def _exchange_lines(agent: str, i: int) -> range:
    """Return the 0-based line indices of exchange ``i``."""
    if agent == "claude":
        return range(1 + 4 * i, 1 + 4 * (i + 1))  # after the permission-mode line
    return range(1 + 8 * i, 1 + 8 * (i + 1))  # after session_meta


def _answers(reading: TranscriptReading) -> dict[str, str]:
    return {e.prompt: e.answer for e in reading.exchanges}


AGENTS = pytest.mark.parametrize("agent", ["claude", "codex"])


@AGENTS
def test_an_intact_transcript_reports_no_damage(tmp_path: Path, agent: str) -> None:
    path, _ = _write(tmp_path, agent)
    reading = _read(agent, path)
    assert reading.damage is None
    assert [e.prompt for e in reading.exchanges] == [f"prompt {i}" for i in range(N)]
    assert all(e.answer.endswith(f"answer {i}") for i, e in enumerate(reading.exchanges))


@AGENTS
def test_a_torn_last_line_is_reported_and_the_rest_read(tmp_path: Path, agent: str) -> None:
    path, lines = _write(tmp_path, agent)
    size = path.stat().st_size
    os.truncate(path, size - len(lines[-1]) // 2)  # killed in the middle of its last write
    reading = _read(agent, path)
    assert reading.damage is not None
    [span] = reading.damage.spans
    assert (span.kind, span.line, span.start) == ("cut", len(lines), _offset(lines, len(lines) - 1))
    assert reading.damage.summary() == f"last line cut at line {len(lines)} (bytes {span.start}-{span.end - 1})"
    answers = _answers(reading)
    assert list(answers) == [f"prompt {i}" for i in range(N)]
    for i in range(N - 1):
        assert answers[f"prompt {i}"].endswith(f"answer {i}")
    assert _tail(agent, path, 2)[0][0] == f"prompt {N - 2}"


@AGENTS
def test_a_nul_block_over_the_middle_loses_only_the_records_it_covers(tmp_path: Path, agent: str) -> None:
    path, lines = _write(tmp_path, agent)
    hit = _exchange_lines(agent, 2)
    first, second = (hit[1], hit[2]) if agent == "claude" else (hit[3], hit[4])  # its tool call and result
    # From the middle of one line to the middle of the next: both lost, the newline between
    # them too (a crash left a hole where the file system had not written).
    start = _offset(lines, first) + len(lines[first]) // 2
    end = _offset(lines, second) + len(lines[second]) // 2
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, b"\x00" * (end - start), start)
    finally:
        os.close(fd)
    assert path.stat().st_size == _offset(lines, len(lines))
    reading = _read(agent, path)
    assert reading.damage is not None
    kinds = {(s.kind, s.line) for s in reading.damage.spans}
    damaged_line = first + 1  # 1-based: the two lines are one now
    assert ("unreadable", damaged_line) in kinds and ("nul", damaged_line) in kinds
    nul = next(s for s in reading.damage.spans if s.kind == "nul")
    assert (nul.start, nul.end) == (start, end)
    summary = reading.damage.summary()
    assert f"1 record unreadable at line {damaged_line}" in summary
    assert f"{end - start} NUL bytes at line {damaged_line} (bytes {start}-{end - 1})" in summary
    if agent == "claude":  # the record after the hole names a parent that is gone
        assert ("broken-link", damaged_line + 1) in kinds
        assert "1 record links to a missing parent" in summary
    answers = _answers(reading)
    assert list(answers) == [f"prompt {i}" for i in range(N)]  # every prompt survived, those after the hole too
    for i in (0, 1, 3, 4):
        assert answers[f"prompt {i}"].endswith(f"answer {i}")
    assert answers["prompt 2"].endswith("answer 2")  # its last record was after the hole
    assert [p for p, _ in _tail(agent, path, 4)] == [f"prompt {i}" for i in range(1, N)]


def test_a_parent_link_pointing_nowhere_keeps_the_earlier_exchanges(tmp_path: Path) -> None:
    path, lines = _write(tmp_path, "claude")
    index = _exchange_lines("claude", 3)[0]  # exchange 3's prompt
    record = json.loads(lines[index])
    assert record["parentUuid"] == claude_uuid(2, 3)
    record["parentUuid"] = "00000000-dead-4000-8000-000000000000"
    lines[index] = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    path.write_bytes(b"".join(lines))
    reading = _read("claude", path)
    assert reading.damage is not None
    [span] = reading.damage.spans
    assert (span.kind, span.line) == ("broken-link", index + 1)
    assert [e.prompt for e in reading.exchanges] == [f"prompt {i}" for i in range(N)]
    assert [p for p, _ in _tail("claude", path, 3)] == ["prompt 2", "prompt 3", "prompt 4"]


@AGENTS
@pytest.mark.parametrize("glued", [True, False], ids=["same-line", "own-line"])
def test_a_record_cut_in_half_followed_by_a_whole_one(tmp_path: Path, agent: str, glued: bool) -> None:
    path, lines = _write(tmp_path, agent)
    cut = _exchange_lines(agent, 2)[-1]  # exchange 2's last record, killed mid-write...
    half = lines[cut][: len(lines[cut]) // 2]
    # ...and the next write went on right after it (same line), or after a newline.
    lines[cut] = half if glued else half + b"\n"
    path.write_bytes(b"".join(lines))
    reading = _read(agent, path)
    assert reading.damage is not None
    [span] = [s for s in reading.damage.spans if s.kind == "unreadable"]
    assert span.line == cut + 1 and span.start == _offset(lines, cut)
    answers = _answers(reading)
    assert list(answers) == [f"prompt {i}" for i in range(N)]  # prompt 3 followed the cut record
    for i in (0, 1, 3, 4):
        assert answers[f"prompt {i}"].endswith(f"answer {i}")
    if agent == "claude":
        assert "answer 2" not in answers["prompt 2"]  # the cut record was the answer
    else:
        usage = {e.prompt: e.usage for e in reading.exchanges}
        assert usage["prompt 2"] is None and usage["prompt 3"] is not None  # the cut record was its token count
    assert [p for p, _ in _tail(agent, path, 3)] == ["prompt 2", "prompt 3", "prompt 4"]


def test_a_huge_sparse_hole_is_read_through_and_copied_as_a_stream(tmp_path: Path) -> None:
    """A crash can leave gigabytes of NUL bytes with no newline (a file extended, never written)."""
    import hashlib

    from shellkeep.vault.copies import copy_lines

    path = tmp_path / f"{SID}.jsonl"
    before = list(claude_lines(3, session_id=SID, cwd="/w"))
    after = list(claude_lines(2, session_id=SID, cwd="/w", first=3))
    path.write_bytes(b"".join(before))
    hole_at = path.stat().st_size
    hole = 300 << 20
    os.truncate(path, hole_at + hole)  # sparse: 300 MB of NUL bytes, never written
    with path.open("ab") as fh:
        fh.write(b"".join(after))
    reading = _read("claude", path)
    assert [e.prompt for e in reading.exchanges] == [f"prompt {i}" for i in range(5)]
    assert reading.damage is not None
    [nul] = [s for s in reading.damage.spans if s.kind == "nul"]
    assert (nul.start, nul.end, nul.line) == (hole_at, hole_at + hole, len(before) + 1)
    assert not [s for s in reading.damage.spans if s.kind in ("unreadable", "broken-link")]
    assert [p for p, _ in _tail("claude", path, 3)] == ["prompt 2", "prompt 3", "prompt 4"]
    copied = hashlib.sha256()
    with path.open("rb") as fh:
        for piece in copy_lines(fh, lambda line: line):
            assert len(piece) <= 1 << 20 or b"\x00" not in piece  # the hole comes in pieces
            copied.update(piece)
    assert copied.hexdigest() == _file_sha256(path)


def _file_sha256(path: Path) -> str:
    """Return the SHA-256 of a file, read in 1 MiB pieces (``hashlib.file_digest`` is 3.11+)."""
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for piece in iter(lambda: fh.read(1 << 20), b""):
            digest.update(piece)
    return digest.hexdigest()
