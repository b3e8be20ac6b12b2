"""Send the prompt Codex never answered again on resume (``--resend``).

The real Codex CLI runs under ``shellkeep codex`` against the OpenAI Responses stand-in. One
exchange is answered; the next prompt is held by the stand-in (received, never answered);
then shellkeep, Codex and Codex's app-server daemon are killed together with kill -9, mid-turn. ``shellkeep resume
--resend`` in a new terminal names the prompt in its banner and types it into ``codex resume
<thread id>`` once it is ready: the stand-in gets a new request of the same thread whose last
user text is that prompt, and the new session records its answer. Codex's app-server daemon
outlives every TUI; the ``codex_home`` fixture ends it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.agents.generic import typed_lines
from shellkeep.errors import DataError
from shellkeep.store.paths import Paths
from tests.helpers import SK, exchanges_of, load_session, meta_of, process_gone, session_folders

from .screen_driver import ScreenDriver
from .agent_processes import processes_using
from .standin_openai import OpenAIRequest, OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, find_rollout, request_with_prompt, rollout_texts
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

FIRST_PROMPT, FIRST_ANSWER = "the first word is plum", "STANDIN-ANSWER-1: plum"
HELD_PROMPT = "the held word is quince"
RESENT_ANSWER = "STANDIN-ANSWER-2: quince"  # the held request took no answer from the count

Drive = Callable[..., ScreenDriver]


def _asks_held(request: OpenAIRequest) -> bool:
    return request.is_conversation and request.last_user_text() == HELD_PROMPT


def _typed(folder: Path) -> list[str]:
    try:
        return [line.text for line in typed_lines(load_session(folder)[2])]
    except DataError:  # the header is not written yet
        return []


@pytest.mark.newest_only  # the mechanism is proved on both Claude versions
def test_resume_sends_the_prompt_codex_never_answered_again(
    home: Paths, drive: Drive, codex_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    openai_standin.hold(_asks_held)
    first = drive([*SK, "codex"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, FIRST_PROMPT, FIRST_ANSWER)
    thread_id = request_with_prompt(openai_standin, FIRST_PROMPT).headers["session-id"]
    first.wait_until(  # the answered exchange is in Codex's rollout
        lambda: (rollout := find_rollout(Path(codex_env["CODEX_HOME"]), thread_id)) is not None
        and ("assistant", FIRST_ANSWER) in rollout_texts(rollout),
        WAIT_S,
        "answer 1 stored",
    )
    first.type(HELD_PROMPT)
    first.wait_for_screen(HELD_PROMPT, WAIT_S)
    first.press("enter")
    held = openai_standin.wait_for_request(_asks_held, WAIT_S)  # Codex sent it; no answer will come
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: HELD_PROMPT in _typed(folder), WAIT_S, "the typed prompt on disk")
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    # As a crash or reboot does: shellkeep, the Codex TUI and Codex's app-server daemon (which
    # would otherwise go on with the turn, and retry it once the stand-in lets it go) at once.
    # shellkeep first: it must not live to see Codex die (it would record "killed").
    crashed = [meta["pid"], meta["child_pid"], *processes_using(Path(codex_env["CODEX_HOME"]))]
    for pid in dict.fromkeys(crashed):
        if not process_gone(pid):
            os.kill(pid, signal.SIGKILL)
    first.wait_exit(WAIT_S)
    first.wait_until(lambda: all(process_gone(pid) for pid in crashed), WAIT_S, "all gone")
    first.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "codex gone")
    openai_standin.release()

    second = drive([*SK, "resume", "--resend"], env=env, cwd=project_dir)
    second.wait_for_output(f'prompt never answered: "{HELD_PROMPT}"', WAIT_S)
    resent = openai_standin.wait_for_request(lambda r: _asks_held(r) and r.seq > held.seq, WAIT_S)
    assert resent.headers["session-id"] == held.headers["session-id"] == thread_id  # the same thread, resumed
    second.wait_for_screen(RESENT_ANSWER, WAIT_S)
    second.wait_for_screen(READY, WAIT_S)
    _quit_codex(second)

    old = meta_of(folder)
    assert old["status"] == "interrupted" and old["unanswered_prompt"]["index"] == 1
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == [(FIRST_PROMPT, FIRST_ANSWER), (HELD_PROMPT, "")]
    new_folder = next(f.parent for f in session_folders(home) if f.parent != folder)
    new = meta_of(new_folder)
    assert new["parent"] == old["id"] and new["command"][:2] == ["codex", "resume"]
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(HELD_PROMPT, RESENT_ANSWER)]
