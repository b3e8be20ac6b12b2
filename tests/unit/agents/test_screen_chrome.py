"""Exchanges rebuilt from full-screen agents' recordings (agents/generic.py with an adapter's ScreenChrome).

The recordings in tests/data/agents/screens/ are real sessions of Claude Code 2.1.197 and
2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, OpenCode 1.18.33, Copilot CLI 1.0.102 and aider 0.86.2 against the loopback stand-ins, two exchanges each (Claude's second
reply taller than the screen; aider's once more on a loaded machine), recorded by tests/agents/test_screen_exchanges.py (paths
anonymised).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from shellkeep.agents.base import ScreenChrome
from shellkeep.agents.generic import exchanges_from_recording
from shellkeep.agents.registry import adapter_named
from tests.recordings import open_cast

SCREENS = Path(__file__).resolve().parents[2] / "data" / "agents" / "screens"

LONG_REPLY = "STANDIN-ANSWER-2: lime\n\n" + "\n\n".join(f"paragraph {n:02d} of a long answer" for n in range(1, 31))
CLAUDE = [("the first word is kiwi", "STANDIN-ANSWER-1: kiwi"), ("the second word is lime", LONG_REPLY)]
CODEX = [("the first word is plum", "STANDIN-ANSWER-1: plum"), ("the second word is pear", "STANDIN-ANSWER-2: pear")]
GEMINI = [("the first word is olive", "STANDIN-ANSWER-1: olive"), ("the second word is mango", "STANDIN-ANSWER-2: mango")]
AIDER = [("the first word is plum", "STANDIN-ANSWER-1: plum"), ("the second word is pear", "STANDIN-ANSWER-2: pear")]
ECHO = [("the first word is plum", "Echo: the first word is plum"), ("the second word is pear", "Echo: the second word is pear")]
RECORDINGS = [
    pytest.param("claude-2.1.197.cast", "claude", CLAUDE, id="claude-2.1.197"),
    pytest.param("claude-2.1.332.cast", "claude", CLAUDE, id="claude-2.1.332"),
    pytest.param("codex-0.171.0.cast", "codex", CODEX, id="codex-0.171.0"),
    pytest.param("gemini-0.61.0.cast", "gemini", GEMINI, id="gemini-0.61.0"),
    pytest.param("opencode-1.18.33.cast", "opencode", ECHO, id="opencode-1.18.33"),
    pytest.param("copilot-1.0.102.cast", "copilot", ECHO, id="copilot-1.0.102"),
    pytest.param("aider-0.86.2.cast", "aider", AIDER, id="aider-0.86.2"),
    # Recorded with both cores busy: aider left its first reply's start ('STANDIN-ANSWER-1:'),
    # drawn while the stream came, on the row above the whole reply.
    pytest.param("aider-0.86.2-loaded.cast", "aider", AIDER, id="aider-0.86.2-loaded"),
]


def rebuilt(name: str, chrome: ScreenChrome) -> list[tuple[str, str]]:
    cast = open_cast(SCREENS / name)
    size = cast.header.size
    return [(e.prompt, e.answer) for e in exchanges_from_recording(cast.events(), cols=size.cols, rows=size.rows, chrome=chrome)]


@pytest.mark.parametrize(("name", "agent", "expected"), RECORDINGS)
def test_answers_rebuilt_from_a_real_agent_screen_are_the_replies(name: str, agent: str, expected: list[tuple[str, str]]) -> None:
    assert rebuilt(name, adapter_named(agent).screen_chrome) == expected


@pytest.mark.parametrize(("name", "agent", "expected"), RECORDINGS[:3])
def test_without_the_adapters_chrome_the_answers_miss_the_replies(name: str, agent: str, expected: list[tuple[str, str]]) -> None:
    # Read as a line-based program, the answer is what is below the input box (the footer) for
    # Claude Code; for Codex the reply is found under the prompt's echo, but with the TUI's
    # furniture ('Worked for <1s', its blank rows) around it: never the reply alone.
    answers = [answer for _, answer in rebuilt(name, ScreenChrome())]
    assert len(answers) == len(expected)
    assert not any(answer == reply for answer, (_, reply) in zip(answers, expected)), answers


@dataclass(frozen=True)
class Ev:
    time: float
    code: str
    data: str


BOXED = ScreenChrome(input_box=r"─{5,}", lines=(r"✻ \S+ for \d+s",), mark=r"● ")


def boxed_session(*turns: tuple[str, str]) -> list[Ev]:
    """A TUI at 30x12 that echoes each prompt above its input box, then its answer, then a status line."""
    events = [Ev(0.0, "o", "\x1b[9;1H──────────\r\n> \r\n──────────\x1b[10;3H")]
    history: list[str] = []
    t = 0.0
    for prompt, answer in turns:
        t += 1
        events.append(Ev(t, "i", prompt + "\r"))
        echo = f"❯ {prompt}"
        history += [echo[i : i + 30] for i in range(0, len(echo), 30)]  # wrapped by the TUI
        history += [*answer.split("\n"), "✻ Brewed for 0s", ""]
        shown = history[-8:]
        drawn = "".join(f"\x1b[{y + 1};1H\x1b[K{line}" for y, line in enumerate(shown))
        events.append(Ev(t + 0.5, "o", "\x1b[H\x1b[J" + drawn + "\x1b[9;1H──────────\r\n> \r\n──────────\x1b[10;3H"))
    return events


def test_a_boxed_agent_answer_keeps_its_lines_without_mark_and_status() -> None:
    events = boxed_session(("first", "● line one\n  line two"), ("a prompt long enough to wrap the screen", "● ok"))
    exchanges = exchanges_from_recording(events, cols=30, rows=12, chrome=BOXED)
    assert [(e.prompt, e.answer) for e in exchanges] == [
        ("first", "line one\nline two"),
        ("a prompt long enough to wrap the screen", "ok"),
    ]


def test_a_boxed_agent_answer_without_its_echo_on_screen_is_empty() -> None:
    events = [Ev(0.0, "o", "──────────\r\n> "), Ev(1.0, "i", "hello\r"), Ev(1.5, "o", "\x1b[H\x1b[Jsomething else\r\n──────────")]
    [exchange] = exchanges_from_recording(events, cols=30, rows=12, chrome=BOXED)
    assert (exchange.prompt, exchange.answer) == ("hello", "")


def in_place_session(answer: list[str], *, step: int, frame_s: float) -> list[Ev]:
    """A TUI at 30x10 that keeps the prompt pinned on row 1 and moves the answer up through rows 2-7
    by ``step`` lines per frame, redrawing each row in place (no scrolling), as Codex does."""
    box = "\x1b[8;1H\x1b[K──────────\x1b[9;1H\x1b[K› "
    events = [Ev(0.0, "o", box), Ev(0.5, "i", "tell me\r"), Ev(0.6, "o", "\x1b[1;1H\x1b[K  Waiting for startup · esc cancel")]
    t = 1.0
    for top in [*range(0, len(answer) - 6, step), len(answer) - 6]:
        window = answer[top : top + 6]
        drawn = "".join(f"\x1b[{y + 2};1H\x1b[K{line}" for y, line in enumerate(window))
        events.append(Ev(t, "o", "\x1b[1;1H\x1b[K› tell me" + drawn + box))
        t += frame_s
    events += [Ev(t, "i", "n"), Ev(t + 0.1, "i", "ext\r")]
    return events


ANSWER = [f"• line {n:02d}" if n == 1 else f"  line {n:02d}" for n in range(1, 16)]
CODEX_LIKE = ScreenChrome(input_box=r"──────────|›(?: .*)?", lines=(r"Waiting for .* · esc cancel",), mark=r"• ")


def test_an_answer_moved_up_in_place_is_pieced_together_from_what_was_shown() -> None:
    events = in_place_session(ANSWER, step=2, frame_s=0.2)
    first, _ = exchanges_from_recording(events, cols=30, rows=10, chrome=CODEX_LIKE)
    assert (first.prompt, first.answer) == ("tell me", "\n".join(f"line {n:02d}" for n in range(1, 16)))


def test_an_answer_drawn_faster_than_it_is_looked_at_keeps_what_stayed_on_screen() -> None:
    # Frames 10 ms apart: only the views LOOK_EVERY_S apart and the last one are kept; the
    # lines that passed between them in a jump larger than the view are not invented.
    events = in_place_session(ANSWER, step=3, frame_s=0.01)
    first, _ = exchanges_from_recording(events, cols=30, rows=10, chrome=CODEX_LIKE)
    lines = first.answer.split("\n")
    assert lines[-6:] == [f"line {n:02d}" for n in range(10, 16)]
    assert lines == sorted(set(lines)), "a line is repeated or out of order"


def test_a_reply_drawn_in_pieces_and_moved_is_not_repeated() -> None:
    # Codex once drew "• STANDIN-ANSWER-2:" low in its history with blank rows above the box,
    # then the whole reply higher up: the blank rows seen last are no anchor for it.
    box = "\x1b[8;1H\x1b[K──────────\x1b[9;1H\x1b[K› "
    events = [
        Ev(0.0, "o", box),
        Ev(0.5, "i", "tell me\r"),
        Ev(1.0, "o", "\x1b[1;1H\x1b[K› tell me\x1b[4;1H\x1b[K• ANSWER:" + box),
        Ev(1.5, "o", "\x1b[4;1H\x1b[K\x1b[2;1H\x1b[K• ANSWER: pear" + box),
        Ev(2.0, "i", "next\r"),
    ]
    first, _ = exchanges_from_recording(events, cols=30, rows=10, chrome=CODEX_LIKE)
    assert first.answer == "ANSWER: pear"


def test_without_its_chrome_geminis_answers_are_its_tips_boxes_and_footer() -> None:
    answers = [answer for _, answer in rebuilt("gemini-0.61.0.cast", ScreenChrome())]
    assert len(answers) == len(GEMINI)
    assert "▄▄▄▄▄" in answers[0] and "gemini --resume" in answers[1], answers  # its boxes, its goodbye box
    assert answers != [answer for _, answer in GEMINI]


@pytest.mark.parametrize("name", ["opencode-1.18.33.cast", "copilot-1.0.102.cast"])
def test_without_their_chrome_opencodes_and_copilots_answers_miss_the_replies(name: str) -> None:
    # Their echo is boxed (OpenCode: "┃  <prompt>") or followed by the time (Copilot: "❯ <prompt>  11:20"):
    # read as a line-based program, no answer holds its reply whole.
    answers = [answer for _, answer in rebuilt(name, ScreenChrome())]
    assert answers != [answer for _, answer in ECHO], answers
