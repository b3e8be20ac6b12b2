"""Own ``index.sqlite3``: the derived, rebuildable index of sessions, transcripts and markers.

The session folders (``meta.json``, ``session.cast`` or ``session.cast.zst``, ``exchanges.jsonl``) are the truth;
this index only makes listing and full-text search fast. It is kept current three ways:
a session is indexed when it ends or is recovered (``index_ended_session``), every read
re-scans the project folders whose modification time changed and re-reads sessions still
marked running (``sync``), and ``rebuild`` makes it again from the folders alone. A missing
index is rebuilt with one warning; a corrupt one is removed and rebuilt the same way.

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

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from shellkeep.archive.fts import fts_query as fts_query  # the query language, used by tests and callers
from shellkeep.archive.fts import select_hits
from shellkeep.archive.hits import SearchHit
from shellkeep.archive.private_search import is_private, missing_keys_line, save_content, search_private
from shellkeep.errors import DataError, KeyUnavailable, ShellkeepError, UserInputError
from shellkeep.git.identity import GitIdentity, remote_key
from shellkeep.logs import get_logger
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.space import READ_ONLY, is_read_only
from shellkeep.store.session import (
    META_FILE,
    CUT_SHORT_STATUSES,
    SHORT_SESSION_S,
    Recover,
    SessionMeta,
    Status,
    is_interrupted,
    is_trivial,
    list_sessions,
    parse_iso,
    read_meta,
    readable_text,
)
from shellkeep.vault.access import Vault
from shellkeep.archive.migrations import SCHEMA_VERSION, migrate
from shellkeep.vault.crypto import MAGIC, key_id_of_file

if TYPE_CHECKING:
    from shellkeep.archive.timeline import Marker
    from shellkeep.asciicast.model import Event
    import sqlite3

__all__ = [
    "BUSY_TIMEOUT_S",
    "RebuildResult",
    "SearchHit",
    "IndexHealth",
    "SearchRequest",
    "SessionQuery",
    "USAGE_GROUPS",
    "UsageGroup",
    "UsageReport",
    "UsageTokens",
    "index_ended_session",
    "index_ended_sessions",
    "index_health",
    "index_in_background",
    "index_session",
    "ListedSession",
    "find_sessions",
    "forget_sessions",
    "git_projects",
    "list_indexed",
    "parse_time",
    "rebuild",
    "search",
    "usage_report",
]

log = get_logger(__name__)

_T = TypeVar("_T")

BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another one's transaction before giving up, in seconds."""

MAX_TRANSCRIPT_CHARS = 16_000_000
"""Most transcript characters indexed per session; the rest of a huge recording is still
replayable and exportable, only not searchable."""

CHUNK_LINES = 20
CHUNK_CHARS = 2_000
_BATCH_SESSIONS = 100  # sessions written per transaction by rebuild and catch-up
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


# -- records -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionQuery:
    """Which sessions ``list_indexed`` returns, newest first.

    project: a project key (folder name under ``projects/``), or None for every project.
    agents / statuses: keep sessions whose agent / status is one of these (empty: any).
    since / until: aware datetimes; a session counts by its start (since <= start < until).
    name: the session's name contains this text (case-insensitive), or matches it as a
    glob when it holds ``*``, ``?`` or ``[``. limit: at most this many (None: all).
    trivial: False leaves out the sessions shorter than a second with no input
    (``store.session.is_trivial``), True keeps only those, None (the default) keeps both.
    also_projects: more project keys listed with ``project`` (the same repository recorded
    at a former path: ``app.moves.moved_projects``); ignored when ``project`` is None.
    """

    project: str | None = None
    also_projects: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    name: str | None = None
    limit: int | None = None
    trivial: bool | None = None


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A full-text search: ``query`` in the syntax of ``fts.parse_query``; filters as in
    ``SessionQuery`` (project None: every project; ``also_projects`` searched with it, the
    same repository at former paths); ``limit``: most hits returned."""

    query: str
    project: str | None = None
    also_projects: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    since: datetime | None = None
    limit: int = 20


@dataclass(slots=True, eq=True)  # not frozen: a frozen __init__ takes 7x as long (19 ms per 10,000 rows)
class ListedSession:
    """A session as ``ls`` lists it: the columns of its table, and ``meta.json`` as stored
    (``meta_json``, None unless asked for: reading it costs most of a 10 000-row listing).
    plain: its recording is known to be plain (False: encrypted, or too new to tell).

    ``to_json()`` returns the ``meta.json`` object (the ``ls --json`` contract); ``meta()``
    builds the full ``SessionMeta``. Both need ``meta_json``.
    """

    id: str
    name: str | None
    agent: str
    status: str
    started_at: str
    duration: float | None
    exit_code: int | None
    project: str
    folder: str
    meta_json: str | None = field(default=None, repr=False)
    plain: bool = True
    detail: str = "full"  # meta.json detail (record.detail); "imported" for an agent's own session imported

    def to_json(self) -> dict[str, object]:
        """Return the session's ``meta.json`` object; raises ValueError without ``meta_json``."""
        if self.meta_json is None:
            raise ValueError("listed without its metadata; pass full=True")
        obj: dict[str, object] = json.loads(self.meta_json)
        return obj

    def meta(self) -> SessionMeta:
        """Return the full metadata; raises ValueError without ``meta_json``."""
        if self.meta_json is None:
            raise ValueError("listed without its metadata; pass full=True")
        return _meta_from_json(self.meta_json, Path(self.folder))

    @classmethod
    def of(cls, meta: SessionMeta) -> ListedSession:
        """Build from metadata read from a folder."""
        return cls(
            meta.id,
            meta.name,
            meta.agent,
            meta.status,
            meta.started_at,
            meta.duration,
            meta.exit_code,
            meta.folder.parent.name,
            str(meta.folder),
            json.dumps(meta.to_json(), ensure_ascii=False),
            _is_plain(meta),
            meta.detail,
        )


@dataclass(frozen=True, slots=True)
class RebuildResult:
    """What ``rebuild`` did: sessions indexed, folders skipped (unreadable), seconds taken."""

    sessions: int
    skipped: int
    seconds: float


