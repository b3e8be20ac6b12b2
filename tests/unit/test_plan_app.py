"""Read a session's plan (``app.plan``): stored, or live from the agent's transcript, redacted as stored.

The transcripts are the real Claude Code 2.1.197 ones of tests/data/agents/plan, one of them
given a secret in a todo; sessions are ``SessionMeta`` values as ``meta.json`` holds them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from shellkeep.agents.plan import Plan, PlanItem, PlanState
from shellkeep.app.plan import live_plan, plan_block, plan_summary, session_plan
from shellkeep.store.session import SessionMeta

DATA = Path(__file__).parent.parent / "data" / "agents" / "plan"
SECRET = "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000"


def _meta(tmp_path: Path, transcript: Path | None, **changes: object) -> SessionMeta:
    meta = SessionMeta(
        id="20261202-101500-000aa", project="calc-00000000", project_root=str(tmp_path), cwd=str(tmp_path),
        command=["claude"], agent="claude", started_at="2026-12-02T10:15:00.000Z", status="running",
        cast=str(tmp_path / "s" / "session.cast"), agent_session_id="612d7854-9370-4ec7-aa4f-a6bbd8d92b1e",
        agent_transcript=None if transcript is None else str(transcript),
    )  # fmt: skip
    return dataclasses.replace(meta, **changes)  # type: ignore[arg-type]


def _with_secret(tmp_path: Path) -> Path:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((DATA / "claude-todowrite.jsonl").read_text().replace("ship it", f"ship it with {SECRET}"))
    return transcript


def test_a_live_plan_is_redacted_unless_the_session_was_recorded_without(tmp_path: Path) -> None:
    transcript = _with_secret(tmp_path)
    plan = session_plan(_meta(tmp_path, transcript))
    assert plan is not None and plan.items[2].text == "ship it with [REDACTED:github-fine-grained]"
    assert SECRET not in json.dumps(live_plan(_meta(tmp_path, transcript)).plan)
    unredacted = session_plan(_meta(tmp_path, transcript, redacted=False))
    assert unredacted is not None and SECRET in unredacted.items[2].text


def test_a_stored_plan_wins_and_a_missing_transcript_gives_none(tmp_path: Path) -> None:
    stored = Plan((PlanItem("stored item", PlanState.PENDING),), "TodoWrite").to_json()
    meta = _meta(tmp_path, _with_secret(tmp_path), plan=stored)
    plan = session_plan(meta)
    assert plan is not None and [i.text for i in plan.items] == ["stored item"]
    assert live_plan(meta) is meta
    assert session_plan(_meta(tmp_path, tmp_path / "gone.jsonl")) is None
    assert session_plan(_meta(tmp_path, None, agent="python3", command=["python3"], agent_session_id=None)) is None


def test_summary_and_block_of_a_stored_plan() -> None:
    stored = Plan((PlanItem("a", PlanState.COMPLETED), PlanItem("b", PlanState.IN_PROGRESS), PlanItem("c", PlanState.PENDING)), "x")
    assert plan_summary(stored.to_json()) == "1 of 3 done; in progress: b"
    assert plan_block(stored.to_json()) == ["Plan (1 of 3 done; in progress: b):", "[x] a", "[>] b", "[ ] c"]
    assert plan_summary(None) is None and plan_block({"items": []}) == []
