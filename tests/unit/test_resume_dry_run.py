"""``resume --dry-run`` plans what ``resume`` runs (shellkeep/app/resume.py, app/native.py).

A Codex session is recorded and collected (shellkeep keeps a copy of its rollout), the user
quits normally, and then the rollout is deleted (Codex pruned it, the user cleaned up). The
real resume puts shellkeep's copy back and resumes natively; the dry run must plan that
too, not a re-injection, and write nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shellkeep.app.conversation import collect
from shellkeep.app.resume import ResumeMode, plan_resume
from shellkeep.store.paths import Paths
from shellkeep.vault.access import Vault
from tests.helpers import invoke_sk, stored_copy
from tests.unit.test_resume import _ctx, make_session

ROLLOUTS = Path(__file__).parent.parent / "data" / "agents" / "codex" / "sessions"
THREAD = "019c2e4f-7a10-7b3c-8d4e-5f6a7b8c9d0e"


@pytest.fixture
def project() -> Path:
    """Return the project folder the ``home`` fixture changed into."""
    return Path.cwd()


def test_dry_run_plans_the_native_resume_a_deleted_rollout_gets(home: Paths, project: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    shutil.copytree(ROLLOUTS, codex_home / "sessions")
    [rollout] = (codex_home / "sessions").rglob(f"rollout-*-{THREAD}.jsonl")
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(codex_home)}
    meta = make_session(
        home, project, 1, status="finished", command=("codex",), agent="codex", agent_session_id=THREAD, transcript=rollout
    )  # a normal quit
    meta = collect(meta, Vault(home), None, env)
    assert stored_copy(meta.folder, rollout.name, home) == rollout.read_bytes()
    rollout.unlink()

    dry = plan_resume(_ctx(home, meta), meta, env=env, dry_run=True)
    assert not rollout.exists()  # a dry run writes nothing
    assert dry.mode is ResumeMode.NATIVE and dry.argv == ("codex", "resume", THREAD) and dry.inject_text is None
    assert dry.note == f"the agent's transcript {rollout} is gone; shellkeep's copy would be restored"
    shown = invoke_sk("resume", meta.id, "--dry-run", "--no-screen", env={**os.environ, **env})
    assert shown.returncode == 0, shown.stderr
    assert b"mode: native" in shown.stdout and f"would run: codex resume {THREAD}".encode() in shown.stdout
    assert b"shellkeep's copy would be restored" in shown.stderr and not rollout.exists()

    real = plan_resume(_ctx(home, meta), meta, env=env)
    assert (real.mode, real.argv) == (dry.mode, dry.argv)
    assert rollout.read_bytes() == stored_copy(meta.folder, rollout.name, home)
    assert real.note == f"the agent's transcript {rollout} was gone; restored shellkeep's copy"