@dataclass(frozen=True, slots=True)
class _Folder:
    """A session folder found on disk: its project key, session id (folder name), path and
    the stat key of its ``meta.json`` (``mtime_ns:size``)."""

    project: str
    session_id: str
    path: Path
    meta_key: str


@dataclass(slots=True)
class _Content:
    """What a session adds to the full-text index (built outside any transaction)."""

    chunks: list[tuple[str, int | None, float, str, str]] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


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


def _sources(paths: Paths, vault: Vault | None, recover: Recover | None) -> Sources:
    return Sources(paths, vault if vault is not None else Vault(paths), recover)


def _recovered(meta: SessionMeta, src: Sources) -> SessionMeta:
    if src.recover is not None:
        return src.recover(meta)
    return replace(meta, status=Status.INTERRUPTED.value)


def _connect(path: Path) -> sqlite3.Connection:
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


@contextmanager
def _opened(paths: Paths) -> Iterator[tuple[sqlite3.Connection, bool]]:
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
        conn = _connect(path)
    except sqlite3.DatabaseError as exc:
        if not _is_corrupt(exc):
            raise _open_error(path, exc) from exc
        log.warning("%s is corrupt (%s); rebuilding it from the session folders", path.name, exc)
        _rebuilding.add(path)
        _remove_index(path)
        fresh = True
        try:
            conn = _connect(path)
        except sqlite3.DatabaseError as again:
            raise _open_error(path, again) from again
    except OSError as exc:
        if is_read_only(path):
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
    return ShellkeepError(f"cannot use {path} ({exc}); run 'shellkeep reindex'")


def _run(paths: Paths, work: Callable[[sqlite3.Connection, bool], _T]) -> _T:
    """Run ``work(conn, fresh)`` on the index; rebuild and retry once if it turns out corrupt."""
    import sqlite3

    for attempt in (1, 2):
        with _opened(paths) as (conn, fresh):
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
def _write(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block as one ``BEGIN IMMEDIATE`` transaction (waits up to the busy timeout)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


# -- folders on disk -----------------------------------------------------------------------


def _stat_key(path: Path) -> str | None:
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return f"{st.st_mtime_ns}:{st.st_size}"


def _scan_project(paths: Paths, project: str) -> tuple[list[_Folder], bool]:
    """Return the session folders of one project and whether the scan saw every one whole
    (False when a folder had no ``meta.json`` yet: a session being created)."""
    folders: list[_Folder] = []
    complete = True
    try:
        entries = list(os.scandir(paths.projects / project))
    except (FileNotFoundError, NotADirectoryError):
        return [], True
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        key = _stat_key(Path(entry.path) / META_FILE)
        if key is None:
            complete = False
            continue
        folders.append(_Folder(project, entry.name, Path(entry.path), key))
    return folders, complete


def _project_names(paths: Paths) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(paths.projects) if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        return []


def _read_folder(folder: _Folder, src: Sources) -> tuple[_Folder, SessionMeta] | None:
    """Read a folder's metadata, recovering it when its recorder is gone; None if unreadable.

    Recovery is ``src.recover``'s (the index itself writes no session file); without it an
    interrupted session is listed as interrupted. Returns the folder with its stat key
    taken after any recovery rewrote ``meta.json``.
    """
    try:
        meta = read_meta(folder.path)
    except (OSError, DataError) as exc:
        log.warning("skipping %s: %s", folder.path, exc)
        return None
    if is_interrupted(meta):
        meta = _recovered(meta, src)
        key = _stat_key(folder.path / META_FILE) or folder.meta_key
        folder = _Folder(folder.project, folder.session_id, folder.path, key)
    return folder, meta


# -- what a session puts in the index ------------------------------------------------------


def _started_s(meta: SessionMeta) -> float:
    try:
        return parse_iso(meta.started_at).timestamp()
    except ValueError:
        return 0.0


def _session_row(folder: _Folder, meta: SessionMeta) -> dict[str, object]:
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
        "started_s": _started_s(meta),
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
    }


_UPSERT = """
INSERT INTO sessions (id, project, folder, name, agent, status, started_at, started_s, ended_at,
    duration, exit_code, exchange_count, input_tokens, output_tokens, meta_key, project_root, git_remote,
    git_root_commit, detail, input_bytes)
VALUES (:id, :project, :folder, :name, :agent, :status, :started_at, :started_s, :ended_at,
    :duration, :exit_code, :exchange_count, :input_tokens, :output_tokens, :meta_key, :project_root, :git_remote,
    :git_root_commit, :detail, :input_bytes)
ON CONFLICT(id) DO UPDATE SET project = excluded.project, folder = excluded.folder,
    name = excluded.name, agent = excluded.agent, status = excluded.status,
    started_at = excluded.started_at, started_s = excluded.started_s, ended_at = excluded.ended_at,
    duration = excluded.duration, exit_code = excluded.exit_code,
    exchange_count = excluded.exchange_count, input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens, meta_key = excluded.meta_key,
    project_root = excluded.project_root, git_remote = excluded.git_remote,
    git_root_commit = excluded.git_root_commit, detail = excluded.detail, input_bytes = excluded.input_bytes
"""


