"""Tests for shellkeep/agents/copilot.py: Copilot CLI session-state event logs and ``--resume``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.copilot import CopilotAdapter, copilot_home

from .conftest import DATA, FIXTURE_CWD, install, reference, requires_reference, set_mtime, utc

SID = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
FOLDER = DATA / "copilot" / "session-state" / SID
ADAPTER = CopilotAdapter()
STARTED = utc("2026-03-14T07:29:00")


def test_reads_exchanges_from_the_event_log() -> None:
    first, second = ADAPTER.read_exchanges(AgentSession("copilot", SID, FOLDER / "events.jsonl"))
    assert (first.index, first.prompt, first.time) == (0, "What does divide do with 0?", "2026-03-14T07:30:02.000Z")
    assert first.answer == "Checking calc.py.\n\nIt divides without a check, so 0 raises ZeroDivisionError."
    assert first.tool_calls == (ToolCall("view", "/home/bob/work/calc/calc.py"),)
    assert first.tool_results == ("def divide(a, b): return a / b",)
    assert (first.usage, first.model) == (Usage(output=40), "model-y")  # only outputTokens reported
    assert (second.prompt, second.answer) == ("Run the tests", "pytest is not installed here.")
    assert second.tool_calls == (ToolCall("bash", "pytest -q"),)
    assert second.tool_results == ("error: pytest: command not found",)
    assert second.usage == Usage(input=4000, output=18, cache_read=3000, cache_write=100)  # assistant.usage wins


def test_limit_reads_the_last_exchange() -> None:
    [last] = ADAPTER.read_exchanges(AgentSession("copilot", SID, FOLDER / "events.jsonl"), limit=1)
    assert (last.index, last.prompt) == (0, "Run the tests")


def test_prepare_and_resume(workdir: Path) -> None:
    launch = ADAPTER.prepare(["copilot", "--allow-all-tools"], workdir, {})
    assert launch.argv == ("copilot", "--session-id", launch.agent_session_id, "--allow-all-tools")
    assert ADAPTER.prepare(["copilot", "--continue"], workdir, {}) == Launch(("copilot", "--continue"))
    assert ADAPTER.prepare(["copilot", "--resume", "7a8b"], workdir, {}).agent_session_id is None  # a prefix
    session = AgentSession("copilot", SID, FOLDER / "events.jsonl")
    assert ADAPTER.resume_argv(["copilot", "--session-id", "x", "--model", "m", "-i", "go"], session) == [
        "copilot",
        "--model",
        "m",
        "--resume",
        SID,
    ]


@pytest.mark.parametrize("how", ["pre-assigned", "new-folder", "exit-hint"])
def test_find_session(user_home: Path, workdir: Path, how: str) -> None:
    env = {"HOME": str(user_home)}
    launch = ADAPTER.prepare(["copilot"], workdir, env) if how == "pre-assigned" else Launch(("copilot",))
    session_id = launch.agent_session_id or SID
    state = copilot_home(env) / "session-state" / session_id
    path = install(FOLDER / "events.jsonl", state / "events.jsonl", {FIXTURE_CWD: str(workdir), SID: session_id})
    install(FOLDER / "workspace.yaml", state / "workspace.yaml")
    set_mtime(path, utc("2026-03-14T07:31:04" if how != "exit-hint" else "2026-03-14T07:00:00"))
    screen = f"copilot --resume {SID}" if how == "exit-hint" else ""
    found = ADAPTER.find_session(launch, workdir, env, STARTED, screen)
    assert found == AgentSession("copilot", session_id, path)
    assert ADAPTER.transcript_files(found) == [path, state / "workspace.yaml"]


def test_copilot_home_moves_the_root(tmp_path: Path) -> None:
    assert copilot_home({"COPILOT_HOME": str(tmp_path)}) == tmp_path


@requires_reference
def test_reads_the_reference_sample() -> None:
    [path] = sorted(reference("copilot-cli", "session-state").glob("*/events.jsonl"))
    [exchange] = ADAPTER.read_exchanges(AgentSession("copilot", path.parent.name, path))
    assert exchange.prompt == "Why does test_parse fail?"
    assert exchange.answer == "Running the test.\n\nparse() must strip whitespace before int()."
    assert exchange.tool_calls == (ToolCall("bash", "pytest -q tests/test_parse.py"),)
    assert exchange.tool_results == ("F ValueError: invalid literal for int()",)
    assert (exchange.usage, exchange.model) == (Usage(output=50), "model-x")


# -- real event logs: what Copilot CLI itself wrote (tests/data/agents/copilot/real-<version>/) --

REAL = {"1.0.88": "97b8fa66-8437-4257-b18d-2f77de4f71c7", "1.0.102": "e3e9b1ba-5d2a-4899-88ff-e04ba9c639ef"}
"""The session of each real fixture: three prompts, a kill -9 after the second, a resume."""
REAL_USAGE = {
    "1.0.88": [Usage(input=13979, output=6), Usage(input=14028, output=6), Usage(input=14071, output=6)],
    "1.0.102": [Usage(input=14397, output=6), Usage(input=14447, output=6), Usage(input=14490, output=6)],
}


def _install_real(version: str, user_home: Path, workdir: Path, with_store: bool) -> AgentSession:
    """Copy a real fixture into ``user_home/.copilot`` (its cwd made ``workdir``); return its session."""
    source = DATA / "copilot" / f"real-{version}"
    state = user_home / ".copilot" / "session-state" / REAL[version]
    for name in ("events.jsonl", "workspace.yaml"):
        install(source / "session-state" / REAL[version] / name, state / name, {"/home/user/project": str(workdir)})
    if with_store:
        connection = sqlite3.connect(user_home / ".copilot" / "session-store.db")
        connection.executescript((source / "session-store.sql").read_text())
        connection.close()
    return AgentSession("copilot", REAL[version], state / "events.jsonl")


def test_real_fixtures_are_the_tested_versions() -> None:
    assert tuple(REAL) == CopilotAdapter.tested_versions


@pytest.mark.parametrize("version", list(REAL))
def test_reads_what_real_copilot_wrote(user_home: Path, workdir: Path, version: str) -> None:
    session = _install_real(version, user_home, workdir, with_store=True)
    exchanges = ADAPTER.read_exchanges(session)
    words = ("first word is plum", "second word is pear", "third word is quince")
    assert [(e.index, e.prompt, e.answer) for e in exchanges] == [
        (n, f"the {w}", f"Echo: the {w}") for n, w in enumerate(words)
    ]
    assert [e.usage for e in exchanges] == REAL_USAGE[version]
    assert {e.model for e in exchanges} == {"mock-model"}
    assert [e.usage for e in ADAPTER.read_transcript(session).exchanges] == REAL_USAGE[version]
    [last] = ADAPTER.read_exchanges(session, limit=1)
    assert (last.prompt, last.usage) == (f"the {words[-1]}", REAL_USAGE[version][-1])
    launch = Launch(("copilot", "--session-id", REAL[version]), agent_session_id=REAL[version])
    assert ADAPTER.find_session(launch, workdir, {"HOME": str(user_home)}, utc("2026-12-03T00:00:00"), "") == session


def test_usage_of_1_0_102_is_in_its_log_and_1_0_88_only_in_the_store(user_home: Path, workdir: Path) -> None:
    newest = _install_real("1.0.102", user_home, workdir, with_store=False)
    assert [e.usage for e in ADAPTER.read_exchanges(newest)] == REAL_USAGE["1.0.102"]
    older = _install_real("1.0.88", user_home / "other", workdir, with_store=False)
    assert [e.usage for e in ADAPTER.read_exchanges(older)] == [None, None, None]


def test_a_resume_removes_the_in_use_locks_of_dead_processes_only(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from shellkeep.agents.base import AgentSession
    from shellkeep.agents.copilot import CopilotAdapter

    folder = tmp_path / "session-state" / "0b6f7e5e-1111-4222-8333-444455556666"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # exited and reaped: its pid names no process
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    try:
        names = [f"inuse.{pid}.{kind}" for pid in (gone.pid, zombie.pid, os.getpid()) for kind in ("lock", "hold")]
        for name in names:
            (folder / name).write_text("")
        session = AgentSession(agent="copilot", session_id=folder.name, transcript=folder / "events.jsonl")
        removed = CopilotAdapter().remove_resume_leftovers(session)
        assert sorted(p.name for p in removed) == sorted(names[:4])
        assert sorted(p.name for p in folder.iterdir()) == sorted(["events.jsonl", *names[4:]])
    finally:
        zombie.wait()
