"""Each exchange of the real Claude Code CLI under ``shellkeep claude`` adds a checkpoint.

The exchanges are read from Claude's own transcript when the run ends; the last one gets a
snapshot of the project's files (here with an untracked file written during the session).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.checkpoints import read_checkpoints
from shellkeep.store.paths import Paths
from tests.helpers import SK, session_folders

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]


def test_claude_exchange_adds_a_checkpoint_with_a_snapshot(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    git = ["git", "-C", str(project_dir), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, "please remember the word pineapple", "STANDIN-ANSWER-1: pineapple")
    (project_dir / "notes.txt").write_text("written while the agent ran\n")
    quit_claude(driver)

    (folder,) = [p.parent for p in session_folders(home)]
    checkpoints = read_checkpoints(folder)
    assert [(c.label, c.auto, c.exchange) for c in checkpoints] == [("exchange 1", True, 1)]
    (checkpoint,) = checkpoints
    assert checkpoint.has_snapshot and checkpoint.branch == "main" and checkpoint.ref is not None
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", checkpoint.ref], check=True, capture_output=True, text=True)
    assert listed.stdout.split() == ["notes.txt"]
