"""Supervise the real Claude Code CLI: a crash (SIGSEGV) is resumed in place (``run --restart``).

``shellkeep run --restart on-failure:1 -- claude`` runs against the Anthropic stand-in; one
exchange is asked, then the Claude process gets a real SIGSEGV. shellkeep says so on the
same terminal, starts ``claude --resume <id>`` as a new session whose ``parent`` is the first,
and the next request carries the earlier exchange.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, session_folders, SK

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt, turn_stored, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

Drive = Callable[..., ScreenDriver]


def test_a_crashed_claude_is_resumed_in_place(
    home: Paths, drive: Drive, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, "run", "--restart", "on-failure:1", "--", "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, "the first word is kiwi", "STANDIN-ANSWER-1: kiwi")
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    driver.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    first = meta_of(folder)
    claude_id = first["agent_session_id"]
    transcript = next((Path(agent_env["HOME"]) / ".claude" / "projects").glob(f"*/{claude_id}.jsonl"))
    driver.wait_until(lambda: turn_stored(transcript, "STANDIN-ANSWER-1: kiwi"), WAIT_S, "answer stored")
    os.kill(first["child_pid"], signal.SIGSEGV)
    driver.wait_for_screen("crashed (signal 11 (SIGSEGV)); resuming session", WAIT_S)
    new_folder = driver.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, "the second word is lime", "STANDIN-ANSWER-2: lime")
    request = request_with_prompt(anthropic_standin, "the second word is lime")
    assert meta_of(new_folder)["command"] == ["claude", "--resume", claude_id]
    # Under load Claude Code can take the Enter after fast typing as part of a paste and keep a
    # trailing newline in the prompt; the conversation is what this test is about.
    assert [(role, text.strip()) for role, text in turns(request)[:2]] == [("user", "the first word is kiwi"), ("assistant", "STANDIN-ANSWER-1: kiwi")]
    assert quit_claude(driver) == claude_id  # exit status 0: the user's own Ctrl-C, not a crash
    old, new = meta_of(folder), meta_of(new_folder)
    assert (old["status"], old["signal"]) == ("killed", signal.SIGSEGV)
    assert (new["parent"], new["restart"], new["command"]) == (first["id"], 1, ["claude", "--resume", claude_id])
    assert len(session_folders(home)) == 2
