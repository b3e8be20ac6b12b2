"""The asciicast reader: goldens of every version, cut lines, invalid files, every recording of
tests/data/casts (and of the optional corpus of public recordings, when it is there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.asciicast.model import Event, TermSize
from tests.recordings import open_cast
from shellkeep.errors import DataError
from tests.helpers import CASTS as DATA, recording_params


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
        (
            "full-v1.json",
            1,
            TermSize(90, 30),
            [Event(0.125, "o", "grüße "), Event(6.875, "o", "ñandú ☕"), Event(7.375, "o", "\r\n")],
        ),
        ("int-time-v2.cast", 2, TermSize(64, 16), [Event(0.0, "o", "zero "), Event(3.0, "o", "three")]),
        (
            "blank-lines-v2.cast",
            2,
            TermSize(64, 16),
            [Event(0.75, "o", "alpha "), Event(1.5, "o", "beta "), Event(2.25, "o", "gamma ✓")],
        ),
        (
            "markers-input-v2.cast",
            2,
            TermSize(72, 20),
            [
                Event(0.1, "o", "$ "),
                Event(0.4, "i", "m"),
                Event(0.41, "o", "m"),
                Event(0.6, "m", "typed"),
                Event(0.7, "i", "\r"),
                Event(0.71, "o", "\r\nmake: Nothing to be done.\r\n"),
                Event(1.2, "m", "built"),
                Event(1.3, "o", "$ "),
                Event(1.9, "o", "exit\r\n"),
            ],
        ),
        (
            "blank-lines-and-comments-v3.cast",
            3,
            TermSize(64, 16),
            [Event(0.5, "o", "one "), Event(0.75, "o", "two "), Event(1.75, "o", "three")],
        ),
        (
            "resizing-v3.cast",
            3,
            TermSize(40, 12),
            [
                Event(0.25, "o", "small "),
                Event(0.25, "r", "90x28"),
                Event(0.5, "o", "large "),
                Event(0.5, "r", "30x8"),
                Event(1.0, "o", "tiny"),
                Event(1.0, "x", "3"),
            ],
        ),
        ("no-events-v3.cast", 3, TermSize(64, 16), []),
    ],
    ids=[
        "minimal-v2", "full-v2", "cut-mid-line", "v1", "v3", "full-v1", "int-time", "blank-lines", "markers-input",
        "v3-blank-lines-and-comments", "v3-resizing", "v3-no-events",
    ],  # fmt: skip
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
    full_v1 = open_cast(DATA / "full-v1.json").header
    assert (full_v1.command, full_v1.title, full_v1.timestamp) == ("/bin/zsh", None, None)
    assert full_v1.env == {"TERM": "screen-256color", "SHELL": "/bin/zsh"}
    v3 = open_cast(DATA / "full-v3.cast").header
    assert (v3.timestamp, v3.idle_time_limit, v3.command, v3.title) == (1710400000, 1.5, "/usr/bin/fish -l", "full v3")
    assert v3.env == {"TERM": "xterm-kitty", "SHELL": "/usr/bin/fish"}
    assert (v3.extra["term_type"], v3.extra["term_version"]) == ("xterm-kitty", "kitty 0.40.1")
    assert v3.extra["term_theme"]["palette"].count(":") == 15  # type: ignore[index]


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
        (b'{"version": 2, "width": 5, "height": 5}\n[Infinity, "o", "a"]\n[2, "o", "b"]\n', "line 2 .*invalid time inf"),
        (b'{"version": 2, "width": 5, "height": 5}\n[1, "o", "a"]\n[NaN, "o", "b"]\n', "line 3 .*invalid time nan"),
        (b'{"version": 2, "width": 5, "height": 5}\n[1e400, "o", "a"]\n', "invalid time inf"),
        (b'{"version": 2, "width": 5, "height": 5}\n[20000000000.5, "o", "a"]\n', "invalid time 2"),
        (b'{"version": 3, "term": {"cols": 5, "rows": 5}}\n[9e9, "o", "a"]\n[9e9, "o", "b"]\n', "line 3 .*invalid time 18000000000.0"),
        (b'{"version": 1, "width": 5, "height": 5, "stdout": [[NaN, "a"]]}', "invalid delay nan"),
    ],
    ids=[
        "empty", "not-json", "future-version", "bad-size", "broken-middle", "negative-time", "bad-resize", "v3-no-term",
        "inf-time", "nan-time", "overflowing-time", "absurd-time", "v3-intervals-past-absurd", "v1-nan-delay",
    ],
)
def test_invalid_files_raise_data_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.cast"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        list(open_cast(path).events())


@pytest.mark.parametrize("path", recording_params(invalid=False))
def test_every_valid_recording_reads(path: Path) -> None:
    events = list(open_cast(path).events())
    times = [e.time for e in events]
    assert times == sorted(times)
    assert all(e.code in "oirmx" for e in events)
    if "no-events" not in path.name:
        assert events


@pytest.mark.parametrize("path", recording_params(invalid=True))
def test_every_invalid_recording_is_refused(path: Path) -> None:
    with pytest.raises(DataError):
        list(open_cast(path).events())


def test_a_lone_surrogate_in_event_data_becomes_the_replacement_character(tmp_path: Path) -> None:
    path = tmp_path / "surrogate.cast"
    path.write_bytes(
        b'{"version": 2, "width": 5, "height": 5, "title": "t\\udfff"}\n'
        b'[1, "o", "a\\ud800b"]\n[2, "o", "pair \\ud83d\\ude00 kept"]\n[3, "o", "end"]\n'
    )
    cast = open_cast(path)
    events = list(cast.events())
    assert [e.data for e in events] == ["a\ufffdb", "pair \U0001f600 kept", "end"]
    assert cast.header.title == "t\ufffd"
    for event in events:
        event.data.encode("utf-8")  # what the encoder and every writer do later