def _content_of(meta: SessionMeta, vault: Vault) -> _Content:
    """Render the transcript, read markers and exchanges of a session (no database here).

    An unreadable recording leaves the transcript empty (with a logged warning): the session
    is still listed and its exchanges searchable.
    """
    # The emulator, the timeline and the exchanges (with redaction) are imported here, on the
    # cold path of indexing a session: listing and searching an index that is up to date,
    # what ``shellkeep ls`` and ``search`` do at each start, never need them.
    from shellkeep.archive.timeline import Marker, exchange_offset_s, with_checkpoints
    from shellkeep.store.checkpoints import read_checkpoints
    from shellkeep.terminal.transcript import iter_transcript
    from shellkeep.vault.exchanges import read_exchanges

    content = _Content()
    markers = content.markers

    def watch(events: Iterable[Event]) -> Iterator[Event]:
        for event in events:
            if event.code == "m":
                markers.append(Marker(len(markers) + 1, event.time, event.data))
            yield event

    kept = meta.detail == "full" or os.path.exists(meta.cast)  # record.detail: none may have been kept
    if meta.extra.get("remote") and not os.path.exists(meta.cast):
        kept = False  # a pulled session whose recording is not fetched yet (app.remote): its exchanges only
    try:
        if kept:
            cast = vault.open_recording(Path(meta.cast))
            events = watch(cast.events())
            _add_transcript(content, iter_transcript(events, cast.header.size), meta.id)
            for _ in events:  # past the indexed size: markers only
                pass
    except (OSError, DataError) as exc:
        log.warning("could not index the recording of %s: %s", meta.id, exc)
    try:
        markers[:] = with_checkpoints(markers, read_checkpoints(meta.folder))
    except OSError as exc:
        log.warning("could not read the checkpoints of %s: %s", meta.id, exc)
    for marker in markers:
        if marker.label:
            content.chunks.append(("marker", marker.n, marker.time_s, "", marker.label))
    for exchange in read_exchanges(meta, vault):
        at = exchange_offset_s(meta, exchange) or 0.0
        number = exchange.index + 1
        if exchange.prompt.strip():
            content.chunks.append(("prompt", number, at, "", exchange.prompt))
        answer = exchange.answer
        if exchange.tool_calls:
            answer += "\n" + "\n".join(f"{c.name}: {c.summary}" for c in exchange.tool_calls)
        if answer.strip():
            content.chunks.append(("answer", number, at, "", answer))
    return content


def _indexed_content(src: Sources, meta: SessionMeta, missing: dict[str, str] | None = None) -> _Content:
    """Return what the index keeps of an ended session (no database here).

    A plain session: its ``_content_of``. An encrypted one: nothing; its text is stored
    encrypted as ``search.jsonl`` instead. Failing to build or store that (a missing key,
    a full disk) is logged: a search builds it later (``private_search.search_private``).
    missing: collects session id -> key id for a missing key instead of logging it (the
    caller reports them all in one line).
    """
    if not is_private(meta):
        return _content_of(meta, src.vault)
    try:
        save_content(meta, _content_of(meta, src.vault).chunks, src.vault)
    except (OSError, ShellkeepError) as exc:
        if missing is not None and isinstance(exc, KeyUnavailable):
            missing[meta.id] = key_id_of_file(Path(meta.cast)) or "?"
        else:
            log.warning("could not store the search text of encrypted session %s (%s); a search will", meta.id, exc)
    return _Content()


def _add_transcript(content: _Content, lines: Iterable[object], session_id: str) -> None:
    total = 0
    texts: list[str] = []
    times: list[float] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if texts:
            stamps = " ".join(f"{t:.2f}" for t in times)
            content.chunks.append(("transcript", None, times[0], stamps, "\n".join(texts)))
            texts.clear()
            times.clear()
            size = 0

    for line in lines:
        text: str = line.text  # type: ignore[attr-defined]
        texts.append(text)
        times.append(line.time_s)  # type: ignore[attr-defined]
        size += len(text) + 1
        total += len(text) + 1
        if len(texts) >= CHUNK_LINES or size >= CHUNK_CHARS:
            flush()
        if total >= MAX_TRANSCRIPT_CHARS:
            log.warning("the transcript of %s is longer than %d characters; indexed up to there", session_id, MAX_TRANSCRIPT_CHARS)
            break
    flush()


def _store(conn: sqlite3.Connection, folder: _Folder, meta: SessionMeta, content: _Content | None) -> None:
    """Write one session's row (and its content when given); call inside ``_write``.

    ``meta.json`` is copied to ``session_json`` only when the recording is known to be plain.
    """
    if _is_plain(meta):
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


def _is_plain(meta: SessionMeta) -> bool:
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


def _meta_json_of(folder: str, meta_json: str | None) -> str | None:
    """Return a session's ``meta.json`` text: as indexed, else read from its folder (a
    session the index keeps no copy of); None, with a logged warning, when unreadable."""
    if meta_json is not None:
        return meta_json

    try:
        return json.dumps(read_meta(Path(folder)).to_json(), ensure_ascii=False)
    except (OSError, DataError) as exc:
        log.warning("skipping %s: %s", folder, exc)
        return None


def _delete(conn: sqlite3.Connection, session_ids: Sequence[str]) -> None:
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
        with _write(conn):
            _delete(conn, session_ids)

    _run(paths, work)


def forget_content(paths: Paths, session_ids: Sequence[str]) -> None:
    """Mark the indexed text of ``session_ids`` stale, so the next search renders it again.

    For a session whose files changed without its ``meta.json`` changing (a pulled
    session's recording, fetched after it was indexed). Nothing happens without an index.
    Raises ShellkeepError when the index cannot be written.
    """
    if not paths.index.exists() or not session_ids:
        return

    def work(conn: sqlite3.Connection, fresh: bool) -> None:
        with _write(conn):
            conn.executemany("UPDATE sessions SET content_key = NULL WHERE id = ?", [(sid,) for sid in session_ids])

    _run(paths, work)


def _is_final(meta: SessionMeta) -> bool:
    return meta.status != Status.RUNNING.value


# -- keeping the index current -------------------------------------------------------------


def _folder_of(meta: SessionMeta) -> _Folder | None:
    folder = meta.folder
    key = _stat_key(folder / META_FILE)
    if key is None:
        return None
    return _Folder(folder.parent.name, folder.name, folder, key)


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
    if _is_final(meta):
        content = _indexed_content(_sources(paths, vault, None), meta)

    def work(conn: sqlite3.Connection, fresh: bool) -> None:
        with _write(conn):
            _store(conn, folder, meta, content)

    _run(paths, work)


