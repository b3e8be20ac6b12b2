"""List the words a session can be named by (ids and names), cheaply, for shell completion.

Reads the session folders' names (the ids) and the index's ``name`` column only, read-only,
with nothing but ``sqlite3``: a TAB press starts a fresh process, so this module imports no
vault, terminal or agent code. A missing, locked or damaged index gives ids only; nothing is
written, built or repaired here.
"""

from __future__ import annotations

import os
import sqlite3

from shellkeep.store.paths import Paths

__all__ = ["session_words"]


def session_words(paths: Paths, prefix: str = "", *, limit: int = 200) -> list[tuple[str, str]]:
    """Return up to ``limit`` ``(word, help)`` pairs starting with ``prefix``, newest first.

    word: a session id (help: its name, agent and status when indexed) or a session name
    (help: its id). Never raises: an unreadable data folder or index yields what could be read.
    """
    indexed: dict[str, tuple[str | None, str, str]] = {}
    try:
        conn = sqlite3.connect(f"{paths.index.as_uri()}?mode=ro", uri=True, timeout=0.2)
        try:
            rows = conn.execute("SELECT id, name, agent, status FROM sessions ORDER BY id DESC LIMIT 5000").fetchall()
        finally:
            conn.close()
        indexed = {str(i): (n, str(a), str(s)) for i, n, a, s in rows}
    except sqlite3.Error:
        pass
    ids = sorted(set(indexed) | set(_folder_ids(paths)), reverse=True)  # ids sort by time
    words: list[tuple[str, str]] = []
    for session_id in ids:
        if session_id.startswith(prefix):
            name, agent, status = indexed.get(session_id, (None, "", ""))
            words.append((session_id, " ".join(w for w in (name or "", agent, status) if w)))
    seen = {w for w, _ in words}
    for session_id, (name, _, _) in indexed.items():
        if name and name.startswith(prefix) and name not in seen:
            seen.add(name)
            words.append((name, session_id))
    return words[:limit]


def _folder_ids(paths: Paths) -> list[str]:
    """Return the names of the session folders (``projects/<project>/<id>/``); [] when unreadable."""
    found: list[str] = []
    try:
        projects = list(os.scandir(paths.projects))
    except OSError:
        return found
    for project in projects:
        try:
            with os.scandir(project.path) as entries:
                found.extend(e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
        except OSError:
            continue
    return found
