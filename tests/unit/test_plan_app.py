"""Read a session's plan (``app.plan``): stored, or live from the agent's transcript, redacted as stored.

The transcripts are the real Claude Code 2.1.197 ones of tests/data/agents/plan, one of them
given a secret in a todo; sessions are ``SessionMeta`` values as ``meta.json`` holds them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession
from shellkeep.agents.plan import Plan, PlanItem, PlanState
from shellkeep.agents.registry import adapter_named
from shellkeep.app.plan import live_plan, plan_block, session_plan, stored_plan, with_plan
from shellkeep.capture.redaction import redactor_for
from shellkeep.store.paths import Paths
from shellkeep.store.session import PLAN_FILE, SessionMeta
from shellkeep.vault.access import Vault
from shellkeep.vault.crypto import is_encrypted, private_files
from shellkeep.vault.scrubber import redact_meta

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


def test_the_block_of_a_stored_plan(tmp_path: Path) -> None:
    stored = Plan((PlanItem("a", PlanState.COMPLETED), PlanItem("b", PlanState.IN_PROGRESS), PlanItem("c", PlanState.PENDING)), "x")
    assert plan_block(_meta(tmp_path, None, plan=stored.to_json()), None) == ["Plan (1 of 3 done; in progress: b):", "[x] a", "[>] b", "[ ] c"]
    assert plan_block(_meta(tmp_path, None, plan={"items": []}), None) == [] and plan_block(_meta(tmp_path, None), None) == []


def test_with_encryption_on_the_plan_is_sealed_beside_the_exchanges(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    meta = _meta(tmp_path, _with_secret(tmp_path), status="killed")
    meta.folder.mkdir(parents=True)
    adapter, session = adapter_named("claude"), AgentSession("claude", meta.agent_session_id, Path(str(meta.agent_transcript)))
    sealed = with_plan(meta, adapter, session, redactor_for(None).redact, Vault(home, encrypt=True))
    assert sealed.plan == {"sealed": True, "done": 1, "total": 3}  # meta.json is never encrypted: counts only
    stored = (meta.folder / PLAN_FILE).read_bytes()
    assert is_encrypted(meta.folder / PLAN_FILE) and b"migrate the index" not in stored and SECRET.encode() not in stored
    assert meta.folder / PLAN_FILE in private_files(meta.folder)  # rotated, scrubbed and checked like the exchanges
    plan = stored_plan(sealed, Vault(home))
    assert plan is not None and plan.summary() == "1 of 3 done; in progress: migrate the index"
    assert plan.items[2].text == "ship it with [REDACTED:github-fine-grained]"
    assert plan_block(sealed, Vault(home))[0] == "Plan (1 of 3 done; in progress: migrate the index):"
    assert stored_plan(sealed, None) is None and plan_block(sealed, None) == []  # no keys: nothing shown
    assert Plan.from_json(sealed.plan) is None
    assert live_plan(sealed, None, Vault(home)).plan == plan.to_json()  # shown unsealed (show, the web page)
    plain = with_plan(meta, adapter, session, None, Vault(home))  # encryption off: the plan is in meta.json
    assert plain.plan is not None and plain.plan["summary"] == plan.summary()


def test_shellkeep_redact_redacts_the_plan_in_meta_json(tmp_path: Path) -> None:
    meta = live_plan(_meta(tmp_path, _with_secret(tmp_path), redacted=False))
    assert SECRET in json.dumps(meta.plan)
    cleaned = redact_meta(meta, redactor_for(None))
    assert SECRET not in json.dumps(cleaned.plan) and "[REDACTED:github-fine-grained]" in json.dumps(cleaned.plan)
    assert Plan.from_json(cleaned.plan) is not None