def index_ended_sessions(paths: Paths, metas: Sequence[SessionMeta], *, vault: Vault | None = None) -> None:
    """Index several ended sessions in one write transaction (an import of many); never raises (logs a warning).

    Their content is rendered first, then written at once: one transaction, not one a session.
    """
    try:
        src = _sources(paths, vault, None)
        prepared = [
            (folder, meta, _indexed_content(src, meta) if _is_final(meta) else None)
            for meta in metas
            if (folder := _folder_of(meta)) is not None
        ]

        def work(conn: sqlite3.Connection, fresh: bool) -> None:
            with _write(conn):
                for folder, meta, content in prepared:
                    _store(conn, folder, meta, content)

        if prepared:
            _run(paths, work)
    except Exception as exc:  # noqa: BLE001 - the sessions are safe on disk; reindex can redo this
        log.warning("could not index %d sessions (%s); 'shellkeep reindex' will", len(metas), exc)


def index_ended_session(paths: Paths, meta: SessionMeta, *, vault: Vault | None = None) -> None:
    """Index a session that just ended or was recovered; never raises (logs a warning).

    The hook for the upkeep after a session (``app.housekeeping``).
    """
    try:
        index_session(paths, meta, vault=vault)
    except Exception as exc:  # noqa: BLE001 - the session is safe on disk; reindex can redo this
        log.warning("could not index session %s (%s); 'shellkeep reindex' will", meta.id, exc)


def sync(conn: sqlite3.Connection, src: Sources, project: str | None, *, fresh: bool = False, content: bool = False) -> None:
    """Bring the index up to date with the session folders of ``project`` (None: all).

    Re-scans only project folders whose modification time changed since their last scan,
    re-reads sessions still marked running (recovering those whose recorder is gone) and,
    with ``content``, renders the transcripts of ended sessions not indexed in their
    current state. fresh: the index was just created; scan every project.
    """
    paths = src.paths
    if fresh:
        names = _project_names(paths)
        if names and paths.index not in _rebuilding and paths.index not in _first_builds:  # a corrupt one was announced already
            log.warning("%s was missing; rebuilding it from the session folders", paths.index.name)
        project = None
    else:
        names = _project_names(paths) if project is None else [project]
    known = dict(conn.execute("SELECT name, dir_key FROM projects").fetchall())
    if project is None:
        gone = [name for name in known if name not in names]
        for name in gone:
            ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE project = ?", (name,))]
            with _write(conn):
                _delete(conn, ids)
                conn.execute("DELETE FROM projects WHERE name = ?", (name,))
    for name in names:
        dir_key = _stat_key(paths.projects / name)
        if dir_key is not None and known.get(name) == dir_key:
            continue
        _sync_project(conn, src, name, dir_key)
    _recheck_running(conn, project, src)
    if content:
        _catch_up_content(conn, src, project)


def _sync_project(conn: sqlite3.Connection, src: Sources, project: str, dir_key: str | None) -> None:
    folders, complete = _scan_project(src.paths, project)
    indexed = dict(conn.execute("SELECT id, meta_key FROM sessions WHERE project = ?", (project,)).fetchall())
    on_disk = {f.session_id for f in folders}
    removed = [sid for sid in indexed if sid not in on_disk]
    changed = [f for f in folders if indexed.get(f.session_id) != f.meta_key]
    for start in range(0, max(len(changed), 1), _BATCH_SESSIONS * 10):
        batch: list[tuple[_Folder, SessionMeta]] = []
        for folder in changed[start : start + _BATCH_SESSIONS * 10]:
            found = _read_folder(folder, src)
            if found is not None:
                batch.append(found)
        with _write(conn):
            if start == 0:
                _delete(conn, removed)
            for folder, meta in batch:
                _store(conn, folder, meta, None)
            if start + _BATCH_SESSIONS * 10 >= len(changed) and complete and dir_key is not None:
                conn.execute("INSERT OR REPLACE INTO projects (name, dir_key) VALUES (?, ?)", (project, dir_key))


def _recheck_running(conn: sqlite3.Connection, project: str | None, src: Sources) -> None:
    sql = "SELECT id, project, folder, meta_key FROM sessions WHERE status = 'running'"
    rows = conn.execute(sql + (" AND project = ?" if project else ""), (project,) if project else ()).fetchall()
    for sid, proj, folder_s, meta_key in rows:
        path = Path(folder_s)
        key = _stat_key(path / META_FILE)
        if key is None:
            with _write(conn):
                _delete(conn, [sid])
            continue
        try:
            meta = read_meta(path)
        except (OSError, DataError) as exc:
            log.warning("skipping %s: %s", path, exc)
            continue
        if is_interrupted(meta):
            meta = _recovered(meta, src)
            key = _stat_key(path / META_FILE) or key
            current = conn.execute("SELECT meta_key FROM sessions WHERE id = ?", (sid,)).fetchone()
            if current and current[0] == key:
                continue  # recover() indexed it already
        elif key == meta_key:
            continue
        with _write(conn):
            _store(conn, _Folder(proj, sid, path, key), meta, None)


def _catch_up_content(conn: sqlite3.Connection, src: Sources, project: str | None) -> None:
    sql = (
        "SELECT s.id, s.project, s.folder, s.meta_key, j.meta_json FROM sessions s LEFT JOIN session_json j ON j.id = s.id "
        "WHERE s.status != 'running' AND (s.content_key IS NULL OR s.content_key != s.meta_key)"
    )
    rows = conn.execute(sql + (" AND s.project = ?" if project else ""), (project,) if project else ()).fetchall()
    if len(rows) > 20:
        log.warning("indexing the transcripts of %d sessions (once)", len(rows))
    items = []
    for sid, proj, folder, key, meta_json in rows:
        text = _meta_json_of(folder, meta_json)
        if text is not None:
            items.append((_Folder(proj, sid, Path(folder), key), _meta_from_json(text, Path(folder))))
    missing: dict[str, str] = {}
    _index_contents(conn, src, items, missing=missing)
    if missing:  # the search that called this says so for them all, once
        log.debug("%s", missing_keys_line(missing, "not indexed"))


