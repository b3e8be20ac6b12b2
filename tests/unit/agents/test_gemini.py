"""Tests for shellkeep/agents/gemini.py: Gemini CLI chat files with upserts and rewinds, ``gemini -r``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.gemini import GeminiAdapter, chat_dirs

from .conftest import DATA, FIXTURE_CWD, install, reference, requires_reference, set_mtime, utc

SID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
ROOT = DATA / "gemini" / ".gemini"
FIXTURE = ROOT / "tmp" / "calc" / "chats" / f"session-2026-03-14T07-30-{SID[:8]}.jsonl"
ADAPTER = GeminiAdapter()
STARTED = utc("2026-03-14T07:29:00")


def test_reads_exchanges_applying_upserts_and_rewinds() -> None:
    first, second = ADAPTER.read_exchanges(AgentSession("gemini", SID, FIXTURE))
    assert (first.index, first.prompt, first.time) == (0, "Why does divide(1, 0) crash?", "2026-03-14T07:30:02.000Z")
    # the streamed message counts once, in its last version; thought parts are not answer
    assert first.answer == "divide() has no check for b == 0, so Python raises ZeroDivisionError."
    assert first.tool_calls == (ToolCall("read_file", "/home/bob/work/calc/calc.py"),)
    assert first.tool_results == ("def divide(a, b): return a / b",)
    assert first.usage == Usage(input=3000, output=90, cache_read=1200, cache_write=0)
    assert first.model == "gemini-x-flash"
    # the rewound exchange ("make it return None instead") is gone
    assert (second.index, second.prompt, second.answer) == (1, "Add a check that raises ValueError", "Done.")
    assert second.tool_calls == (ToolCall("replace", "/home/bob/work/calc/calc.py"),)
    assert second.tool_results == ("Successfully modified file: calc.py (1 replacements).",)
    assert (second.model, second.usage) == ("gemini-x-pro", Usage(4000, 50, 2000, 0))


@pytest.mark.parametrize("limit", [1, 2], ids=["last-1", "last-2"])
def test_limit_matches_the_full_read(limit: int) -> None:
    full = ADAPTER.read_exchanges(AgentSession("gemini", SID, FIXTURE))
    tail = ADAPTER.read_exchanges(AgentSession("gemini", SID, FIXTURE), limit=limit)
    assert [(e.prompt, e.answer) for e in tail] == [(e.prompt, e.answer) for e in full[-limit:]]


def test_rewind_past_the_window_read_from_the_end(tmp_path: Path) -> None:
    lines = FIXTURE.read_text().splitlines()[:-1]
    lines += [json.dumps({"$rewindTo": "m1"}), json.dumps({"id": "n1", "type": "user", "content": "start over"})]
    lines += [json.dumps({"id": "n2", "type": "gemini", "content": "Sure."})]
    path = tmp_path / FIXTURE.name
    path.write_text("\n".join(lines) + "\n")
    session = AgentSession("gemini", SID, path)
    assert [e.prompt for e in ADAPTER.read_exchanges(session)] == ["start over"]
    assert [e.prompt for e in ADAPTER.read_exchanges(session, limit=5)] == ["start over"]


def test_reads_a_legacy_json_document(tmp_path: Path) -> None:
    document = {
        "sessionId": SID,
        "startTime": "2026-03-14T07:30:00Z",
        "messages": [
            {"id": "a", "type": "user", "content": "hello", "timestamp": "2026-03-14T07:30:01Z"},
            {"id": "b", "type": "gemini", "content": "hi there", "model": "gemini-old"},
        ],
    }
    path = tmp_path / "session-2026-03-14T07-30-9d8c7b6a.json"
    path.write_text(json.dumps(document))
    [exchange] = ADAPTER.read_exchanges(AgentSession("gemini", SID, path))
    assert (exchange.prompt, exchange.answer, exchange.model) == ("hello", "hi there", "gemini-old")
    path.write_text("{broken")
    assert ADAPTER.read_exchanges(AgentSession("gemini", SID, path)) == []


def test_prepare_pre_assigns_a_session_id(workdir: Path) -> None:
    launch = ADAPTER.prepare(["gemini", "-m", "gemini-x-pro"], workdir, {})
    assert launch.agent_session_id is not None and uuid.UUID(launch.agent_session_id)
    assert launch.argv == ("gemini", "--session-id", launch.agent_session_id, "-m", "gemini-x-pro")


@pytest.mark.parametrize(
    ("argv", "session_id"),
    [
        (["gemini", "-r"], None),
        (["gemini", "--resume", "latest"], None),
        (["gemini", "-r", SID], SID),
        (["gemini", "--session-id", SID], SID),
        (["gemini", "--list-sessions"], None),
        (["gemini", "mcp", "list"], None),
    ],
    ids=["resume-latest-bare", "resume-latest", "resume-id", "own-id", "list", "subcommand"],
)
def test_prepare_leaves_the_users_choice_alone(workdir: Path, argv: list[str], session_id: str | None) -> None:
    launch = ADAPTER.prepare(argv, workdir, {})
    assert (launch.argv, launch.agent_session_id) == (tuple(argv), session_id)


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        (["gemini", "--session-id", "x", "-m", "pro", "-i", "start here"], ["gemini", "-m", "pro", "-r", SID]),
        (["gemini", "-r", "latest", "--yolo"], ["gemini", "--yolo", "-r", SID]),
        (["npx", "@google/gemini-cli", "explain"], ["npx", "@google/gemini-cli", "-r", SID]),
    ],
    ids=["drops-id-and-interactive-prompt", "drops-resume", "npx-drops-positional-prompt"],
)
def test_resume_argv(original: list[str], expected: list[str]) -> None:
    assert ADAPTER.resume_argv(original, AgentSession("gemini", SID, FIXTURE)) == expected


def _install_home(home: Path, cwd: Path, session_id: str = SID, *, slug: str = "calc", mapped: bool = True) -> Path:
    root = home / ".gemini"
    if mapped:
        (root).mkdir(parents=True, exist_ok=True)
        (root / "projects.json").write_text(json.dumps({"projects": {str(cwd): slug}}))
    name = FIXTURE.name.replace(SID[:8], session_id[:8])
    path = install(FIXTURE, root / "tmp" / slug / "chats" / name, {FIXTURE_CWD: str(cwd), SID: session_id})
    set_mtime(path, utc("2026-03-14T07:31:40"))
    return path


def test_chat_dirs_through_projects_json_marker_and_slug(user_home: Path, workdir: Path) -> None:
    path = _install_home(user_home, workdir)
    assert chat_dirs(user_home / ".gemini", workdir) == [path.parent]
    other = user_home / "marker-home"
    marked = _install_home(other, workdir, slug="renamed-1", mapped=False)
    (marked.parent.parent / ".project_root").write_text(str(workdir))
    assert chat_dirs(other / ".gemini", workdir) == [marked.parent]
    plain = user_home / "slug-home"
    by_slug = _install_home(plain, workdir, slug="calc", mapped=False)
    assert chat_dirs(plain / ".gemini", workdir) == [by_slug.parent]


def test_find_session(user_home: Path, workdir: Path, tmp_path: Path) -> None:
    env = {"HOME": str(user_home)}
    launch = ADAPTER.prepare(["gemini"], workdir, env)
    assert launch.agent_session_id is not None
    mine = _install_home(user_home, workdir, launch.agent_session_id)
    assert ADAPTER.find_session(launch, workdir, env, STARTED, "") == AgentSession(
        "gemini", launch.agent_session_id, mine
    )
    # no pre-assigned id: the newest chat started after the launch
    assert ADAPTER.find_session(Launch(("gemini",)), workdir, env, STARTED, "") == AgentSession(
        "gemini", launch.agent_session_id, mine
    )
    # GEMINI_CLI_HOME moves the whole tree
    moved = tmp_path / "gemini-home"
    there = _install_home(moved, workdir)
    found = ADAPTER.find_session(
        Launch(("gemini",)), workdir, {"HOME": str(user_home), "GEMINI_CLI_HOME": str(moved)}, STARTED, ""
    )
    assert found == AgentSession("gemini", SID, there)


def test_find_session_from_the_exit_hint(user_home: Path, workdir: Path) -> None:
    path = _install_home(user_home, workdir)
    set_mtime(path, utc("2026-03-14T07:00:00"))
    env = {"HOME": str(user_home)}
    later = utc("2026-03-14T08:00:00")
    screen = f"Goodbye!\nTo resume this session: gemini --resume {SID}\n"
    assert ADAPTER.find_session(Launch(("gemini",)), workdir, env, later, screen) == AgentSession("gemini", SID, path)
    assert ADAPTER.find_session(Launch(("gemini",)), workdir, env, later, "") is None


def test_transcript_files_include_subagent_chats(user_home: Path, workdir: Path) -> None:
    path = _install_home(user_home, workdir)
    sub = path.parent / SID / "sub-1.jsonl"
    sub.parent.mkdir()
    sub.write_text("{}\n")
    assert ADAPTER.transcript_files(AgentSession("gemini", SID, path)) == [path, sub]


@requires_reference
def test_reads_the_reference_sample() -> None:
    [path] = sorted(reference("gemini-cli", "tmp", "app", "chats").glob("session-*.jsonl"))
    [exchange] = ADAPTER.read_exchanges(AgentSession("gemini", None, path))
    assert exchange.prompt == "Why does test_parse fail?"
    assert exchange.answer == "parse() must strip whitespace before calling int()."
    assert exchange.tool_calls == (ToolCall("run_shell_command", "pytest -q tests/test_parse.py"),)
    assert exchange.tool_results == ("F ValueError: invalid literal for int()",)
    assert exchange.usage == Usage(input=7300, output=120, cache_read=1200, cache_write=0)
    assert exchange.model == "gemini-x-pro"
    assert chat_dirs(reference("gemini-cli"), Path("/home/alice/src/app")) == [path.parent]
