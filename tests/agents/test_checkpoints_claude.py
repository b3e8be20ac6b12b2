"""The real Claude Code CLI under ``shellkeep claude``: its files are snapshotted at each answer, while it runs.

Claude answers from the loopback stand-in; the test writes files between the answers, as
an agent's edits would land (the stand-in answers with text, not tool calls). Each
checkpoint ``exchange K`` appears while Claude still runs; after a kill -9 of shellkeep and
Claude together, the files changed since the last answer are in flight and
``restore-files`` puts back the files of any exchange. A prompt Claude never answered (the
stand-in holds it) gets no checkpoint of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.agents.generic import typed_lines
from shellkeep.store.checkpoints import read_checkpoints
from shellkeep.store.paths import Paths
from tests.helpers import SK, load_session, meta_of, run_sk

from .checkpoint_checks import exchange_checkpoint, git_project, session_folder
from .crash import kill_shellkeep_and_agent
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]


def test_claude_exchanges_are_snapshotted_while_it_runs_and_survive_a_kill_9(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    git = git_project(project_dir)
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    folder = session_folder(driver, home, WAIT_S)

    exchange_checkpoint(driver, folder, 0, WAIT_S)
    ask(driver, "please remember the word pineapple", "STANDIN-ANSWER-1: pineapple")
    first = exchange_checkpoint(driver, folder, 1, WAIT_S)
    (project_dir / "notes.txt").write_text("written after the first answer\n")
    ask(driver, "and the word mango", "STANDIN-ANSWER-2: mango")
    second = exchange_checkpoint(driver, folder, 2, WAIT_S)
    assert driver.is_alive()  # both were taken while Claude ran
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", str(second.snapshot)], check=True, capture_output=True, text=True)
    assert listed.stdout.split() == ["notes.txt"]
    assert first.snapshot != second.snapshot and first.branch == "main"

    (project_dir / "draft.txt").write_text("half written when everything died\n")
    meta = meta_of(folder)
    kill_shellkeep_and_agent(driver, meta, WAIT_S, group=False)

    shown = run_sk("show", folder.name, "--json", env=env, cwd=project_dir)
    assert shown.returncode == 0, shown.stderr
    in_flight = json.loads(shown.stdout)["in_flight"]
    assert in_flight == {"since_exchange": 2, "checkpoint": second.n, "files": [{"path": "draft.txt", "status": "A", "tools": []}]}
    back = run_sk("restore-files", folder.name, "--checkpoint", str(first.n), "--yes", env=env, cwd=project_dir)
    assert back.returncode == 0, back.stderr
    assert not (project_dir / "notes.txt").exists() and not (project_dir / "draft.txt").exists()


def test_a_prompt_claude_never_answered_gets_no_exchange_checkpoint(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    """kill -9 while Claude's answer to prompt 2 is pending: exchange 2 has no checkpoint (its
    files are in flight), none is said to be outside git, and --before-exchange names 1 and 2."""
    git_project(project_dir)
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    held = "the held word is plum"
    anthropic_standin.hold(lambda r: r.is_conversation and r.last_user_text() == held)
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    folder = session_folder(driver, home, WAIT_S)
    ask(driver, "the first word is kiwi", "STANDIN-ANSWER-1: kiwi")
    driver.wait_until(lambda: [c.exchange for c in read_checkpoints(folder) if c.auto] == [0, 1], WAIT_S, "exchange 1's snapshot")
    (project_dir / "plum.txt").write_text("written while prompt 2 was pending\n")
    driver.type(held)
    driver.wait_for_screen(held, WAIT_S)
    driver.press("enter")
    anthropic_standin.wait_for_request(lambda r: r.is_conversation and r.last_user_text() == held, WAIT_S)
    driver.wait_until(lambda: held in [line.text for line in typed_lines(load_session(folder)[2])], WAIT_S, "prompt on disk")
    meta = meta_of(folder)
    kill_shellkeep_and_agent(driver, meta, WAIT_S, group=False)
    anthropic_standin.release()
    resumed = drive([*SK, "resume", folder.name, "--no-resend"], env=env, cwd=project_dir)  # collects the session
    resumed.wait_for_screen(READY, WAIT_S)
    ask(resumed, "the next word is fig", "STANDIN-ANSWER-2: fig")
    quit_claude(resumed)

    shown = run_sk("show", folder.name, env=env, cwd=project_dir)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert meta_of(folder)["unanswered_prompt"]["index"] == 1 and meta_of(folder)["exchange_count"] == 2
    assert [(c.exchange, c.has_snapshot) for c in read_checkpoints(folder) if c.auto] == [(0, True), (1, True)]
    assert "'exchange 2'" not in text and "marker only" not in text
    assert "files in flight (changed since exchange 1" in text and "plum.txt" in text

    missing = run_sk("restore-files", folder.name, "--before-exchange", "3", "--yes", env=env, cwd=project_dir)
    assert missing.returncode == 2 and missing.stderr.decode().splitlines() == [
        f"shellkeep: session {folder.name} has no snapshot of the files before exchange 3; --before-exchange takes 1, 2 here;"
        f" see 'shellkeep show {folder.name}'"
    ]
    back = run_sk("restore-files", folder.name, "--before-exchange", "2", "--yes", env=env, cwd=project_dir)
    assert back.returncode == 0 and back.stderr == b"", back.stderr  # ended: no warning
    assert not (project_dir / "plum.txt").exists()
