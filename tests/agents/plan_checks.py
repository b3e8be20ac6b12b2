"""Check that a real agent's plan outlives a kill -9 of shellkeep and the agent together.

Shared by the ``test_plan_*`` tests: each drives its own agent until the plan is written, then
calls ``assert_ps_plan``, kills both (``crash.py``), then ``assert_plan_carried``.
A plan is given as ``(mark, text)`` rows, the mark as ``show`` prints it (``x``, ``>``, `` ``, ``-``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import SK

PROMPT = "guard divide against zero"
STEPS = ("read calc.py", "guard divide()", "run the tests")
"""The plan most stand-ins script: one step done, one in progress, one pending."""
SUMMARY = "1 of 3 done; in progress: guard divide()"

def sk(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run one shellkeep command to its end (blocks up to 120 s), with no stdin."""
    return subprocess.run([*SK, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def assert_ps_plan(summary: str, *, env: dict[str, str], cwd: Path) -> None:
    """Assert that ``ps --json`` lists one session, with the plan ``summary`` read live."""
    listed = json.loads(sk("ps", "--json", env=env, cwd=cwd).stdout)
    assert [s["plan"] for s in listed] == [summary]


def assert_plan_carried(session_id: str, summary: str, rows: list[tuple[str, str]], *, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Assert that ``show`` and ``resume --dry-run --inject`` carry the plan; return ``show --json``'s.

    ``show`` prints the summary and every row indented; the dry run prints the summary in its
    banner (stderr) and the rows in the block it would type (stdout, after "would type").
    """
    shown = sk("show", session_id, env=env, cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    assert "".join([f"plan: {summary}", *(f"\n  [{mark}] {text}" for mark, text in rows)]) in shown.stdout
    plan: dict[str, Any] = json.loads(sk("show", session_id, "--json", env=env, cwd=cwd).stdout)["plan"]

    resumed = sk("resume", session_id, "--dry-run", "--inject", env=env, cwd=cwd)
    assert resumed.returncode == 0, resumed.stderr
    assert f"plan: {summary}" in resumed.stderr  # the banner
    typed = resumed.stdout.split("would type", 1)[1]
    assert "\n".join([f"Plan ({summary}):", *(f"[{mark}] {text}" for mark, text in rows)]) in typed
    return plan
