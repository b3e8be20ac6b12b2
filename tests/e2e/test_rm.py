"""``shellkeep rm`` as a user runs it: asked on a terminal, refused without one unless --yes,
pinned sessions refused; the folder, the index rows and nothing else go; the audit log says so."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import PtyHarness, SK, invoke_sk
from tests.factory import make_session

pytestmark = pytest.mark.timeout(120)


def indexed_ids(home: Paths) -> set[str]:
    with sqlite3.connect(home.index) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM sessions")}


def test_rm_yes_removes_folder_and_index_rows_and_audits(home: Paths, tmp_path: Path) -> None:
    keep = make_session(home, tmp_path / "p", 1)
    gone = make_session(home, tmp_path / "p", 2, name="scratch")
    assert invoke_sk("ls", "--all").returncode == 0  # builds the index
    assert indexed_ids(home) == {keep.id, gone.id}

    done = invoke_sk("rm", "scratch", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith(f"removed {gone.id}, freed ")
    assert not gone.folder.exists() and keep.folder.exists()
    assert indexed_ids(home) == {keep.id}  # rows gone without waiting for a rescan
    entries = [json.loads(line) for line in home.audit_log.read_text().splitlines()]
    assert [(e["command"], e["session"]) for e in entries] == [("rm", gone.id)]
    assert invoke_sk("audit", "verify").returncode == 0


def test_rm_without_terminal_needs_yes(home: Paths, tmp_path: Path) -> None:
    meta = make_session(home, tmp_path / "p", 1)
    refused = invoke_sk("rm", meta.id)
    assert refused.returncode == 1
    assert refused.stderr.decode() == f"shellkeep: not removing {meta.id} without confirmation; run 'shellkeep rm {meta.id} --yes'\n"
    assert meta.folder.exists()


def test_rm_pinned_is_refused_naming_unpin(home: Paths, tmp_path: Path) -> None:
    meta = make_session(home, tmp_path / "p", 1)
    assert invoke_sk("pin", meta.id).returncode == 0
    refused = invoke_sk("rm", meta.id, "--yes")
    assert refused.returncode == 1
    assert refused.stderr.decode() == f"shellkeep: session {meta.id} is pinned; run 'shellkeep unpin {meta.id}' first to remove it\n"
    assert meta.folder.exists()


@pytest.mark.parametrize(("answer", "removed"), [(b"n\r", False), (b"y\r", True)], ids=["no", "yes"])
def test_rm_asks_on_a_terminal(home: Paths, tmp_path: Path, answer: bytes, removed: bool) -> None:
    meta = make_session(home, tmp_path / "p", 1)
    term = PtyHarness.start([*SK, "rm", meta.id])
    term.expect(b"[y/N]")
    term.write(answer)
    status = term.finish()
    assert status == (0 if removed else 1)
    assert meta.folder.exists() is not removed
