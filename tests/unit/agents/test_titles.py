"""Each adapter's ``read_title``: the agent's own title for a conversation, read from its files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Exchange
from shellkeep.agents.claude import ClaudeAdapter
from shellkeep.agents.codex import CodexAdapter
from shellkeep.agents.gemini import GeminiAdapter
from shellkeep.agents.qwen import QwenAdapter
from shellkeep.app.about import about_text

from .conftest import DATA

CLAUDE = DATA / "claude" / "projects" / "-home-bob-work-calc" / "0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a.jsonl"
CODEX_ID = "019c2e4f-7a10-7b3c-8d4e-5f6a7b8c9d0e"
CODEX = DATA / "codex" / "sessions" / "2026" / "03" / "14" / f"rollout-2026-03-14T08-30-00-{CODEX_ID}.jsonl"
GEMINI = DATA / "gemini" / ".gemini" / "tmp" / "calc" / "chats" / "session-2026-03-14T07-30-9d8c7b6a.jsonl"
QWEN = next((DATA / "qwen" / "projects" / "-home-bob-work-calc" / "chats").glob("*.jsonl"))


@pytest.mark.parametrize(
    ("adapter", "path", "session_id", "title"),
    [
        (ClaudeAdapter(), CLAUDE, "0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a", "Add divide to calc"),
        (CodexAdapter(), CODEX, CODEX_ID, "fix divide"),
        (GeminiAdapter(), GEMINI, None, "Guard divide against zero"),
        (QwenAdapter(), QWEN, None, "calc functions"),
    ],
    ids=["claude", "codex", "gemini", "qwen"],
)
def test_reads_the_agents_own_title(adapter: object, path: Path, session_id: str | None, title: str) -> None:
    session = AgentSession(getattr(adapter, "name"), session_id, path)
    assert getattr(adapter, "read_title")(session) == title


def test_claudes_own_rename_wins_over_its_generated_title(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "summary", "summary": "an older summary", "leafUuid": "x"},
        {"type": "ai-title", "aiTitle": "Generated  title\n", "sessionId": "s"},
        {"type": "custom-title", "customTitle": "my name for it", "sessionId": "s"},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"type":"ai-title","aiTi')  # a cut last line
    adapter = ClaudeAdapter()
    assert adapter.read_title(AgentSession("claude", "s", transcript)) == "my name for it"
    transcript.write_text(json.dumps(lines[0]) + "\n" + json.dumps(lines[1]) + "\n")
    assert adapter.read_title(AgentSession("claude", "s", transcript)) == "Generated title"


def test_without_a_title_the_first_prompt_on_one_line_cut(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    exchanges = [Exchange(index=0, time=None, prompt="  \n", answer=""), Exchange(index=1, time=None, prompt="fix\nthe  " + "x" * 200, answer="")]
    text = about_text(ClaudeAdapter(), AgentSession("claude", "s", transcript), exchanges)
    assert text is not None and text.startswith("fix the xxx") and len(text) == 120 and text.endswith("…")
    assert about_text(ClaudeAdapter(), None, []) is None


def test_the_first_prompt_is_kept_redacted(tmp_path: Path) -> None:
    from shellkeep.app.about import with_about
    from shellkeep.capture.redaction import redactor_for
    from shellkeep.store.session import SessionMeta

    secret = "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000"
    meta = SessionMeta(id="s", project="p", project_root="/p", cwd="/p", command=["claude"], agent="claude", started_at="2026-01-01T00:00:00Z")
    exchanges = [Exchange(index=0, time=None, prompt=f"rotate {secret} now", answer="done")]
    kept = with_about(meta, ClaudeAdapter(), None, exchanges, redactor_for(None).redact)
    assert kept.about == "rotate [REDACTED:github-fine-grained] now"


def test_a_secret_across_the_cut_is_redacted_before_it(tmp_path: Path) -> None:
    from shellkeep.app.about import with_about
    from shellkeep.capture.redaction import redactor_for
    from shellkeep.store.session import SessionMeta

    secret = "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000"
    meta = SessionMeta(id="s", project="p", project_root="/p", cwd="/p", command=["claude"], agent="claude", started_at="2026-01-01T00:00:00Z")
    exchanges = [Exchange(index=0, time=None, prompt="x" * 100 + " " + secret, answer="done")]
    kept = with_about(meta, ClaudeAdapter(), None, exchanges, redactor_for(None).redact)
    assert kept.about is not None and "github_pat_11FAKE" not in kept.about and "[REDACTED" in kept.about
