"""Catch the index up with the session folders: scan, recover, re-read, rebuild.

Every read of the index first calls ``sync`` for the projects it reads: project folders
whose modification time changed are re-scanned, sessions still marked running are re-read
(those whose recorder is gone recovered through ``Sources.recover``), and, for a search,
ended sessions whose content is older than their ``meta.json`` are rendered again.
``rebuild`` makes the whole index again from the folders (``shellkeep reindex``). Nothing
here writes a session file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.content import Content, indexed_content
from shellkeep.archive.index import (
    BATCH_SESSIONS,
    Folder,
    Sources,
    delete_rows,
    is_final,
    is_unannounced_rebuild,
    meta_from_json,
    meta_json_of,
    sources_for,
    stat_key,
    store_session,
    with_index,
    write_transaction,
)
from shellkeep.archive.private_search import missing_keys_line
from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import META_FILE, Recover, SessionMeta, Status, is_interrupted, read_meta

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

__all__ = ["RebuildResult", "rebuild", "sync"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RebuildResult:
    """What ``rebuild`` did: sessions indexed, folders skipped (unreadable), seconds taken."""

    sessions: int
    skipped: int
    seconds: float


def _recovered(meta: SessionMeta, src: Sources) -> SessionMeta:
    """Return an interrupted session as ``src.recover`` repairs it, else marked interrupted."""
    if src.recover is not None:
        return src.recover(meta)
    return replace(meta, status=Status.INTERRUPTED.value)


def _scan_project(paths: Paths, project: str) -> tuple[list[Folder], bool]:
    """Return the session folders of one project and whether the scan saw every one whole
    (False when a folder had no ``meta.json`` yet: a session being created)."""
    folders: list[Folder] = []
    complete = True
    try:
        entries = list(os.scandir(paths.projects / project))
    except (FileNotFoundError, NotADirectoryError):
        return [], True
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        key = stat_key(Path(entry.path) / META_FILE)
        if key is None:
            complete = False
            continue
        folders.append(Folder(project, entry.name, Path(entry.path), key))
    return folders, complete


def _project_names(paths: Paths) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(paths.projects) if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        return []


def _read_folder(folder: Folder, src: Sources) -> tuple[Folder, SessionMeta] | None:
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
        key = stat_key(folder.path / META_FILE) or folder.meta_key
        folder = Folder(folder.project, folder.session_id, folder.path, key)
    return folder, meta


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
        if names and is_unannounced_rebuild(paths.index):  # a corrupt one was announced already
            log.warning("%s was missing; rebuilding it from the session folders", paths.index.name)
        project = None
    else:
        names = _project_names(paths) if project is None else [project]
    known = dict(conn.execute("SELECT name, dir_key FROM projects").fetchall())
    if project is None:
        gone = [name for name in known if name not in names]
        for name in gone:
            ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE project = ?", (name,))]
            with write_transaction(conn):
                delete_rows(conn, ids)
                conn.execute("DELETE FROM projects WHERE name = ?", (name,))
    for name in names:
        dir_key = stat_key(paths.projects / name)
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
    for start in range(0, max(len(changed), 1), BATCH_SESSIONS * 10):
        batch: list[tuple[Folder, SessionMeta]] = []
        for folder in changed[start : start + BATCH_SESSIONS * 10]:
            found = _read_folder(folder, src)
            if found is not None:
                batch.append(found)
        with write_transaction(conn):
            if start == 0:
                delete_rows(conn, removed)
            for folder, meta in batch:
                store_session(conn, folder, meta, None)
            if start + BATCH_SESSIONS * 10 >= len(changed) and complete and dir_key is not None:
                conn.execute("INSERT OR REPLACE INTO projects (name, dir_key) VALUES (?, ?)", (project, dir_key))


def _recheck_running(conn: sqlite3.Connection, project: str | None, src: Sources) -> None:
    sql = "SELECT id, project, folder, meta_key FROM sessions WHERE status = 'running'"
    rows = conn.execute(sql + (" AND project = ?" if project else ""), (project,) if project else ()).fetchall()
    for sid, proj, folder_s, meta_key in rows:
        path = Path(folder_s)
        key = stat_key(path / META_FILE)
        if key is None:
            with write_transaction(conn):
                delete_rows(conn, [sid])
            continue
        try:
            meta = read_meta(path)
        except (OSError, DataError) as exc:
            log.warning("skipping %s: %s", path, exc)
            continue
        if is_interrupted(meta):
            meta = _recovered(meta, src)
            key = stat_key(path / META_FILE) or key
            current = conn.execute("SELECT meta_key FROM sessions WHERE id = ?", (sid,)).fetchone()
            if current and current[0] == key:
                continue  # recover() indexed it already
        elif key == meta_key:
            continue
        with write_transaction(conn):
            store_session(conn, Folder(proj, sid, path, key), meta, None)


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
        text = meta_json_of(folder, meta_json)
        if text is not None:
            items.append((Folder(proj, sid, Path(folder), key), meta_from_json(text, Path(folder))))
    missing: dict[str, str] = {}
    _index_contents(conn, src, items, missing=missing)
    if missing:  # the search that called this says so for them all, once
        log.debug("%s", missing_keys_line(missing, "not indexed"))


def _index_contents(
    conn: sqlite3.Connection,
    src: Sources,
    items: Sequence[tuple[Folder, SessionMeta]],
    on_progress: Callable[[int, int], None] | None = None,
    missing: dict[str, str] | None = None,
) -> None:
    """Render and store the content of ``items`` in batched transactions.

    missing: as in ``indexed_content`` (encrypted sessions whose key is missing).
    """
    done = 0
    for start in range(0, len(items), BATCH_SESSIONS):
        batch: list[tuple[Folder, SessionMeta, Content | None]] = []
        for folder, meta in items[start : start + BATCH_SESSIONS]:
            if is_final(meta):
                batch.append((folder, meta, indexed_content(src.vault, meta, missing)))
            else:
                batch.append((folder, meta, None))
        with write_transaction(conn):
            for folder, meta, content in batch:
                store_session(conn, folder, meta, content)
        done += len(batch)
        if on_progress is not None:
            on_progress(done, len(items))


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
    src = sources_for(paths, vault, recover)

    def work(conn: sqlite3.Connection, fresh: bool) -> RebuildResult:
        items: list[tuple[Folder, SessionMeta]] = []
        skipped = 0
        dir_keys: dict[str, tuple[str | None, bool]] = {}
        for name in _project_names(paths):
            dir_key = stat_key(paths.projects / name)
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
        with write_transaction(conn):
            delete_rows(conn, stale)
            conn.execute("DELETE FROM projects")
            for name, (dir_key, complete) in dir_keys.items():
                if dir_key is not None and complete:
                    conn.execute("INSERT INTO projects (name, dir_key) VALUES (?, ?)", (name, dir_key))
        return RebuildResult(len(items), skipped, time.perf_counter() - started)

    return with_index(paths, work)
