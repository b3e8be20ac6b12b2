"""The SQLite index: schema and migrations, the connection, repair, indexing one session."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shellkeep.errors import DataError
from shellkeep.app import housekeeping
from shellkeep.archive import index as ix
from shellkeep.archive import listing
from shellkeep.archive.search import SearchRequest, search
from shellkeep.archive.migrations import SCHEMA_VERSION, migrate, statements
from shellkeep.git.identity import GitIdentity
from shellkeep.store.paths import Paths
from shellkeep.store.session import read_meta, write_meta
from tests.unit.archive.helpers import query
from tests.factory import make_session



# -- schema ---------------------------------------------------------------------------------


def test_a_new_index_is_wal_with_a_busy_timeout_at_the_current_schema(home: Paths, project: Path) -> None:
    make_session(home, project, 1)
    listing.list_indexed(home, query(project))
    conn = sqlite3.connect(home.index)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert oct(home.index.stat().st_mode & 0o777) == "0o600"
    with ix.opened(home) as (c, _):
        assert c.execute("PRAGMA busy_timeout").fetchone()[0] == int(ix.BUSY_TIMEOUT_S * 1000)


def test_an_index_of_schema_2_is_upgraded_and_finds_remotes_whatever_their_case(home: Paths, project: Path) -> None:
    from shellkeep.archive.migrations import MIGRATIONS

    make_session(home, project, 1)
    conn = sqlite3.connect(home.index, isolation_level=None)
    for script in MIGRATIONS[:2]:  # the index as the previous release wrote it
        for statement in statements(script):
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    for sid, remote in (("gh", "github.com/Acme/Web"), ("own", "git.example.com/Acme/Web")):
        conn.execute(
            "INSERT INTO sessions (id, project, folder, agent, status, started_at, started_s, meta_key, project_root, git_remote) "
            f"VALUES ('{sid}', 'p-{sid}', '/gone', 'sh', 'finished', '2026-01-01T00:00:00.000Z', 0, 'k', '/gone/{sid}', '{remote}')"
        )
    conn.close()
    found = listing.git_projects(home, GitIdentity("GitHub.com/ACME/web", None))  # opens, upgrades, syncs
    assert [(p.project, p.identity.remote) for p in found] == [("p-gh", "github.com/acme/web")]
    assert listing.git_projects(home, GitIdentity("git.example.com/acme/web", None)) == []  # case counts on other hosts
    assert [p.project for p in listing.git_projects(home, GitIdentity("git.example.com/Acme/Web", None))] == ["p-own"]
    assert sqlite3.connect(home.index).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_migrate_upgrades_an_empty_database_and_is_idempotent(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "i.sqlite3", isolation_level=None)
    migrate(conn, tmp_path / "i.sqlite3")
    migrate(conn, tmp_path / "i.sqlite3")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    assert {"sessions", "projects", "markers", "chunks", "chunks_fts", "chunks_ai", "chunks_ad"} <= tables


def test_an_index_of_schema_1_is_upgraded_and_keeps_its_rows(home: Paths, project: Path) -> None:
    from shellkeep.archive.migrations import MIGRATIONS

    make_session(home, project, 1)
    conn = sqlite3.connect(home.index, isolation_level=None)
    for statement in statements(MIGRATIONS[0]):  # the index as the previous release wrote it
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO sessions (id, project, folder, agent, status, started_at, started_s, meta_key) "
        "VALUES ('old', 'p-1', '/gone', 'sh', 'finished', '2026-01-01T00:00:00.000Z', 0, 'k')"
    )
    conn.close()
    assert listing.git_projects(home, GitIdentity("github.com/a/b", "c1")) == []  # opens, upgrades, syncs
    conn = sqlite3.connect(home.index)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    columns = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    assert {"project_root", "git_remote", "git_root_commit"} <= columns

def test_statements_keep_trigger_bodies_whole() -> None:
    parts = statements("CREATE TABLE a (x);\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n")
    assert len(parts) == 2 and parts[1].endswith("END;")


def test_an_index_from_a_newer_shellkeep_is_refused_with_one_line(home: Paths, project: Path) -> None:
    make_session(home, project, 1)
    listing.list_indexed(home, query(project))
    sqlite3.connect(home.index).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    with pytest.raises(DataError, match="newer shellkeep") as err:
        listing.list_indexed(home, query(project))
    assert err.value.exit_code == 3 and "\n" not in str(err.value)

def test_eight_processes_indexing_at_once_leave_a_consistent_index(home: Paths, project: Path) -> None:
    metas = [make_session(home, project, n, events=[(0.1, "o", f"token{n} shared\r\n")]) for n in range(40)]
    script = textwrap.dedent(
        """
        import sys
        from pathlib import Path
        from shellkeep.archive.index import index_session
        from shellkeep.store.paths import resolve_paths
        from shellkeep.store.session import read_meta
        paths = resolve_paths()
        for folder in sys.argv[1:]:
            for _ in range(3):
                index_session(paths, read_meta(Path(folder)))
        """
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, *[str(m.folder) for m in metas[k::8]]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for k in range(8)
    ]
    results = [p.communicate(timeout=240) for p in procs]
    for proc, (_, err) in zip(procs, results):
        assert proc.returncode == 0, err.decode()
        assert b"locked" not in err
    conn = sqlite3.connect(home.index)
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 40
    assert conn.execute("SELECT count(*) FROM chunks WHERE kind = 'transcript'").fetchone()[0] == 40
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
    conn.rollback()
    conn.close()
    for n in (0, 17, 39):
        assert [h.session_id for h in search(home, SearchRequest(f"token{n}"))] == [metas[n].id]

def test_a_program_without_a_transcript_gets_exchanges_from_its_input(home: Paths, project: Path) -> None:
    import dataclasses

    events = [(0.1, "o", "$ "), (1.0, "i", "echo deployment\r"), (1.1, "o", "echo deployment\r\ndeployment\r\n$ ")]
    meta = make_session(home, project, 1, events=events)
    write_meta(dataclasses.replace(meta, input_bytes=17))
    ix.index_session(home, read_meta(meta.folder))
    assert not (meta.folder / "exchanges.jsonl").exists()  # the index writes no session file
    housekeeping.run(home, meta.folder, compress=False, auto_gc=False)  # the upkeep after a session builds them
    hits = search(home, SearchRequest("deployment"))
    assert "prompt" in {h.kind for h in hits}
    assert read_meta(meta.folder).exchange_count == 1
    with ix.opened(home) as (conn, _):
        assert conn.execute("SELECT content_key = meta_key FROM sessions").fetchone()[0] == 1
