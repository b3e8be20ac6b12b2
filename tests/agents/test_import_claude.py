"""An imported Claude Code session resumes natively with the real CLI, after Claude lost its file.

Claude Code runs on its own (not under shellkeep) against the Anthropic stand-in and answers
two prompts; ``shellkeep import --agent claude`` brings the session in; its transcript folder
is then deleted (as Claude Code's 30-day clean-up does); ``shellkeep resume <session>`` puts
shellkeep's copy back and starts ``claude --resume <id>``, and the next request the stand-in
gets carries the two earlier exchanges.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

PROMPTS = ("the first word is kiwi", "the second word is lime")
ANSWERS = ("STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime")
THIRD_PROMPT, THIRD_ANSWER = "the third word is fig", "STANDIN-ANSWER-3: fig"


def test_an_imported_claude_session_resumes_natively_from_shellkeep_s_copy(
    home: Paths,
    drive: Callable[..., ScreenDriver],
    claude_bin: Path,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    session_id = str(uuid.uuid4())
    first = drive([claude_bin, "--session-id", session_id], env=agent_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    assert quit_claude(first) == session_id

    imported = subprocess.run(
        [*SK, "import", "--agent", "claude", "--json"], env=env, cwd=project_dir, capture_output=True, timeout=120
    )
    assert imported.returncode == 0, imported.stderr
    [result] = [r for r in json.loads(imported.stdout) if r["agent_session_id"] == session_id]
    assert result["action"] == "imported" and result["exchanges"] == 2

    shutil.rmtree(Path(agent_env["HOME"]) / ".claude" / "projects")

    second = drive([*SK, "resume", result["session_id"]], env=env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    ask(second, THIRD_PROMPT, THIRD_ANSWER)
    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == session_id
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]
    assert turns(request) == [*earlier, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == session_id
