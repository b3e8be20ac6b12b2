"""The agent's task list on ``shellkeep serve``'s session page, stored or read live.

A real recorded session (``shellkeep run python3``) is given an agent conversation as the
recorder notes one: ``agent``, ``agent_session_id`` and ``agent_transcript`` naming a Codex
rollout (the ``update_plan`` fixture of tests/data/agents/plan). Its page, served over real
HTTP, lists the plan read from that rollout; once collected (``meta.plan`` stored, as at the
end of a run) the stored plan is what is shown, also after the rollout is gone.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from shellkeep.agents.plan import Plan, PlanItem, PlanState
from shellkeep.store.paths import Paths
from shellkeep.store.session import read_meta, write_meta
from tests.e2e.serving import record_session, serve
from tests.helpers import wait_for_background

pytestmark = pytest.mark.timeout(120)

ROLLOUT = Path(__file__).parent.parent / "data" / "agents" / "plan" / "codex-update-plan.jsonl"


def test_the_session_page_lists_the_plan_live_then_stored(home: Paths, tmp_path: Path) -> None:
    folder, session_id, _ = record_session(home, "print('planned work')")
    wait_for_background(home)  # the upkeep after the session is done with meta.json
    rollout = tmp_path / "rollout.jsonl"
    shutil.copy(ROLLOUT, rollout)
    meta = read_meta(folder)
    write_meta(dataclasses.replace(meta, agent="codex", agent_session_id="019ad3c2-5e6f-7a8b-9c0d-1e2f3a4b5c6d", agent_transcript=str(rollout)))

    with serve() as served:
        page = served.client().get(f"/s/{session_id}")
        assert page.status_code == 200, page.text
        assert '<p class="muted small" id="plan-summary">1 of 3 done; in progress: guard divide()</p>' in page.text
        assert '<li class="plan-completed" title="completed">read calc.py</li>' in page.text
        assert '<li class="plan-in_progress" title="in_progress">guard divide()</li>' in page.text
        assert '<li class="plan-pending" title="pending">run the tests</li>' in page.text

        stored = Plan((PlanItem("ship <it>", PlanState.IN_PROGRESS),), "update_plan")
        write_meta(dataclasses.replace(read_meta(folder), plan=stored.to_json()))
        rollout.unlink()
        page = served.client().get(f"/s/{session_id}")
        assert "0 of 1 done; in progress: ship &lt;it&gt;" in page.text  # escaped, from meta.json
        assert "guard divide()" not in page.text


def test_a_session_without_a_plan_has_no_plan_section(home: Paths) -> None:
    _, session_id, _ = record_session(home, "print('no plan here')")
    with serve() as served:
        page = served.client().get(f"/s/{session_id}")
        assert page.status_code == 200 and 'id="timeline"' in page.text
        assert 'id="plan"' not in page.text
