"""Tests for shellkeep/agents/codex.py: Codex rollouts (plain and zstd), thread ids, ``codex resume``."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.codex import CodexAdapter, codex_home, find_rollout

from .conftest import DATA, FIXTURE_CWD, install, reference, requires_reference, set_mtime, utc

TID = "019c2e4f-7a10-7b3c-8d4e-5f6a7b8c9d0e"
ROLLOUT_NAME = f"rollout-2026-03-14T08-30-00-{TID}.jsonl"
FIXTURE = DATA / "codex" / "sessions" / "2026" / "03" / "14" / ROLLOUT_NAME
ADAPTER = CodexAdapter()
STARTED = utc("2026-03-14T07:29:00")


def test_reads_exchanges_from_the_fixture() -> None:
    first, second = ADAPTER.read_exchanges(AgentSession("codex", TID, FIXTURE))
    # injected AGENTS.md and environment context are not prompts; the user message is not doubled
    assert (first.index, first.prompt, first.time) == (0, "Why is test_divide failing?", "2026-03-14T07:30:01.011Z")
    assert first.answer == "divide() did not check b; it now raises ZeroDivisionError first."
    assert first.tool_calls == (
        ToolCall("exec_command", "pytest -q tests/test_calc.py::test_divide"),
        ToolCall("apply_patch", "update calc.py"),
    )
    assert first.tool_results == (
        "Process exited with code 1 Output: E ZeroDivisionError",
        "Success. Updated the following files: M calc.py",
    )
    # the repeated token count is not added twice
    assert first.usage == Usage(input=11000, output=180, cache_read=3000, cache_write=0)
    assert first.model == "gpt-codex-x"
    assert (second.prompt, second.answer, second.model) == ("Run the whole suite", "All 12 tests pass.", "gpt-codex-y")
    assert second.tool_calls == (ToolCall("shell", "bash -lc pytest -q"),)
    assert second.tool_results == ("12 passed in 0.31s",)
    assert second.usage == Usage(input=7000, output=20, cache_read=4000, cache_write=0)


def test_limit_reads_the_last_turn_with_its_model() -> None:
    [last] = ADAPTER.read_exchanges(AgentSession("codex", TID, FIXTURE), limit=1)
    assert (last.index, last.prompt, last.model) == (0, "Run the whole suite", "gpt-codex-y")


def test_reads_a_zst_rollout(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = tmp_path / (ROLLOUT_NAME + ".zst")
    path.write_bytes(zstandard.ZstdCompressor().compress(FIXTURE.read_bytes()))
    session = AgentSession("codex", TID, path)
    assert ADAPTER.read_exchanges(session) == ADAPTER.read_exchanges(AgentSession("codex", TID, FIXTURE))
    assert [e.prompt for e in ADAPTER.read_exchanges(session, limit=1)] == ["Run the whole suite"]


def test_old_rollouts_without_events_use_response_items(tmp_path: Path) -> None:
    lines = [line for line in FIXTURE.read_text().splitlines() if '"type":"event_msg"' not in line]
    path = tmp_path / ROLLOUT_NAME
    path.write_text("\n".join(lines) + "\n")
    prompts = [(e.prompt, e.answer) for e in ADAPTER.read_exchanges(AgentSession("codex", TID, path))]
    assert prompts == [
        ("Why is test_divide failing?", "divide() did not check b; it now raises ZeroDivisionError first."),
        ("Run the whole suite", "All 12 tests pass."),
    ]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["codex"], True),
        (["npx", "@openai/codex@0.171.0"], True),
        (["node", "/n/@openai/codex/bin/codex.js"], True),
        (["claude"], False),
    ],
    ids=["bare", "npx", "node", "other"],
)
def test_matches(argv: list[str], expected: bool) -> None:
    assert ADAPTER.matches(argv) is expected


@pytest.mark.parametrize(
    ("argv", "session_id"),
    [
        (["codex", "-m", "gpt-x", "fix it"], None),
        (["codex", "resume", TID], TID),
        (["codex", "resume", "fix divide"], "fix divide"),
        (["codex", "resume", "--last"], None),
        (["codex", "exec", "do it"], None),
    ],
    ids=["new", "resume-id", "resume-name", "resume-last", "exec"],
)
def test_prepare_never_changes_argv(workdir: Path, argv: list[str], session_id: str | None) -> None:
    launch = ADAPTER.prepare(argv, workdir, {})
    assert (launch.argv, launch.agent_session_id) == (tuple(argv), session_id)


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        (["codex"], ["codex", "resume", TID]),
        (
            ["codex", "-m", "gpt-x", "-c", "model_reasoning_effort=high", "fix it"],
            ["codex", "-m", "gpt-x", "-c", "model_reasoning_effort=high", "resume", TID],
        ),
        (["codex", "resume", "--last", "--all", "--search"], ["codex", "--search", "resume", TID]),
        (["npx", "-y", "@openai/codex", "--full-auto"], ["npx", "-y", "@openai/codex", "--full-auto", "resume", TID]),
    ],
    ids=["bare", "keeps-config-drops-prompt", "drops-resume-subcommand", "npx"],
)
def test_resume_argv(original: list[str], expected: list[str]) -> None:
    assert ADAPTER.resume_argv(original, AgentSession("codex", TID, FIXTURE)) == expected


def _install(home: Path, cwd: Path, *, day: str = "2026/03/14", name: str = ROLLOUT_NAME, thread_id: str = TID) -> Path:
    path = install(
        FIXTURE, home / "sessions" / day / name.replace(TID, thread_id), {FIXTURE_CWD: str(cwd), TID: thread_id}
    )
    set_mtime(path, utc("2026-03-14T07:31:14"))
    return path


def test_find_session_takes_the_new_rollout_of_the_cwd(user_home: Path, workdir: Path, tmp_path: Path) -> None:
    home = user_home / ".codex"
    path = _install(home, workdir)
    _install(home, tmp_path / "elsewhere", thread_id="019c2e4f-0000-7000-8000-000000000001")
    found = ADAPTER.find_session(Launch(("codex",)), workdir, {"HOME": str(user_home)}, STARTED, "")
    assert found == AgentSession("codex", TID, path)


def test_find_session_honours_codex_home(tmp_path: Path, workdir: Path) -> None:
    home = tmp_path / "codex-home"
    path = _install(home, workdir)
    assert codex_home({"CODEX_HOME": str(home)}) == home
    found = ADAPTER.find_session(
        Launch(("codex",)), workdir, {"CODEX_HOME": str(home), "HOME": "/nonexistent"}, STARTED, ""
    )
    assert found == AgentSession("codex", TID, path)


def test_find_session_for_a_resumed_thread(user_home: Path, workdir: Path) -> None:
    home = user_home / ".codex"
    path = _install(home, workdir)
    install(DATA / "codex" / "session_index.jsonl", home / "session_index.jsonl")
    later = utc("2026-03-15T10:00:00")  # the rollout started before this launch
    env = {"HOME": str(user_home)}
    by_id = ADAPTER.prepare(["codex", "resume", TID], workdir, env)
    assert ADAPTER.find_session(by_id, workdir, env, later, "") == AgentSession("codex", TID, path)
    by_name = ADAPTER.prepare(["codex", "resume", "fix divide"], workdir, env)
    assert ADAPTER.find_session(by_name, workdir, env, later, "") == AgentSession("codex", TID, path)


def test_find_session_from_the_exit_hint(user_home: Path, workdir: Path) -> None:
    home = user_home / ".codex"
    path = _install(home, workdir)
    set_mtime(path, utc("2026-03-14T07:00:00"))
    env = {"HOME": str(user_home)}
    screen = f"Token usage: total=200\nTo continue this session, run: codex resume {TID}\n"
    assert ADAPTER.find_session(Launch(("codex",)), workdir, env, STARTED, screen) == AgentSession("codex", TID, path)
    assert ADAPTER.find_session(Launch(("codex",)), workdir, env, STARTED, "") is None


def test_find_rollout_prefers_plain_over_zst(tmp_path: Path, workdir: Path) -> None:
    plain = _install(tmp_path, workdir)
    zst = plain.with_name(plain.name + ".zst")
    zst.write_bytes(b"")
    assert find_rollout(tmp_path, TID) == plain
    plain.unlink()
    assert find_rollout(tmp_path, TID) == zst
    assert find_rollout(tmp_path, "019c2e4f-dead-7000-8000-000000000000") is None


@requires_reference
def test_reads_the_reference_sample() -> None:
    [path] = sorted(reference("codex", "sessions").glob("*/*/*/rollout-*.jsonl"))
    [exchange] = ADAPTER.read_exchanges(AgentSession("codex", None, path))
    assert exchange.prompt == "Why does test_parse fail?"
    assert exchange.answer == "parse() needs to strip whitespace before int()."
    assert exchange.tool_calls == (ToolCall("exec_command", "pytest -q tests/test_parse.py"),)
    assert exchange.tool_results == ("Process exited with code 1 Output: F ValueError: invalid literal for int()",)
    assert exchange.usage == Usage(input=7300, output=120, cache_read=1200, cache_write=0)
    assert exchange.model == "gpt-x-codex"


def test_the_exit_hint_wins_over_a_newer_rollout_of_the_same_folder(user_home: Path, workdir: Path) -> None:
    home = user_home / ".codex"
    other = "019c2e4f-0000-7000-8000-0000000000aa"
    ours = _install(home, workdir)
    _install(home, workdir, thread_id=other, name=ROLLOUT_NAME.replace("08-30-00", "08-31-00"))
    env = {"HOME": str(user_home)}
    screen = f"To continue this session, run: codex resume {TID}\n"
    assert ADAPTER.find_session(Launch(("codex",)), workdir, env, STARTED, screen) == AgentSession("codex", TID, ours)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["codex", "resume", TID], ["codex", "--cd", "/new/web", "resume", TID]),
        (["codex", "-C", "/old/web", "-m", "gpt-x", "resume", TID], ["codex", "--cd", "/new/web", "-m", "gpt-x", "resume", TID]),
    ],
    ids=["bare", "replaces-the-users-cd"],
)
def test_a_resume_in_a_moved_folder_names_it(argv: list[str], expected: list[str]) -> None:
    assert ADAPTER.resume_argv_in(argv, Path("/new/web")) == expected
