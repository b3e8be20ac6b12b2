"""Tests for shellkeep/app/unanswered.py and its hooks in app/resume.py (plan_resume, with_resend).

Sessions are real folders under the temporary ``SHELLKEEP_HOME`` (``make_session`` of
test_resume.py); recordings for ``with_typed_prompt`` are real asciicast files.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from shellkeep.agents.base import Exchange
from shellkeep.agents.generic import TypedLine
from shellkeep.app.resume import ResumeMode, plan_resume, with_resend
from shellkeep.app.unanswered import (
    RESEND_INTRO,
    UNANSWERED_KEY,
    UnansweredPrompt,
    _typed_after,
    _typed_since,
    last_unanswered,
    with_typed_prompt,
    with_unanswered,
)
from shellkeep.store.paths import Paths
from shellkeep.vault.access import Vault
from tests.unit.test_resume import _ctx, exchange, make_session

CHAT = ("python3", "chat.py")  # a script: takes a re-injected block


@pytest.fixture
def project() -> Path:
    """Return the project folder the ``home`` fixture changed into."""
    return Path.cwd()


def test_only_a_last_exchange_without_answer_text_is_unanswered() -> None:
    assert last_unanswered([]) is None
    assert last_unanswered([exchange(0, "a", "done"), exchange(1, "b")]) == exchange(1, "b")
    assert last_unanswered([exchange(0, "a"), exchange(1, "b", "done")]) is None  # an earlier one is history
    assert last_unanswered([exchange(0, "   ")]) is None


def test_meta_records_where_the_unanswered_prompt_is_but_not_its_text(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1)
    marked = with_unanswered(meta, [exchange(0, "a", "done"), Exchange(1, "2026-11-29T09:01:00.000Z", "secret plan", "")])
    assert marked.extra[UNANSWERED_KEY] == {"index": 1, "time": "2026-11-29T09:01:00.000Z", "chars": 11}
    assert "secret plan" not in json.dumps(marked.to_json())
    assert UNANSWERED_KEY not in with_unanswered(marked, [exchange(0, "a", "done")]).extra


@pytest.mark.parametrize(
    ("typed", "prompt", "expected"),
    [
        (["first", "second"], "first", "second"),
        (["first", "second", "/exit"], "first", "second"),  # a command is not a prompt
        (["first", "1"], "first", None),  # a one-key answer to a dialog
        (["first"], "first", None),
        (["other"], "first", None),  # the last prompt was not typed: no guess
        (["only"], None, "only"),
    ],
    ids=["after", "command-skipped", "one-key", "nothing-after", "not-typed", "no-exchange"],
)
def test_the_prompt_typed_after_the_last_exchange(typed: list[str], prompt: str | None, expected: str | None) -> None:
    lines = [TypedLine(text, i, i + 0.5) for i, text in enumerate(typed)]
    found = _typed_after(lines, prompt)
    assert (found.text if found else None) == expected


def test_a_prompt_typed_but_not_in_the_transcript_is_added_from_the_recording(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="killed")
    events = [[0.5, "i", "first\r"], [1.0, "o", "answer\r\n"], [2.0, "i", "sec"], [2.25, "i", "ond\r"]]
    Path(meta.cast).write_text(
        json.dumps({"version": 2, "width": 80, "height": 24}) + "\n" + "".join(json.dumps(e) + "\n" for e in events)
    )
    vault = Vault(home)
    found = with_typed_prompt([exchange(0, "first", "answer")], meta, vault)
    assert [(e.prompt, e.answer, e.index) for e in found] == [("first", "answer", 0), ("second", "", 1)]
    assert found[1].time == "2026-11-29T09:01:02.250Z"  # started_at + the Enter's time
    finished = dataclasses.replace(meta, status="finished")  # ended by the user: nothing to guess
    assert with_typed_prompt([exchange(0, "first", "answer")], finished, vault) == [exchange(0, "first", "answer")]


def test_resume_leaves_the_unanswered_prompt_out_of_the_block_unless_resent(home: Paths, project: Path) -> None:
    meta = make_session(
        home, project, 1, status="killed", command=CHAT, exchanges=[exchange(0, "list the files", "a b"), exchange(1, "fix the bug")]
    )
    plan = plan_resume(_ctx(home, project), meta)
    assert plan.mode is ResumeMode.INJECT and plan.unanswered == UnansweredPrompt("fix the bug", 1)
    assert [e.prompt for e in plan.exchanges] == ["list the files"]
    assert plan.inject_text is not None and "fix the bug" not in plan.inject_text
    sent = with_resend(plan)
    assert sent.inject_text == f"{plan.inject_text}\n{RESEND_INTRO}\nUser: fix the bug" and sent.resend_text is None


def test_a_lone_unanswered_prompt_is_typed_alone_and_never_into_a_shell(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="killed", command=CHAT, exchanges=[exchange(0, "fix the bug")])
    plan = plan_resume(_ctx(home, project), meta)
    assert plan.mode is ResumeMode.RESTART and plan.exchanges == ()
    assert with_resend(plan).resend_text == "fix the bug"
    shell = make_session(home, project, 2, status="killed", command=("bash",), exchanges=[exchange(0, "rm -rf build")])
    shell_plan = plan_resume(_ctx(home, project), shell)
    assert shell_plan.unanswered is not None and with_resend(shell_plan) is shell_plan


def test_a_redacted_prompt_is_refused(home: Paths, project: Path) -> None:
    meta = make_session(
        home, project, 1, status="killed", command=CHAT, exchanges=[exchange(0, "use [REDACTED:github-token] to push")]
    )
    plan = plan_resume(_ctx(home, project), meta)
    assert plan.unanswered is not None and plan.unanswered.refusal is not None
    assert with_resend(plan) is plan


def test_a_prompt_answered_by_a_later_resume_is_not_offered(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="killed", command=CHAT, exchanges=[exchange(0, "a", "b"), exchange(1, "fix it")])
    assert plan_resume(_ctx(home, project), meta).unanswered is not None
    make_session(home, project, 2, status="finished", command=CHAT, parent=meta.id, exchanges=[exchange(0, "fix it", "fixed")])
    assert plan_resume(_ctx(home, project), meta).unanswered is None


def test_the_typed_input_is_read_from_the_recording_end_back_to_the_last_prompt(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="hangup")
    events = [[0.1, "i", "old\r"], [0.2, "i", "first\r"], [0.3, "o", "x" * 100], [0.4, "i", "first\r"],
              [0.5, "o", "answer"], [0.6, "i", "sec"], [0.7, "i", "ond\r"], [0.8, "o", "…"]]  # fmt: skip
    Path(meta.cast).write_text(
        json.dumps({"version": 2, "width": 80, "height": 24}) + "\n" + "".join(json.dumps(e) + "\n" for e in events)
    )
    typed = _typed_since(meta, Vault(home), "first")
    # Read back until a line typed whole (after an earlier Enter) is the prompt: "old" is not read.
    assert [line.text for line in typed] == ["first", "first", "second"]
    assert _typed_after(typed, "first") == typed[-1]
    assert [line.text for line in _typed_since(meta, Vault(home), "never typed")] == ["old", "first", "first", "second"]
