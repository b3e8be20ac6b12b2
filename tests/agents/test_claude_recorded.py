"""Record the real Claude Code CLI under ``shellkeep claude`` against the Anthropic stand-in.

``python -m shellkeep claude`` runs in a ``ScreenDriver`` pty (120x40) with a HOME whose
first-run screens are answered; the test asks one question, waits for the stand-in's answer
on the rendered screen and exits Claude with Ctrl-C twice. Then it checks what shellkeep kept:
the recording played through the terminal emulator shows the exchange and ends on the screen the user saw,
Claude's escape sequences survive byte for byte, the metadata is complete, and ``ls`` and
``show`` find the session.

What Claude Code 2.1.197 emits (seen in the driver's log, see test_claude_standin_direct.py):
bracketed paste ``ESC[?2004h``/``l``, focus reporting ``ESC[?1004h``/``l``, colour-scheme
reports ``ESC[?2031h``/``l``, window titles ``ESC]0;…BEL``, the queries ``ESC[c`` (device
attributes) and ``ESC[>0q`` (XTVERSION), and on exit the kitty keyboard pop ``ESC[<u``. It
sends no synchronized-output ``ESC[?2026h`` to this terminal and no alternate screen.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from shellkeep.asciicast.model import Event
from tests.helpers import BANNER, SK, only_session, output_text, run_sk, without_banner

from .screen_driver import ScreenDriver, replay_screens, screen_text
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

PROMPT = "please remember the word pineapple"
ANSWER = "STANDIN-ANSWER-1: pineapple"
# Sequences every Claude Code version writes, which a recording must keep exactly (see the
# module docstring), and those only some versions write (2.1.332 no longer pops kitty flags).
CLAUDE_SEQUENCES = (
    "\x1b[?2004h",
    "\x1b[?2004l",
    "\x1b[?1004h",
    "\x1b[?1004l",
    "\x1b[?2031h",
    "\x1b[?2031l",
    "\x1b]0;",
)
SOME_VERSIONS_SEQUENCES = ("\x1b[c", "\x1b[>0q", "\x1b[<u", "\x1b[?2026h")
DEVICE_ATTRIBUTES_REPLY = "\x1b[?6c"  # what the driver's terminal answers to ESC[c

Drive = Callable[..., ScreenDriver]


def _git_project(folder: Path) -> str:
    """Make *folder* a git repository with one commit; return the commit's hash."""
    git = ["git", "-C", str(folder), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_claude_under_shellkeep_is_recorded_whole(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    commit = _git_project(project_dir)
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    assert Path(env["SHELLKEEP_HOME"]) == home.home
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, PROMPT, ANSWER)
    claude_session = quit_claude(driver)  # exit status 0, and Claude printed its resume hint
    seen = driver.text()
    shown = bytes(driver.raw)
    banner = BANNER.match(shown)  # the start line: on the user's screen, never in the recording
    assert banner is not None, shown[:200]
    raw = without_banner(shown)
    assert request_with_prompt(anthropic_standin, PROMPT).session_id == claude_session

    meta, header, events = only_session(home)
    text = output_text(events)

    # -- the recording shows what the user saw ----------------------------------------
    said = Event(0.0, "o", banner.group(0).decode())
    snapshots = [screen_text(screen) for _, screen in replay_screens(header.size, [said, *events])]
    assert any(
        any(PROMPT in line for line in snap.splitlines()) and any(ANSWER in line for line in snap.splitlines())
        for snap in snapshots
    ), "no point of the recording shows the prompt and the answer together"
    assert snapshots[-1] == seen, "the recording's last screen differs from the user's"
    assert f"claude --resume {claude_session}" in snapshots[-1]

    # -- escape sequences survive byte for byte ---------------------------------------
    assert text.encode("utf-8") == raw, "the recorded output differs from what the terminal got"
    for sequence in CLAUDE_SEQUENCES:
        assert sequence.encode() in raw, f"Claude Code no longer emits {sequence!r}"
    for sequence in (*CLAUDE_SEQUENCES, *SOME_VERSIONS_SEQUENCES):
        assert text.count(sequence) == raw.count(sequence.encode()), sequence

    # -- what was typed; the terminal's own answers are not input ---------------------
    typed = "".join(e.data for e in events if e.code == "i")
    assert PROMPT in typed
    assert typed.endswith("\x03\x03")
    assert DEVICE_ATTRIBUTES_REPLY not in typed
    assert meta["input_bytes"] == len(typed.encode("utf-8"))

    # -- the metadata is complete -----------------------------------------------------
    command = meta["command"]
    assert isinstance(command, list) and command[0] == "claude"
    # shellkeep may give a new conversation its id up front (claude --session-id <uuid>).
    assert command in (["claude"], ["claude", "--session-id", claude_session]), command
    assert meta.get("agent_session_id") in (None, claude_session)
    assert meta["agent"] == "claude"
    assert (meta["status"], meta["exit_code"], meta["signal"]) == ("finished", 0, None)
    assert meta["cwd"] == str(project_dir)
    assert meta["project_root"] == str(project_dir)
    assert isinstance(meta["started_at"], str) and isinstance(meta["ended_at"], str)
    assert meta["started_at"].endswith("Z") and meta["ended_at"] > meta["started_at"]
    assert isinstance(meta["duration"], float) and meta["duration"] > 0
    assert meta["output_bytes"] == len(raw) > 0
    assert meta["input_bytes"] > 0
    assert meta["term"] == "xterm-256color"
    assert (meta["cols"], meta["rows"]) == (driver.size.cols, driver.size.rows)
    assert (header.size.cols, header.size.rows) == (driver.size.cols, driver.size.rows)
    for key in ("git_start", "git_end"):
        assert meta[key] == {"branch": "main", "commit": commit, "dirty": False}, key
    assert meta["record_input"] is True and meta["hidden_input"] is False
    assert meta["recording_error"] is None

    # -- ls and show find it ----------------------------------------------------------
    listed = run_sk("ls", "--json", cwd=project_dir)
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [meta["id"]]
    shown = run_sk("show", "--last", "--json", cwd=project_dir)
    assert shown.returncode == 0, shown.stderr
    shown_meta = json.loads(shown.stdout)
    for key in ("id", "command", "agent", "status", "exit_code", "cwd", "started_at", "ended_at", "output_bytes"):
        assert shown_meta[key] == meta[key], key
