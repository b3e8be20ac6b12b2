"""Tests for shellkeep/agents/opencode.py: OpenCode's SQLite store, read-only, and ``opencode -s``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.opencode import OpenCodeAdapter, database_paths

from .conftest import DATA, FIXTURE_CWD, reference, requires_reference, utc

SID = "ses_0a1b2c3d4e5fCALCsession0001"
ADAPTER = OpenCodeAdapter()
STARTED = utc("2026-03-14T07:29:00")

# Columns as OpenCode 1.18 creates them (see agents.md); only those the rows use.
SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, sandboxes TEXT NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT,
    slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL,
    share_url TEXT, cost REAL, tokens_input INTEGER, tokens_output INTEGER, tokens_reasoning INTEGER,
    tokens_cache_read INTEGER, tokens_cache_write INTEGER, agent TEXT, model TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
"""


def build_database(path: Path, cwd: str = FIXTURE_CWD, rows_file: Path = DATA / "opencode" / "rows.jsonl") -> Path:
    """Create an OpenCode database at ``path`` (WAL, as OpenCode keeps it) from a rows file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(SCHEMA)
    for line in rows_file.read_text().splitlines():
        entry = json.loads(line)
        row = {k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in entry["row"].items()}
        if entry["table"] == "session" and row["directory"] == FIXTURE_CWD:
            row["directory"] = cwd
        columns = ", ".join(row)
        connection.execute(
            f"INSERT INTO {entry['table']} ({columns}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )
    connection.commit()
    connection.close()
    return path


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Path]:
    yield build_database(tmp_path / "data" / "opencode" / "opencode.db")


def test_reads_exchanges_from_the_database(database: Path) -> None:
    first, second = ADAPTER.read_exchanges(AgentSession("opencode", SID, database))
    # the synthetic reminder part is not part of the prompt
    assert (first.index, first.prompt, first.time) == (0, "Why does divide(1, 0) crash?", "2026-03-14T07:30:02.000Z")
    assert first.answer == "divide() has no zero check; Python raises ZeroDivisionError."
    assert first.tool_calls == (
        ToolCall("read", "/home/bob/work/calc/calc.py"),
        ToolCall("bash", "python -c 'import calc; calc.divide(1, 0)'"),
    )
    assert first.tool_results == ("def divide(a, b): return a / b", "error: ZeroDivisionError: division by zero")
    assert first.usage == Usage(input=8500, output=200, cache_read=4500, cache_write=100)
    assert first.model == "claude-z"
    assert (second.prompt, second.answer, second.model) == (
        "Add the check",
        "Added a ValueError for b == 0.",
        "claude-w",
    )
    assert second.tool_calls == (ToolCall("edit", "/home/bob/work/calc/calc.py"),)
    assert second.tool_results == ("Edit applied",)


def test_limit_and_read_only_access_while_opencode_writes(database: Path) -> None:
    writer = sqlite3.connect(database)  # OpenCode still running, holding the WAL
    writer.execute("INSERT INTO message VALUES ('msg_99', ?, 9, 9, ?)", (SID, json.dumps({"role": "user"})))
    try:
        before = database.read_bytes()
        [last] = ADAPTER.read_exchanges(AgentSession("opencode", SID, database), limit=1)
        assert (last.index, last.prompt) == (0, "Add the check")
        assert database.read_bytes() == before
    finally:
        writer.rollback()
        writer.close()


def test_unreadable_database_gives_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    broken = tmp_path / "opencode.db"
    broken.write_bytes(b"this is not sqlite" * 100)
    assert ADAPTER.read_exchanges(AgentSession("opencode", SID, broken)) == []
    assert ADAPTER.read_exchanges(AgentSession("opencode", SID, tmp_path / "missing.db")) == []
    assert not (tmp_path / "missing.db").exists()  # read-only: never created
    assert "cannot read opencode database" in caplog.text


def test_database_paths_follow_xdg_and_opencode_db(tmp_path: Path, user_home: Path) -> None:
    default = build_database(user_home / ".local" / "share" / "opencode" / "opencode.db")
    assert database_paths({"HOME": str(user_home)}) == [default]
    xdg = tmp_path / "xdg"
    channel = build_database(xdg / "opencode" / "opencode-dev.db")
    assert database_paths({"HOME": str(user_home), "XDG_DATA_HOME": str(xdg)}) == [channel]
    assert database_paths({"HOME": str(user_home), "OPENCODE_DB": str(channel)}) == [channel]
    assert database_paths({"HOME": str(user_home), "OPENCODE_DB": "opencode.db"}) == [default]
    assert database_paths({"HOME": str(user_home), "OPENCODE_DB": ":memory:"}) == []


def test_find_session_takes_the_new_top_level_session_of_the_cwd(user_home: Path, workdir: Path) -> None:
    database = build_database(user_home / ".local" / "share" / "opencode" / "opencode.db", cwd=str(workdir))
    env = {"HOME": str(user_home)}
    assert ADAPTER.find_session(Launch(("opencode",)), workdir, env, STARTED, "") == AgentSession(
        "opencode", SID, database
    )
    # started after the session was created: not new, but updated since (opencode --continue)
    continued = ADAPTER.prepare(["opencode", "-c"], workdir, env)
    assert ADAPTER.find_session(continued, workdir, env, utc("2026-03-14T07:30:30"), "") == AgentSession(
        "opencode", SID, database
    )
    # neither created nor updated after the start: only the exit hint finds it
    late = utc("2026-03-15T00:00:00")
    assert ADAPTER.find_session(Launch(("opencode",)), workdir, env, late, "") is None
    screen = f"  Session   Guard divide\n  Continue  opencode -s {SID}\n"
    assert ADAPTER.find_session(Launch(("opencode",)), workdir, env, late, screen) == AgentSession(
        "opencode", SID, database
    )
    chosen = ADAPTER.prepare(["opencode", "--session", SID], workdir, env)
    assert chosen.agent_session_id == SID and chosen.argv == ("opencode", "--session", SID)
    assert ADAPTER.find_session(chosen, workdir, env, late, "") == AgentSession("opencode", SID, database)


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        (["opencode"], ["opencode", "-s", SID]),
        (
            ["opencode", "-c", "--model", "anthropic/claude-z", "."],
            ["opencode", "--model", "anthropic/claude-z", ".", "-s", SID],
        ),
        (["opencode", "--session", "ses_old", "--fork", "--prompt", "hi"], ["opencode", "-s", SID]),
        (["npx", "opencode-ai@latest"], ["npx", "opencode-ai@latest", "-s", SID]),
    ],
    ids=["bare", "keeps-project-dir", "drops-session-fork-prompt", "npx"],
)
def test_resume_argv(database: Path, original: list[str], expected: list[str]) -> None:
    assert ADAPTER.resume_argv(original, AgentSession("opencode", SID, database)) == expected


def test_prepare_and_transcript_files(database: Path, workdir: Path) -> None:
    assert ADAPTER.prepare(["opencode"], workdir, {}) == Launch(("opencode",))
    assert ADAPTER.transcript_files(AgentSession("opencode", SID, database)) == []
    assert ADAPTER.matches(["opencode", "run", "x"]) and not ADAPTER.matches(["open"])


@requires_reference
def test_reads_the_reference_sample(tmp_path: Path) -> None:
    rows = reference("opencode", "opencode.db.rows.jsonl")
    database = build_database(tmp_path / "opencode.db", rows_file=rows)
    [session_id] = [
        json.loads(line)["row"]["id"] for line in rows.read_text().splitlines() if '"table":"session"' in line
    ]
    [exchange] = ADAPTER.read_exchanges(AgentSession("opencode", session_id, database))
    assert exchange.prompt == "Why does test_parse fail?"
    assert exchange.answer == "parse() must strip whitespace before int()."
    assert exchange.tool_calls == (ToolCall("bash", "pytest -q tests/test_parse.py"),)
    assert exchange.tool_results == ("F ValueError: invalid literal for int()",)
    assert exchange.usage == Usage(input=14475, output=216, cache_read=2432, cache_write=0)
    assert exchange.model == "claude-x"


def _two_sessions(path: Path, cwd: Path) -> None:
    """Add two top-level sessions of ``cwd``, one prompt each, created 1 s and 2 s after ``STARTED``."""
    connection = sqlite3.connect(path)
    start_ms = int(STARTED.timestamp() * 1000)
    for n, (sid, prompt) in enumerate((("ses_A", "the word for session A is plum"), ("ses_B", "the word for session B is pear")), 1):
        at = start_ms + n * 1000
        connection.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, 'prj', ?, ?, 'title', '1.18.33', ?, ?)",
            (sid, sid, str(cwd), at, at),
        )
        for kind, role, text in (("u", "user", prompt), ("a", "assistant", f"noted: {prompt.split()[-1]}")):
            message = f"msg_{sid}_{kind}"
            connection.execute(
                "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
                (message, sid, at, at, json.dumps({"role": role, "time": {"created": at}})),
            )
            connection.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
                (f"prt_{message}", message, sid, at, at, json.dumps({"type": "text", "text": text})),
            )
    connection.commit()
    connection.close()


def test_two_sessions_in_one_folder_are_told_apart_by_what_each_screen_shows(user_home: Path, workdir: Path) -> None:
    path = build_database(user_home / ".local" / "share" / "opencode" / "opencode.db", cwd="/elsewhere")
    _two_sessions(path, workdir)
    env = {"HOME": str(user_home)}

    def found(screen: str) -> str | None:
        session = ADAPTER.find_session(Launch(("opencode",)), workdir, env, STARTED, screen)
        return None if session is None else session.session_id

    # Both were created after the launch, in the same folder: the time cannot tell them apart.
    assert found("┃  the word for session A is plum\n┃  noted: plum\n") == "ses_A"  # the older one
    assert found("┃  the word for session B is pear\n") == "ses_B"
    # A prompt wrapped over two screen lines still counts.
    assert found("┃  the word for session A\n┃  is plum\n") == "ses_A"
    # The exit hint names it, even when the screen shows the other session's prompt.
    assert found("the word for session B is pear\n  Continue  opencode -s ses_A\n") == "ses_A"
    # Nothing on screen tells: the newest.
    assert found("") == "ses_B"


# -- real databases: rows OpenCode itself wrote (tests/data/agents/opencode/opencode-<version>.sql) --

REAL_CWD = "/home/user/project"
"""The project folder of the real fixtures (scripts/opencode-fixture put it in place of a temporary one)."""


def load_real_database(path: Path, version: str, cwd: Path) -> Path:
    """Create ``path`` (WAL) from the SQL fixture of a real OpenCode ``version`` run in ``cwd``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    script = (DATA / "opencode" / f"opencode-{version}.sql").read_text()
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(script.replace(REAL_CWD, str(cwd)).replace(REAL_CWD.lstrip("/"), str(cwd).lstrip("/")))
    connection.close()
    return path


