"""The last screen of a recording, read from its end (shellkeep/terminal/tail.py, replay.last_screen):
equal to a full replay for every kind of ending, from plain, zstd and v3 files, within a budget."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Header
from shellkeep.errors import DataError
from shellkeep.terminal.replay import render_events
from shellkeep.termsize import TermSize
from tests.recordings import last_screen, read_tail
from tests.unit.terminal.helpers import CLEAR, SIZE, full_render, write_cast


def _junk(rng: random.Random, lines: int) -> str:
    return "".join(
        f"\x1b[{rng.randint(1, 10)};{rng.randint(1, 30)}H\x1b[3{rng.randint(0, 7)}mjunk {rng.random():.6f}\x1b[0m\r\n"
        for _ in range(lines)
    )


def _clear_long_before_end(rng: random.Random) -> list[tuple[str, str]]:
    """A full redraw, then ~200 KB of in-place status updates: the top lines come from the redraw."""
    events = [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", CLEAR + "\x1b[1;34mHeader drawn once\x1b[0m\r\nbody line\r\n"))
    for n in range(4000):
        events.append(("o", f"\x1b[7;1H\x1b[2Kprogress {n} \x1b[32m{'#' * (n % 30)}\x1b[0m"))
        if n % 50 == 0:
            events.append(("i", "k"))
    return events


def _resize_long_before_end(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 20)), ("r", "30x8")]
    events += [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", "\x1b[2J\x1b[Hafter the clear, at 30 columns wide: " + "w" * 40))
    events += [("o", f"\r\x1b[Kstatus {n}") for n in range(2000)]
    return events


def _scrolling_shell(rng: random.Random) -> list[tuple[str, str]]:
    return [("o", f"$ make\r\n{'compiling module %d ' % n * 2}\r\n") for n in range(30000)]


def _ends_in_alternate_screen(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", "$ ls\r\nfile\r\n$ htop\r\n"), ("o", "\x1b[?1049h\x1b[22;0;0t")]
    for frame in range(3000):
        events.append(("o", f"\x1b[H\x1b[2J\x1b[1;1HCPU {frame % 97}%\x1b[3;5H\x1b[7mtasks {frame}\x1b[0m"))
    events.append(("o", "\x1b[10;1Hlast line"))
    return events


def _alternate_screen_left(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 40)) for _ in range(600)]
    events.append(("o", CLEAR + "$ prompt drawn after a clear\r\n$ less big.txt\r\n"))
    events.append(("o", "\x1b[?1049h"))
    events += [("o", CLEAR + _junk(rng, 9)) for _ in range(300)]
    events.append(("o", "\x1b[?1049l\r$ echo done\r\ndone\r\n$ "))
    return events


def _reset_near_end(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", "\x1b[?1049h" + _junk(rng, 5) + "\x1bc$ after reset\r\n"))
    events += [("o", f"line {n}\r\n") for n in range(3)]
    return events


def _alternate_switch_split_between_events(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 30)) for _ in range(400)]
    # Unseen, the cut switch would make the TUI's clear look like a main screen one.
    events += [("o", CLEAR + "$ prompt\r\n\x1b[?10"), ("o", "49h"), ("o", CLEAR + "in the tui")]
    events += [("o", f"\x1b[5;1Htick {n}") for n in range(3000)]
    events += [("o", "\x1b[?1049"), ("o", "l$ back\r\n")]
    return events


def _clear_inside_tui_only(rng: random.Random) -> list[tuple[str, str]]:
    # No clear on the main screen at all: the main screen needs the whole recording.
    events = [("o", f"shell line {n}\r\n") for n in range(12)]
    events.append(("o", "\x1b[?1049h"))
    events += [("o", CLEAR + _junk(rng, 9)) for _ in range(500)]
    events.append(("o", "\x1b[?1049lback\r\n"))
    return events


RECORDINGS: dict[str, tuple[Callable[[random.Random], list[tuple[str, str]]], str]] = {
    "clear-long-before-end": (_clear_long_before_end, "clear"),
    "resize-long-before-end": (_resize_long_before_end, "clear"),
    "scrolling-shell-no-clear": (_scrolling_shell, "budget"),
    "ends-in-alternate-screen": (_ends_in_alternate_screen, "clear"),
    "alternate-screen-left": (_alternate_screen_left, "clear"),
    "reset-near-end": (_reset_near_end, "reset"),
    "alternate-switch-split": (_alternate_switch_split_between_events, "clear"),
    "clear-inside-tui-only": (_clear_inside_tui_only, "start"),
}


@pytest.mark.parametrize("name", list(RECORDINGS), ids=list(RECORDINGS))
def test_last_screen_equals_a_full_render(tmp_path: Path, name: str) -> None:
    build, reason = RECORDINGS[name]
    path = write_cast(tmp_path / f"{name}.cast", SIZE, build(random.Random(name)))
    tail = read_tail(path)
    assert tail.reason == reason
    assert last_screen(path) == full_render(path)
    if reason not in ("start", "budget"):
        assert tail.bytes_read < path.stat().st_size / 2


def test_the_size_comes_from_a_resize_long_before_the_start(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "r.cast", SIZE, _resize_long_before_end(random.Random(5)))
    tail = read_tail(path)
    assert tail.size == TermSize(30, 8)
    assert last_screen(path).size == TermSize(30, 8)


def test_size_hint_replaces_the_header_size(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "h.cast", SIZE, [("o", "hello")])
    assert last_screen(path, size_hint=TermSize(50, 3)).size == TermSize(50, 3)


def test_last_screen_ignores_a_cut_last_line(tmp_path: Path) -> None:
    events = _clear_long_before_end(random.Random(3))
    cut = encode_event(99.0, "o", "\x1b[1;1HNOT SHOWN")[:-9]
    path = write_cast(tmp_path / "cut.cast", SIZE, events, tail=cut)
    assert last_screen(path) == full_render(path)
    assert "NOT SHOWN" not in last_screen(path).to_text()


def test_last_screen_of_a_cut_multibyte_character(tmp_path: Path) -> None:
    cut = encode_event(99.0, "o", "日本語")[:-6]
    path = write_cast(tmp_path / "cut.cast", SIZE, [("o", "shown")], tail=cut)
    assert last_screen(path).to_text() == "shown"


def test_last_screen_raises_on_a_corrupt_line_before_the_last(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "bad.cast", SIZE, [("o", "a")], tail=b"not json\n" + encode_event(1.0, "o", "b"))
    with pytest.raises(DataError):
        last_screen(path)
    with pytest.raises(DataError):
        full_render(path)


def test_last_screen_of_a_header_only_recording_is_blank(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "empty.cast", SIZE, [])
    snap = last_screen(path)
    assert snap == full_render(path)
    assert snap.to_text() == "" and snap.size == SIZE


def test_last_screen_of_a_v3_recording(tmp_path: Path) -> None:
    path = tmp_path / "v3.cast"
    lines = [json.dumps({"version": 3, "term": {"cols": 30, "rows": 6}})]
    lines += ["# a comment", json.dumps([0.5, "o", "first\r\n"]), json.dumps([0.1, "r", "20x4"])]
    lines += [json.dumps([0.1, "o", f"{CLEAR}line {n}\r\n"]) for n in range(3)]
    lines += [json.dumps([0.2, "x", "0"])]
    path.write_text("\n".join(lines) + "\n")
    assert last_screen(path) == full_render(path)
    assert last_screen(path).to_text() == "line 2"


@pytest.mark.parametrize("name", ["clear-long-before-end", "alternate-screen-left"], ids=["clear", "alternate"])
def test_last_screen_of_a_zstd_recording(tmp_path: Path, name: str) -> None:
    import zstandard

    build, _ = RECORDINGS[name]
    plain = write_cast(tmp_path / "plain.cast", SIZE, build(random.Random(name)))
    packed = tmp_path / "packed.cast"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    expected = full_render(plain)
    assert full_render(packed) == expected
    assert last_screen(packed) == expected
    tail = read_tail(packed)
    assert tail.reason == read_tail(plain).reason == "clear"
    assert tail.bytes_read == tail.bytes_total  # compressed files are streamed whole
    assert render_events(tail.events, tail.size, alternate=tail.alternate) == expected


@pytest.mark.parametrize("name", list(RECORDINGS), ids=list(RECORDINGS))
def test_tail_with_a_small_budget_still_matches_when_a_clear_is_within_it(tmp_path: Path, name: str) -> None:
    build, reason = RECORDINGS[name]
    path = write_cast(tmp_path / f"{name}.cast", SIZE, build(random.Random(name)))
    tail = read_tail(path, budget_bytes=16 << 10)
    rendered = render_events(tail.events, tail.size, alternate=tail.alternate)
    if tail.reason != "budget":
        assert rendered == full_render(path)
    assert tail.bytes_read < 2 * (16 << 10)


def test_last_screen_of_a_100_mb_recording_reads_only_its_end(tmp_path: Path) -> None:
    """The prefix is 100 MB: screens of junk at two sizes between 1 MB typed pastes."""
    rng = random.Random(100)
    path = tmp_path / "big.cast"
    paste = "x" * (1 << 20)
    with open(path, "wb") as fh:
        fh.write(encode_header(Header(size=TermSize(80, 24))))
        fh.write(encode_event(0.0, "r", "100x30"))
        now = 0.0
        while fh.tell() < 100_000_000:
            now += 1.0
            fh.write(encode_event(now, "o", _junk(rng, 40) + "\x1b[?1049h" + _junk(rng, 5) + "\x1b[?1049l"))
            fh.write(encode_event(now + 0.5, "i", paste))
        fh.write(encode_event(now + 1, "o", "$ claude\r\n\x1b[2J\x1b[3J\x1b[H\x1b[1mWelcome\x1b[0m\r\n"))
        for n in range(5000):
            status = f"\x1b[3;1H\x1b[2K\x1b[38;5;{n % 256}m⠋ working {n}\x1b[0m"
            fh.write(encode_event(now + 2 + n * 0.01, "o", status))
        fh.write(encode_event(now + 100, "o", "\x1b[5;1H$ "))
    total = path.stat().st_size
    assert total > 100_000_000

    tail = read_tail(path)
    assert tail.reason == "clear"
    assert tail.size == TermSize(100, 30)
    assert tail.bytes_read < total / 100
    snap = last_screen(path)
    assert snap.to_text() == "Welcome\n\n⠋ working 4999\n\n$"
    assert snap == full_render(path)
