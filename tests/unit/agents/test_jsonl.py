"""Tests for shellkeep/agents/jsonl.py: backwards reading, tolerant lines, tails of big transcripts, zstd."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from shellkeep.agents import jsonl
from shellkeep.agents.claude import CLAUDE_FORMAT
from shellkeep.agents.jsonl import iter_lines_backwards, parse_line, read_exchanges_from, read_records, tail_lines


class CountingFile(io.FileIO):
    """A real file that counts the bytes read from it."""

    bytes_read = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data or b"")
        return data or b""

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        count = super().readinto(buffer)
        self.bytes_read += count or 0
        return count or 0


@pytest.mark.parametrize("block_size", [1, 2, 3, 7, 64 * 1024], ids=lambda n: f"block-{n}")
@pytest.mark.parametrize(
    "data",
    [b"", b"a", b"a\n", b"\n\n", b"one\ntwo\nthree", b"one\ntwo\nthree\n", b"long line " * 50 + b"\nshort\n"],
    ids=["empty", "no-newline", "one-line", "blank-lines", "cut-last", "complete", "long-line"],
)
def test_lines_backwards_are_the_lines_reversed(tmp_path: Path, data: bytes, block_size: int) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    with path.open("rb") as fh:
        got = list(iter_lines_backwards(fh, block_size))
    expected = list(reversed(data.split(b"\n"))) if data else []
    assert got == expected


def test_tail_lines_returns_the_last_non_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"1\n2\n3\n\n4\n\x00\x00\n")
    assert tail_lines(path, 2) == [b"3", b"4"]
    assert tail_lines(path, 10) == [b"1", b"2", b"3", b"4"]
    assert tail_lines(path, 0) == []


def _write_big_claude_transcript(path: Path, size_bytes: int) -> None:
    """Write a Claude Code transcript of about ``size_bytes``, ending in three distinct exchanges."""
    filler = "x" * 900

    def pair(n: str, prompt: str, answer: str) -> str:
        user = {"type": "user", "message": {"role": "user", "content": prompt}, "timestamp": "2026-03-14T07:30:00Z"}
        assistant = {
            "type": "assistant",
            "message": {
                "id": f"msg_{n}",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": answer}],
            },
        }
        return json.dumps(user) + "\n" + json.dumps(assistant) + "\n"

    chunk = "".join(pair(f"f{i}", "filler prompt", filler) for i in range(500)).encode()
    with path.open("wb") as fh:
        written = 0
        while written < size_bytes:
            fh.write(chunk)
            written += len(chunk)
        for n in ("a", "b", "c"):
            fh.write(pair(n, f"prompt {n}", f"answer {n}").encode())


def test_big_claude_transcript_with_limit_reads_only_its_tail(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    _write_big_claude_transcript(path, 50 * 1024 * 1024)
    assert path.stat().st_size > 50 * 1024 * 1024
    with CountingFile(path, "rb") as fh:
        exchanges = read_exchanges_from(fh, CLAUDE_FORMAT, limit=2)  # type: ignore[arg-type]
        bytes_read = fh.bytes_read
    assert [(e.index, e.prompt, e.answer) for e in exchanges] == [
        (0, "prompt b", "answer b"),
        (1, "prompt c", "answer c"),
    ]
    assert bytes_read <= 2 * jsonl.BLOCK_SIZE


def test_tail_of_a_big_file_reads_one_block(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    _write_big_claude_transcript(path, 5 * 1024 * 1024)
    with CountingFile(path, "rb") as fh:
        lines = iter_lines_backwards(fh)  # type: ignore[arg-type]
        last_two = [next(lines), next(lines), next(lines)]
        bytes_read = fh.bytes_read
    assert last_two[0] == b"" and b"answer c" in last_two[1] and b"prompt c" in last_two[2]
    assert bytes_read == jsonl.BLOCK_SIZE


def test_limit_reads_back_further_until_enough_exchanges(tmp_path: Path) -> None:
    """Prompts whose build gives fewer exchanges (here: duplicates) make the reader go on."""
    path = tmp_path / "t.jsonl"
    lines = [{"k": "p", "n": i} for i in range(6)] + [{"k": "p", "n": 5}] * 3
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    def build(records: list[dict[str, object]]) -> list:  # type: ignore[type-arg]
        from shellkeep.agents.records import ExchangeBuilder

        builder = ExchangeBuilder()
        seen: set[object] = set()
        for record in records:
            if record["n"] not in seen:
                seen.add(record["n"])
                builder.prompt(str(record["n"]))
        return builder.exchanges()

    fmt = jsonl.TranscriptFormat(is_prompt=lambda r: r.get("k") == "p", build=build)
    with path.open("rb") as fh:
        assert [e.prompt for e in read_exchanges_from(fh, fmt, limit=3)] == ["3", "4", "5"]
        assert [e.prompt for e in read_exchanges_from(fh, fmt, limit=100)] == [str(i) for i in range(6)]
        assert read_exchanges_from(fh, fmt, limit=0) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"a": 1}', [{"a": 1}]),
        (b'{"a": 1', []),
        (b"[1, 2]", []),
        (b"", []),
        (b"\x00\x00\x00\x00", []),
        (b'\x00\x00{"a": 1}', [{"a": 1}]),
        (b'{"a": 1}\x00\x00{"b": 2}', [{"a": 1}, {"b": 2}]),
        (b'{"a": \x00\x00{"b": 2}', [{"b": 2}]),
        (b"\xff\xfe", []),
    ],
    ids=["object", "cut", "array", "blank", "nul-only", "nul-before", "nul-between", "cut-then-nul", "binary"],
)
def test_parse_line_tolerates_damage(line: bytes, expected: list[dict[str, object]]) -> None:
    assert parse_line(line) == expected


def test_unreadable_transcript_gives_nothing_and_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="shellkeep.agents.jsonl"):
        assert jsonl.read_exchanges(tmp_path / "missing.jsonl", CLAUDE_FORMAT, None, "claude") == []
        (tmp_path / "dir.jsonl").mkdir()
        assert jsonl.read_exchanges(tmp_path / "dir.jsonl", CLAUDE_FORMAT, 2, "claude") == []
    assert "does not exist" in caplog.text and "cannot read claude transcript" in caplog.text


def test_zst_transcript_is_decompressed(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    raw = b'{"a": 1}\n{"b": 2}\n{"c": '
    path = tmp_path / "r.jsonl.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(raw))
    assert read_records(path) == [{"a": 1}, {"b": 2}]


def test_corrupt_zst_keeps_nothing_and_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("zstandard")
    path = tmp_path / "r.jsonl.zst"
    path.write_bytes(b"not zstd at all")
    with caplog.at_level(logging.WARNING):
        assert jsonl.read_exchanges(path, CLAUDE_FORMAT, None, "codex") == []
    assert "r.jsonl.zst" in caplog.text


def test_zst_without_a_decompressor_is_skipped_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "zstandard", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "compression", None)
    path = tmp_path / "r.jsonl.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd")
    with caplog.at_level(logging.WARNING):
        assert read_records(path) == []
    assert "install 'zstandard'" in caplog.text