def _index_contents(
    conn: sqlite3.Connection,
    src: Sources,
    items: Sequence[tuple[_Folder, SessionMeta]],
    on_progress: Callable[[int, int], None] | None = None,
    missing: dict[str, str] | None = None,
) -> None:
    """Render and store the content of ``items`` in batched transactions.

    missing: as in ``_indexed_content`` (encrypted sessions whose key is missing).
    """
    done = 0
    for start in range(0, len(items), _BATCH_SESSIONS):
        batch: list[tuple[_Folder, SessionMeta, _Content | None]] = []
        for folder, meta in items[start : start + _BATCH_SESSIONS]:
            if _is_final(meta):
                batch.append((folder, meta, _indexed_content(src, meta, missing)))
            else:
                batch.append((folder, meta, None))
        with _write(conn):
            for folder, meta, content in batch:
                _store(conn, folder, meta, content)
        done += len(batch)
        if on_progress is not None:
            on_progress(done, len(items))


def _meta_from_json(text: str, folder: Path) -> SessionMeta:
    return SessionMeta.from_json(json.loads(text), folder)


def rebuild(
    paths: Paths,
    on_progress: Callable[[int, int], None] | None = None,
    *,
    vault: Vault | None = None,
    recover: Recover | None = None,
) -> RebuildResult:
    """Rebuild the whole index from the session folders (``shellkeep reindex``).

    The index stays usable meanwhile: each session is replaced in its own batch and
    sessions whose folders are gone are removed at the end. on_progress(done, total) is
    called after each batch. Blocks for the time it takes (about 200+ sessions a second
    for short recordings).
    """
    import time

    started = time.perf_counter()
    src = _sources(paths, vault, recover)

    def work(conn: sqlite3.Connection, fresh: bool) -> RebuildResult:
        items: list[tuple[_Folder, SessionMeta]] = []
        skipped = 0
        dir_keys: dict[str, tuple[str | None, bool]] = {}
        for name in _project_names(paths):
            dir_key = _stat_key(paths.projects / name)
            folders, complete = _scan_project(paths, name)
            dir_keys[name] = (dir_key, complete)
            for folder in sorted(folders, key=lambda f: f.session_id):
                found = _read_folder(folder, src)
                if found is None:
                    skipped += 1
                    continue
                items.append(found)
        if on_progress is not None:
            on_progress(0, len(items))
        missing: dict[str, str] = {}
        _index_contents(conn, src, items, on_progress, missing)
        if missing:
            log.warning("%s", missing_keys_line(missing, "listed but not indexed for search"))
        keep = {f.session_id for f, _ in items}
        stale = [r[0] for r in conn.execute("SELECT id FROM sessions") if r[0] not in keep]
        with _write(conn):
            _delete(conn, stale)
            conn.execute("DELETE FROM projects")
            for name, (dir_key, complete) in dir_keys.items():
                if dir_key is not None and complete:
                    conn.execute("INSERT INTO projects (name, dir_key) VALUES (?, ?)", (name, dir_key))
        return RebuildResult(len(items), skipped, time.perf_counter() - started)

    return _run(paths, work)


# -- reading -------------------------------------------------------------------------------


def list_indexed(
    paths: Paths, query: SessionQuery, *, full: bool = True, vault: Vault | None = None, recover: Recover | None = None
) -> list[ListedSession]:
    """Return the sessions matching ``query``, newest first, from an up-to-date index.

    full: include each session's stored ``meta.json`` (for JSON output and ``meta()``).
    vault, recover: the keys and the recovery hook of the command (see ``Sources``).

    Raises DataError for an index from a newer shellkeep, ShellkeepError when it cannot
    be opened.
    """

    if not paths.projects.is_dir():
        return []  # nothing recorded yet: no index to make

    def work(conn: sqlite3.Connection, fresh: bool) -> list[ListedSession]:
        sync(conn, _sources(paths, vault, recover), query.project, fresh=fresh)
        projects = None if query.project is None else (query.project, *query.also_projects)
        where, args = _session_filter(
            projects, query.agents, query.statuses, query.since, query.until, query.name, trivial=query.trivial
        )
        sql = (
            "SELECT id, name, agent, status, started_at, duration, exit_code, project, folder, "
            + ("(SELECT meta_json FROM session_json j WHERE j.id = sessions.id), " if full else "NULL, ")
            + "EXISTS (SELECT 1 FROM session_json j WHERE j.id = sessions.id), coalesce(detail, 'full') "
            + f"FROM sessions{where} ORDER BY started_s DESC, id DESC"
        )
        if query.limit is not None:
            sql += " LIMIT ?"
            args.append(query.limit)
        # Positional: a fifth less time than keywords over 10,000 rows (the fields' order is the SELECT's).
        listed = [ListedSession(*row[:-2], bool(row[-2]), row[-1]) for row in conn.execute(sql, args)]
        if not full:
            return listed
        found = []
        for item in listed:
            meta_json = _meta_json_of(item.folder, item.meta_json)
            if meta_json is not None:
                found.append(item if meta_json is item.meta_json else replace(item, meta_json=meta_json))
        return found

    return _run(paths, work)


@dataclass(frozen=True, slots=True)
class GitProject:
    """A project folder whose sessions were recorded in a git work tree: its key, the root
    path it was recorded at, and the repository's identity there."""

    project: str
    project_root: str
    identity: GitIdentity


def git_projects(
    paths: Paths, identity: GitIdentity, *, vault: Vault | None = None, recover: Recover | None = None
) -> list[GitProject]:
    """Return the projects whose sessions hold a git identity that ``identity`` matches.

    Every project folder is brought up to date first (``sync``); the candidates are the
    sessions sharing the remote (the index keeps its ``remote_key``) or the root commit,
    each then compared by ``GitIdentity.matches``. One entry per project and root path.
    Raises as ``list_indexed``.
    """
    if not paths.projects.is_dir() or not (identity.remote or identity.root_commit):
        return []

    def work(conn: sqlite3.Connection, fresh: bool) -> list[GitProject]:
        sync(conn, _sources(paths, vault, recover), None, fresh=fresh)
        rows = conn.execute(
            "SELECT DISTINCT project, project_root, git_remote, git_root_commit FROM sessions "
            "WHERE (git_remote IS NOT NULL AND git_remote = ?) OR (git_root_commit IS NOT NULL AND git_root_commit = ?)",
            (remote_key(identity.remote) if identity.remote else None, identity.root_commit),
        ).fetchall()
        found: dict[tuple[str, str], GitProject] = {}
        for project, root, remote, commit in rows:
            theirs = GitIdentity(remote, commit)
            if root and identity.matches(theirs):
                found.setdefault((project, root), GitProject(project, root, theirs))
        return list(found.values())

    return _run(paths, work)


