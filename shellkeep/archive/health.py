"""Check the health of ``index.sqlite3`` read-only, for ``shellkeep doctor``."""

from __future__ import annotations

from dataclasses import dataclass

from shellkeep.archive.index import BUSY_TIMEOUT_S, is_full
from shellkeep.archive.migrations import SCHEMA_VERSION
from shellkeep.store.paths import Paths
from shellkeep.store.space import is_read_only

__all__ = ["IndexHealth", "index_health"]


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
        return IndexHealth("full" if is_full(exc, path) else "corrupt", detail=str(exc))
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
        return IndexHealth("full" if is_full(exc, path) else "corrupt", detail=str(exc))
    finally:
        conn.close()
