"""Resume the real Claude Code in a project folder that was renamed after the session.

Claude Code keeps a conversation under ``~/.claude/projects/<dash-encoded cwd>/<id>.jsonl``
and ``claude --resume <id>`` looks only under the current directory's folder, so after
``mv project project-renamed`` its own resume would not find the conversation. shellkeep
copies the transcript to the new folder's place (the original stays where it was) and
starts ``claude --resume <id>`` in the renamed folder, found by its git remote and root
commit: a bare ``shellkeep resume`` there. The stand-in must then receive the earlier
prompts and answers with the next prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, load_session, session_folders, wait_for_background

from .conftest import claude_state
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt, transcript_path, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

PROMPTS = ("the first word is kiwi", "the second word is lime")
ANSWERS = ("STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime")
THIRD_PROMPT, THIRD_ANSWER = "the third word is fig", "STANDIN-ANSWER-3: fig"

Drive = Callable[..., ScreenDriver]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True
    )


def test_claude_resumes_natively_after_the_project_folder_was_renamed(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    claude_home: Path,
) -> None:
    renamed = project_dir.with_name("project-renamed")
    # Both folders are trusted up front, so that neither start shows Claude's trust dialog.
    (claude_home / ".claude.json").write_text(json.dumps(claude_state([project_dir, renamed]), indent=2))
    _git(project_dir, "init", "-q", "-b", "main")
    _git(project_dir, "remote", "add", "origin", "https://github.com/acme/fruit.git")
    _git(project_dir, "commit", "-q", "--allow-empty", "-m", "first")

    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first = drive([*SK, "claude"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    claude_id = quit_claude(first)
    wait_for_background(home)  # the upkeep adds the root commit to the git identity
    [meta_path] = session_folders(home)
    meta, _, _ = load_session(meta_path.parent)
    assert meta["agent_session_id"] == claude_id
    identity = meta["git_identity"]
    assert isinstance(identity, dict) and identity["remote"] == "github.com/acme/fruit" and identity["root_commit"]
    old_transcript = transcript_path(claude_home, project_dir, claude_id)
    assert meta["agent_transcript"] == str(old_transcript)

    subprocess.run(["mv", str(project_dir), str(renamed)], check=True)
    new_transcript = transcript_path(claude_home, renamed, claude_id)
    assert not new_transcript.exists()

    second = drive([*SK, "resume"], env=env, cwd=renamed)  # no SESSION, no --cwd
    second.wait_for_screen(READY, WAIT_S)
    assert new_transcript.is_file() and old_transcript.is_file()  # copied; the original stays
    ask(second, THIRD_PROMPT, THIRD_ANSWER)
    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == claude_id
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]
    assert turns(request) == [*earlier, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == claude_id
    said = bytes(second.raw).decode("utf-8", errors="replace")
    assert "the same git repository" in said and "copied the agent's transcript to" in said

    [new] = [load_session(f.parent)[0] for f in session_folders(home) if f.parent.name != meta["id"]]
    assert new["parent"] == meta["id"] and new["cwd"] == str(renamed)
    assert new["command"] == ["claude", "--resume", claude_id]
    assert new["agent_session_id"] == claude_id and new["agent_transcript"] == str(new_transcript)
