"""Codex's state database: a ``threads`` row pointing at no rollout is noticed (agents/codex_state.py).

The table's shape is Codex 0.171.0's (``threads(id, rollout_path, ...)``); the real agent's own
database is driven in tests/agents/test_resume_fallback.py (``thread-stale``, ``thread-empty``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession
from shellkeep.agents.codex import CodexAdapter

THREAD = "019a0000-0000-7000-8000-000000000001"


def _database(folder: Path, rollout_path: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "state_5.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, rollout_path TEXT, created_at INTEGER)")
        db.execute("INSERT INTO threads VALUES (?, ?, 0)", (THREAD, rollout_path))
    db.close()
    return path


def _problem(home: Path, env: dict[str, str] | None = None) -> str | None:
    session = AgentSession("codex", THREAD, None)
    return CodexAdapter().native_resume_problem(session, {"CODEX_HOME": str(home), **(env or {})})


@pytest.mark.parametrize(
    ("pointed", "said"),
    [
        pytest.param("", "points at no rollout for", id="no-path"),
        pytest.param(None, "points at no rollout for", id="null"),
        pytest.param("gone", "which is gone (state_5.sqlite)", id="gone"),
        pytest.param("empty", "which is empty (state_5.sqlite)", id="empty"),
    ],
)
def test_a_thread_row_pointing_at_no_rollout_is_noticed(tmp_path: Path, pointed: str | None, said: str) -> None:
    home = tmp_path / ".codex"
    rollout = tmp_path / "rollout.jsonl"
    if pointed == "empty":
        rollout.write_bytes(b"")
    _database(home, str(rollout) if pointed in ("gone", "empty") else pointed)
    problem = _problem(home)
    assert problem is not None and problem.startswith("Codex's thread list points at ") and said in problem


def test_a_whole_rollout_no_row_or_no_database_is_no_problem(tmp_path: Path) -> None:
    home = tmp_path / ".codex"
    assert _problem(home) is None  # no database at all
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text('{"type":"session_meta"}\n')
    database = _database(home, str(rollout))
    assert _problem(home) is None
    with sqlite3.connect(database) as db:
        db.execute("DELETE FROM threads")
    db.close()
    assert _problem(home) is None  # Codex finds it by its file name then
    database.write_bytes(b"not a database")
    assert _problem(home) is None


def test_the_database_is_looked_for_in_codex_sqlite_home(tmp_path: Path) -> None:
    home, elsewhere = tmp_path / ".codex", tmp_path / "sqlite"
    home.mkdir()
    _database(elsewhere, str(tmp_path / "gone.jsonl"))
    assert _problem(home) is None
    assert "which is gone" in str(_problem(home, {"CODEX_SQLITE_HOME": str(elsewhere)}))


def test_a_thread_row_pointing_at_a_rollout_with_fewer_prompts_is_noticed(tmp_path: Path) -> None:
    from tests.transcripts import codex_lines

    home = tmp_path / ".codex"
    rollout, stale = tmp_path / "rollout.jsonl", tmp_path / "rollout-old.jsonl"
    lines = list(codex_lines(3, thread_id=THREAD, cwd=str(tmp_path), filler_bytes=(1 << 20) // 3))  # marks across 1 MiB pieces
    rollout.write_bytes(b"".join(lines))
    stale.write_bytes(lines[0])  # its first line alone, as a fresh start leaves it
    _database(home, str(stale))
    session = AgentSession("codex", THREAD, rollout)
    problem = CodexAdapter().native_resume_problem(session, {"CODEX_HOME": str(home)})
    assert problem is not None and f"{stale}, which holds 0 of the 3 user messages of rollout.jsonl" in problem
    stale.write_bytes(b"".join(lines))  # a copy holding as much
    assert CodexAdapter().native_resume_problem(session, {"CODEX_HOME": str(home)}) is None
    assert _problem(home) is None  # no transcript known to compare with
