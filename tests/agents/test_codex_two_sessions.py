"""Two ``shellkeep codex`` sessions started back to back in one folder keep their own threads.

Codex takes no id up front and its rollouts are written by its shared app-server daemon, not
by the process shellkeep started; both rollouts of this test start after both sessions did,
so neither the folder nor the time tells them apart. Session B is asked first and session A
second (A's rollout is the newer one), then both Codex processes are killed (no resume hint
on screen). Each session must still get its own thread (its screen shows its own prompt),
and ``shellkeep resume`` of each must reach its own conversation: the stand-in receives that
session's earlier exchange, and not the other's, with the next prompt.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any, Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, process_gone, session_folders, SK
from tests.recordings import last_screen

from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, find_rollout, read_jsonl, request_with_prompt
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]

PROMPT_A, PROMPT_B = "the word for session A is plum", "the word for session B is pear"
ANSWER_B, ANSWER_A = "STANDIN-ANSWER-1: pear", "STANDIN-ANSWER-2: plum"  # B is asked first


def _texts(request: Any) -> list[tuple[str, str]]:
    return [(r, t) for r, t in request.texts() if r in ("user", "assistant") and not t.startswith(("<", "#"))]


def test_two_codex_sessions_in_one_folder_get_their_own_threads(
    home: Paths, drive: Drive, codex_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    codex_dir = Path(codex_env["CODEX_HOME"])
    a = drive([*SK, "codex"], env=env, cwd=project_dir)
    b = drive([*SK, "codex"], env=env, cwd=project_dir)
    a.wait_for_screen(READY, WAIT_S)
    b.wait_for_screen(READY, WAIT_S)
    a.wait_until(lambda: len(session_folders(home)) == 2, WAIT_S, "two sessions")
    folders = {meta_of(p.parent)["pid"]: p.parent for p in session_folders(home)}
    folder_a, folder_b = folders[a.pid], folders[b.pid]
    for driver, folder in ((a, folder_a), (b, folder_b)):
        driver.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")

    ask(b, PROMPT_B, ANSWER_B)
    ask(a, PROMPT_A, ANSWER_A)
    thread_a = request_with_prompt(openai_standin, PROMPT_A).headers["session-id"]
    thread_b = request_with_prompt(openai_standin, PROMPT_B).headers["session-id"]
    assert thread_a != thread_b
    rollouts = {}
    for thread in (thread_a, thread_b):
        rollouts[thread] = a.wait_until(lambda: find_rollout(codex_dir, thread), WAIT_S, "rollout")
    # Both rollouts began after both sessions had started: the time cannot tell them apart.
    starts = [meta_of(f)["started_at"] for f in (folder_a, folder_b)]
    for path in rollouts.values():
        assert read_jsonl(path)[0]["payload"]["timestamp"] > max(starts)

    for driver, folder, answer in ((a, folder_a, ANSWER_A), (b, folder_b, ANSWER_B)):
        driver.wait_until(lambda: answer in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")
        meta = meta_of(folder)
        os.kill(meta["child_pid"], signal.SIGKILL)
        assert driver.wait_exit(WAIT_S) == 128 + signal.SIGKILL
        driver.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "codex gone")
    meta_a, meta_b = meta_of(folder_a), meta_of(folder_b)
    assert (meta_a["agent_session_id"], meta_a["agent_transcript"]) == (thread_a, str(rollouts[thread_a]))
    assert (meta_b["agent_session_id"], meta_b["agent_transcript"]) == (thread_b, str(rollouts[thread_b]))

    # -- each resume reaches its own conversation ---------------------------------------------
    for n, (meta, prompt, answer, other) in enumerate(
        ((meta_a, PROMPT_A, ANSWER_A, PROMPT_B), (meta_b, PROMPT_B, ANSWER_B, PROMPT_A)), start=3
    ):
        resumed = drive([*SK, "resume", meta["id"]], env=env, cwd=project_dir)
        resumed.wait_for_screen(READY, WAIT_S)
        resumed.wait_for_screen(answer, WAIT_S)  # Codex redraws the thread from its rollout
        follow_up = f"and the next word after {meta['id']} is fig{n}"
        ask(resumed, follow_up, f"STANDIN-ANSWER-{n}: fig{n}")
        request = request_with_prompt(openai_standin, follow_up)
        assert request.headers["session-id"] == meta["agent_session_id"]
        assert _texts(request) == [("user", prompt), ("assistant", answer), ("user", follow_up)]
        assert all(other not in text for _, text in request.texts())
        assert _quit_codex(resumed) == meta["agent_session_id"]

    parents = sorted(json.loads(p.read_text()).get("parent") or "" for p in session_folders(home))
    assert parents == sorted(["", "", meta_a["id"], meta_b["id"]])
