"""Tests for shellkeep/agents/history.py: listing each agent's own sessions under a HOME."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from shellkeep.agents.history import HISTORY_AGENTS, agents_named, native_sessions
from tests.agent_homes import CLAUDE_ID, CODEX_ID, COPILOT_ID, GEMINI_ID_PREFIX, OPENCODE_ID, QWEN_ID, build_agent_home

from .conftest import utc


@pytest.fixture
def built(tmp_path: Path, workdir: Path):  # type: ignore[no-untyped-def]
    return build_agent_home(tmp_path / "user-home", workdir)


@pytest.mark.parametrize(
    ("agent", "session_id", "started"),
    [
        ("claude", CLAUDE_ID, "2026-03-14T08:30:01.500"),
        ("codex", CODEX_ID, "2026-03-14T07:30:00.050"),
        ("gemini", f"{GEMINI_ID_PREFIX}-5f4e-4d3c-8b2a-1f0e9d8c7b6a", "2026-03-14T07:30:00"),
        ("qwen", QWEN_ID, "2026-03-14T07:30:02"),
        ("opencode", OPENCODE_ID, "2026-03-14T07:30:01"),
        ("copilot", COPILOT_ID, "2026-03-14T07:30:00"),
    ],
    ids=lambda value: value if value in HISTORY_AGENTS else "",
)
def test_each_agent_s_session_is_listed_with_its_id_cwd_and_times(built, workdir: Path, agent: str, session_id: str, started: str) -> None:  # type: ignore[no-untyped-def]
    found = [s for s in native_sessions(agent, built.env()) if s.cwd == str(workdir)]
    assert [s.session_id for s in found] == [session_id]
    [session] = found
    assert session.started_at == utc(started)
    assert session.updated_at > session.started_at
    assert session.updated_at.year == 2026 and session.updated_at.month == 3  # from the records, not the copy's mtime
    assert session.state.startswith("updated:" if agent == "opencode" else "bytes:")
    assert session.transcript.is_file()


def test_nothing_is_listed_for_an_empty_home(tmp_path: Path) -> None:
    for agent in HISTORY_AGENTS:
        assert native_sessions(agent, {"HOME": str(tmp_path)}) == []


def test_a_state_changes_when_the_transcript_grows(built) -> None:  # type: ignore[no-untyped-def]
    [before] = native_sessions("qwen", built.env())
    with built.qwen.open("a") as fh:
        fh.write("\n")
    [after] = native_sessions("qwen", built.env())
    assert before.state != after.state and before.session_id == after.session_id


def test_gemini_s_content_less_resume_file_does_not_hide_the_conversation(built) -> None:  # type: ignore[no-untyped-def]
    # A resume writes session-<now>-<id8>.jsonl holding only the metadata line, same sessionId.
    head = built.gemini.read_text().splitlines()[0]
    (built.gemini.parent / f"session-2026-12-01T09-00-{GEMINI_ID_PREFIX}.jsonl").write_text(head + "\n")
    [session] = [s for s in native_sessions("gemini", built.env()) if s.session_id.startswith(GEMINI_ID_PREFIX)]
    assert session.transcript == built.gemini


def test_codex_prefers_the_plain_rollout_and_reads_archived_ones(built) -> None:  # type: ignore[no-untyped-def]
    zstandard = pytest.importorskip("zstandard")
    compressed = built.codex.with_name(built.codex.name + ".zst")
    compressed.write_bytes(zstandard.ZstdCompressor().compress(built.codex.read_bytes()))
    [session] = native_sessions("codex", built.env())
    assert session.transcript == built.codex
    archived = built.home / ".codex" / "archived_sessions"
    archived.mkdir()
    shutil.move(str(compressed), archived / compressed.name)
    built.codex.unlink()
    [session] = native_sessions("codex", built.env())
    assert session.transcript == archived / compressed.name and session.session_id == CODEX_ID


def test_opencode_lists_top_level_sessions_and_leaves_the_database_as_it_was(built) -> None:  # type: ignore[no-untyped-def]
    before = hashlib.sha256(built.opencode.read_bytes()).hexdigest()
    ids = {s.session_id for s in native_sessions("opencode", built.env())}
    assert OPENCODE_ID in ids and "ses_0a1b2c3d4e5fCHILDsession01" not in ids  # a subagent's is part of its parent
    assert hashlib.sha256(built.opencode.read_bytes()).hexdigest() == before


def test_an_unreadable_opencode_database_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / ".local" / "share" / "opencode" / "opencode.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"not a database at all" * 100)
    assert native_sessions("opencode", {"HOME": str(tmp_path)}) == []
    assert "cannot read opencode database" in caplog.text


def test_agents_named() -> None:
    assert agents_named(["all"]) == list(HISTORY_AGENTS)
    assert agents_named(["copilot", "claude"]) == ["claude", "copilot"]
