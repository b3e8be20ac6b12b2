"""TERM_PROGRAM and TERM_PROGRAM_VERSION name today's terminal: never recorded, never restored.

A program recorded inside tmux (``TERM_PROGRAM=tmux``) with ``record.env = "all"`` keeps
neither; a session recorded before they were left out (its ``meta.json`` holds them) resumed
outside tmux does not get them back: the program, python3 printing them, sees none.
"""

from __future__ import annotations

import json
import os
import sys

from shellkeep.store.paths import Paths
from tests.helpers import run_sk, session_folders

PROBE = "import os; print('seen:' + os.environ.get('TERM_PROGRAM', '-') + ':' + os.environ.get('TERM_PROGRAM_VERSION', '-'))"


def test_term_program_is_never_recorded_nor_restored(home: Paths) -> None:
    outside = {k: v for k, v in os.environ.items() if not k.startswith("TERM_PROGRAM")}
    in_tmux = {**outside, "TERM_PROGRAM": "tmux", "TERM_PROGRAM_VERSION": "3.4", "SHELLKEEP_RECORD_ENV": "all"}
    recorded = run_sk("run", "--", sys.executable, "-c", PROBE, env=in_tmux)
    assert recorded.returncode == 0 and b"seen:tmux:3.4" in recorded.stdout, recorded.stderr.decode()
    [meta_path] = session_folders(home)
    meta = json.loads(meta_path.read_text())
    assert meta["env"]["scope"] == "all" and "TERM_PROGRAM" not in meta["env"]["values"]
    assert "TERM_PROGRAM_VERSION" not in meta["env"]["values"]

    meta["env"]["values"].update(TERM_PROGRAM="tmux", TERM_PROGRAM_VERSION="3.4")  # an older recording
    meta_path.write_text(json.dumps(meta))
    resumed = run_sk("resume", meta["id"], "--no-screen", env=outside)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert b"seen:-:-" in resumed.stdout
