"""Tests for shellkeep/agents/generic.py: the fallback adapter and exchanges rebuilt from a recording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ScreenChrome
from shellkeep.agents.generic import GenericAdapter, exchanges_from_recording, typed_lines

from .conftest import utc


@dataclass(frozen=True)
class Ev:
    """An asciicast event as the recording reader yields it."""

    time: float
    code: str
    data: str


def session(*steps: tuple[str, str]) -> list[Ev]:
    """Return events one tenth of a second apart from (code, data) pairs."""
    return [Ev(round(0.1 * i, 1), code, data) for i, (code, data) in enumerate(steps)]


def typed(text: str, echo: bool = True) -> list[tuple[str, str]]:
    """Return key-by-key input events, each echoed like a terminal in cooked mode would."""
    steps: list[tuple[str, str]] = []
    for char in text:
        steps.append(("i", char))
        if echo and char >= " ":
            steps.append(("o", char))
    return steps


SHELL = session(
    ("o", "$ "),
    *typed("ls"),
    ("i", "\r"),
    ("o", "\r\ncalc.py  tests\r\n$ "),
    ("i", "echo hx\x7fi\r"),
    ("o", "echo hi\r\nhi\r\n$ "),
    ("i", "\x1b[A"),  # arrow up: no text, the answer goes on
    ("i", "\x15"),  # Ctrl-U
    ("i", "exit\r"),
    ("o", "exit\r\n"),
)


def test_prompts_and_answers_from_a_shell_recording() -> None:
    exchanges = exchanges_from_recording(SHELL)
    assert [(e.index, e.prompt, e.answer) for e in exchanges] == [
        (0, "ls", "calc.py  tests"),
        (1, "echo hi", "hi"),
        (2, "exit", ""),
    ]
    assert all(e.time is None and e.tool_calls == () and e.usage is None for e in exchanges)


def test_a_sorted_listing_keeps_each_name_that_the_next_one_extends() -> None:
    # ``./src`` above ``./src/main.py`` is a listing, not a streamed line left half drawn: only
    # an agent whose chrome says it leaves such lines (aider) has them dropped.
    listing = session(("o", "$ "), ("i", "find . | sort\r"), ("o", "find . | sort\r\n.\r\n./src\r\n./src/main.py\r\n$ "))
    [exchange] = exchanges_from_recording(listing)
    assert exchange.answer == ".\n./src\n./src/main.py"
    [streamed] = exchanges_from_recording(listing, chrome=ScreenChrome(partial_lines=True))
    assert streamed.answer == "./src/main.py"


def test_times_and_limit() -> None:
    exchanges = exchanges_from_recording(SHELL, started_at=utc("2026-03-14T07:30:00"), limit=2)
    assert [(e.index, e.prompt, e.time) for e in exchanges] == [
        (0, "echo hi", "2026-03-14T07:30:00.700Z"),
        (1, "exit", "2026-03-14T07:30:01.100Z"),
    ]


def test_answer_keeps_lines_that_scrolled_off_the_screen() -> None:
    numbers = "".join(f"{n}\r\n" for n in range(1, 11))
    events = session(("o", "$ "), ("i", "seq 1 10\r"), ("o", "seq 1 10\r\n" + numbers + "$ "), ("i", "exit\r"))
    first, second = exchanges_from_recording(events, cols=20, rows=5)
    assert first.answer == "\n".join(str(n) for n in range(1, 11))
    assert second.prompt == "exit"


def test_full_screen_redraw_and_resize() -> None:
    events = session(
        ("o", "> "),
        ("i", "hello\r"),
        ("o", "> hello\r\n"),
        ("r", "40x10"),
        ("o", "\x1b[5;1H\x1b[1mBold\x1b[0m answer\x1b[6;3Hsecond line"),
        ("r", "bogus"),
    )
    [exchange] = exchanges_from_recording(events, cols=20, rows=5)
    assert exchange.answer == "Bold answer\n  second line"


def test_echoed_prompt_line_is_trimmed() -> None:
    events = session(("i", "status\r"), ("o", "\r\n\x1b[32m\u276f\x1b[0m status\r\nall good\r\n\r\n\r\n"))
    [exchange] = exchanges_from_recording(events)
    assert exchange.answer == "all good"


def test_text_typed_but_never_sent_is_no_prompt() -> None:
    assert exchanges_from_recording(session(("o", "$ "), ("i", "half typed"))) == []
    assert exchanges_from_recording([]) == []


@pytest.mark.parametrize(
    ("inputs", "lines"),
    [
        (["abc\r"], ["abc"]),
        (["abc\r\n"], ["abc"]),
        (["a\nb\n"], ["a", "b"]),
        (["ab", "c\x7f\x7fd\r"], ["ad"]),
        (["abc\x08\r"], ["ab"]),
        (["one two\x17three\r"], ["one three"]),
        (["junk\x15good\r"], ["good"]),
        (["junk\x03", "good\r"], ["good"]),
        (["\x1b[A\x1bOB\x1b[1;5Cok\r"], ["ok"]),
        (["\x1b[200~line one\nline two\x1b[201~\r"], ["line one\nline two"]),
        (["\r", "   \r"], []),
        (["a\tb\x00\x07\r"], ["a\tb"]),
        (["echo [REDACTED:github-token]" + "\x1b[D" * 21 + "\x7f\x7f\r"], ["echo [REDACTED:github-token]"]),
        (["echo [REDACTED:token]x\x1b[D\x7f\r"], ["echo x"]),
        (['password = "[REDACTED:password]"', "\x1b[", "1~\x0b", "echo cleared\r"], ["echo cleared"]),
        (["wrld\x1b[H\x1b[Chello \x1b[F!\x01\x1b[3~W\r"], ["Whello rld!"]),
        (["abc\x02\x02\x0b\x06d\x01\x04\r"], ["d"]),
    ],
    ids=[
        "enter-cr",
        "cr-lf-once",
        "lf",
        "backspace-del",
        "backspace-bs",
        "ctrl-w",
        "ctrl-u",
        "ctrl-c",
        "escapes",
        "bracketed-paste",
        "blank",
        "controls",
        "marker-whole-left-inside",
        "marker-deleted-whole",
        "home-split-across-events-ctrl-k",
        "home-end-delete",
        "ctrl-b-k-f-a-d",
    ],
)
def test_typed_lines_apply_line_editing(inputs: list[str], lines: list[str]) -> None:
    events = [Ev(float(i), "i", data) for i, data in enumerate(inputs)]
    assert [line.text for line in typed_lines(events)] == lines


def test_generic_adapter_is_the_inert_fallback(workdir: Path) -> None:
    adapter = GenericAdapter()
    assert adapter.matches(["anything", "at", "all"])
    launch = adapter.prepare(["python3", "-i"], workdir, {})
    assert launch == Launch(("python3", "-i"))
    assert adapter.find_session(launch, workdir, {}, utc("2026-03-14T07:30:00"), "python3 --resume x") is None
    empty = AgentSession("generic", None, None)
    assert adapter.read_exchanges(empty) == [] and adapter.transcript_files(empty) == []
    assert adapter.resume_argv(["python3"], empty) is None
    assert not adapter.has_native_transcript
    assert adapter.agent_name(["/usr/bin/python3", "-i"]) == "python3"


def test_recording_events_from_the_asciicast_model_fit() -> None:
    model = pytest.importorskip("shellkeep.asciicast.model")
    events = [model.Event(0.0, "o", "$ "), model.Event(0.5, "i", "pwd\r"), model.Event(0.6, "o", "pwd\r\n/home\r\n$ ")]
    [exchange] = exchanges_from_recording(events)
    # The recording ends at the shell's next prompt, which is not part of the answer.
    assert (exchange.prompt, exchange.answer) == ("pwd", "/home")


def test_a_huge_answer_keeps_its_last_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    from shellkeep.agents import generic

    monkeypatch.setattr(generic, "MAX_SCROLLBACK_LINES", 10)
    numbers = "".join(f"{n}\r\n" for n in range(1, 101))
    events = session(("i", "seq 1 100\r"), ("o", "seq 1 100\r\n" + numbers + "$ "), ("i", "exit\r"), ("o", "exit\r\n"))
    first, second = exchanges_from_recording(events, cols=20, rows=5)
    lines = first.answer.split("\n")
    assert lines[-1] == "100" and 10 <= len(lines) <= 15
    assert lines == [str(n) for n in range(101 - len(lines), 101)]
    assert (second.prompt, second.answer) == ("exit", "")


def test_an_answer_ending_with_the_prompt_text_is_kept_whole() -> None:
    # "heard: apples" ends with the prompt after a ':'; the echo was on the line typed on.
    events = session(
        ("o", "> "), ("i", "apples\r"), ("o", "apples\r\nheard: apples\r\n> "),
        ("i", "pears\r"), ("o", "pears\r\nheard: pears\r\n> "),
    )  # fmt: skip
    assert [(e.prompt, e.answer) for e in exchanges_from_recording(events)] == [
        ("apples", "heard: apples"),
        ("pears", "heard: pears"),
    ]


def test_the_context_typed_in_on_resume_is_no_prompt() -> None:
    from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX

    block = f"{INJECTED_CONTEXT_PREFIX} 1 (notes, finished): its last 1 exchange follow. | User: a\r"
    events = session(
        ("o", "> "), ("i", block), ("o", block[:-1] + "\r\nheard: it\r\n> "),
        ("i", "figs\r"), ("o", "figs\r\nheard: figs\r\n> "),
    )  # fmt: skip
    assert [(e.prompt, e.answer) for e in exchanges_from_recording(events)] == [("figs", "heard: figs")]


def test_private_csi_sequences_pyte_cannot_take_are_ignored() -> None:
    # vim sends ESC[?4m, Claude Code ESC[>1u and colon SGR; none may stop the reading.
    events = session(
        ("o", "$ "), ("i", "vi\r"), ("o", "vi\r\n\x1b[?4m\x1b[>1u\x1b[4:3mtext\x1b[0m\x1b[?1;2r\r\n$ "), ("i", "exit\r"),
    )  # fmt: skip
    first, second = exchanges_from_recording(events)
    assert (first.prompt, first.answer, second.prompt) == ("vi", "text", "exit")
