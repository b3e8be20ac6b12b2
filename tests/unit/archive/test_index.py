"""The SQLite index: schema and migrations, sync with the folders, listing, search, repair."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.errors import DataError, UserInputError
from shellkeep.app import housekeeping
from shellkeep.archive import index as ix
from shellkeep.vault.access import Vault
from shellkeep.vault.recovery import recover
from shellkeep.archive.migrations import SCHEMA_VERSION, migrate, statements
from shellkeep.git.identity import GitIdentity
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import read_meta, write_meta
from tests.factory import BASE, make_session


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tmp_path / "project"


def ids(metas: list) -> list[str]:  # type: ignore[type-arg]
    return [m.id for m in metas]


def query(project: Path, **kw: object) -> ix.SessionQuery:
    return ix.SessionQuery(project=project_key(project), **kw)  # type: ignore[arg-type]


# -- schema ---------------------------------------------------------------------------------


def test_a_new_index_is_wal_with_a_busy_timeout_at_the_current_schema(home: Paths, project: Path) -> None:
    make_session(home, project, 1)
    ix.list_indexed(home, query(project))
    conn = sqlite3.connect(home.index)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert oct(home.index.stat().st_mode & 0o777) == "0o600"
    with ix._opened(home) as (c, _):
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
    found = ix.git_projects(home, GitIdentity("GitHub.com/ACME/web", None))  # opens, upgrades, syncs
    assert [(p.project, p.identity.remote) for p in found] == [("p-gh", "github.com/acme/web")]
    assert ix.git_projects(home, GitIdentity("git.example.com/acme/web", None)) == []  # case counts on other hosts
    assert [p.project for p in ix.git_projects(home, GitIdentity("git.example.com/Acme/Web", None))] == ["p-own"]
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
    assert ix.git_projects(home, GitIdentity("github.com/a/b", "c1")) == []  # opens, upgrades, syncs
    conn = sqlite3.connect(home.index)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    columns = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    assert {"project_root", "git_remote", "git_root_commit"} <= columns


def test_git_projects_finds_a_project_by_remote_or_root_commit(home: Paths, project: Path, tmp_path: Path) -> None:
    import dataclasses

    other = tmp_path / "other"
    identities = {project: {"remote": "github.com/a/web", "root_commit": "c1"}, other: {"remote": None, "root_commit": "c9"}}
    for n, (root, identity) in enumerate(identities.items(), 1):
        meta = make_session(home, root, n)
        write_meta(dataclasses.replace(meta, git_identity=identity))
    found = ix.git_projects(home, GitIdentity("github.com/a/web", "c1"))
    assert [(p.project, p.project_root) for p in found] == [(project_key(project), str(project))]
    assert [p.project for p in ix.git_projects(home, GitIdentity(None, "c9"))] == [project_key(other)]
    assert ix.git_projects(home, GitIdentity("github.com/fork/web", "c1")) == []  # a fork: same root, other remote


def test_statements_keep_trigger_bodies_whole() -> None:
    parts = statements("CREATE TABLE a (x);\nCREATE TRIGGER t AFTER INSERT ON a BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n")
    assert len(parts) == 2 and parts[1].endswith("END;")


def test_an_index_from_a_newer_shellkeep_is_refused_with_one_line(home: Paths, project: Path) -> None:
    make_session(home, project, 1)
    ix.list_indexed(home, query(project))
    sqlite3.connect(home.index).execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    with pytest.raises(DataError, match="newer shellkeep") as err:
        ix.list_indexed(home, query(project))
    assert err.value.exit_code == 3 and "\n" not in str(err.value)


# -- staying in step with the folders -----------------------------------------------------


def test_listing_finds_new_changed_and_removed_sessions(home: Paths, project: Path) -> None:
    a = make_session(home, project, 1, name="first")
    assert ids(ix.list_indexed(home, query(project))) == [a.id]
    b = make_session(home, project, 2)
    assert ids(ix.list_indexed(home, query(project))) == [b.id, a.id]
    import shutil

    shutil.rmtree(a.folder)
    assert ids(ix.list_indexed(home, query(project))) == [b.id]


def test_a_running_session_is_reread_until_it_ends(home: Paths, project: Path) -> None:
    import dataclasses

    from shellkeep.store.session import host_name

    # A live process whose command line names shellkeep stands for the recorder.
    recorder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", "shellkeep"], stdin=subprocess.PIPE)
    try:
        meta = make_session(home, project, 1, status="running", host=host_name(), pid=recorder.pid)
        assert ix.list_indexed(home, query(project))[0].status == "running"
        write_meta(dataclasses.replace(meta, status="finished", exit_code=0))
        assert ix.list_indexed(home, query(project))[0].status == "finished"
    finally:
        recorder.communicate(b"")


def test_a_running_session_whose_recorder_is_gone_is_recovered(home: Paths, project: Path) -> None:
    from shellkeep.store.session import host_name

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    meta = make_session(home, project, 1, status="running", host=host_name(), pid=int(dead.stdout))
    listed = ix.list_indexed(home, query(project), recover=lambda m: recover(m, Vault(home)))
    assert listed[0].status == "interrupted"
    assert read_meta(meta.folder).status == "interrupted"


def test_a_deleted_index_is_rebuilt_with_one_warning(home: Paths, project: Path, caplog: pytest.LogCaptureFixture) -> None:
    make_session(home, project, 1)
    make_session(home, project, 2)
    before = ids(ix.list_indexed(home, query(project)))
    home.index.unlink()
    caplog.clear()
    assert ids(ix.list_indexed(home, query(project))) == before
    assert [r.getMessage() for r in caplog.records] == ["index.sqlite3 was missing; rebuilding it from the session folders"]


@pytest.mark.parametrize("garbage", [b"this is not a database" * 100, b"SQLite format 3\x00" + b"\xff" * 5000], ids=["text", "bad-header"])
def test_a_corrupt_index_is_rebuilt_with_one_warning(home: Paths, project: Path, garbage: bytes, caplog: pytest.LogCaptureFixture) -> None:
    make_session(home, project, 1, events=[(0.2, "o", "needle in the haystack\r\n")])
    ix.list_indexed(home, query(project))
    for suffix in ("-wal", "-shm"):
        Path(f"{home.index}{suffix}").unlink(missing_ok=True)
    home.index.write_bytes(garbage)
    caplog.clear()
    hits = ix.search(home, ix.SearchRequest("needle", project=project_key(project)))
    assert len(hits) == 1
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) >= 1 and "corrupt" in warnings[0] and "rebuilding" in warnings[0]


def test_rebuild_makes_the_same_index_from_the_folders(home: Paths, project: Path) -> None:
    for n in range(5):
        make_session(home, project, n, events=[(0.1, "o", f"word{n} common\r\n")])
    result = ix.rebuild(home)
    assert (result.sessions, result.skipped) == (5, 0)
    assert len(ix.search(home, ix.SearchRequest("common", project=None))) == 5
    progress: list[tuple[int, int]] = []
    ix.rebuild(home, on_progress=lambda done, total: progress.append((done, total)))
    assert progress[-1] == (5, 5)


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
        assert [h.session_id for h in ix.search(home, ix.SearchRequest(f"token{n}"))] == [metas[n].id]


# -- listing -------------------------------------------------------------------------------


@pytest.fixture
def listed(home: Paths, project: Path) -> dict[str, str]:
    made = {
        "old-claude": make_session(home, project, 1, agent="claude", name="fix-login", started=BASE),
        "new-claude": make_session(home, project, 2, agent="claude", name="refactor", started=BASE + timedelta(days=3)),
        "codex": make_session(home, project, 3, agent="codex", status="killed", started=BASE + timedelta(days=5)),
        "other": make_session(home, project.parent / "other", 4, agent="claude", started=BASE + timedelta(days=6)),
    }
    return {k: m.id for k, m in made.items()}


@pytest.mark.parametrize(
    ("filters", "expect"),
    [
        ({}, ["codex", "new-claude", "old-claude"]),
        ({"agents": ("claude",)}, ["new-claude", "old-claude"]),
        ({"agents": ("claude", "codex")}, ["codex", "new-claude", "old-claude"]),
        ({"statuses": ("killed",)}, ["codex"]),
        ({"since": BASE + timedelta(days=1)}, ["codex", "new-claude"]),
        ({"until": BASE + timedelta(days=4)}, ["new-claude", "old-claude"]),
        ({"name": "LOG"}, ["old-claude"]),
        ({"name": "re*"}, ["new-claude"]),
        ({"limit": 2}, ["codex", "new-claude"]),
        ({"project": None}, ["other", "codex", "new-claude", "old-claude"]),
    ],
    ids=["none", "agent", "agents", "status", "since", "until", "name", "glob", "limit", "all"],
)
def test_list_filters(home: Paths, project: Path, listed: dict[str, str], filters: dict[str, object], expect: list[str]) -> None:
    q = ix.SessionQuery(**{"project": project_key(project), **filters})  # type: ignore[arg-type]
    assert ids(ix.list_indexed(home, q)) == [listed[k] for k in expect]
    assert ids(ix.find_sessions(home, q)) == [listed[k] for k in expect]


def test_listing_gives_the_same_metadata_as_the_folders(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, name="same")
    listed = ix.list_indexed(home, query(project))
    assert [s.meta() for s in listed] == [read_meta(meta.folder)]
    assert listed[0].to_json() == read_meta(meta.folder).to_json()


# -- search ----------------------------------------------------------------------------------


def test_search_ranks_highlights_and_dates_each_hit(home: Paths, project: Path) -> None:
    many = make_session(home, project, 1, events=[(2.0, "o", "error error error in the build\r\n")])
    make_session(home, project, 2, events=[(1.0, "o", "all good\r\n"), (7.5, "o", "one error here, and more text\r\n")])
    hits = ix.search(home, ix.SearchRequest("error", project=project_key(project)))
    assert [h.session_id for h in hits][0] == many.id
    assert [h.time for h in hits] == [2.0, 7.5]
    second = hits[1]
    assert second.kind == "transcript" and second.exchange is None
    for start, end in second.highlights:
        assert second.snippet[start:end].lower() == "error"


def test_search_covers_prompts_answers_and_markers(home: Paths, project: Path) -> None:
    meta = make_session(
        home,
        project,
        1,
        events=[(0.1, "o", "screen\r\n"), (3.0, "m", "deploy started")],
        exchanges=[
            {"prompt": "please refactor the parser", "answer": "done", "time": "2024-05-01T12:01:04.000Z"},
            {"prompt": "now tests", "answer": "added pytest coverage", "time": "2024-05-01T12:01:30.000Z"},
        ],
    )
    by_kind = {h.kind: h for q in ("parser", "coverage", "deploy") for h in ix.search(home, ix.SearchRequest(q))}
    assert by_kind["prompt"].exchange == 1 and by_kind["prompt"].time == 4.0
    assert by_kind["answer"].exchange == 2 and by_kind["answer"].time == 30.0
    assert by_kind["marker"].time == 3.0
    assert {h.session_id for h in by_kind.values()} == {meta.id}


def test_search_filters_by_project_agent_and_start(home: Paths, project: Path) -> None:
    make_session(home, project, 1, agent="claude", events=[(0.1, "o", "needle\r\n")], started=BASE)
    make_session(home, project, 2, agent="codex", events=[(0.1, "o", "needle\r\n")], started=BASE + timedelta(days=2))
    make_session(home, project.parent / "elsewhere", 3, events=[(0.1, "o", "needle\r\n")])
    key = project_key(project)
    assert len(ix.search(home, ix.SearchRequest("needle"))) == 3
    assert len(ix.search(home, ix.SearchRequest("needle", project=key))) == 2
    assert [h.agent for h in ix.search(home, ix.SearchRequest("needle", project=key, agents=("codex",)))] == ["codex"]
    assert [h.agent for h in ix.search(home, ix.SearchRequest("needle", project=key, since=BASE + timedelta(days=1)))] == ["codex"]


@pytest.mark.parametrize(
    ("typed", "fts"),
    [
        ("connection refused", '"connection" "refused"'),
        ('"connection refused"', '"connection refused"'),
        ("conn*", '"conn"*'),
        ("a OR b", '"a" OR "b"'),
        ('foo" -bar (x', '"foo" "-bar" "(x"'),
        ("a NOT b", '"a" NOT "b"'),
        ("a b AND NOT c", '("a" "b") NOT "c"'),
        ("a b OR c", '("a" "b") OR "c"'),
        ("OR a NOT", '"a"'),
        ("NOT", None),
    ],
    ids=["words", "phrase", "prefix", "or", "odd-characters", "not", "and-not", "or-binds-loosest", "misplaced-operators", "operator-only"],
)
def test_fts_query_never_is_a_syntax_error(typed: str, fts: str | None) -> None:
    """The FTS5 form of queries FTS5 can express; ``NOT x`` alone is tested on recorded sessions (e2e/test_search.py)."""
    if fts is None:
        with pytest.raises(UserInputError):
            ix.fts_query(typed)
        return
    assert ix.fts_query(typed) == fts
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.execute("SELECT * FROM t WHERE t MATCH ?", (ix.fts_query(typed),)).fetchall()


@pytest.mark.parametrize(
    ("text", "end_of_day", "expect"),
    [
        ("2024-05-01T00:00:00Z", False, BASE - timedelta(hours=12)),
        ("2h", False, BASE - timedelta(hours=2)),
        ("3d", False, BASE - timedelta(days=3)),
        ("1w", False, BASE - timedelta(weeks=1)),
    ],
    ids=["iso", "hours", "days", "weeks"],
)
def test_parse_time(text: str, end_of_day: bool, expect: object) -> None:
    assert ix.parse_time(text, now=BASE, end_of_day=end_of_day) == expect


def test_parse_time_dates_are_local_and_until_includes_the_day() -> None:
    start = ix.parse_time("2024-05-01", now=BASE)
    end = ix.parse_time("2024-05-01", now=BASE, end_of_day=True)
    assert end - start == timedelta(days=1)
    assert start.tzinfo is not None
    with pytest.raises(UserInputError, match="cannot read the time 'soon'"):
        ix.parse_time("soon")


def test_a_program_without_a_transcript_gets_exchanges_from_its_input(home: Paths, project: Path) -> None:
    import dataclasses

    events = [(0.1, "o", "$ "), (1.0, "i", "echo deployment\r"), (1.1, "o", "echo deployment\r\ndeployment\r\n$ ")]
    meta = make_session(home, project, 1, events=events)
    write_meta(dataclasses.replace(meta, input_bytes=17))
    ix.index_session(home, read_meta(meta.folder))
    assert not (meta.folder / "exchanges.jsonl").exists()  # the index writes no session file
    housekeeping.run(home, meta.folder, compress=False, auto_gc=False)  # the upkeep after a session builds them
    hits = ix.search(home, ix.SearchRequest("deployment"))
    assert "prompt" in {h.kind for h in hits}
    assert read_meta(meta.folder).exchange_count == 1
    with ix._opened(home) as (conn, _):
        assert conn.execute("SELECT content_key = meta_key FROM sessions").fetchone()[0] == 1
