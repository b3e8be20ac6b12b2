"""Read Codex's state database: where its ``threads`` table says a thread's rollout is.

Codex 0.171.0 keeps ``state_5.sqlite`` in ``$CODEX_SQLITE_HOME`` (else ``$CODEX_HOME``, else
``~/.codex``) with a table ``threads(id, rollout_path, ...)``, and ``codex resume <id>`` reads
the rollout at that path. A row left pointing at a file that was moved, removed or emptied
(or at no path at all) makes it come up with no conversation, saying nothing. The database is
only read (``mode=ro``); it is never written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

from shellkeep.logs import get_logger

log = get_logger(__name__)

_STATE_NAME = re.compile(r"state_(\d+)\.sqlite")


def state_database(codex_home: Path, env: Mapping[str, str]) -> Path | None:
    """Return Codex's state database (the highest ``state_<n>.sqlite``), or None when there is none."""
    folder = Path(env["CODEX_SQLITE_HOME"]) if env.get("CODEX_SQLITE_HOME") else codex_home
    try:
        found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _STATE_NAME.fullmatch(p.name))]
    except OSError:
        return None
    return max(found)[1] if found else None


def stale_thread(codex_home: Path, env: Mapping[str, str], thread_id: str) -> str | None:
    """Return one line saying where the ``threads`` row of ``thread_id`` points and why Codex
    will find no conversation there (no path, a file gone, an empty file); None when it is fine
    or cannot be told (no database, no row, a database that cannot be read)."""
    import sqlite3

    database = state_database(codex_home, env)
    if database is None:
        return None
    try:
        connection = sqlite3.connect(f"file:{quote(str(database))}?mode=ro", uri=True, timeout=2.0)
        try:
            row = connection.execute("SELECT rollout_path FROM threads WHERE id = ?", (thread_id,)).fetchone()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        log.debug("cannot read %s: %s", database, exc)
        return None
    if row is None:
        return None
    pointed = row[0]
    if not isinstance(pointed, str) or not pointed.strip():
        return f"Codex's thread list points at no rollout for {thread_id} ({database.name})"
    path = Path(pointed)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return f"Codex's thread list points at {path}, which is gone ({database.name})"
    except OSError as exc:
        return f"Codex's thread list points at {path}, which cannot be read ({exc.strerror})"
    if size == 0:
        return f"Codex's thread list points at {path}, which is empty ({database.name})"
    return None
