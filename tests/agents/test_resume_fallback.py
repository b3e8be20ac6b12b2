"""Resume the real Claude Code when its own resume cannot work: shellkeep re-injects instead.

Each test records a real ``shellkeep claude`` session of two exchanges against the Anthropic
stand-in and quits it normally, then damages what Claude Code's native resume needs, the
way users lose sessions:

- ``transcript-gone``: Claude's transcript and shellkeep's copy are both removed: the check
  before launching says so and shellkeep re-injects straight away;
- ``copy-restored``: only Claude's transcript is removed: shellkeep puts its copy back where
  Claude looks and the native resume carries the conversation;
- ``unknown-id``: the session id shellkeep knows is one Claude never had (a pruned store,
  another machine): ``claude --resume`` fails at once, shellkeep says so in one line and, in
  the same ``shellkeep resume``, starts Claude anew with the exchanges re-injected. The failed
  run is marked and a bare ``resume`` afterwards picks the original session again.

In the re-injected cases the next request that reaches the stand-in carries the earlier
prompts and answers inside the typed block: the block was submitted, not left in the prompt.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, session_folders, stored_copy

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

PROMPTS = ("the first word is kiwi", "the second word is lime")
ANSWERS = ("STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime")

Drive = Callable[..., ScreenDriver]


def _meta(folder: Path) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads((folder / "meta.json").read_text())
    return meta


def _record(drive: Drive, env: dict[str, str], project: Path, home: Paths) -> Path:
    """Record two exchanges with ``shellkeep claude``, quit, and return the session folder."""
    first = drive([*SK, "claude"], env=env, cwd=project)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    quit_claude(first)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: _meta(folder).get("exchange_count") == 2, WAIT_S, "exchanges stored")
    return folder


def _said(driver: ScreenDriver) -> str:
    """Return everything the terminal got, as text (shellkeep's own lines scroll off the screen)."""
    return bytes(driver.raw).decode("utf-8", "replace")


def _injected_request(standin: AnthropicStandin) -> str:
    """Wait for the conversation request whose last user text is the re-injected block; return it."""
    request = standin.wait_for_request(
        lambda r: r.is_conversation and "[shellkeep]" in (r.last_user_text() or ""), timeout_s=WAIT_S
    )
    return request.last_user_text() or ""


@pytest.mark.parametrize("damage", ["transcript-gone", "copy-restored", "unknown-id"])
def test_resume_survives_claude_losing_its_session(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    damage: str,
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _record(drive, env, project_dir, home)
    meta = _meta(folder)
    transcript = Path(meta["agent_transcript"])
    copy = folder / "agent" / f"{transcript.name}.ref"  # the session's reference to its stored copy
    assert transcript.is_file() and copy.is_file() and stored_copy(folder, transcript.name)
    if damage == "transcript-gone":
        transcript.unlink()
        copy.unlink()
    elif damage == "copy-restored":
        transcript.unlink()
    else:
        meta.update(agent_session_id=str(uuid.uuid4()), agent_transcript=None)
        (folder / "meta.json").write_text(json.dumps(meta))

    second = drive([*SK, "resume", meta["id"]], env=env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    if damage == "copy-restored":
        second.wait_until(transcript.is_file, WAIT_S, "the copy put back")
        ask(second, "the third word is fig", "STANDIN-ANSWER-3: fig")
        request = anthropic_standin.wait_for_request(
            lambda r: r.is_conversation and r.last_user_text() == "the third word is fig", timeout_s=WAIT_S
        )
        texts = [text for role, text in request.texts() if role in ("user", "assistant") and not text.startswith("<")]
        assert texts[:4] == [PROMPTS[0], ANSWERS[0], PROMPTS[1], ANSWERS[1]]
        assert "restored shellkeep's copy" in _said(second)
        return

    block = _injected_request(anthropic_standin)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        assert prompt in block and answer in block, block
    screen = _said(second)
    if damage == "transcript-gone":
        assert "shellkeep holds no copy of it; re-injecting instead" in screen, screen
    else:
        assert "the agent's own resume failed" in screen, screen
        runs = [_meta(f.parent) for f in session_folders(home) if f.parent != folder]
        failed = [m for m in runs if m.get("resume_failed")]
        assert len(failed) == 1 and failed[0]["parent"] == meta["id"]
        assert failed[0]["command"][:2] == ["claude", "--resume"]
        injected = [m for m in runs if not m.get("resume_failed")]
        assert len(injected) == 1 and injected[0]["parent"] == meta["id"]
