"""Version the schema of ``index.sqlite3``: one SQL script per version, applied in order.

``PRAGMA user_version`` holds the version of an index. ``migrate`` upgrades an older one in
one ``BEGIN IMMEDIATE`` transaction (so two processes opening a new index at once do not
both create it) and refuses a newer one with ``DataError``. A script is appended for each
change; a released script is never edited.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.errors import DataError

if TYPE_CHECKING:
    import sqlite3

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migrate", "statements"]

_V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,            -- the session folder's name (its id)
    project TEXT NOT NULL,          -- the project folder's name (its key)
    folder TEXT NOT NULL,
    name TEXT,
    agent TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at TEXT NOT NULL,       -- ISO 8601 UTC, as in meta.json
    started_s REAL NOT NULL,        -- the same as seconds since the Unix epoch
    ended_at TEXT,
    duration REAL,
    exit_code INTEGER,
    exchange_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER,
    output_tokens INTEGER,
    meta_key TEXT NOT NULL,         -- "mtime_ns:size" of meta.json when it was read
    content_key TEXT                -- meta_key when chunks and markers were indexed
);
CREATE INDEX sessions_by_project ON sessions (project, started_s);
CREATE INDEX sessions_by_start ON sessions (started_s);
CREATE INDEX sessions_by_status ON sessions (status);

-- meta.json as read, apart from the listed columns so that listing scans small rows.
CREATE TABLE session_json (
    id TEXT PRIMARY KEY,
    meta_json TEXT NOT NULL
);

CREATE TABLE projects (
    name TEXT PRIMARY KEY,
    dir_key TEXT NOT NULL           -- "mtime_ns:size" of the project folder at its last scan
);

CREATE TABLE markers (
    session_id TEXT NOT NULL,
    n INTEGER NOT NULL,             -- 1-based
    time_s REAL NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (session_id, n)
);

CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,             -- transcript, prompt, answer, marker
    ref INTEGER,                    -- 1-based exchange or marker number
    time_s REAL NOT NULL,           -- seconds since the session's start
    times TEXT NOT NULL DEFAULT '', -- per line of a transcript chunk, space-separated
    text TEXT NOT NULL
);
CREATE INDEX chunks_by_session ON chunks (session_id);

CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""

_V2 = """
-- Where each session's project was and which git repository it is (meta.json
-- project_root and git_identity), so that a project moved or renamed on disk finds its
-- sessions recorded at the former path. Sessions indexed before have none: they never had
-- a git identity in their meta.json.
ALTER TABLE sessions ADD COLUMN project_root TEXT;
ALTER TABLE sessions ADD COLUMN git_remote TEXT;
ALTER TABLE sessions ADD COLUMN git_root_commit TEXT;
CREATE INDEX sessions_by_git_remote ON sessions (git_remote);
CREATE INDEX sessions_by_git_root_commit ON sessions (git_root_commit);
"""

_V3 = """
-- git_remote holds git.identity.remote_key of the remote: lower-cased on the hosts whose
-- repository paths ignore case (git.identity.CASE_INSENSITIVE_HOSTS as of this version), so
-- that GitHub.com/Owner/Repo finds github.com/owner/repo. normalise_remote already
-- lower-cased the host; rows indexed before keep the path's case until rewritten here.
UPDATE sessions SET git_remote = lower(git_remote)
    WHERE substr(git_remote, 1, instr(git_remote || '/', '/') - 1) IN ('github.com', 'gitlab.com', 'bitbucket.org');
"""

_V4 = """
-- Token usage per session and model, summed from the session's exchanges.jsonl (or its
-- meta.json usage when the exchanges cannot be read), for 'shellkeep stats'. model is ''
-- when the agent named none. usage_key is the session's meta_key when its rows were
-- written; sessions indexed before have none and are read on the first stats.
CREATE TABLE usage (
    session_id TEXT NOT NULL,
    model TEXT NOT NULL,
    exchanges INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    PRIMARY KEY (session_id, model)
);
ALTER TABLE sessions ADD COLUMN usage_key TEXT;
"""

_V5 = """
-- How much of each session is kept (meta.json detail, record.detail): 'full',
-- 'conversation' or 'metadata', for the table of 'shellkeep ls'. Sessions indexed before
-- have none: they all kept everything (NULL reads as 'full').
ALTER TABLE sessions ADD COLUMN detail TEXT;
"""

_V6 = """
-- Bytes typed into each session (meta.json input_bytes), so that 'ls' can hide the sessions
-- shorter than a second with no input (store.session.is_trivial) in SQL. Rows indexed before
-- take it from their stored meta.json; sealed ones have none (NULL: never hidden) until
-- their meta.json changes.
ALTER TABLE sessions ADD COLUMN input_bytes INTEGER;
UPDATE sessions SET input_bytes = (
    SELECT json_extract(j.meta_json, '$.input_bytes') FROM session_json j WHERE j.id = sessions.id
);
"""

_V7 = """
-- The session each run resumes (meta.json parent, unless its native resume failed:
-- resume_failed), so that 'ls', the picker and the web list show an original as "resumed as
-- <id>". Rows indexed before take it from their stored meta.json; sealed ones have none until
-- their meta.json changes.
ALTER TABLE sessions ADD COLUMN resumes TEXT;
CREATE INDEX sessions_by_resumes ON sessions (resumes);
UPDATE sessions SET resumes = (
    SELECT CASE WHEN json_extract(j.meta_json, '$.resume_failed') IS NULL THEN json_extract(j.meta_json, '$.parent') END
    FROM session_json j WHERE j.id = sessions.id
);
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7)
"""Script ``i`` takes an index from version ``i`` to ``i + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)


def statements(script: str) -> list[str]:
    """Split an SQL script into complete statements (trigger bodies kept whole)."""
    import sqlite3

    found: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    if pending.strip():
        found.append(pending.strip())
    return found


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Bring the index on ``conn`` (in autocommit mode) to ``SCHEMA_VERSION``.

    Raises DataError when the index was written by a newer shellkeep.
    """
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return
    _refuse_newer(version, path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        _refuse_newer(version, path)
        for script in MIGRATIONS[version:]:
            for statement in statements(script):
                conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _refuse_newer(version: int, path: Path) -> None:
    if version > SCHEMA_VERSION:
        raise DataError(
            f"{path} was written by a newer shellkeep (index schema {version}, this one reads up to "
            f"{SCHEMA_VERSION}); upgrade shellkeep, or delete {path.name} to rebuild it"
        )