def _session_filter(
    project: str | Sequence[str] | None,
    agents: Sequence[str],
    statuses: Sequence[str],
    since: datetime | None,
    until: datetime | None,
    name: str | None,
    alias: str = "",
    *,
    trivial: bool | None = None,
) -> tuple[str, list[object]]:
    p = f"{alias}." if alias else ""
    clauses: list[str] = []
    args: list[object] = []
    if isinstance(project, str):
        project = (project,)
    if project is not None:
        clauses.append(f"{p}project IN ({', '.join('?' * len(project))})")
        args.extend(project)
    if agents:
        clauses.append(f"{p}agent IN ({', '.join('?' * len(agents))})")
        args.extend(agents)
    if statuses:
        clauses.append(f"{p}status IN ({', '.join('?' * len(statuses))})")
        args.extend(statuses)
    if since is not None:
        clauses.append(f"{p}started_s >= ?")
        args.append(since.timestamp())
    if until is not None:
        clauses.append(f"{p}started_s < ?")
        args.append(until.timestamp())
    if name:
        name = readable_text(name)  # as meta.json stores a name that was not UTF-8
        if any(c in name for c in "*?["):
            clauses.append(f"{p}name GLOB ?")
            args.append(name)
        else:
            clauses.append(f"instr(lower({p}name), lower(?)) > 0")
            args.append(name)
    if trivial is not None:
        # As store.session.is_trivial; an unknown input_bytes (NULL) is never trivial.
        cut_short = ", ".join("?" for _ in CUT_SHORT_STATUSES)
        test = (
            f"({p}duration IS NOT NULL AND {p}duration < ? AND COALESCE({p}input_bytes, 1) = 0"
            f" AND NOT (COALESCE({p}detail, 'full') != 'full' AND COALESCE({p}exchange_count, 0) > 0)"
            f" AND {p}status NOT IN ({cut_short}))"
        )
        clauses.append(test if trivial else f"NOT {test}")
        args.extend((SHORT_SESSION_S, *CUT_SHORT_STATUSES))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


def search(
    paths: Paths, request: SearchRequest, *, vault: Vault | None = None, recover: Recover | None = None
) -> list[SearchHit]:
    """Search transcripts, prompts, answers and marker labels; best hits first.

    Plain sessions are searched with FTS5 in the index, encrypted ones with the same FTS5
    query over an in-memory index of their decrypted ``search.jsonl`` (``archive.fts``,
    ``private_search.search_private``, which builds the file for a session indexed before
    it existed); the hits, both ranked by bm25, are merged by rank. Blocks while the
    encrypted sessions are decrypted and indexed in memory.

    Raises UserInputError for a query FTS5 cannot parse, DataError / ShellkeepError as
    ``list_indexed``.
    """
    fts_query(request.query)  # a query without a word is refused before any work
    if not paths.projects.is_dir():
        return []
    src = _sources(paths, vault, recover)

    def work(conn: sqlite3.Connection, fresh: bool) -> list[SearchHit]:
        projects = None if request.project is None else (request.project, *request.also_projects)
        for project in projects or (None,):
            sync(conn, src, project, fresh=fresh, content=True)
            fresh = False  # a fresh index was rebuilt whole by the first sync
        where, args = _session_filter(projects, request.agents, (), request.since, None, None, alias="s")
        where = where.replace(" WHERE ", " AND ", 1)
        hits = select_hits(conn, request.query, where=where, args=args, limit=request.limit)
        private = _private_sessions(conn, where, args)
        if private:
            hits += search_private(
                src.vault, private, request.query, limit=request.limit, build=lambda meta: _content_of(meta, src.vault).chunks
            )
            hits.sort(key=lambda hit: hit.rank)
        return hits[: request.limit]

    return _run(paths, work)


def _private_sessions(conn: sqlite3.Connection, where: str, args: Sequence[object]) -> list[SessionMeta]:
    """Return the ended sessions matching a search's filters (``where``: ``AND ...`` clauses
    on alias ``s``) whose ``meta.json`` the index keeps no copy of: the encrypted ones
    (``search_private`` passes over any other). Their ``meta.json`` is read from disk."""
    sql = (
        "SELECT s.folder FROM sessions s LEFT JOIN session_json j ON j.id = s.id "
        f"WHERE s.status != 'running' AND j.id IS NULL{where}"
    )
    found = []
    for (folder,) in conn.execute(sql, list(args)):
        meta_json = _meta_json_of(folder, None)
        if meta_json is not None:
            found.append(_meta_from_json(meta_json, Path(folder)))
    return found


def session_markers(paths: Paths, session_id: str) -> list[Marker]:
    """Return the markers indexed for a session, in order ([] when none or not indexed)."""

    from shellkeep.archive.timeline import Marker  # cold path: see ``_content_of``

    def work(conn: sqlite3.Connection, fresh: bool) -> list[Marker]:
        rows = conn.execute("SELECT n, time_s, label FROM markers WHERE session_id = ? ORDER BY n", (session_id,))
        return [Marker(n, t, label) for n, t, label in rows]

    return _run(paths, work)


# -- token usage -------------------------------------------------------------------------

USAGE_GROUPS = ("agent", "project", "day", "model")
"""What ``usage_report`` can group by: the session's agent, project key, local start day
(``YYYY-MM-DD``), or the model that answered."""

