"""Resume the real Claude Code and Codex CLI when their own resume cannot work.

Each test records a real ``shellkeep claude`` / ``shellkeep codex`` session of two exchanges
against its stand-in model and quits it normally, then damages what the agent's native
resume needs, the way users lose sessions. Codex's app-server daemon is ended first, as a
reboot would, so that the resumed Codex reads its rollout from disk:

- ``transcript-gone``: the agent's transcript and shellkeep's copy are both removed: the
  check before launching says so and shellkeep re-injects straight away;
- ``copy-restored``: only the agent's transcript is removed: shellkeep puts its copy back
  where the agent looks and the native resume carries the conversation;
- ``transcript-cut``: the transcript is cut in the middle of the record holding the second
  answer, as a crash mid-write leaves it: the cut file is kept as a backup, shellkeep's copy
  takes its place, and the native resume carries the second answer too;
- ``unknown-id``: the session id shellkeep knows is one the agent never had (a pruned store,
  another machine): the agent's own resume fails at once (Claude Code 2.1.197: ``No
  conversation found``; Codex 0.171.0: ``No saved session found with ID``, exit status 1).
  ``resume --native-only`` says so, marks the run and stops; a bare ``resume`` afterwards
  picks the original session again (not the failed run), fails the same way, says so in one
  line and, in the same command, starts the agent anew with the exchanges re-injected;
- ``inject-flag``: nothing is damaged; ``resume --inject`` starts the agent anew all the same
  and re-injects.
- ``nul-block`` (newest version): a block of NUL bytes over the record of the first answer
  and the start of the next one, the file's size kept, as a crash of the file system leaves
  it; the agents' own resume silently dropped the exchanges after it (Claude Code 2.1.332,
  Codex 0.171.0): shellkeep keeps the file as a backup and puts its copy back;
- Codex only, newest version: ``thread-stale``, ``thread-bare``: the ``threads`` row of
  Codex's state database points at a gone file, or at a rollout of the thread holding its
  first line alone: the check before launching says so and re-injects at once (without it
  Codex 0.165/0.171 failed its resume first, a wasted run; an empty file and no path are
  covered in tests/unit/agents/test_codex_state.py).

In the re-injected cases the next request that reaches the stand-in carries the earlier
prompts and answers inside the typed block: the block was submitted, not left in the prompt.
In the native ones the next request carries them as the conversation's own messages.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, session_folders, SK, stored_copy

from . import test_claude_standin_direct as claude_direct
from . import test_codex_standin_direct as codex_direct
from .agent_processes import reap
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .standin_openai import OpenAIStandin
from .standin_server import StandinServer
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(360)]

PROMPTS = ("the first word is kiwi", "the second word is lime")
ANSWERS = ("STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime")
THIRD_PROMPT, THIRD_ANSWER = "the third word is fig", "STANDIN-ANSWER-3: fig"
DAMAGES = [
    "transcript-gone", "copy-restored", "transcript-cut", "unknown-id", "inject-flag",
    pytest.param("nul-block", marks=pytest.mark.newest_only),
]
CODEX_DAMAGES = [
    *DAMAGES,
    pytest.param("thread-stale", marks=pytest.mark.newest_only),
    pytest.param("thread-bare", marks=pytest.mark.newest_only),
]
WAIT_S = 60.0
EXIT_WAIT_S = 180.0
"""How long a real agent may take to start, fail its resume and exit, with both cores busy."""

FAILURE_WORDS = {"claude": "No conversation found", "codex": "No saved session found"}
"""What each agent says when asked to resume a session it never had."""

Drive = Callable[..., ScreenDriver]


@dataclass(frozen=True)
class Agent:
    """One real agent CLI as these tests drive it through shellkeep."""

    program: str
    """What follows ``shellkeep`` to record it (``claude``, ``codex``)."""
    env: dict[str, str]
    standin: StandinServer[Any]
    ready: str | re.Pattern[str]
    ask: Callable[[ScreenDriver, str, str], None]
    quit: Callable[[ScreenDriver], str]
    resume_words: tuple[str, ...]
    """How its native resume command starts (``claude --resume``, ``codex resume``)."""
    daemon_folder: Path | None
    """Where the helpers that outlive its TUI run from (ended before resuming), if any."""


@pytest.fixture
def claude(agent_env: dict[str, str], anthropic_standin: AnthropicStandin) -> Agent:
    """Return Claude Code (each version in turn) against its stand-in."""
    return Agent(
        "claude", agent_env, anthropic_standin, claude_direct.READY, claude_direct.ask,
        claude_direct.quit_claude, ("claude", "--resume"), None,
    )  # fmt: skip


@pytest.fixture
def codex(codex_env: dict[str, str], openai_standin: OpenAIStandin) -> Agent:
    """Return Codex against its stand-in; its app-server daemon runs from ``$CODEX_HOME/packages``."""
    daemon_folder = Path(codex_env["CODEX_HOME"]) / "packages"
    return Agent(
        "codex", codex_env, openai_standin, codex_direct.READY, codex_direct.ask, _quit_codex,
        ("codex", "resume"), daemon_folder,
    )  # fmt: skip


@pytest.mark.parametrize("damage", DAMAGES)
def test_resume_survives_claude_losing_its_session(
    home: Paths, drive: Drive, claude: Agent, project_dir: Path, damage: str
) -> None:
    _check(claude, home, drive, project_dir, damage)


@pytest.mark.parametrize("damage", CODEX_DAMAGES)
def test_resume_survives_codex_losing_its_session(
    home: Paths, drive: Drive, codex: Agent, project_dir: Path, damage: str
) -> None:
    _check(codex, home, drive, project_dir, damage)


def _check(agent: Agent, home: Paths, drive: Drive, project: Path, damage: str) -> None:
    """Record, damage as ``damage`` says, resume, and check what reached the stand-in."""
    env = {**agent.env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _record(agent, drive, env, project, home)
    if agent.daemon_folder is not None:
        reap(agent.daemon_folder)
    meta = meta_of(folder)
    transcript = Path(meta["agent_transcript"])
    copy = folder / "agent" / f"{transcript.name}.ref"  # the session's reference to its stored copy
    assert transcript.is_file() and copy.is_file() and stored_copy(folder, transcript.name)
    resume_args: list[str] = [meta["id"]]
    cut = b""
    if damage == "transcript-gone":
        transcript.unlink()
        copy.unlink()
    elif damage == "copy-restored":
        transcript.unlink()
    elif damage == "transcript-cut":
        whole = transcript.read_bytes()
        cut = whole[: whole.index(ANSWERS[1].encode())]  # a torn last line: answer 2 is lost
        transcript.write_bytes(cut)
    elif damage == "unknown-id":
        meta.update(agent_session_id=str(uuid.uuid4()), agent_transcript=None)
        (folder / "meta.json").write_text(json.dumps(meta))
        _native_only_fails(agent, home, drive, env, project, folder)
        resume_args = []  # a bare resume: it must pick the original session, not the failed run
    elif damage == "nul-block":
        whole = transcript.read_bytes()
        start = whole.rindex(b"\n", 0, whole.index(ANSWERS[0].encode())) + 1
        end = whole.index(b"\n", whole.index(ANSWERS[0].encode())) + 1  # its newline too: the next record is hit
        damaged = whole[:start] + bytes(end - start) + whole[end:]  # the size kept, as a lost block leaves it
        transcript.write_bytes(damaged)
    elif damage.startswith("thread-"):
        _point_thread_elsewhere(agent, meta["agent_session_id"], transcript, damage.removeprefix("thread-"))
    else:
        resume_args = ["--inject"]

    second = drive([*SK, "resume", *resume_args], env=env, cwd=project)
    second.wait_for_screen(agent.ready, WAIT_S)
    if damage in ("copy-restored", "transcript-cut", "nul-block"):
        agent.ask(second, THIRD_PROMPT, THIRD_ANSWER)
        request = agent.standin.wait_for_request(
            lambda r: r.is_conversation and r.last_user_text() == THIRD_PROMPT, timeout_s=WAIT_S, pump=second.pump
        )
        assert _conversation(request.texts())[:4] == [PROMPTS[0], ANSWERS[0], PROMPTS[1], ANSWERS[1]]
        if damage == "copy-restored":
            _wait_said(second, "was gone; restored shellkeep's copy")
        elif damage == "nul-block":
            [backup] = transcript.parent.glob(f"{transcript.name}.shellkeep-backup-*")
            assert backup.read_bytes() == damaged
            _wait_said(second, f"was damaged; kept it as {backup.name} and restored shellkeep's copy")
        else:
            [backup] = transcript.parent.glob(f"{transcript.name}.shellkeep-backup-*")
            assert backup.read_bytes() == cut
            _wait_said(second, f"was cut; kept it as {backup.name} and restored shellkeep's copy")
        [run] = [meta_of(f.parent) for f in session_folders(home) if f.parent != folder]
        assert run["command"][: len(agent.resume_words)] == list(agent.resume_words)
        assert run["parent"] == meta["id"] and not run.get("resume_failed")
        return

    block = _injected_block(agent.standin, second)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        assert prompt in block and answer in block, block
    runs = [meta_of(f.parent) for f in session_folders(home) if f.parent != folder]
    injected = [m for m in runs if not m.get("resume_failed")]
    assert len(injected) == 1 and injected[0]["parent"] == meta["id"]
    assert injected[0]["command"][: len(agent.resume_words)] != list(agent.resume_words)
    if damage == "transcript-gone":
        _wait_said(second, "shellkeep holds no copy of it; re-injecting instead")
        assert len(runs) == 1
    elif damage.startswith("thread-"):
        _wait_said(second, "; re-injecting instead")
        assert "Codex's thread list points at " in _said(second), _said(second)
        assert len(runs) == 1
    elif damage == "unknown-id":
        _wait_said(second, f"── shellkeep: {meta['id']} · {agent.program} · ")
        said = _wait_said(second, "); re-injecting the last 2 exchanges")
        assert "the agent's own resume failed (" in said, said
        failed = [m for m in runs if m.get("resume_failed")]
        assert len(failed) == 2 and all(m["parent"] == meta["id"] for m in failed)
        assert all(m["command"][: len(agent.resume_words)] == list(agent.resume_words) for m in failed)
    else:
        _wait_said(second, "re-injecting 2 exchanges")
        assert len(runs) == 1


def _record(agent: Agent, drive: Drive, env: dict[str, str], project: Path, home: Paths) -> Path:
    """Record two exchanges with ``shellkeep <agent>``, quit, and return the session folder."""
    first = drive([*SK, agent.program], env=env, cwd=project)
    first.wait_for_screen(agent.ready, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        agent.ask(first, prompt, answer)
    agent.quit(first)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("exchange_count") == 2, WAIT_S, "exchanges stored")
    return folder


def _point_thread_elsewhere(agent: Agent, thread_id: str, transcript: Path, how: str) -> None:
    """Point Codex's ``threads`` row of ``thread_id`` at another rollout path: ``stale`` (gone)
    or ``bare`` (a rollout of the thread holding its first line alone).

    The state database is ``$CODEX_HOME/state_5.sqlite`` (Codex 0.171.0); the real rollout stays.
    """
    import sqlite3

    stale = transcript.with_name(f"rollout-moved-{thread_id}.jsonl")
    if how == "bare":
        with transcript.open("rb") as fh:
            stale.write_bytes(fh.readline())
    [database] = Path(agent.env["CODEX_HOME"]).glob("state_*.sqlite")
    with sqlite3.connect(database) as db:
        changed = db.execute("UPDATE threads SET rollout_path = ? WHERE id = ?", (str(stale), thread_id)).rowcount
    db.close()
    assert changed == 1


def _native_only_fails(agent: Agent, home: Paths, drive: Drive, env: dict[str, str], project: Path, folder: Path) -> None:
    """Run ``resume --native-only`` of a session the agent does not know: it fails, is marked, no fallback."""
    only = drive([*SK, "resume", "--native-only"], env=env, cwd=project)
    _wait_said(only, FAILURE_WORDS[agent.program])  # the agent's own word first: a clearer failure than an exit wait
    assert only.wait_exit(EXIT_WAIT_S) != 0, only.dump()
    assert "); not re-injecting (--native-only)" in _said(only), _said(only)  # it has ended: all was read
    [run] = [meta_of(f.parent) for f in session_folders(home) if f.parent != folder]
    assert run["resume_failed"] and run["parent"] == meta_of(folder)["id"]
    assert not any("[shellkeep]" in r.last_user_text() for r in agent.standin.requests())


def _said(driver: ScreenDriver) -> str:
    """Return everything the terminal got, as text (shellkeep's own lines scroll off the screen)."""
    return bytes(driver.raw).decode("utf-8", "replace")


def _wait_said(driver: ScreenDriver, text: str) -> str:
    """Read the terminal until ``text`` was said in it; return all it got."""
    return str(driver.wait_until(lambda: text in _said(driver) and _said(driver), WAIT_S, f"{text!r} said"))


def _conversation(texts: Sequence[tuple[str, str]]) -> list[str]:
    """Return the typed prompts and the answers of a request's ``(role, text)`` pairs, in order.

    The agents' own context (Claude's ``<system-reminder>``, Codex's ``<environment_context>``
    and ``# AGENTS.md`` instructions) is left out.
    """
    return [text for role, text in texts if role in ("user", "assistant") and not text.startswith(("<", "#"))]


def _injected_block(standin: StandinServer[Any], driver: ScreenDriver) -> str:
    """Wait for the conversation request whose last user text is the re-injected block, reading
    ``driver``'s screen meanwhile; return it."""
    request = standin.wait_for_request(
        lambda r: r.is_conversation and "[shellkeep]" in (r.last_user_text() or ""), timeout_s=WAIT_S, pump=driver.pump
    )
    return str(request.last_user_text())
