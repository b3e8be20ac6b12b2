"""The adapters' waiting hints (agents/base.py WaitingHints) judged by capture/activity.py RecentOutput.

The recordings in tests/data/agents/screens/ are real sessions against the loopback stand-ins:
``*-approval.cast`` asks the real CLI for a tool call (Claude Code: a Bash tool_use;
Codex: a command that needs escalated permissions), so it draws its approval dialog, which
is then cancelled with Esc; the others answer two prompts. Each output event is fed to a
``RecentOutput`` as the recorder's writer feeds it, and judged after each one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.capture.activity import RECENT_CHARS, RecentOutput, visible_text
from shellkeep.agents.registry import adapter_named
from tests.recordings import open_cast

SCREENS = Path(__file__).resolve().parents[2] / "data" / "agents" / "screens"


def judgements(name: str, agent: str) -> list[tuple[str | None, str]]:
    """Return the distinct judgements, in order, of the recording's output event by event."""
    recent = RecentOutput(adapter_named(agent).waiting_hints.patterns())  # type: ignore[attr-defined]
    seen: list[tuple[str | None, str]] = []
    for event in open_cast(SCREENS / name).events():
        if event.code != "o":
            continue
        recent.feed(event.data)
        judged = recent.judge()
        if not seen or seen[-1][0] != judged[0]:
            seen.append(judged)
    return seen


@pytest.mark.parametrize(
    ("name", "agent", "question"),
    [
        ("claude-2.1.197-approval.cast", "claude", "Do you want to proceed?"),
        ("claude-2.1.332-approval.cast", "claude", "Do you want to proceed?"),
        ("codex-0.171.0-approval.cast", "codex", "Would you like to run the following command?"),
    ],
    ids=["claude-2.1.197", "claude-2.1.332", "codex-0.171.0"],
)
def test_a_real_approval_dialog_is_recognised_and_its_question_is_the_line(name: str, agent: str, question: str) -> None:
    seen = judgements(name, agent)
    # Starting up (no hint), ready (input), the dialog (approval), cancelled: ready again.
    assert [hint for hint, _ in seen] == [None, "input", "approval", "input"]
    assert seen[2][1] == question


@pytest.mark.parametrize(
    ("name", "agent"),
    [("claude-2.1.197.cast", "claude"), ("claude-2.1.332.cast", "claude"), ("codex-0.171.0.cast", "codex")],
    ids=["claude-2.1.197", "claude-2.1.332", "codex-0.171.0"],
)
def test_a_real_session_without_a_dialog_is_never_taken_for_an_approval(name: str, agent: str) -> None:
    hints = [hint for hint, _ in judgements(name, agent)]
    assert "input" in hints and "approval" not in hints


def test_an_agent_without_hints_and_a_plain_program_have_none() -> None:
    assert adapter_named("aider").waiting_hints.patterns() == {"approval": (), "input": ()}  # type: ignore[attr-defined]
    recent = RecentOutput({})
    recent.feed("Do you want to proceed?\r\n$ ")
    assert recent.judge() == (None, "$")


@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        ("Do\x1b[4Gyou\x1b[8Gwant", "Do you want"),  # Claude Code moves the cursor between words
        ("a\x1b[2;1Hb", "a\nb"),  # a move to another row ends the line
        ("\x1b[1mbold\x1b[0m  text\r\n", "bold text\n"),
        ("\x1b]0;title\x07shown", "shown"),
        ("one\rtwo", "one\ntwo"),
    ],
    ids=["cursor-column", "cursor-row", "sgr-and-spaces", "osc", "carriage-return"],
)
def test_visible_text(raw: str, visible: str) -> None:
    assert visible_text(raw) == visible


def test_the_latest_match_wins_and_the_text_kept_is_bounded() -> None:
    recent = RecentOutput({"approval": (r"Allow\?",), "input": (r"ready>",), "bad": ("(",)})  # a bad pattern is left out
    recent.feed("ready>\r\nAllow? ")
    assert recent.judge() == ("approval", "Allow?")
    recent.feed("\r\nready>")
    assert recent.judge() == ("input", "ready>")
    recent.feed("x" * RECENT_CHARS)  # the hint scrolled out of the kept text
    assert recent.judge()[0] is None
    recent.feed("y")
    assert recent.judge()[1] == ("x" * (RECENT_CHARS - 1) + "y")[:200]
