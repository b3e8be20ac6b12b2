"""The asciicast reader: goldens of every version, cut lines, invalid files, the real casts."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.asciicast.model import Event, TermSize
from tests.recordings import open_cast
from shellkeep.errors import DataError

DATA = Path(__file__).parents[2] / "data" / "casts"
REAL = Path(__file__).parents[4] / "shared" / "real-casts"


@pytest.mark.parametrize(
    ("name", "version", "size", "events"),
    [
        ("minimal-v2.cast", 2, TermSize(40, 10), [Event(0.5, "o", "hello")]),
        (
            "full-v2.cast",
            2,
            TermSize(100, 50),
            [
                Event(0.25, "o", "\x1b[1;31mred\x1b[0m "),
                Event(1.0, "i", "ls\r"),
                Event(1.5, "o", "żółć \x00 done\r\n"),
                Event(2.0, "r", "120x40"),
                Event(2.5, "m", "checkpoint"),
                Event(3.0, "o", "bye\r\n"),
            ],
        ),
        ("cut-mid-line-v2.cast", 2, TermSize(80, 24), [Event(0.1, "o", "one")]),
        ("minimal-v1.json", 1, TermSize(30, 5), [Event(0.5, "o", "a"), Event(1.5, "o", "b\r\n")]),
        (
            "minimal-v3.cast",
            3,
            TermSize(60, 20),
            [Event(0.5, "o", "first"), Event(0.75, "r", "70x21"), Event(1.0, "o", " second"), Event(1.0, "x", "0")],
        ),
    ],
    ids=["minimal-v2", "full-v2", "cut-mid-line", "v1", "v3"],
)
def test_golden_files_read_to_the_neutral_model(name: str, version: int, size: TermSize, events: list[Event]) -> None:
    cast = open_cast(DATA / name)
    assert cast.header.version == version
    assert cast.header.size == size
    assert list(cast.events()) == events
    assert list(cast.events()) == events  # a second pass reads the same


def test_full_header_fields() -> None:
    header = open_cast(DATA / "full-v2.cast").header
    assert header.timestamp == 1700000000
    assert header.idle_time_limit == 2.5
    assert header.command == "/bin/bash" and header.title == "full"
    assert header.env == {"SHELL": "/bin/bash", "TERM": "xterm-256color"}
    v1 = open_cast(DATA / "minimal-v1.json").header
    assert v1.env == {"SHELL": "/bin/sh", "TERM": None}


def test_a_recording_cut_at_every_byte_reads_up_to_its_last_whole_event(tmp_path: Path) -> None:
    whole = (DATA / "full-v2.cast").read_bytes()
    lines = whole.splitlines(keepends=True)
    header_len = len(lines[0])
    full_events = list(open_cast(DATA / "full-v2.cast").events())
    for cut in range(header_len, len(whole) + 1):
        path = tmp_path / "cut.cast"
        path.write_bytes(whole[:cut])
        events = list(open_cast(path).events())
        complete = whole[:cut].count(b"\n") - 1
        # Every whole line is read; a line cut just before its newline is still whole JSON.
        assert len(events) in (complete, complete + 1)
        assert events == full_events[: len(events)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"not json at all\n", "not an asciicast"),
        (b'{"version": 9, "width": 1, "height": 1}\n', "unsupported asciicast version"),
        (b'{"version": 2, "width": 0, "height": 1}\n', "no valid terminal size"),
        (b'{"version": 2, "width": 5, "height": 5}\n[1, "o", "a"]\ngarbage\n[2, "o", "b"]\n', "line 3"),
        (b'{"version": 2, "width": 5, "height": 5}\n[-1, "o", "a"]\n', "invalid time"),
        (b'{"version": 2, "width": 5, "height": 5}\n[1, "r", "0x5"]\n', "bad terminal size"),
        (b'{"version": 3, "width": 5, "height": 5}\n', "no 'term' object"),
    ],
    ids=["empty", "not-json", "future-version", "bad-size", "broken-middle", "negative-time", "bad-resize", "v3-no-term"],
)
def test_invalid_files_raise_data_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.cast"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        list(open_cast(path).events())


def _real_casts() -> list[Path]:
    return sorted(REAL.glob("v*/*")) if REAL.is_dir() else []


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/real-casts is not beside this checkout")
@pytest.mark.parametrize("path", _real_casts(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_casts_read_or_are_refused(path: Path) -> None:
    invalid = {
        "asciinema-server__1-invalid-time-1.json",
        "asciinema-server__1-wrong-event-length.json",
        "asciinema-server__2-broken.cast",
        "asciinema-server__2-invalid-resize.cast",
        "asciinema-server__3-broken.cast",
        "asciinema-server__3-invalid-time-1.cast",
    }
    if path.name in invalid:
        with pytest.raises(DataError):
            list(open_cast(path).events())
        return
    cast = open_cast(path)
    events = list(cast.events())
    times = [e.time for e in events]
    assert times == sorted(times)
    assert all(e.code in "oirmx" for e in events)
    if "no-events" not in path.name:
        assert events
