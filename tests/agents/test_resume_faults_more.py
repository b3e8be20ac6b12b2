"""Resume Gemini CLI, Qwen Code, OpenCode, Copilot CLI and aider after the two faults that
matter most after a normal quit (tests/agents/test_resume_fallback.py drives Claude Code and
Codex through every class).

Each agent (its newest pinned version) records two exchanges against its stand-in through
``shellkeep <agent>`` and is quit normally. Then what it resumes from is damaged:

- ``nul-block``: a block of NUL bytes over the agent's stored record of the first answer and
  the start of the next record, the file's size kept, as a crash of the file system leaves it
  (Gemini's and Qwen's chat file, Copilot's ``events.jsonl``, aider's chat history). OpenCode
  keeps its conversation in SQLite, where a lost page shows as a message without its text:
  the ``part`` row of the first answer is deleted (OpenCode resumes that session and silently
  sends the prompt without the answer);
- ``transcript-gone``: the agent's store of the conversation (the chat file, the event log,
  the chat history; OpenCode's whole database) and shellkeep's copy are both removed.

Then ``shellkeep resume <id>``: the next request that reaches the stand-in carries the earlier
prompts and answers, in order: as the conversation's own messages after a native resume (the
third prompt is asked to see them), or inside the re-injected block, which was submitted.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.store.paths import Paths
from tests.helpers import meta_of, session_folders, SK

from . import test_resume_aider as aider
from . import test_resume_copilot as copilot
from . import test_resume_gemini as gemini
from . import test_resume_opencode as opencode
from . import test_resume_qwen as qwen
from .conftest import (
    CI_AIDER_VENVS, COPILOT_VERSIONS, GEMINI_VERSIONS, OPENCODE_VERSIONS, QWEN_VERSIONS, _find_binary, _version_key,
)  # fmt: skip
from .screen_driver import ScreenDriver
from .standin_server import StandinServer
from .test_resume_aider import aider_env, aider_home, aider_standin  # noqa: F401 - fixtures
from .test_resume_copilot import copilot_cache, copilot_env, copilot_home  # noqa: F401 - fixtures
from .test_resume_opencode import opencode_env, opencode_home  # noqa: F401 - fixtures

pytestmark = [pytest.mark.agent, pytest.mark.timeout(540)]

WAIT_S = 90.0
BLOCK_WAIT_S = 300.0
"""How long the re-injected block may take to reach the stand-in once typed: Qwen Code 0.24.4,
with both cores busy (OpenCode starting beside it), drew its input box while still
"Initializing...", queued the submitted block ("1 queued") and sent it only once initialized:
78 s and 188 s later in two runs (measured 2026-12-06; about 1 s on a quiet machine)."""
AGENTS = ("gemini", "qwen", "opencode", "copilot", "aider")
DAMAGES = ("nul-block", "transcript-gone")
MODULES: dict[str, ModuleType] = {"gemini": gemini, "qwen": qwen, "opencode": opencode, "copilot": copilot, "aider": aider}

Drive = Callable[..., ScreenDriver]


def _newest(versions: dict[str, Any]) -> str:
    return max(versions, key=_version_key)


# The newest pinned version of each agent alone: these fixtures stand for the versioned ones of
# conftest.py within this module (the mechanism does not depend on the agent's version).
@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    v = _newest(GEMINI_VERSIONS)
    return _find_binary("SHELLKEEP_TEST_GEMINI", "gemini", f"@google/gemini-cli@{v}", GEMINI_VERSIONS[v])


@pytest.fixture(scope="session")
def qwen_bin() -> Path:
    v = _newest(QWEN_VERSIONS)
    return _find_binary("SHELLKEEP_TEST_QWEN", "qwen", f"@qwen-code/qwen-code@{v}", QWEN_VERSIONS[v])


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    v = _newest(OPENCODE_VERSIONS)
    return _find_binary("SHELLKEEP_TEST_OPENCODE", "opencode", f"opencode-ai@{v}", OPENCODE_VERSIONS[v])


@pytest.fixture(scope="session")
def copilot_bin() -> Path:
    v = _newest(COPILOT_VERSIONS)
    return _find_binary("SHELLKEEP_TEST_COPILOT", "copilot", f"@github/copilot@{v}", COPILOT_VERSIONS[v])


@pytest.fixture(scope="session")
def aider_bin() -> Path:
    found = CI_AIDER_VENVS[_newest(CI_AIDER_VENVS)].expanduser() / "bin" / "aider"
    if not found.exists():
        pytest.skip(f"aider not found in {found.parent.parent} (.ci/run makes it)")
    return found


@dataclass
class Agent:
    """One agent as this test drives it: its environment, stand-in and the helpers of its own test file."""

    name: str
    env: dict[str, str]
    standin: StandinServer[Any]
    home: Path

    @property
    def module(self) -> ModuleType:
        return MODULES[self.name]

    def ask(self, driver: ScreenDriver, prompt: str, answer: str) -> None:
        if self.name in ("gemini", "qwen"):
            self.module.ask(driver, self.standin, prompt, answer)
        elif self.name == "aider":
            aider.ask(driver, prompt, answer)
        else:
            opencode.ask(driver, prompt, answer, self.standin)  # copilot's test uses it too

    def record(self, drive: Drive, project: Path, home: Paths) -> Path:
        """Record two exchanges, quit normally, and return the session folder once collected."""
        m = self.module
        if self.name in ("gemini", "qwen"):
            first, folder, _, _ = m.start_two_exchanges(home, drive, self.env, self.standin, project)
            m.quit_gemini(first) if self.name == "gemini" else m.quit_qwen(first)
        else:
            first = drive([*SK, self.name], env=self.env, cwd=project)
            if self.name != "aider":
                first.wait_for_screen(m.READY, WAIT_S)
            for prompt, answer in zip(m.PROMPTS, m.ANSWERS):
                self.ask(first, prompt, answer)
            if self.name == "opencode":
                opencode.quit_opencode(first)
            elif self.name == "copilot":
                copilot.quit_copilot(first)
            else:
                first.press("ctrl-d")
                assert first.wait_exit(WAIT_S) == 0, first.dump()
            [meta_path] = session_folders(home)
            folder = meta_path.parent
        first.wait_until(lambda: meta_of(folder).get("exchange_count") == 2, WAIT_S, "exchanges stored")
        return folder

    def wait_resumed(self, driver: ScreenDriver) -> None:
        """Wait until the natively resumed agent takes input and shows the conversation."""
        m = self.module
        if self.name in ("gemini", "qwen"):
            m.wait_ready(driver, drawn_before=gemini.drawn_so_far(driver, m.READY))
        else:
            driver.wait_for_screen(opencode.RESUMED if self.name == "opencode" else m.READY, WAIT_S)
        driver.wait_for_screen(m.ANSWERS[1], WAIT_S)


@pytest.fixture(params=AGENTS)
def agent(request: pytest.FixtureRequest) -> Agent:
    """Return the agent under test with its environment, stand-in and HOME."""
    name: str = request.param
    standin_name = {"gemini": "gemini_standin", "qwen": "openai_standin", "aider": "aider_standin"}.get(name, "chat_standin")
    return Agent(
        name, request.getfixturevalue(f"{name}_env"), request.getfixturevalue(standin_name),
        request.getfixturevalue(f"{name}_home"),
    )  # fmt: skip


@pytest.mark.newest_only
@pytest.mark.parametrize("damage", DAMAGES)
def test_resume_brings_the_conversation_back(home: Paths, drive: Drive, agent: Agent, project_dir: Path, damage: str) -> None:
    m = agent.module
    env = {**agent.env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = agent.record(drive, project_dir, home)
    meta = meta_of(folder)
    store = Path(meta["agent_transcript"])
    assert store.is_file(), meta
    if damage == "transcript-gone":
        for path in [store, *store.parent.glob(f"{store.name}-*")]:  # OpenCode's -wal and -shm too
            path.unlink()
        for ref in (folder / "agent").glob("*.ref"):  # shellkeep's copies
            ref.unlink()
    elif agent.name == "opencode":
        _drop_answer_part(store, meta["agent_session_id"], m.ANSWERS[0])
    else:
        whole = store.read_bytes()
        at = whole.index(m.ANSWERS[0].encode())
        start = whole.rindex(b"\n", 0, at) + 1
        end = whole.index(b"\n", at) + 1 + 8  # the start of the next record is hit too
        store.write_bytes(whole[:start] + bytes(end - start) + whole[end:])  # the size kept

    second = drive([*SK, "resume", meta["id"]], env=env, cwd=project_dir)
    header = second.wait_until(lambda: _header(second), WAIT_S, "shellkeep's resume line")
    if "native resume" in str(header):
        agent.wait_resumed(second)
        third = m.THIRD_PROMPT
        agent.ask(second, third, m.THIRD_ANSWER)
        request = agent.standin.wait_for_request(
            lambda r: r.is_conversation and r.last_user_text().startswith(third), timeout_s=WAIT_S, pump=second.pump
        )
        _in_order(json.dumps(request.body), [*_turns(m), third])
    else:
        try:
            request = agent.standin.wait_for_request(
                lambda r: r.is_conversation and INJECTED_CONTEXT_PREFIX in r.last_user_text(),
                timeout_s=BLOCK_WAIT_S,
                pump=second.pump,  # the agent's screen read meanwhile: unread, it stops the agent
            )
        except TimeoutError:
            raise AssertionError(f"no re-injected block reached the model:\n{_said(second)[-3000:]}\n{second.dump()}") from None
        block = request.last_user_text()
        _in_order(block, [f"{role}: {text}" for role, text in zip(("User", "Assistant") * 2, _turns(m))])
    [run] = [meta_of(f.parent) for f in session_folders(home) if f.parent != folder]
    assert run["parent"] == meta["id"]


def _turns(m: ModuleType) -> list[str]:
    return [text for pair in zip(m.PROMPTS, m.ANSWERS) for text in pair]


def _in_order(text: str, parts: list[str]) -> None:
    """Assert that each of ``parts`` is in ``text``, each after the one before."""
    at = 0
    for part in parts:
        found = text.find(json.dumps(part)[1:-1] if text.startswith("{") else part, at)
        assert found >= 0, f"{part!r} missing after offset {at}: {text[at - 2000 if at > 2000 else 0:][:4000]}"
        at = found + len(part)


def _said(driver: ScreenDriver) -> str:
    return bytes(driver.raw).decode("utf-8", "replace")


def _header(driver: ScreenDriver) -> str | None:
    """Return what shellkeep said it will do (its ``── shellkeep: …`` line and the next), once said."""
    said = bytes(driver.raw).decode("utf-8", "replace")
    at = said.find("── shellkeep: ")
    if at < 0 or not any(word in said[at:] for word in ("native resume", "re-inject")):
        return None
    return said[at:]


def _drop_answer_part(db: Path, session_id: str, answer: str) -> None:
    """Delete the text part of OpenCode's stored ``answer`` (its message row stays, empty)."""
    with sqlite3.connect(db) as connection:
        deleted = connection.execute(
            "DELETE FROM part WHERE session_id = ? AND json_extract(data, '$.type') = 'text' AND json_extract(data, '$.text') = ?",
            (session_id, answer),
        ).rowcount
    connection.close()
    assert deleted == 1
