"""Resume the real Codex CLI after a crash, a closed terminal and a killed recorder.

``shellkeep codex`` runs against the OpenAI Responses stand-in; two exchanges are asked, then
the session is cut short: kill -9 of the Codex TUI (``kill-codex``), SIGHUP to shellkeep
(``hangup``) or kill -9 of shellkeep (``kill-shellkeep``). Codex takes no session id up front:
shellkeep finds the thread by the rollout file that appeared in ``$CODEX_HOME/sessions`` for
this directory. ``shellkeep resume`` redraws the last screen, runs ``codex resume <thread id>``,
the next ``POST /v1/responses`` carries the earlier prompts and answers in its ``input``, and a
third exchange is recorded in a new session whose ``parent`` is the first. Codex's app-server
daemon outlives every TUI; the ``codex_home`` fixture ends it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Callable

import pytest

from tests.recordings import last_screen
from shellkeep.store.paths import Paths
from tests.helpers import exchanges_of, meta_of, process_gone, session_folders, SK, stored_copy

from .screen_driver import ScreenDriver
from .standin_openai import OpenAIRequest, OpenAIStandin
from .test_codex_standin_direct import (
    READY,
    RESUME_HINT,
    WAIT_S,
    ask,
    find_rollout,
    request_with_prompt,
    rollout_texts,
    turns,
)
from .test_resume_claude import _restored_screen

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

PROMPTS = ("the first word is plum", "the second word is pear")
ANSWERS = ("STANDIN-ANSWER-1: plum", "STANDIN-ANSWER-2: pear")
THIRD_PROMPT, THIRD_ANSWER = "the third word is quince", "STANDIN-ANSWER-3: quince"

Drive = Callable[..., ScreenDriver]


def _usage_of(requests: list[OpenAIRequest], answers: list[str]) -> dict[str, int]:
    """Return the usage the stand-in reported for *requests* (see ``OpenAIStandin._response``)."""
    return {
        "input": sum(max(1, len(r.raw_body) // 4) for r in requests),
        "output": sum(max(1, len(a.split())) for a in answers),
        "cache_read": 0,
        "cache_write": 0,
    }


def _requests(standin: OpenAIStandin, prompt: str) -> list[OpenAIRequest]:
    return [r for r in standin.conversation_requests() if r.last_user_text() == prompt]


def _quit_codex(driver: ScreenDriver) -> str:
    """Exit Codex with Ctrl-C once its turn is over; return the id of its resume hint.

    Codex's composer shows ``READY`` while a turn still runs, and a Ctrl-C then only stops
    the turn: wait for the screen to be quiet, and press Ctrl-C again if Codex is still there.
    """
    for _ in range(3):
        driver.wait_for_quiet(0.5, WAIT_S)
        driver.press("ctrl-c")
        try:
            driver.wait_until(lambda: driver.eof and not driver.is_alive(), 10, "codex exit")
            break
        except TimeoutError:
            continue
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    match = RESUME_HINT.search(driver.text())
    assert match, f"no resume hint on screen:\n{driver.dump()}"
    return match.group(1)


@pytest.mark.parametrize("cut", ["kill-codex", pytest.param("hangup", marks=pytest.mark.newest_only), "kill-shellkeep"])
def test_resume_codex_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
    cut: str,
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    codex_dir = Path(codex_env["CODEX_HOME"])
    first = drive([*SK, "codex"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert (meta["command"], meta["agent"], meta["agent_session_id"]) == (["codex"], "codex", None)
    thread_id = request_with_prompt(openai_standin, PROMPTS[0]).headers["session-id"]
    rollout = first.wait_until(lambda: find_rollout(codex_dir, thread_id), WAIT_S, "rollout")
    assert rollout is not None
    first.wait_until(lambda: ("assistant", ANSWERS[1]) in rollout_texts(rollout), WAIT_S, "answer 2 stored")
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")

    if cut == "kill-codex":
        os.kill(meta["child_pid"], signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    elif cut == "hangup":
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    else:
        os.kill(meta["pid"], signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    first.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "codex gone")
    assert meta_of(folder)["status"] == {"kill-codex": "killed", "hangup": "hangup", "kill-shellkeep": "running"}[cut]

    # -- resume in a new terminal ---------------------------------------------------------
    second = drive([*SK, "resume"], env=env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    restored = _restored_screen(second, new_folder)
    assert ANSWERS[1] in restored and PROMPTS[1] in restored, restored
    assert f"── shellkeep: {meta['id']} · codex · " in restored and "native resume" in restored
    second.wait_for_screen(READY, WAIT_S)
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # Codex redraws the thread from its rollout
    ask(second, THIRD_PROMPT, THIRD_ANSWER)

    request = request_with_prompt(openai_standin, THIRD_PROMPT)
    assert request.headers["session-id"] == thread_id
    exchange = turns(request)
    assert exchange == [
        ("user", PROMPTS[0]),
        ("assistant", ANSWERS[0]),
        ("user", PROMPTS[1]),
        ("assistant", ANSWERS[1]),
        ("user", THIRD_PROMPT),
    ]
    assert _quit_codex(second) == thread_id  # exit status 0 through shellkeep

    # -- what shellkeep kept ----------------------------------------------------------------
    old = meta_of(folder)
    assert old["status"] == {"kill-codex": "killed", "hangup": "hangup", "kill-shellkeep": "interrupted"}[cut]
    assert (old["agent_session_id"], old["agent_transcript"]) == (thread_id, str(rollout))
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    old_requests = [r for p in PROMPTS for r in _requests(openai_standin, p)]
    assert old["usage"] == _usage_of(old_requests, list(ANSWERS))
    assert stored_copy(folder, rollout.name)

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["codex", "resume", thread_id]
    assert (new["agent"], new["agent_session_id"], new["status"], new["exit_code"]) == ("codex", thread_id, "finished", 0)
    assert new["exchange_count"] == 1
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["usage"] == _usage_of(_requests(openai_standin, THIRD_PROMPT), [THIRD_ANSWER])
