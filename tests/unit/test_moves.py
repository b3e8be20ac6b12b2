"""Tests for shellkeep/app/moves.py: an agent's transcript put where the agent looks in a moved folder."""

from __future__ import annotations

import re
from pathlib import Path

from shellkeep.app.moves import relocate_transcript
from shellkeep.store.session import SessionMeta

CLAUDE_ID = "3f2a9c1e-0b7d-4e2f-9a61-5c8d7e6f1a2b"


def _meta(tmp_path: Path, agent: str, transcript: Path, cwd: Path) -> SessionMeta:
    return SessionMeta(
        id="20261202-101500-000aa", project="web-00000000", project_root=str(cwd), cwd=str(cwd),
        command=[agent], agent=agent, started_at="2026-12-02T10:15:00.000Z", status="killed",
        cast=str(tmp_path / "data" / "s" / "session.cast"), agent_session_id=CLAUDE_ID, agent_transcript=str(transcript),
    )  # fmt: skip


def _claude_file(home: Path, cwd: Path) -> Path:
    return home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd)) / f"{CLAUDE_ID}.jsonl"


def test_claude_transcript_is_copied_to_the_new_folders_place_never_over_a_file(tmp_path: Path) -> None:
    home, old_cwd, new_cwd = tmp_path / "home", tmp_path / "web", tmp_path / "web-renamed"
    new_cwd.mkdir()
    old = _claude_file(home, old_cwd)
    old.parent.mkdir(parents=True)
    old.write_bytes(b'{"type":"user","message":{"content":"hi"}}\n')
    meta = _meta(tmp_path, "claude", old, old_cwd)

    side = old.with_suffix("")  # Claude Code's <id>/ folder: subagents and large tool results
    (side / "subagents").mkdir(parents=True)
    (side / "subagents" / "agent-1.jsonl").write_bytes(b'{"type":"user"}\n')
    (side / "tool-results").mkdir()
    (side / "tool-results" / "t1.txt").write_bytes(b"a long tool output")

    moved, note = relocate_transcript(meta, new_cwd, {"HOME": str(home)})
    new = _claude_file(home, new_cwd)
    assert moved.agent_transcript == str(new) and new.read_bytes() == old.read_bytes()
    assert old.is_file() and note is not None and str(new) in note
    new_side = new.with_suffix("")
    assert (new_side / "subagents" / "agent-1.jsonl").read_bytes() == b'{"type":"user"}\n'
    assert (new_side / "tool-results" / "t1.txt").read_bytes() == b"a long tool output"
    assert (side / "tool-results" / "t1.txt").is_file()  # the original stays

    new.write_bytes(b'{"type":"user","message":{"content":"the agent wrote this since"}}\n')
    again, note = relocate_transcript(meta, new_cwd, {"HOME": str(home)})
    assert again.agent_transcript == str(new) and note is None
    assert b"wrote this since" in new.read_bytes()  # never overwritten

    # Resumed where it ran: nothing to do.
    assert relocate_transcript(meta, old_cwd, {"HOME": str(home)}) == (meta, None)


def test_a_transcript_inside_the_project_moved_with_it(tmp_path: Path) -> None:
    old_cwd, new_cwd = tmp_path / "web", tmp_path / "web-renamed"
    (new_cwd / ".git").mkdir(parents=True)
    meta = _meta(tmp_path, "aider", old_cwd / ".aider.chat.history.md", old_cwd)
    moved, note = relocate_transcript(meta, new_cwd, {"HOME": str(tmp_path / "home")})
    assert moved.agent_transcript == str(new_cwd / ".aider.chat.history.md") and note is None