_GROUP_SQL = {
    None: "''",
    "agent": "s.agent",
    "project": "s.project",
    "day": "date(s.started_s, 'unixepoch', 'localtime')",
    "model": "COALESCE(u.model, '')",
}


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """The sessions of one group (``key``; '' for all of them or for "no model"): how many,
    their recorded seconds (``duration_s``, ended sessions) and their exchanges."""

    key: str
    sessions: int
    duration_s: float
    exchanges: int


@dataclass(frozen=True, slots=True)
class UsageTokens:
    """Tokens one group spent with one model through one agent (``model`` '' when the
    agent named none): input, output, cache_read and cache_write, as the agent reported them."""

    key: str
    model: str
    agent: str
    input: int
    output: int
    cache_read: int
    cache_write: int


@dataclass(frozen=True, slots=True)
class UsageReport:
    """What ``usage_report`` returns: ``groups`` and ``tokens`` keyed as asked (largest
    groups first), and ``total``, every matching session counted once."""

    groups: list[UsageGroup]
    tokens: list[UsageTokens]
    total: UsageGroup


def _usage_rows(meta: SessionMeta, vault: Vault) -> list[tuple[str, int, int, int, int, int]]:
    """Return (model, exchanges, input, output, cache_read, cache_write) per model of a session.

    Summed from its stored exchanges; when none can be read (a missing key, an exchanges
    file older than usage) its ``meta.json`` totals count, under model ''. Never raises.
    """
    from shellkeep.vault.exchanges import read_exchanges  # cold path: see ``_content_of``

    try:
        exchanges = read_exchanges(meta, vault)
    except ShellkeepError as exc:
        log.debug("usage of %s from its meta.json: %s", meta.id, exc)
        exchanges = []
    rows: dict[str, list[int]] = {}
    for exchange in exchanges:
        row = rows.setdefault(exchange.model or "", [0, 0, 0, 0, 0])
        row[0] += 1
        if exchange.usage is not None:
            row[1] += exchange.usage.input
            row[2] += exchange.usage.output
            row[3] += exchange.usage.cache_read
            row[4] += exchange.usage.cache_write
    if not rows and (meta.usage or meta.exchange_count):
        usage = meta.usage or {}
        rows[""] = [meta.exchange_count] + [int(usage.get(name) or 0) for name in ("input", "output", "cache_read", "cache_write")]
    return [(model, *row) for model, row in rows.items()]  # type: ignore[misc]


def _catch_up_usage(conn: sqlite3.Connection, src: Sources) -> None:
    """Write the ``usage`` rows of ended sessions whose rows are missing or older than their
    ``meta.json`` (reads ``exchanges.jsonl`` only; writes no session file)."""
    rows = conn.execute(
        "SELECT s.id, s.folder, s.meta_key, j.meta_json FROM sessions s LEFT JOIN session_json j ON j.id = s.id "
        "WHERE s.status != 'running' AND (s.usage_key IS NULL OR s.usage_key != s.meta_key)"
    ).fetchall()
    for start in range(0, len(rows), _BATCH_SESSIONS):
        batch = []
        for sid, folder, key, meta_json in rows[start : start + _BATCH_SESSIONS]:
            text = _meta_json_of(folder, meta_json)
            found = _usage_rows(_meta_from_json(text, Path(folder)), src.vault) if text is not None else []
            batch.append((sid, key, found))
        with _write(conn):
            for sid, key, found in batch:
                conn.execute("DELETE FROM usage WHERE session_id = ?", (sid,))
                conn.executemany(
                    "INSERT INTO usage (session_id, model, exchanges, input_tokens, output_tokens, cache_read_tokens, "
                    "cache_write_tokens) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(sid, *row) for row in found],
                )
                conn.execute("UPDATE sessions SET usage_key = ? WHERE id = ?", (key, sid))


def usage_report(
    paths: Paths,
    *,
    by: str | None = None,
    since: datetime | None = None,
    vault: Vault | None = None,
    recover: Recover | None = None,
) -> UsageReport:
    """Return the sessions, time, exchanges and tokens of every project, grouped ``by`` one
    of ``USAGE_GROUPS`` (None: one group), counting sessions started at or after ``since``.

    The index is brought up to date first (``sync``) and the token usage of sessions not yet
    summed is read from their ``exchanges.jsonl`` (once per change of their ``meta.json``).
    Grouped by model, a session that used two models counts in both groups (the total
    counts it once); sessions without any model group under ''.

    Raises DataError / ShellkeepError as ``list_indexed``.
    """
    if by not in _GROUP_SQL:
        raise ValueError(f"cannot group by {by!r}")
    empty = UsageReport([], [], UsageGroup("", 0, 0.0, 0))
    if not paths.projects.is_dir():
        return empty
    src = _sources(paths, vault, recover)
    where, args = _session_filter(None, (), (), since, None, None, alias="s")

    def groups(conn: sqlite3.Connection, key_sql: str) -> list[UsageGroup]:
        if "u." in key_sql:
            exchanges, source = "COALESCE(u.exchanges, s.exchange_count)", "sessions s LEFT JOIN usage u ON u.session_id = s.id"
        else:
            exchanges, source = "s.exchange_count", "sessions s"
        sql = (
            f"SELECT {key_sql} AS k, COUNT(DISTINCT s.id), COALESCE(SUM(s.duration), 0), COALESCE(SUM({exchanges}), 0) "
            f"FROM {source}{where} GROUP BY k ORDER BY COUNT(DISTINCT s.id) DESC, k"
        )
        return [UsageGroup(str(k), n, float(d), int(e)) for k, n, d, e in conn.execute(sql, args)]

    def work(conn: sqlite3.Connection, fresh: bool) -> UsageReport:
        sync(conn, src, None, fresh=fresh)
        _catch_up_usage(conn, src)
        key_sql = _GROUP_SQL[by]
        sql = (
            f"SELECT {key_sql} AS k, u.model, s.agent, SUM(u.input_tokens), SUM(u.output_tokens), "
            "SUM(u.cache_read_tokens), SUM(u.cache_write_tokens) FROM usage u JOIN sessions s ON s.id = u.session_id"
            f"{where} GROUP BY k, u.model, s.agent ORDER BY k, u.model, s.agent"
        )
        tokens = [UsageTokens(str(row[0]), *row[1:]) for row in conn.execute(sql, args)]
        total = groups(conn, "''")
        return UsageReport(groups(conn, key_sql), tokens, total[0] if total else empty.total)

    return _run(paths, work)


