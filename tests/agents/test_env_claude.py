"""Resume the real Claude Code in the environment it was started in, from a terminal without it.

``shellkeep claude`` runs with ``CLAUDE_CONFIG_DIR`` (a folder that is not ``~/.claude``) and
``ANTHROPIC_BASE_URL`` (the stand-in) exported. Two exchanges, then kill -9 of shellkeep and
Claude together. ``shellkeep resume`` is run from a terminal that has neither variable: without
the recorded environment Claude would look for the conversation in ``~/.claude`` ("No
conversation found") and talk to api.anthropic.com. With it, Claude resumes natively, its next
request reaching the stand-in with the earlier prompts and answers, and the one line on stderr
names what was restored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, meta_of, session_folders

from .conftest import claude_config_dir
from .crash import kill_shellkeep_and_agent, running_meta
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt, transcript_texts, turn_stored, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

PROMPTS = ("the first word is quince", "the second word is plum")
ANSWERS = ("STANDIN-ANSWER-1: quince", "STANDIN-ANSWER-2: plum")
THIRD_PROMPT, THIRD_ANSWER = "the third word is pear", "STANDIN-ANSWER-3: pear"

Drive = Callable[..., ScreenDriver]


def test_claude_resumes_with_its_config_dir_and_base_url_from_a_terminal_without_them(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    config_dir = claude_config_dir(tmp_path / "claude-work", [project_dir])
    first_env = {
        **agent_env,
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
        "CLAUDE_CONFIG_DIR": str(config_dir),
    }
    assert first_env["ANTHROPIC_BASE_URL"] == anthropic_standin.base_url
    first = drive([*SK, "claude"], env=first_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    folder, meta = running_meta(first, home, WAIT_S)
    claude_id = meta["agent_session_id"]
    transcript = next((config_dir / "projects").glob(f"*/{claude_id}.jsonl"))
    assert not (Path(agent_env["HOME"]) / ".claude" / "projects").exists()  # only in CLAUDE_CONFIG_DIR
    first.wait_until(lambda: turn_stored(transcript, ANSWERS[1]), WAIT_S, "answer 2 stored")
    recorded = meta["env"]
    assert recorded["values"]["CLAUDE_CONFIG_DIR"] == str(config_dir)
    assert recorded["values"]["ANTHROPIC_BASE_URL"] == anthropic_standin.base_url
    assert "ANTHROPIC_API_KEY" in recorded["secrets"] and "ANTHROPIC_API_KEY" not in recorded["values"]

    # kill -9 of shellkeep and Claude together
    kill_shellkeep_and_agent(first, meta, WAIT_S, group=False)
    assert meta_of(folder)["status"] == "running"  # nobody wrote the end: found interrupted next

    # -- a new terminal without CLAUDE_CONFIG_DIR and ANTHROPIC_BASE_URL ------------------------
    second_env = {k: v for k, v in first_env.items() if k not in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL")}
    second = drive([*SK, "resume"], env=second_env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    said = bytes(second.raw).decode("utf-8", "replace")
    assert "environment: restored ANTHROPIC_BASE_URL, CLAUDE_CONFIG_DIR" in said, said
    assert "secrets" not in said.split("environment: ", 1)[1].split("\n", 1)[0]  # the key is here today
    ask(second, THIRD_PROMPT, THIRD_ANSWER)

    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == claude_id
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]
    assert turns(request) == [*earlier, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == claude_id

    new_folder = next(f.parent for f in session_folders(home) if f.parent != folder)
    new = meta_of(new_folder)
    assert new["command"] == ["claude", "--resume", claude_id] and new.get("resume_failed") is None
    assert new["parent"] == meta["id"] and new["status"] == "finished"
    assert ("assistant", THIRD_ANSWER) in transcript_texts(transcript)  # went on in CLAUDE_CONFIG_DIR
    assert new["env"]["values"]["CLAUDE_CONFIG_DIR"] == str(config_dir)  # and the resumed run kept it too