@pytest.mark.parametrize("version", OpenCodeAdapter.tested_versions)
def test_reads_what_real_opencode_wrote(user_home: Path, workdir: Path, version: str) -> None:
    database = load_real_database(user_home / ".local" / "share" / "opencode" / "opencode.db", version, workdir)
    connection = sqlite3.connect(database)
    [(session_id, written_by, created_ms)] = connection.execute("SELECT id, version, time_created FROM session")
    connection.close()
    assert written_by == version
    started = datetime.fromtimestamp(created_ms / 1000 - 5, tz=timezone.utc)
    # OpenCode takes no id up front: the new top-level session of the cwd is it
    found = ADAPTER.find_session(Launch(("opencode",)), workdir, {"HOME": str(user_home)}, started, "")
    assert found == AgentSession("opencode", session_id, database)
    exchanges = ADAPTER.read_exchanges(found)
    words = ("first word is plum", "second word is pear", "third word is quince")
    assert [(e.index, e.prompt, e.answer) for e in exchanges] == [
        (n, f"the {w}", f"Echo: the {w}") for n, w in enumerate(words)
    ]
    assert [e.usage for e in exchanges] == [Usage(input=8070, output=6), Usage(input=8099, output=6), Usage(input=8128, output=6)]
    assert {e.model for e in exchanges} == {"mock-model"}
    assert all(e.time is not None and e.time.startswith("2026-12-03T") for e in exchanges)
    assert [e.prompt for e in ADAPTER.read_exchanges(found, limit=1)] == [f"the {words[-1]}"]


