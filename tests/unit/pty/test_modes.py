"""pty/modes.py: which modes a stream of output leaves on, and the bytes that switch them off."""

from __future__ import annotations

import pytest

from shellkeep.pty.modes import ModeTracker
from tests.mode_cases import CASES


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