# -- health --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """What ``index_health`` found: ``state`` is "missing" (not built yet), "ok", "old" (an
    older schema, upgraded on next use), "newer" (written by a newer shellkeep) or
    "corrupt"; ``sessions`` the rows it lists (0 unless ok or old); ``detail`` SQLite's
    words for a damaged one."""

    state: str
    sessions: int = 0
    detail: str = ""


def index_health(paths: Paths) -> IndexHealth:
    """Check ``index.sqlite3`` read-only: its schema version and ``PRAGMA quick_check``.

    Changes nothing (opened with ``mode=ro``; nothing is rebuilt or migrated). Blocks for
    the check (about the time of reading the file once). Never raises.
    """
    import sqlite3

    path = paths.index
    if not path.exists() or path.stat().st_size == 0:
        return IndexHealth("missing")
    try:
        # On a read-only file system mode=ro still wants to make the WAL index: immutable does not.
        flags = "immutable=1" if is_read_only(path) else "mode=ro"
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?{flags}", uri=True, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        return IndexHealth("corrupt", detail=str(exc))
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            return IndexHealth("newer", detail=f"schema {version}, this shellkeep reads up to {SCHEMA_VERSION}")
        problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
        if problems != ["ok"]:
            return IndexHealth("corrupt", detail="; ".join(problems[:3]))
        sessions = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] if version else 0
        return IndexHealth("ok" if version == SCHEMA_VERSION else "old", sessions)
    except sqlite3.Error as exc:
        return IndexHealth("corrupt", detail=str(exc))
    finally:
        conn.close()


# -- times given by users ------------------------------------------------------------------

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hour|hours|d|day|days|w|week|weeks)$", re.IGNORECASE)
_UNITS_S = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800}


def parse_time(text: str, *, now: datetime | None = None, end_of_day: bool = False) -> datetime:
    """Parse a time bound a user gave: ISO date or date-time, ``today``, ``yesterday``, or
    an age like ``30m``, ``2h``, ``3d``, ``1w`` (that long ago). Returns an aware datetime.

    Naive times are local. end_of_day: a bare date means the end of that day (for --until).
    Raises UserInputError for anything else.
    """
    now = now or datetime.now(timezone.utc)
    value = text.strip()
    lowered = value.lower()
    local_now = now.astimezone()
    if lowered in ("today", "yesterday"):
        day = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
        if lowered == "yesterday":
            day -= timedelta(days=1)
        return day + timedelta(days=1) if end_of_day else day
    if lowered == "now":
        return now
    m = _RELATIVE.match(value)
    if m:
        try:
            return now - timedelta(seconds=float(m.group(1)) * _UNITS_S[m.group(2).lower()])
        except OverflowError:
            raise UserInputError(f"the age '{text}' reaches back before the year 1; give a smaller age or a date") from None
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UserInputError(
            f"cannot read the time '{text}'; give a date like 2024-05-01, a time like "
            "'2024-05-01 14:30', 'today', 'yesterday' or an age like 2h, 3d, 1w"
        ) from None
    if at.tzinfo is None:
        try:
            at = at.astimezone()  # naive: local time
        except (OverflowError, ValueError):
            at = at.replace(tzinfo=timezone.utc)  # the first or last day of the calendar: no room to shift
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            at += timedelta(days=1)
        except OverflowError:
            return at.replace(hour=23, minute=59, second=59, microsecond=999999)  # the end of 9999-12-31
    return at



_fallbacks_said: set[str] = set()  # the reasons find_sessions fell back to the folders, in this process


def find_sessions(
    paths: Paths, query: SessionQuery, *, full: bool = True, vault: Vault | None = None, recover: Recover | None = None
) -> list[ListedSession]:
    """Return the sessions matching ``query``, newest first: from the index, or, when it
    cannot be opened at all, from the session folders (slower, with one warning).
    full: as in ``list_indexed``.

    Raises DataError for an index written by a newer shellkeep.
    """
    try:
        return list_indexed(paths, query, full=full, vault=vault, recover=recover)
    except DataError:
        raise
    except ShellkeepError as exc:
        if str(exc) not in _fallbacks_said:  # ls asks twice (shown and hidden): said once
            _fallbacks_said.add(str(exc))
            log.warning("%s; listing from the session folders", exc)
    found = [ListedSession.of(meta) for meta in list_sessions(paths, None, recover=recover) if _matches(meta, query)]
    return found[: query.limit] if query.limit else found


def _matches(meta: SessionMeta, query: SessionQuery) -> bool:
    import fnmatch

    if query.project is not None and meta.folder.parent.name not in (query.project, *query.also_projects):
        return False
    if query.agents and meta.agent not in query.agents:
        return False
    if query.statuses and meta.status not in query.statuses:
        return False
    if query.trivial is not None and is_trivial(meta) != query.trivial:
        return False
    started = _started_s(meta)
    if query.since is not None and started < query.since.timestamp():
        return False
    if query.until is not None and started >= query.until.timestamp():
        return False
    if query.name:
        name = meta.name or ""
        if any(c in query.name for c in "*?["):
            return fnmatch.fnmatchcase(name, query.name)
        return query.name.lower() in name.lower()
    return True


def index_in_background(meta: SessionMeta) -> None:
    """Start ``shellkeep reindex --session ID`` detached, so a session's end returns at once.

    The child outlives this process (own session, no terminal, output discarded) and finds
    the index through the same environment. Never raises; a failure to start is logged.
    """
    import subprocess
    import sys

    try:
        subprocess.Popen(
            [sys.executable, "-m", "shellkeep", "-q", "reindex", "--session", meta.id],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=meta.project_root if os.path.isdir(meta.project_root) else None,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        log.warning("could not start indexing session %s (%s); 'shellkeep reindex' will", meta.id, exc)
