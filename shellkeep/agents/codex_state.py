"""Read Codex's state database: where its ``threads`` table says a thread's rollout is.

Codex 0.171.0 keeps ``state_5.sqlite`` in ``$CODEX_SQLITE_HOME`` (else ``$CODEX_HOME``, else
``~/.codex``) with a table ``threads(id, rollout_path, ...)``, and ``codex resume <id>`` reads
the rollout at that path. A row left pointing at a file that was moved, removed or emptied,
at a file holding fewer of the thread's user messages than its rollout (a stale copy, one holding its
first line alone), or at no path at all makes it come up without the conversation, saying
nothing. The database is only read (``mode=ro``); it is never written.
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


def stale_thread(codex_home: Path, env: Mapping[str, str], thread_id: str, rollout: Path | None = None) -> str | None:
    """Return one line saying where the ``threads`` row of ``thread_id`` points and why Codex
    will not find the conversation there (no path, a file gone, an empty file, a file holding
    fewer user messages than ``rollout``, the thread's rollout shellkeep knows); None when it is fine
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
    if rollout is None or _same_file(path, rollout):
        return None
    held, known = _user_messages(path), _user_messages(rollout)
    if held is not None and known is not None and held < known:
        return f"Codex's thread list points at {path}, which holds {held} of the {known} user messages of {rollout.name} ({database.name})"
    return None


def _same_file(first: Path, second: Path) -> bool:
    try:
        return first.samefile(second)
    except OSError:
        return False


_PROMPT_MARK = b'"role":"user"'


def _user_messages(path: Path) -> int | None:
    """Return how many user messages (``response_item`` records of ``"role":"user"``, in Codex's
    compact JSON: the prompts and the context Codex adds) a plain rollout holds, read in 1 MiB
    pieces; None for a compressed one or one that cannot be read."""
    if path.suffix != ".jsonl":
        return None
    count, tail = 0, b""
    try:
        with open(path, "rb") as fh:
            for piece in iter(lambda: fh.read(1 << 20), b""):
                joined = tail + piece
                count += joined.count(_PROMPT_MARK)
                tail = joined[-(len(_PROMPT_MARK) - 1) :]  # shorter than a mark: one cut across two pieces is counted once
    except OSError:
        return None
    return count
