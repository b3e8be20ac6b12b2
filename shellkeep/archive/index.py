"""Own ``index.sqlite3``: the connection, its repair, and the rows of one session.

The session folders (``meta.json``, ``session.cast`` or ``session.cast.zst``, ``exchanges.jsonl``) are the truth;
this index only makes listing and full-text search fast. It is kept current three ways:
a session is indexed when it ends or is recovered (``index_ended_session``, here), every read
re-scans the project folders whose modification time changed and re-reads sessions still
marked running (``archive.scan.sync``), and ``archive.scan.rebuild`` makes it again from the
folders alone. A missing index is rebuilt with one warning; a corrupt one is removed and
rebuilt the same way. The readers sit beside it: ``archive.listing``, ``archive.search``,
``archive.usage``, ``archive.health``; what a session adds to the full-text index is
``archive.content``'s.

SQLite in WAL mode with a busy timeout; every write is one short ``BEGIN IMMEDIATE``
transaction made after the slow work (rendering with pyte) is done, so many recorders
ending at once wait their turn instead of failing with "database is locked". The schema
is versioned in ``PRAGMA user_version`` and upgraded by ``shellkeep.archive.migrations``;
an index written by a newer shellkeep raises ``DataError``.

Full-text search is SQLite FTS5 (sqlite.org/fts5.html) over ``chunks``: transcript lines
in groups (``kind`` ``transcript``), prompts, answers and marker labels, ranked by bm25.
An encrypted session (``archive/private_search.py``) has its ``sessions`` row only: no
``chunks``, no ``markers`` and no copy of its ``meta.json`` in ``session_json`` (readers take
that from the folder); its text is kept encrypted beside it as ``search.jsonl`` and searched
there, so none of its recorded text or command line reaches this file. ``secure_delete``
is on: rows deleted from the tables (a re-index, ``shellkeep redact``, gc) are overwritten
instead of lingering in free pages.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from shellkeep.archive.content import Content, indexed_content
from shellkeep.archive.migrations import migrate
from shellkeep.errors import DataError, ShellkeepError
from shellkeep.git.identity import GitIdentity, remote_key
from shellkeep.logs import get_logger
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import META_FILE, Recover, SessionMeta, Status, parse_iso, read_meta
from shellkeep.store.space import DISK_FULL, READ_ONLY, has_no_room, is_read_only
from shellkeep.vault.access import Vault
from shellkeep.vault.crypto import MAGIC

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "BUSY_TIMEOUT_S",
    "Sources",
    "forget_content",
    "forget_sessions",
    "index_ended_session",
    "index_ended_sessions",
    "index_session",
    "is_full",
]

log = get_logger(__name__)

_T = TypeVar("_T")

BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another one's transaction before giving up, in seconds."""

BATCH_SESSIONS = 100  # sessions written per transaction by rebuild and catch-up
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


# -- records -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Folder:
    """A session folder found on disk: its project key, session id (folder name), path and
    the stat key of its ``meta.json`` (``mtime_ns:size``)."""

    project: str
    session_id: str
    path: Path
    meta_key: str


# -- opening, migrating, repairing ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sources:
    """What the index reads session folders with.

    paths: where they are. vault: the keys for sealed sessions. recover: repairs a session
    whose recorder is gone (``app.context.Context.recover``); None lists it as interrupted
    without writing anything. Building the index never writes a session file itself.
    """

    paths: Paths
    vault: Vault
    recover: Recover | None = None


def sources_for(paths: Paths, vault: Vault | None, recover: Recover | None) -> Sources:
    """Return the ``Sources`` of a command: its vault, else one over the default key stores."""
    return Sources(paths, vault if vault is not None else Vault(paths), recover)


