"""Hand a conversation from one real agent to another, into the other's own history.

``shellkeep claude`` (or ``shellkeep codex``) records one exchange against its stand-in model and
is quit; ``shellkeep resume ID --agent codex`` (or ``--agent claude``) writes that exchange as a
Codex rollout (a Claude Code transcript), marked ``shellkeep_handoff``, and starts the other
agent with its own resume flag on the new id. The next prompt's request to the other agent's
stand-in holds the earlier prompt and answer as separate messages of their roles (user,
assistant), not one pasted block.

Claude Code → Codex goes into a Codex home where Codex has already run once (``codex exec``):
there ``codex resume`` checks the rollout's ``model_provider`` against its config.toml (the
stand-in's ``standin`` provider) and, without it, stops at a "Model provider unavailable" dialog.
Claude Code's own recorded variables (``ANTHROPIC_*``) are neither given to Codex nor named
missing. Codex → Claude Code: Claude Code restores the model of the last answer on resume, and warns
when it is not a Claude model; the written answers name none (``<synthetic>``).

The writer is the other agent's: Claude Code → Codex runs against both pinned Codex versions
(0.165.0 and 0.171.0 write their rollouts differently: 0.171.0 adds a paginated
``history_mode``), with the newest Claude Code; Codex → Claude Code runs with the newest of each
(``newest_only``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, meta_of, session_folders

from . import test_claude_standin_direct as claude_direct
from . import test_codex_standin_direct as codex_direct
from .conftest import CLAUDE_VERSIONS, TEST_API_KEY, _find_binary, _search_path
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .standin_openai import OpenAIStandin
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

FIRST_PROMPT, SECOND_PROMPT = "the first word is kiwi", "the second word is lime"
WAIT_S = 60.0

Drive = Callable[..., ScreenDriver]


@pytest.fixture(scope="session")
def newest_claude() -> Path:
    """Return the newest Claude Code the suite tests (the hand-off's Claude side is the same on both)."""
    version = max(CLAUDE_VERSIONS, key=lambda v: tuple(int(p) for p in v.split(".")))
    return _find_binary("SHELLKEEP_TEST_CLAUDE", "claude", f"@anthropic-ai/claude-code@{version}", CLAUDE_VERSIONS[version])


@pytest.fixture
def both_env(
    claude_home: Path, anthropic_standin: AnthropicStandin, newest_claude: Path, codex_env: dict[str, str], codex_bin: Path
) -> dict[str, str]:
    """Return one environment for both agents, each against its stand-in (the same for recording and resuming)."""
    return {
        **codex_env,
        "HOME": str(claude_home),
        "ANTHROPIC_API_KEY": TEST_API_KEY,
        "ANTHROPIC_BASE_URL": anthropic_standin.base_url,
        "DISABLE_AUTOUPDATER": "1",
        "PATH": _search_path(newest_claude, codex_bin),
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
    }


def _recorded(drive: Drive, env: dict[str, str], project: Path, home: Paths, program: str) -> dict[str, object]:
    """Record one exchange with ``shellkeep <program>``, quit, and return the session's meta."""
    first = drive([*SK, program], env=env, cwd=project)
    direct = claude_direct if program == "claude" else codex_direct
    first.wait_for_screen(direct.READY, WAIT_S)
    direct.ask(first, FIRST_PROMPT, "STANDIN-ANSWER-1: kiwi")
    claude_direct.quit_claude(first) if program == "claude" else _quit_codex(first)
    [meta_path] = session_folders(home)
    first.wait_until(lambda: meta_of(meta_path.parent).get("exchange_count") == 1, WAIT_S, "exchange stored")
    return meta_of(meta_path.parent)


def _resumed_run(driver: ScreenDriver, home: Paths, meta: dict[str, object]) -> dict[str, object]:
    """Return the meta of the run that resumed ``meta``, once its exchanges are stored: only the
    prompt asked in it (the handed-off exchange stays its parent's)."""
    [folder] = [f.parent for f in session_folders(home) if meta_of(f.parent)["id"] != meta["id"]]
    driver.wait_until(lambda: meta_of(folder).get("exchange_count") is not None, WAIT_S, "exchanges stored")
    run = meta_of(folder)
    assert run["exchange_count"] == 1, run
    return run


def _said(driver: ScreenDriver) -> str:
    return bytes(driver.raw).decode("utf-8", "replace")


def test_claude_hands_off_into_codexs_own_history(
    home: Paths, drive: Drive, both_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    meta = _recorded(drive, both_env, project_dir, home, "claude")
    sessions = Path(both_env["CODEX_HOME"]) / "sessions"
    warm = subprocess.run(["codex", "exec", "--skip-git-repo-check", "warm up"], env=both_env, cwd=project_dir, capture_output=True, text=True)
    assert warm.returncode == 0 and "STANDIN-ANSWER-1: up" in warm.stdout, warm  # Codex has run in this home once
    [own] = sessions.rglob("rollout-*.jsonl")
    codex_only = {k: v for k, v in both_env.items() if not k.startswith("ANTHROPIC_")}  # Claude's are not Codex's
    second = drive([*SK, "resume", str(meta["id"]), "--agent", "codex"], env=codex_only, cwd=project_dir)
    second.wait_for_screen(codex_direct.READY, WAIT_S)
    codex_direct.ask(second, SECOND_PROMPT, "STANDIN-ANSWER-2: lime")

    request = codex_direct.request_with_prompt(openai_standin, SECOND_PROMPT)
    assert codex_direct.turns(request) == [
        ("user", FIRST_PROMPT), ("assistant", "STANDIN-ANSWER-1: kiwi"), ("user", SECOND_PROMPT)
    ]  # fmt: skip
    [rollout] = set(sessions.rglob("rollout-*.jsonl")) - {own}  # Codex went on in the one written
    head = json.loads(rollout.read_text().splitlines()[0])
    assert head["payload"]["shellkeep_handoff"]["from_session"] == meta["id"]
    assert head["payload"]["model_provider"] == json.loads(own.read_text().splitlines()[0])["payload"]["model_provider"] == "standin"
    assert "Model provider unavailable" not in _said(second)
    [env_line] = [line for line in _said(second).splitlines() if "environment:" in line]
    assert "ANTHROPIC" not in env_line, env_line  # neither restored for Codex nor named missing
    thread_id = head["payload"]["id"]
    assert request.headers["session-id"] == thread_id
    assert f"handed off 1 exchange into codex's own history: {rollout}" in _said(second)
    assert _quit_codex(second) == thread_id
    run = _resumed_run(second, home, meta)
    assert (run["command"], run["parent"], run.get("resume_failed")) == (["codex", "resume", thread_id], meta["id"], None)


@pytest.mark.newest_only
def test_codex_hands_off_into_claudes_own_history(
    home: Paths, drive: Drive, both_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    meta = _recorded(drive, both_env, project_dir, home, "codex")
    second = drive([*SK, "resume", str(meta["id"]), "--agent", "claude"], env=both_env, cwd=project_dir)
    second.wait_for_screen(claude_direct.READY, WAIT_S)
    claude_direct.ask(second, SECOND_PROMPT, "lime")
    assert "could not be restored" not in second.text(), second.text()  # no "Session model standin-model ..." notice

    request = claude_direct.request_with_prompt(anthropic_standin, SECOND_PROMPT)
    assert claude_direct.turns(request) == [
        ("user", FIRST_PROMPT), ("assistant", "STANDIN-ANSWER-1: kiwi"), ("user", SECOND_PROMPT)
    ]  # fmt: skip
    [transcript] = (Path(both_env["HOME"]) / ".claude" / "projects").rglob("*.jsonl")
    said = _said(second)
    assert f"handed off 1 exchange into claude's own history: {transcript}" in said, said
    first_record = json.loads(transcript.read_text().splitlines()[0])
    assert first_record["shellkeep_handoff"]["from_session"] == meta["id"]
    assert claude_direct.quit_claude(second) == transcript.stem
    run = _resumed_run(second, home, meta)
    assert (run["command"], run["parent"], run.get("resume_failed")) == (["claude", "--resume", transcript.stem], meta["id"], None)
