"""The real Codex CLI under ``shellkeep codex``: its files are snapshotted at each answer, while it runs.

Codex answers from the loopback stand-in (text only); the test writes a file between the
answers, as an edit would land. The checkpoints ``exchange 1`` and ``exchange 2`` appear
while Codex runs (the rollout read live, the composer's ``input`` hint as the waiting state),
and ``diff --in-flight`` after the run shows what changed since the last answer.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, run_sk

from .checkpoint_checks import exchange_checkpoint, git_project, session_folder
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]


@pytest.mark.newest_only  # the mechanism is proved on both Claude versions
def test_codex_exchanges_are_snapshotted_while_it_runs(
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    git = git_project(project_dir)
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, "codex"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    folder = session_folder(driver, home, WAIT_S)

    exchange_checkpoint(driver, folder, 0, WAIT_S)
    ask(driver, "say the word kiwi", "STANDIN-ANSWER-1: kiwi")
    first = exchange_checkpoint(driver, folder, 1, WAIT_S)
    (project_dir / "notes.txt").write_text("written after the first answer\n")
    ask(driver, "say the word plum", "STANDIN-ANSWER-2: plum")
    second = exchange_checkpoint(driver, folder, 2, WAIT_S)
    assert driver.is_alive()  # both were taken while Codex ran
    changed = subprocess.run([*git, "diff", "--name-only", str(first.snapshot), str(second.snapshot)], check=True, capture_output=True, text=True)
    assert changed.stdout.split() == ["notes.txt"]
    (project_dir / "draft.txt").write_text("after the last answer\n")
    quit_codex(driver)

    patch = run_sk("diff", folder.name, "--in-flight", env=env, cwd=project_dir)
    assert patch.returncode == 0, patch.stderr
    # In flight: what changed since exchange 2, whose snapshot was taken live.
    assert "+after the last answer" in patch.stdout.decode() and "notes.txt" not in patch.stdout.decode()
