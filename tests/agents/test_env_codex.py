"""Resume the real Codex CLI with the ``CODEX_HOME`` it was started with, from a terminal without it.

``shellkeep codex`` runs with ``CODEX_HOME`` naming a folder that is not ``~/.codex`` (its
config points at the OpenAI stand-in; so does ``~/.codex``'s, so only the store differs).
Two exchanges, kill -9 of shellkeep and Codex together, then ``shellkeep resume`` from a
terminal without ``CODEX_HOME``: Codex would look for the thread in ``~/.codex/sessions`` and
not find it. With the recorded environment it resumes the thread natively and its next request
carries the earlier prompts and answers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, meta_of, session_folders

from .agent_processes import reap
from .crash import kill_shellkeep_and_agent, running_meta
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, find_rollout, request_with_prompt, rollout_texts, turns
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(150)]

PROMPTS = ("the first word is damson", "the second word is medlar")
ANSWERS = ("STANDIN-ANSWER-1: damson", "STANDIN-ANSWER-2: medlar")
THIRD_PROMPT, THIRD_ANSWER = "the third word is sloe", "STANDIN-ANSWER-3: sloe"

Drive = Callable[..., ScreenDriver]


@pytest.fixture
def codex_work(codex_env: dict[str, str]) -> Iterator[Path]:
    """Yield a CODEX_HOME that is not ``~/.codex``: the same config, its own store."""
    work = Path(codex_env["HOME"]) / "codex-work"
    work.mkdir()
    shutil.copy(Path(codex_env["CODEX_HOME"]) / "config.toml", work / "config.toml")
    yield work
    reap(work)
    shutil.rmtree(work / "packages", ignore_errors=True)  # the app-server daemon's copy of Codex


def test_codex_resumes_its_thread_from_its_codex_home_from_a_terminal_without_it(
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    codex_work: Path,
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    first_env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "CODEX_HOME": str(codex_work)}
    first = drive([*SK, "codex"], env=first_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    folder, meta = running_meta(first, home, WAIT_S)
    thread_id = request_with_prompt(openai_standin, PROMPTS[0]).headers["session-id"]
    rollout = first.wait_until(lambda: find_rollout(codex_work, thread_id), WAIT_S, "rollout")
    assert rollout is not None and find_rollout(Path(codex_env["CODEX_HOME"]), thread_id) is None
    first.wait_until(lambda: ("assistant", ANSWERS[1]) in rollout_texts(rollout), WAIT_S, "answer 2 stored")
    assert meta["env"]["values"]["CODEX_HOME"] == str(codex_work)

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=False)

    second_env = {k: v for k, v in first_env.items() if k != "CODEX_HOME"}  # ~/.codex: no such thread there
    second = drive([*SK, "resume"], env=second_env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    said = bytes(second.raw).decode("utf-8", "replace")
    assert "environment: restored CODEX_HOME" in said, said
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # Codex redraws the thread from its rollout
    ask(second, THIRD_PROMPT, THIRD_ANSWER)

    request = request_with_prompt(openai_standin, THIRD_PROMPT)
    assert request.headers["session-id"] == thread_id
    exchange = turns(request)
    assert exchange == [*[t for p, a in zip(PROMPTS, ANSWERS) for t in (("user", p), ("assistant", a))], ("user", THIRD_PROMPT)]
    assert _quit_codex(second) == thread_id

    new = meta_of(next(f.parent for f in session_folders(home) if f.parent != folder))
    assert new["command"] == ["codex", "resume", thread_id] and new.get("resume_failed") is None
    assert ("assistant", THIRD_ANSWER) in rollout_texts(rollout)  # went on in CODEX_HOME
