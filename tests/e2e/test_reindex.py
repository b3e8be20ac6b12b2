"""``shellkeep reindex``: rebuild the index from the session folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from tests.factory import make_session
from tests.helpers import invoke_sk


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def reindex_in_background(meta: SessionMeta) -> subprocess.Popen[bytes]:
    """Start ``shellkeep reindex --session ID`` detached, as a session's end may hand its indexing off."""
    return subprocess.Popen(
        [sys.executable, "-m", "shellkeep", "-q", "reindex", "--session", meta.id],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=meta.project_root if os.path.isdir(meta.project_root) else None,
        start_new_session=True,
        close_fds=True,
    )


def test_reindex_rebuilds_from_the_folders(home: Paths) -> None:
    metas = [make_session(home, Path.cwd(), n, events=[(0.1, "o", f"unique{n} text\r\n")]) for n in range(4)]
    (metas[0].folder.parent / "broken").mkdir()
    (metas[0].folder.parent / "broken" / "meta.json").write_text("{not json")
    result = sk("reindex")
    assert result.exit_code == 0
    assert result.stdout == "indexed 4 sessions in " + result.stdout.split(" in ")[1]
    assert "1 unreadable folder skipped" in result.stdout
    assert len(json.loads(sk("search", "unique2", "--json").stdout)) == 1
    shutil.rmtree(metas[3].folder)
    doc = json.loads(sk("reindex", "--json").stdout)
    assert (doc["sessions"], doc["skipped"]) == (3, 1) and doc["seconds"] >= 0
    assert json.loads(sk("search", "unique3", "--json").stdout) == []


def test_reindex_replaces_a_corrupt_index(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "kept\r\n")])
    home.projects.parent.mkdir(exist_ok=True)
    home.index.write_bytes(b"garbage" * 1000)
    assert sk("reindex").exit_code == 0
    assert len(json.loads(sk("search", "kept", "--json").stdout)) == 1


def test_reindex_one_session_and_in_the_background(home: Paths) -> None:
    from tests.helpers import wait_until

    first = make_session(home, Path.cwd(), 1, events=[(0.1, "o", "alpha text\r\n")])
    result = sk("reindex", "--session", first.id)
    assert result.exit_code == 0 and result.stdout.startswith("indexed 1 session ")
    assert len(json.loads(sk("search", "alpha", "--json").stdout)) == 1
    second = make_session(home, Path.cwd(), 2, events=[(0.1, "o", "omega text\r\n")])
    child = reindex_in_background(second)

    def indexed() -> bool:
        import sqlite3

        conn = sqlite3.connect(home.index)
        try:
            row = conn.execute("SELECT content_key = meta_key FROM sessions WHERE id = ?", (second.id,)).fetchone()
        finally:
            conn.close()
        return bool(row and row[0])

    wait_until(indexed, timeout_s=60)
    child.wait(timeout=60)


def test_a_corrupt_index_is_one_line_and_rebuilt(home: Paths) -> None:
    from tests.helpers import run_sk

    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "kept\r\n")])
    home.index.write_bytes(b"garbage" * 1000)
    result = invoke_sk("ls", "--all-sessions")
    assert result.returncode == 0
    assert result.stderr.count(b"\n") == 1 and b"is corrupt" in result.stderr


def test_reindex_and_search_warn_once_about_a_damaged_recording_and_index_the_others(home: Paths) -> None:
    from tests.helpers import damage_compressed, run_sk

    metas = [make_session(home, Path.cwd(), n, events=[(0.1, "o", f"unique{n} text\r\n"), (0.2, "o", "bye\r\n")]) for n in range(3)]
    damage_compressed(Path(metas[1].cast), keep_lines=1)
    result = invoke_sk("reindex")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(b"recording is damaged") == 1
    assert result.stdout.startswith(b"indexed 3 sessions")
    for n in (0, 2):
        assert len(json.loads(sk("search", f"unique{n}", "--json").stdout)) == 1
    home.index.unlink()
    found = invoke_sk("search", "unique2", "--json")
    assert found.returncode == 0 and len(json.loads(found.stdout)) == 1
    assert found.stderr.count(b"recording is damaged") == 1


def test_the_first_index_build_is_silent_and_a_lost_index_is_announced(home: Paths) -> None:
    from tests.helpers import run_sk

    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "first\r\n")])
    assert not home.index.exists()
    first = invoke_sk("ls", "--all-sessions")
    assert first.returncode == 0 and first.stderr == b""
    assert home.index_mark.exists()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home.index}{suffix}").unlink(missing_ok=True)
    again = invoke_sk("search", "first", "--json")
    assert again.returncode == 0 and len(json.loads(again.stdout)) == 1
    assert again.stderr == b"shellkeep: index.sqlite3 was missing; rebuilding it from the session folders\n"


def test_an_index_older_than_the_mark_gets_it_so_its_loss_is_announced(home: Paths) -> None:
    from tests.helpers import run_sk

    make_session(home, Path.cwd(), 1)
    assert invoke_sk("ls", "--all-sessions").returncode == 0
    home.index_mark.unlink()  # as a data folder from before the mark existed
    assert invoke_sk("ls", "--all-sessions").stderr == b"" and home.index_mark.exists()
    home.index.unlink()
    assert b"was missing; rebuilding" in invoke_sk("ls", "--all-sessions").stderr
