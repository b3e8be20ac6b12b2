"""Tests for shellkeep/pty/inject.py: when the block is typed, and how (bracketed paste or one line)."""

from __future__ import annotations

import pytest

from shellkeep.pty.inject import (
    LINE_JOINER, PASTE_END, PASTE_OFF, PASTE_ON, PASTE_START, PROMPT_MAX_WAIT_S, UNSEEN_PROMPT_QUIET_S, SettledInjection,
)

BLOCK = b"[shellkeep] header\nUser: hi\nAssistant: hello"


def test_nothing_is_typed_until_the_output_settles() -> None:
    injection = SettledInjection(BLOCK, settle_s=0.5)
    assert injection.poll(0.0) is None
    injection.on_output(b"banner\r\n", 0.2)
    assert injection.poll(0.6) is None  # 0.4 s of quiet
    injection.on_output(b"> ", 0.6)
    assert injection.poll(1.0) is None
    typed = injection.poll(1.1)
    assert typed == BLOCK.replace(b"\n", LINE_JOINER)
    assert injection.pending  # Enter is a write of its own, after the block was taken in
    injection.on_output(b"echo of the block", 1.2)
    assert injection.poll(1.4) is None
    assert injection.poll(1.5) == b"\r"
    assert not injection.pending
    assert injection.poll(5.0) is None  # once


def test_a_program_that_switched_on_bracketed_paste_gets_one_paste() -> None:
    injection = SettledInjection(BLOCK, settle_s=0.1)
    injection.on_output(b"\x1b[?1004h" + PASTE_ON + b"> ", 0.0)
    assert injection.bracketed
    assert injection.poll(0.2) == PASTE_START + BLOCK + PASTE_END
    injection.on_output(b"[Pasted text #1 +2 lines]", 0.25)
    assert injection.poll(0.5) is None  # still drawing
    assert injection.poll(0.55) == b"\r"


def test_enter_follows_after_enter_max_wait_s_when_the_child_draws_nothing() -> None:
    injection = SettledInjection(BLOCK, settle_s=0.1, enter_max_wait_s=2.0)
    injection.on_output(b"> ", 0.0)
    assert injection.poll(0.2) is not None
    assert injection.poll(2.1) is None
    assert injection.poll(2.2) == b"\r"


@pytest.mark.parametrize(
    ("reads", "bracketed"),
    [
        ([PASTE_ON], True),
        ([PASTE_ON, b"text", PASTE_OFF], False),
        ([PASTE_OFF + PASTE_ON], True),
        ([PASTE_ON + b"x" + PASTE_OFF], False),
        ([b"\x1b[?20", b"04h> "], True),  # the switch cut between two reads
        ([b"\x1b[?2004", b"l"], False),
        ([b"plain output"], False),
    ],
    ids=["on", "on-then-off", "off-then-on-in-one-read", "on-off-in-one-read", "split-on", "split-off", "never"],
)
def test_bracketed_paste_mode_follows_the_last_switch(reads: list[bytes], bracketed: bool) -> None:
    injection = SettledInjection(BLOCK)
    for at, raw in enumerate(reads):
        injection.on_output(raw, float(at))
    assert injection.bracketed is bracketed


def test_a_silent_program_is_typed_into_after_silent_s() -> None:
    injection = SettledInjection(b"x", settle_s=0.5, silent_s=3.0)
    assert injection.poll(2.9) is None
    assert injection.poll(3.0) == b"x"
    assert injection.poll(6.0) == b"\r"


def test_output_that_never_settles_is_typed_into_after_max_wait_s() -> None:
    injection = SettledInjection(b"x", settle_s=0.5, max_wait_s=4.0)
    at = 0.0
    while at < 4.0:
        injection.on_output(b"spinner\r", at)
        assert injection.poll(at) is None
        at += 0.1
    injection.on_output(b"spinner\r", at)
    assert injection.poll(at) == b"x"


def test_control_characters_cannot_end_the_paste_early() -> None:
    payload = b"User: a\x1b[201~b\r\nAssistant: \x07c\x7f\td\xc3\xa9"
    injection = SettledInjection(payload, settle_s=0.0, submit=False)
    injection.on_output(PASTE_ON, 0.0)
    typed = injection.poll(0.0)
    assert typed == PASTE_START + b"User: a[201~b\nAssistant: c\td\xc3\xa9" + PASTE_END
    assert typed.count(PASTE_END) == 1


def test_with_a_ready_prompt_it_waits_for_the_prompt_not_for_quiet() -> None:
    """Gemini CLI prints its terminal queries, is quiet ~1.2 s waiting for answers, then draws."""
    injection = SettledInjection(b"hello", settle_s=0.8, ready_prompt=r"Type your message or @path/to/file", use_paste=False)
    assert injection.poll(6.0) is None  # nothing printed yet: a slow start, not a ready child
    injection.on_output(b"\x1b[?u\x1b]11;?\x1b\\\x1b[c\x1b[?2004h", 6.0)
    assert injection.poll(7.5) is None  # quiet, but no prompt on screen
    injection.on_output(b"\x1b[38;2;1;2;3m> \x1b[39m\x1b[2mType your message or \x1b[22m@path/to/file  ", 8.0)
    assert injection.poll(8.5) is None
    assert injection.poll(8.9) == b"hello"  # typed, not pasted, though bracketed paste is on


def test_a_ready_prompt_that_never_shows_falls_back_to_long_quiet() -> None:
    injection = SettledInjection(b"hello", settle_s=0.8, ready_prompt=r"no such prompt", max_wait_s=PROMPT_MAX_WAIT_S)
    injection.on_output(b"some other box", 1.0)
    assert injection.poll(1.0 + UNSEEN_PROMPT_QUIET_S - 0.1) is None
    assert injection.poll(1.0 + UNSEEN_PROMPT_QUIET_S) == b"hello"


def test_a_required_ready_prompt_is_waited_for_through_long_quiet() -> None:
    """OpenCode queries the terminal, then, with both cores busy, drew nothing for over 10 s:
    keys typed then are lost. Its block waits for its input box (or the long maximum wait)."""
    injection = SettledInjection(b"hello", settle_s=0.8, ready_prompt=r"Ask anything", unseen_prompt_quiet_s=None, max_wait_s=60.0)
    injection.on_output(b"\x1b_Gi=31337,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\\x1b[?2026$p", 3.0)
    assert injection.poll(3.0 + UNSEEN_PROMPT_QUIET_S + 5) is None
    injection.on_output(b"\x1b[21;27H\x1b[38;5;8mAsk anything\xe2\x80\xa6 \"What is the tech stack?\"", 18.0)
    assert injection.poll(18.5) is None
    assert injection.poll(18.9) is not None
    late = SettledInjection(b"hello", ready_prompt=r"Ask anything", unseen_prompt_quiet_s=None, max_wait_s=60.0)
    late.on_output(b"\x1b[c", 1.0)
    assert late.poll(59.9) is None and late.poll(60.0) is not None
