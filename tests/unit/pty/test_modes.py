"""pty/modes.py: which modes a stream of output leaves on, and the bytes that switch them off."""

from __future__ import annotations

import pytest

from shellkeep.pty.modes import ModeTracker

CASES = [
    ("alt-screen-1049", b"\x1b[?1049h", b"\x1b[?1049l"),
    ("alt-screen-47", b"\x1b[?47h", b"\x1b[?47l"),
    ("alt-screen-1047", b"\x1b[?1047h", b"\x1b[?1047l"),
    ("bracketed-paste", b"\x1b[?2004h", b"\x1b[?2004l"),
    ("mouse-1000", b"\x1b[?1000h", b"\x1b[?1000l"),
    ("mouse-1002", b"\x1b[?1002h", b"\x1b[?1002l"),
    ("mouse-1003", b"\x1b[?1003h", b"\x1b[?1003l"),
    ("mouse-sgr-1006", b"\x1b[?1006h", b"\x1b[?1006l"),
    ("mouse-urxvt-1015", b"\x1b[?1015h", b"\x1b[?1015l"),
    ("hidden-cursor", b"\x1b[?25l", b"\x1b[?25h"),
    ("app-keypad", b"\x1b=", b"\x1b>"),
    ("app-cursor-keys", b"\x1b[?1h", b"\x1b[?1l"),
    ("focus-events", b"\x1b[?1004h", b"\x1b[?1004l"),
    ("kitty-push", b"\x1b[>1u", b"\x1b[<1u"),
    ("kitty-push-twice", b"\x1b[>1u\x1b[>31u", b"\x1b[<2u"),
    ("kitty-set", b"\x1b[=5;1u", b"\x1b[=0;1u"),
    ("modify-other-keys", b"\x1b[>4;2m", b"\x1b[>4m"),
]


def _left_on(*reads: bytes) -> bytes:
    tracker = ModeTracker()
    for raw in reads:
        tracker.feed(raw)
    return tracker.reset_bytes()


@pytest.mark.parametrize(("on", "off"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_mode_left_on_is_switched_off(on: bytes, off: bytes) -> None:
    assert _left_on(b"hello " + on + b"\x1b[31mred\x1b[0m") == off


@pytest.mark.parametrize(("on", "off"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_mode_cut_between_reads_is_still_seen(on: bytes, off: bytes) -> None:
    stream = b"text " + on + b" more"
    assert _left_on(*(stream[i : i + 1] for i in range(len(stream)))) == off


@pytest.mark.parametrize(("on", "off"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_mode_the_child_switched_off_again_gives_nothing(on: bytes, off: bytes) -> None:
    assert _left_on(on, b"work", off) == b""


def test_several_modes_in_one_sequence_are_each_switched_off_alternate_screen_last() -> None:
    reset = _left_on(b"\x1b[?1049;2004;1000;1006h\x1b[?25l")
    assert reset == b"\x1b[?1000l\x1b[?1006l\x1b[?2004l\x1b[?1049l\x1b[?25h"


def test_kitty_pops_and_modify_other_keys_reset_are_followed() -> None:
    assert _left_on(b"\x1b[>1u\x1b[>3u\x1b[<u") == b"\x1b[<1u"
    assert _left_on(b"\x1b[>1u\x1b[>3u\x1b[<2u") == b""
    assert _left_on(b"\x1b[>4;1m\x1b[>4;0m") == b""
    assert _left_on(b"\x1b[>4;1m\x1b[>4m") == b""


def test_output_without_modes_needs_no_reset() -> None:
    assert _left_on(b"plain text", b"\x1b[1;31mbold red\x1b[0m\x1b[2J\x1b[H", b"\x1b[?12h\x1b") == b""
