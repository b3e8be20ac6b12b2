"""Read each agent's task list from its transcript (``CommandAdapter.read_plan``, ``agents.plan``).

Fixtures in ``tests/data/agents/plan/``: ``claude-todowrite.jsonl`` and ``claude-tasks/`` are
real Claude Code 2.1.197 transcripts (and its ``tasks/<session id>/`` files), written against
the Anthropic stand-in's ``ToolUse`` answers (tests/agents/test_plan_claude.py's scripts); the
Codex, Gemini CLI and Qwen Code ones are written by hand from their formats (codex-rs
``UpdatePlanArgs``, Gemini CLI 0.61 ``write-todos.js``, Qwen Code 0.24 ``todo_write``), each
with a plan written twice (the last wins). OpenCode's database is built here.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession
from shellkeep.agents.plan import Plan, PlanBuilder, PlanItem, PlanState, items_from
from shellkeep.agents.registry import adapter_named

DATA = Path(__file__).parent.parent / "data" / "agents" / "plan"
TASKS_ID = "70b6956e-e9ea-4495-9b6f-3c4eb9fd3fc3"


def _states(plan: Plan | None) -> list[tuple[str, str]]:
    assert plan is not None
    return [(item.text, item.state.value) for item in plan.items]


def _read(agent: str, transcript: Path, session_id: str = "s") -> Plan | None:
    adapter = adapter_named(agent)
    return adapter.read_plan(AgentSession(agent, session_id, transcript))  # type: ignore[attr-defined,no-any-return]


def test_claude_todowrite_gives_the_last_whole_list() -> None:
    plan = _read("claude", DATA / "claude-todowrite.jsonl")
    assert _states(plan) == [
        ("write the parser", "completed"), ("migrate the index", "in_progress"), ("ship it", "pending")
    ]
    assert plan is not None and plan.tool == "TodoWrite" and plan.items[1].active == "Migrating the index"
    assert plan.summary() == "1 of 3 done; in progress: migrate the index"


def test_claude_task_tools_follow_creates_and_updates_by_the_id_claude_gave(tmp_path: Path) -> None:
    transcript = DATA / "claude-tasks" / "projects" / "p" / f"{TASKS_ID}.jsonl"
    # The transcript alone (no tasks/ folder beside it): TaskCreate ids from toolUseResult.
    alone = tmp_path / "alone" / "projects" / "p"
    alone.mkdir(parents=True)
    shutil.copy(transcript, alone)
    plan = _read("claude", alone / transcript.name, TASKS_ID)
    assert _states(plan) == [("write the parser", "completed"), ("migrate the index", "in_progress")]
    assert plan is not None and [i.id for i in plan.items] == ["1", "2"] and plan.tool == "TaskUpdate"
    # With Claude Code's own task files beside it, they are the truth (here one was edited).
    copied = tmp_path / "with-files"
    shutil.copytree(DATA / "claude-tasks", copied)
    task = copied / "tasks" / TASKS_ID / "2.json"
    task.write_text(json.dumps({**json.loads(task.read_text()), "status": "completed"}))
    plan = _read("claude", copied / "projects" / "p" / transcript.name, TASKS_ID)
    assert _states(plan) == [("write the parser", "completed"), ("migrate the index", "completed")]
    # A transcript cut before any TaskCreate result (a crash mid-tool): the task files still tell.
    cut = copied / "projects" / "p" / transcript.name
    cut.write_text("".join(line for line in transcript.read_text().splitlines(keepends=True) if "toolUseResult" not in line))
    assert _states(_read("claude", cut, TASKS_ID)) == [("write the parser", "completed"), ("migrate the index", "completed")]


def test_codex_update_plan_keeps_the_last_call_and_skips_a_cut_line() -> None:
    plan = _read("codex", DATA / "codex-update-plan.jsonl")
    assert _states(plan) == [("read calc.py", "completed"), ("guard divide()", "in_progress"), ("run the tests", "pending")]
    assert plan is not None and plan.tool == "update_plan" and plan.explanation is None


def test_gemini_write_todos_knows_blocked_and_cancelled() -> None:
    plan = _read("gemini", DATA / "gemini-write-todos.jsonl")
    assert _states(plan) == [("read calc.py", "completed"), ("guard divide()", "blocked"), ("add a changelog entry", "cancelled")]
    assert plan is not None and plan.summary() == "1 of 3 done"
    assert plan.lines() == ["[x] read calc.py", "[!] guard divide()", "[-] add a changelog entry"]


def test_qwen_todo_write() -> None:
    plan = _read("qwen", DATA / "qwen-todo-write.jsonl")
    assert _states(plan) == [("read calc.py", "completed"), ("guard divide()", "in_progress"), ("run the tests", "pending")]
    assert plan is not None and [i.id for i in plan.items] == ["1", "2", "3"]


def test_opencode_reads_its_last_todowrite_part(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, data TEXT)")
        def todos(*pairs: tuple[str, str]) -> str:
            return json.dumps({"type": "tool", "tool": "todowrite", "callID": "c", "state": {"status": "completed", "input": {"todos": [
                {"id": str(n), "content": text, "status": status, "priority": "high"} for n, (text, status) in enumerate(pairs)
            ]}}})
        rows = [
            ("prt_01", "ses_a", todos(("read calc.py", "in_progress"), ("guard divide()", "pending"))),
            ("prt_02", "ses_a", json.dumps({"type": "text", "text": "the todowrite tool is handy"})),
            ("prt_03", "ses_b", todos(("another session", "pending"))),
            ("prt_04", "ses_a", todos(("read calc.py", "completed"), ("guard divide()", "cancelled"))),
        ]
        connection.executemany("INSERT INTO part VALUES (?, 'msg', ?, 0, ?)", rows)
    plan = _read("opencode", db, "ses_a")
    assert _states(plan) == [("read calc.py", "completed"), ("guard divide()", "cancelled")]
    assert _read("opencode", db, "ses_none") is None


def test_copilot_reads_the_todos_table_of_its_session_database(tmp_path: Path) -> None:
    events = tmp_path / "session-state" / "s" / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text("")
    assert _read("copilot", events) is None  # no session.db
    with sqlite3.connect(events.parent / "session.db") as connection:
        connection.execute("CREATE TABLE other (x)")
    assert _read("copilot", events) is None  # no todos table: the model never tracked any
    with sqlite3.connect(events.parent / "session.db") as connection:  # Copilot CLI 1.0.102's schema
        connection.execute(
            "CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT, status TEXT DEFAULT 'pending' "
            "CHECK(status IN ('pending', 'in_progress', 'done', 'blocked')), created_at TEXT DEFAULT (datetime('now')), "
            "updated_at TEXT DEFAULT (datetime('now')))"
        )
        connection.execute("INSERT INTO todos (id, title, status, created_at) VALUES ('b', 'second', 'blocked', '2026-01-01 10:00:01')")
        connection.execute("INSERT INTO todos (id, title, status, created_at) VALUES ('a', 'first', 'done', '2026-01-01 10:00:00')")
    plan = _read("copilot", events)
    assert _states(plan) == [("first", "completed"), ("second", "blocked")]
    assert plan is not None and [i.id for i in plan.items] == ["a", "b"]


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "qwen"])
def test_a_transcript_without_plan_tools_gives_none(agent: str, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user","message":{"content":"hello"}}\n')
    assert _read(agent, transcript) is None
    assert _read(agent, tmp_path / "missing.jsonl") is None


def test_builder_and_states() -> None:
    builder = PlanBuilder()
    builder.create("TaskCreate", "a", "1")
    builder.create("TaskCreate", "b", "2")
    builder.update("TaskUpdate", "1", "in_progress")
    builder.update("TaskUpdate", "9", "completed")  # unknown id: nothing
    builder.update("TaskUpdate", "2", "bogus", text="b2")  # unknown status: the text still changes
    builder.update("TaskUpdate", "1", "deleted")
    plan = builder.plan()
    assert _states(plan) == [("b2", "pending")]
    assert plan is not None and plan.summary() == "0 of 1 done; next: b2"
    builder.replace("TodoWrite", [])
    assert builder.plan() is None  # an emptied list is no plan
    assert items_from([{"content": "x", "status": "done"}, {"content": "", "status": "pending"}, {"status": "pending"}, "junk"]) == [
        PlanItem("x", PlanState.COMPLETED)
    ]


def test_the_json_round_trip_drops_what_it_cannot_read() -> None:
    plan = Plan((PlanItem("a", PlanState.COMPLETED, None, "1"), PlanItem("b " * 200, PlanState.IN_PROGRESS, "Doing b")), "TodoWrite", "why")
    obj = plan.to_json()
    assert obj["done"] == 1 and obj["total"] == 2 and str(obj["summary"]).startswith("1 of 2 done; in progress: b b")
    assert Plan.from_json(json.loads(json.dumps(obj))) == plan
    assert Plan.from_json({"items": [{"text": "a", "state": "weird"}]}) is None
    assert Plan.from_json("nonsense") is None and Plan.from_json(None) is None


@pytest.mark.parametrize("block_bytes", [7, 64, 4096, 1 << 20])
def test_scanning_finds_the_same_records_whatever_the_block_size(block_bytes: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from shellkeep.agents import plan as plan_module

    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes((DATA / "claude-todowrite.jsonl").read_bytes().rstrip(b"\n"))  # a last line without newline
    monkeypatch.setattr(plan_module, "_SCAN_BLOCK_BYTES", block_bytes)
    found = list(plan_module.scan_records(transcript, (b'"TodoWrite"', b"toolUseResult")))
    expected = [json.loads(line) for line in transcript.read_bytes().splitlines() if b'"TodoWrite"' in line or b"toolUseResult" in line]
    assert found == expected and len(found) >= 2