def connect(path: Path) -> sqlite3.Connection:
    """Open the index at ``path`` (made 0600 if new) in WAL mode and migrate its schema.

    On a file system mounted read-only an existing index is opened immutable (SQLite's
    ``immutable=1``: no lock, no WAL index to create), so reads work; any write fails.
    """
    import sqlite3
    from urllib.parse import quote

    if path.is_file() and path.stat().st_size and is_read_only(path):
        conn = sqlite3.connect(f"file:{quote(str(path))}?immutable=1", uri=True, isolation_level=None)
        try:
            migrate(conn, path)
        except BaseException:
            conn.close()
            raise
        return conn
    ensure_dir(path.parent)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA secure_delete = ON")  # deleted text is zeroed, not left in free pages
        conn.execute("PRAGMA foreign_keys = OFF")
        migrate(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def _is_corrupt(exc: BaseException) -> bool:
    """Return whether a sqlite3 error says the file is damaged or not a database at all."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CORRUPT_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def _remove_index(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            Path(f"{path}{suffix}").unlink()
        except FileNotFoundError:
            pass


_rebuilding: set[Path] = set()  # indexes announced as corrupt in this process
_first_builds: set[Path] = set()  # indexes built for the first time in their data folder, in this process


def is_unannounced_rebuild(path: Path) -> bool:
    """Return whether a fresh index at ``path`` is a rebuild no warning named yet: neither
    its first build in its data folder nor a corrupt one announced, in this process."""
    return path not in _rebuilding and path not in _first_builds


@contextmanager
def opened(paths: Paths) -> Iterator[tuple[sqlite3.Connection, bool]]:
    """Yield (connection, fresh); fresh is True when the index was missing or unreadable.

    A corrupt index (not a database, malformed) is removed first with one warning.
    Raises DataError for an index from a newer shellkeep; ShellkeepError when it cannot
    be opened at all.
    """
    import sqlite3

    path = paths.index
    built_before = paths.index_mark.exists()  # read before the index: the mark is made after it
    fresh = not path.exists() or path.stat().st_size == 0
    if fresh and not built_before:
        _first_builds.add(path)  # a first build, not a rebuild: nothing to warn about
    else:
        _first_builds.discard(path)
    try:
        conn = connect(path)
    except sqlite3.DatabaseError as exc:
        if not _is_corrupt(exc):
            raise _open_error(path, exc) from exc
        log.warning("%s is corrupt (%s); rebuilding it from the session folders", path.name, exc)
        _rebuilding.add(path)
        _remove_index(path)
        fresh = True
        try:
            conn = connect(path)
        except sqlite3.DatabaseError as again:
            raise _open_error(path, again) from again
    except OSError as exc:
        if is_read_only(path) or is_full(exc, path):
            raise _open_error(path, exc) from exc
        raise ShellkeepError(f"cannot open {path} ({exc.strerror or exc}); check the data directory's permissions") from exc
    if not built_before:
        _mark_built(paths)
    try:
        yield conn, fresh
    finally:
        conn.close()


def _mark_built(paths: Paths) -> None:
    """Leave ``paths.index_mark`` (also beside an index older than the mark); a failure only logs."""
    try:
        os.close(os.open(paths.index_mark, os.O_WRONLY | os.O_CREAT, FILE_MODE))
    except OSError as exc:
        log.debug("cannot write %s: %s", paths.index_mark, exc)


def _open_error(path: Path, exc: BaseException) -> ShellkeepError:
    if is_read_only(path):  # a reindex cannot write there either
        return ShellkeepError(f"cannot use {path}: {READ_ONLY}; remount it read-write to update the index")
    if is_full(exc, path):  # nor on a full disk: the index is sound, the space is missing
        return ShellkeepError(f"cannot use {path}: {DISK_FULL}; free some space ('shellkeep gc' removes old sessions)")
    return ShellkeepError(f"cannot use {path} ({exc}); run 'shellkeep reindex'")


def is_full(exc: BaseException, path: Path | None = None) -> bool:
    """Return whether ``exc`` says the disk is full: ``ENOSPC``, SQLite's ``SQLITE_FULL`` (13),
    or, with the ``path`` it was about, an I/O error (``SQLITE_IOERR``, 10, or ``EIO``) while
    that file system has no room (``store.space.has_no_room``): SQLite says "disk I/O error"
    when its shared memory or write-ahead log cannot grow."""
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOSPC or (path is not None and exc.errno == errno.EIO and has_no_room(path))
    code = getattr(exc, "sqlite_errorcode", None)
    if code == _SQLITE_FULL or "database or disk is full" in str(exc):
        return True
    is_io = code & 0xFF == _SQLITE_IOERR if code is not None else "disk i/o error" in str(exc).lower()
    return path is not None and is_io and has_no_room(path)


_SQLITE_FULL = 13
_SQLITE_IOERR = 10


def _redo_hint(exc: BaseException, path: Path) -> str:
    """Return who indexes a session that could not be: the next command once the disk has
    space again (a reindex would not help on a full disk), else ``shellkeep reindex``."""
    if is_full(exc, path) or DISK_FULL in str(exc):
        return "the next command indexes it once the disk has space"
    return "'shellkeep reindex' will"


def with_index(paths: Paths, work: Callable[[sqlite3.Connection, bool], _T]) -> _T:
    """Run ``work(conn, fresh)`` on the index; rebuild and retry once if it turns out corrupt."""
    import sqlite3

    for attempt in (1, 2):
        with opened(paths) as (conn, fresh):
            try:
                return work(conn, fresh)
            except sqlite3.DatabaseError as exc:
                if attempt == 2 or not _is_corrupt(exc):
                    raise _open_error(paths.index, exc) from exc
                log.warning("%s is corrupt (%s); rebuilding it from the session folders", paths.index.name, exc)
                _rebuilding.add(paths.index)
        _remove_index(paths.index)
    raise AssertionError("unreachable")


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block as one ``BEGIN IMMEDIATE`` transaction (waits up to the busy timeout)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# -- the rows of one session --------------------------------------------------------------


def stat_key(path: Path) -> str | None:
    """Return ``mtime_ns:size`` of ``path``, what tells the index a file changed; None if it is gone."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return f"{st.st_mtime_ns}:{st.st_size}"


def started_s(meta: SessionMeta) -> float:
    """Return a session's start in seconds since the epoch (0.0 when unreadable)."""
    try:
        return parse_iso(meta.started_at).timestamp()
    except ValueError:
        return 0.0


def _session_row(folder: Folder, meta: SessionMeta) -> dict[str, object]:
    """Return the ``sessions`` columns of a session."""
    usage = meta.usage or {}
    identity = GitIdentity.from_json(meta.git_identity)
    return {
        "id": folder.session_id,
        "project": folder.project,
        "folder": str(folder.path),
        "name": meta.name,
        "agent": meta.agent,
        "status": meta.status,
        "started_at": meta.started_at,
        "started_s": started_s(meta),
        "ended_at": meta.ended_at,
        "duration": meta.duration,
        "exit_code": meta.exit_code,
        "exchange_count": meta.exchange_count,
        "input_bytes": meta.input_bytes,
        "input_tokens": usage.get("input"),
        "output_tokens": usage.get("output"),
        "meta_key": folder.meta_key,
        "project_root": meta.project_root,
        "git_remote": remote_key(identity.remote) if identity and identity.remote else None,
        "git_root_commit": identity.root_commit if identity else None,
        # What 'ls' shows under KEPT: an agent's own session imported (app.history_import) kept no recording either.
        "detail": "imported" if isinstance(meta.extra.get("imported_from_agent"), str) else meta.detail,
        "resumes": None if meta.resume_failed else meta.parent,  # a failed native resume resumed nothing
    }


_UPSERT = """
INSERT INTO sessions (id, project, folder, name, agent, status, started_at, started_s, ended_at,
    duration, exit_code, exchange_count, input_tokens, output_tokens, meta_key, project_root, git_remote,
    git_root_commit, detail, input_bytes, resumes)
VALUES (:id, :project, :folder, :name, :agent, :status, :started_at, :started_s, :ended_at,
    :duration, :exit_code, :exchange_count, :input_tokens, :output_tokens, :meta_key, :project_root, :git_remote,
    :git_root_commit, :detail, :input_bytes, :resumes)
ON CONFLICT(id) DO UPDATE SET project = excluded.project, folder = excluded.folder,
    name = excluded.name, agent = excluded.agent, status = excluded.status,
    started_at = excluded.started_at, started_s = excluded.started_s, ended_at = excluded.ended_at,
    duration = excluded.duration, exit_code = excluded.exit_code,
    exchange_count = excluded.exchange_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, meta_key = excluded.meta_key,
    project_root = excluded.project_root, git_remote = excluded.git_remote,
    git_root_commit = excluded.git_root_commit, detail = excluded.detail, input_bytes = excluded.input_bytes,
    resumes = excluded.resumes
"""


def store_session(conn: sqlite3.Connection, folder: Folder, meta: SessionMeta, content: Content | None) -> None:
    """Write one session's row (and its content when given); call inside ``write_transaction``.

    ``meta.json`` is copied to ``session_json`` only when the recording is known to be plain.
    """
    if is_plain(meta):
        meta_json = json.dumps(meta.to_json(), ensure_ascii=False)
        conn.execute("INSERT OR REPLACE INTO session_json (id, meta_json) VALUES (?, ?)", (folder.session_id, meta_json))
    else:
        conn.execute("DELETE FROM session_json WHERE id = ?", (folder.session_id,))
    conn.execute(_UPSERT, _session_row(folder, meta))
    if content is None:
        return
    sid = folder.session_id
    conn.execute("DELETE FROM chunks WHERE session_id = ?", (sid,))
    conn.execute("DELETE FROM markers WHERE session_id = ?", (sid,))
    conn.executemany(
        "INSERT INTO chunks (session_id, kind, ref, time_s, times, text) VALUES (?, ?, ?, ?, ?, ?)",
        [(sid, kind, ref, at, stamps, text) for kind, ref, at, stamps, text in content.chunks],
    )
    conn.executemany(
        "INSERT INTO markers (session_id, n, time_s, label) VALUES (?, ?, ?, ?)",
        [(sid, m.n, m.time_s, m.label) for m in content.markers],
    )
    conn.execute("UPDATE sessions SET content_key = meta_key WHERE id = ?", (sid,))


def is_plain(meta: SessionMeta) -> bool:
    """Return whether a session's recording is known to be plain (not encrypted).

    A recording too short to tell (a session just started: the encrypted header is
    written with the first record) or unreadable counts as not plain.
    """
    try:
        with open(meta.cast, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError:
        return False
    return len(head) == len(MAGIC) and head != MAGIC


def meta_json_of(folder: str, meta_json: str | None) -> str | None:
    """Return a session's ``meta.json`` text: as indexed, else read from its folder (a
    session the index keeps no copy of); None, with a logged warning, when unreadable."""
    if meta_json is not None:
        return meta_json

    try:
        return json.dumps(read_meta(Path(folder)).to_json(), ensure_ascii=False)
    except (OSError, DataError) as exc:
        log.warning("skipping %s: %s", folder, exc)
        return None


def delete_rows(conn: sqlite3.Connection, session_ids: Sequence[str]) -> None:
    """Delete every row of ``session_ids``; call inside ``write_transaction``."""
    for sid in session_ids:
        conn.execute("DELETE FROM chunks WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM markers WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        conn.execute("DELETE FROM session_json WHERE id = ?", (sid,))
        conn.execute("DELETE FROM usage WHERE session_id = ?", (sid,))


def forget_sessions(paths: Paths, session_ids: Sequence[str]) -> None:
    """Delete the index rows of ``session_ids`` (sessions whose folders were removed).

    The folders are the truth; a row left behind would only be dropped at the next scan.
    Raises ShellkeepError when the index cannot be written.
    """

    def work(conn: sqlite3.Connection, fresh: bool) -> None:
        with write_transaction(conn):
            delete_rows(conn, session_ids)

    with_index(paths, work)


def forget_content(paths: Paths, session_ids: Sequence[str]) -> None:
    """Mark the indexed text of ``session_ids`` stale, so the next search renders it again.

    For a session whose files changed without its ``meta.json`` changing (a pulled
    session's recording, fetched after it was indexed). Nothing happens without an index.
    Raises ShellkeepError when the index cannot be written.
    """
    if not paths.index.exists() or not session_ids:
        return

    def work(conn: sqlite3.Connection, fresh: bool) -> None:
        with write_transaction(conn):
            conn.executemany("UPDATE sessions SET content_key = NULL WHERE id = ?", [(sid,) for sid in session_ids])

    with_index(paths, work)


def is_final(meta: SessionMeta) -> bool:
    """Return whether a session ended (its content can be indexed)."""
    return meta.status != Status.RUNNING.value


# -- indexing one session now --------------------------------------------------------------


def _folder_of(meta: SessionMeta) -> Folder | None:
    folder = meta.folder
    key = stat_key(folder / META_FILE)
    if key is None:
        return None
    return Folder(folder.parent.name, folder.name, folder, key)


def index_session(paths: Paths, meta: SessionMeta, *, vault: Vault | None = None) -> None:
    """Index one session now: metadata, and transcript, markers and exchanges once it ended.

    vault: the keys to read a sealed session with (None: the default key stores).
    Blocks while the recording is rendered (about 5 MB/s), then for one short write.
    Raises ShellkeepError when the index cannot be written, DataError when it is newer.
    """
    folder = _folder_of(meta)
    if folder is None:
        return
    content = None
    if is_final(meta):
        content = indexed_content(sources_for(paths, vault, None).vault, meta)

    def work(conn: sqlite3.Connection, fresh: bool) -> None:
        with write_transaction(conn):
            store_session(conn, folder, meta, content)

    with_index(paths, work)


def index_ended_sessions(paths: Paths, metas: Sequence[SessionMeta], *, vault: Vault | None = None) -> None:
    """Index several ended sessions in one write transaction (an import of many); never raises (logs a warning).

    Their content is rendered first, then written at once: one transaction, not one a session.
    """
    try:
        src = sources_for(paths, vault, None)
        prepared = [
            (folder, meta, indexed_content(src.vault, meta) if is_final(meta) else None)
            for meta in metas
            if (folder := _folder_of(meta)) is not None
        ]

        def work(conn: sqlite3.Connection, fresh: bool) -> None:
            with write_transaction(conn):
                for folder, meta, content in prepared:
                    store_session(conn, folder, meta, content)

        if prepared:
            with_index(paths, work)
    except Exception as exc:  # noqa: BLE001 - the sessions are safe on disk; reindex can redo this
        log.warning("could not index %d sessions (%s); %s", len(metas), exc, _redo_hint(exc, paths.index))


def index_ended_session(paths: Paths, meta: SessionMeta, *, vault: Vault | None = None) -> None:
    """Index a session that just ended or was recovered; never raises (logs a warning).

    The hook for the upkeep after a session (``app.housekeeping``).
    """
    try:
        index_session(paths, meta, vault=vault)
    except Exception as exc:  # noqa: BLE001 - the session is safe on disk; reindex can redo this
        log.warning("could not index session %s (%s); %s", meta.id, exc, _redo_hint(exc, paths.index))


def meta_from_json(text: str, folder: Path) -> SessionMeta:
    """Build a session's metadata from its ``meta.json`` text as indexed."""
    return SessionMeta.from_json(json.loads(text), folder)