@pytest.mark.parametrize("version", OpenCodeAdapter.tested_versions)
def test_a_session_that_lost_part_of_its_conversation_is_no_native_resume(user_home: Path, workdir: Path, version: str) -> None:
    """``opencode -s`` sends a prompt without its answer when the answer's ``part`` row is gone
    (as a lost page of the database leaves it): shellkeep calls that a problem and re-injects."""
    database = load_real_database(user_home / ".local" / "share" / "opencode" / "opencode.db", version, workdir)
    connection = sqlite3.connect(database)
    [(session_id,)] = connection.execute("SELECT id FROM session")
    connection.close()
    env = {"HOME": str(user_home)}
    assert ADAPTER.native_resume_problem(AgentSession("opencode", session_id, database), env) is None
    unknown = ADAPTER.native_resume_problem(AgentSession("opencode", "ses_gone", database), env)
    assert unknown == f"OpenCode's database {database} holds no session ses_gone"
    with sqlite3.connect(database) as connection:
        connection.execute(
            "DELETE FROM part WHERE session_id = ? AND json_extract(data, '$.text') = 'Echo: the first word is plum'", (session_id,)
        )
    connection.close()
    problem = ADAPTER.native_resume_problem(AgentSession("opencode", session_id, database), env)
    assert problem == f"OpenCode's database {database} has lost the content of message 2 (assistant) of session {session_id}"
