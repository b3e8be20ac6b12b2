"""Tests for shellkeep/agents/qwen.py: Qwen Code chat files, ``--session-id``, ``qwen -r``."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.locations import dash_encoded
from shellkeep.agents.qwen import QwenAdapter, qwen_root

from .conftest import DATA, FIXTURE_CWD, install, reference, requires_reference, set_mtime, utc

SID = "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b"
FIXTURE = DATA / "qwen" / "projects" / "-home-bob-work-calc" / "chats" / f"{SID}.jsonl"
ADAPTER = QwenAdapter()
STARTED = utc("2026-03-14T07:29:00")


def test_reads_exchanges_from_the_fixture() -> None:
    first, second = ADAPTER.read_exchanges(AgentSession("qwen", SID, FIXTURE))
    assert (first.index, first.prompt, first.time) == (0, "List the functions in calc.py", "2026-03-14T07:30:02.000Z")
    assert first.answer == "calc.py defines add() and divide()."  # the thought part is not answer
    assert first.tool_calls == (ToolCall("read_file", "/home/bob/work/calc/calc.py"),)
    assert first.tool_results == ("def add(a, b): ... def divide(a, b): ...",)
    # the record written twice counts once
    assert first.usage == Usage(input=4100, output=27, cache_read=500, cache_write=0)
    assert first.model == "qwen-x-coder"
    assert (second.prompt, second.answer) == ("Run the tests", "All 5 tests pass.")
    assert second.tool_calls == (ToolCall("run_shell_command", "pytest -q"),)
    assert second.tool_results == ("5 passed in 0.04s",)
    assert second.usage == Usage(input=4700, output=15, cache_read=4200, cache_write=0)


def test_limit_reads_the_last_exchange() -> None:
    [last] = ADAPTER.read_exchanges(AgentSession("qwen", SID, FIXTURE), limit=1)
    assert (last.index, last.prompt) == (0, "Run the tests")


def test_prepare_and_resume(workdir: Path) -> None:
    launch = ADAPTER.prepare(["qwen", "-y"], workdir, {})
    assert launch.argv == ("qwen", "--session-id", launch.agent_session_id, "-y")
    assert ADAPTER.prepare(["qwen", "-c"], workdir, {}) == Launch(("qwen", "-c"))
    assert ADAPTER.prepare(["qwen", "-r", SID], workdir, {}).agent_session_id == SID
    session = AgentSession("qwen", SID, FIXTURE)
    assert ADAPTER.resume_argv(["qwen", "--session-id", "x", "-y", "-p", "go"], session) == ["qwen", "-y", "-r", SID]
    assert ADAPTER.resume_argv(["npx", "@qwen-code/qwen-code", "-c"], session) == [
        "npx",
        "@qwen-code/qwen-code",
        "-r",
        SID,
    ]


@pytest.mark.parametrize("how", ["pre-assigned", "new-file", "exit-hint"])
def test_find_session(user_home: Path, workdir: Path, how: str) -> None:
    env = {"HOME": str(user_home)}
    launch = ADAPTER.prepare(["qwen"], workdir, env) if how == "pre-assigned" else Launch(("qwen",))
    session_id = launch.agent_session_id or SID
    target = qwen_root(env) / "projects" / dash_encoded(workdir) / "chats" / f"{session_id}.jsonl"
    path = install(FIXTURE, target, {FIXTURE_CWD: str(workdir), SID: session_id})
    set_mtime(path, utc("2026-03-14T07:31:05" if how != "exit-hint" else "2026-03-14T07:00:00"))
    screen = f"qwen --resume {SID}" if how == "exit-hint" else ""
    assert ADAPTER.find_session(launch, workdir, env, STARTED, screen) == AgentSession("qwen", session_id, path)


def test_qwen_home_moves_the_root(tmp_path: Path) -> None:
    assert qwen_root({"QWEN_HOME": str(tmp_path / "q"), "HOME": "/nowhere"}) == tmp_path / "q"


@requires_reference
def test_reads_the_reference_sample() -> None:
    [path] = sorted(reference("qwen-code", "projects").glob("*/chats/*.jsonl"))
    [exchange] = ADAPTER.read_exchanges(AgentSession("qwen", path.stem, path))
    assert exchange.prompt == "Why does test_parse fail?"
    assert exchange.answer == "parse() must strip whitespace before int()."
    assert exchange.tool_calls == (ToolCall("run_shell_command", "pytest -q tests/test_parse.py"),)
    assert exchange.tool_results == ("F ValueError: invalid literal for int()",)
    assert exchange.usage == Usage(input=14800, output=50, cache_read=1200, cache_write=0)
    assert exchange.model == "qwen-x-coder"
