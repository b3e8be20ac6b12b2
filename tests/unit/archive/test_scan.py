"""Keeping the index in step with the session folders: new, changed, removed, running, rebuilt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.archive import listing, scan
from shellkeep.archive.search import SearchRequest, search
from shellkeep.vault.access import Vault
from shellkeep.vault.recovery import recover
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import read_meta, write_meta
from tests.unit.archive.helpers import ids, query
from tests.factory import make_session



def test_listing_finds_new_changed_and_removed_sessions(home: Paths, project: Path) -> None:
    a = make_session(home, project, 1, name="first")
    assert ids(listing.list_indexed(home, query(project))) == [a.id]
    b = make_session(home, project, 2)
    assert ids(listing.list_indexed(home, query(project))) == [b.id, a.id]
    import shutil

    shutil.rmtree(a.folder)
    assert ids(listing.list_indexed(home, query(project))) == [b.id]


def test_a_running_session_is_reread_until_it_ends(home: Paths, project: Path) -> None:
    import dataclasses

    from shellkeep.store.session import host_name

    # A live process whose command line names shellkeep stands for the recorder.
    recorder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", "shellkeep"], stdin=subprocess.PIPE)
    try:
        meta = make_session(home, project, 1, status="running", host=host_name(), pid=recorder.pid)
        assert listing.list_indexed(home, query(project))[0].status == "running"
        write_meta(dataclasses.replace(meta, status="finished", exit_code=0))
        assert listing.list_indexed(home, query(project))[0].status == "finished"
    finally:
        recorder.communicate(b"")


def test_a_running_session_whose_recorder_is_gone_is_recovered(home: Paths, project: Path) -> None:
    from shellkeep.store.session import host_name

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    meta = make_session(home, project, 1, status="running", host=host_name(), pid=int(dead.stdout))
    listed = listing.list_indexed(home, query(project), recover=lambda m: recover(m, Vault(home)))
    assert listed[0].status == "interrupted"
    assert read_meta(meta.folder).status == "interrupted"


def test_a_deleted_index_is_rebuilt_with_one_warning(home: Paths, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    make_session(home, project, 1)
    make_session(home, project, 2)
    before = ids(listing.list_indexed(home, query(project)))
    home.index.unlink()
    caplog.clear()
    assert ids(listing.list_indexed(home, query(project))) == before
    assert [r.getMessage() for r in caplog.records] == ["index.sqlite3 was missing; rebuilding it from the session folders"]


@pytest.mark.parametrize("garbage", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 5000], ids=["text", "bad-header"])
def test_a_corrupt_index_is_rebuilt_with_one_warning(home: Paths, project: Path, garbage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    make_session(home, project, 1, events=[(0.2, "o", "needle in the haystack\r\n")])
    listing.list_indexed(home, query(project))
    for suffix in ("-wal", "-shm"):
        Path(f"{home.index}{suffix}").unlink(missing_ok=True)
    home.index.write_bytes(garbage)
    caplog.clear()
    hits = search(home, SearchRequest("needle", project=project_key(project)))
    assert len(hits) == 1
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) >= 1 and "corrupt" in warnings[0] and "rebuilding" in warnings[0]


def test_rebuild_makes_the_same_index_from_the_folders(home: Paths, project: Path) -> None:
    for n in range(5):
        make_session(home, project, n, events=[(0.1, "o", f"word{n} common\r\n")])
    result = scan.rebuild(home)
    assert (result.sessions, result.skipped) == (5, 0)
    assert len(search(home, SearchRequest("common", project=None))) == 5
    progress: list[tuple[int, int]] = []
    scan.rebuild(home, on_progress=lambda done, total: progress.append((done, total)))
    assert progress[-1] == (5, 5)
