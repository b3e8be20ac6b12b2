"""Build the compact screen text ``sync push`` sends beside a session (``archive.screen_text``).

The transcript and marker chunks are read from this machine's index when it holds the
session's current content (or from ``search.jsonl`` for an encrypted one), else rendered.
A screen line whose words the exchanges already hold (an agent's answer as its TUI drew it:
every run of ``_GRAM`` words of the line is in a prompt or answer) is left out, since the
exchanges travel anyway. On a real Claude Code session of 8 exchanges that keeps 41 of 496
lines: about 1 KB pulled instead of 14.4 KB (bench/screen_text_bench.py).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from shellkeep.archive.content import content_of
from shellkeep.archive.hits import Chunk
from shellkeep.archive.index import with_index
from shellkeep.archive.private_search import is_private, load_content
from shellkeep.archive.screen_text import SCREEN_KINDS, encode
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from shellkeep.vault.exchanges import read_exchanges

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

log = get_logger(__name__)

_GRAM = 3
"""Words in a run: a line whose every run of this many words is in the exchanges is held by them."""

_WORD = re.compile(r"\w+")

MAX_SCREEN_CHARS = 1_000_000
"""Most characters of screen text sent a session (a recording of a huge output stays fetchable
and, once fetched, searchable whole): a pull stays small whatever a session printed."""


def screen_text(paths: Paths, meta: SessionMeta, vault: Vault) -> bytes | None:
    """Return the ``screen.jsonl.zst`` of an ended session of this machine, None when it has no
    recording or its screen showed nothing. Blocks while a recording not indexed yet is rendered."""
    if not os.path.exists(meta.cast):
        return None
    chunks = _indexed(paths, meta, vault)
    if chunks is None:
        chunks = [c for c in content_of(meta, vault).chunks if c[0] in SCREEN_KINDS]
    said: set[tuple[str, ...]] = set()
    try:
        for exchange in read_exchanges(meta, vault):
            said.update(_grams(exchange.prompt))
            said.update(_grams(exchange.answer))
    except (OSError, ShellkeepError) as exc:  # nothing left out then
        log.debug("reading the exchanges of %s: %s", meta.id, exc)
    kept: list[Chunk] = []
    chars = 0
    for chunk in chunks:
        unsaid = _unsaid(chunk, said)
        if unsaid is None:
            continue
        chars += len(unsaid[4])
        if chars > MAX_SCREEN_CHARS:
            log.info("the screen text of %s is cut at %d characters; the rest is searched once the recording is fetched", meta.id, MAX_SCREEN_CHARS)
            break
        kept.append(unsaid)
    return encode(kept) if kept else None


def _grams(text: str) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return [tuple(words[i : i + _GRAM]) for i in range(len(words) - _GRAM + 1)]


def _unsaid(chunk: Chunk, said: set[tuple[str, ...]]) -> Chunk | None:
    """Return ``chunk`` without the transcript lines the exchanges hold; None when none is left."""
    kind, ref, time_s, stamps, text = chunk
    if kind != "transcript" or not said:
        return chunk
    lines = text.split("\n")
    times = stamps.split(" ") if stamps else []
    keep = [i for i, line in enumerate(lines) if not ((grams := _grams(line)) and all(g in said for g in grams))]
    if not keep:
        return None
    if len(times) != len(lines):  # not one time a line: the chunk's start stands for all
        return (kind, ref, time_s, stamps, "\n".join(lines[i] for i in keep))
    kept_times = [times[i] for i in keep]
    return (kind, ref, float(kept_times[0]), " ".join(kept_times), "\n".join(lines[i] for i in keep))


def _indexed(paths: Paths, meta: SessionMeta, vault: Vault) -> list[Chunk] | None:
    """Return the screen chunks the index (or an encrypted session's ``search.jsonl``) holds, None when it holds none current."""
    try:
        if is_private(meta):
            stored = load_content(meta, vault)
            return None if stored is None else [c for c in stored if c[0] in SCREEN_KINDS]
        if not paths.index.exists():
            return None
        return with_index(paths, lambda conn, fresh: _from_index(conn, meta.id))
    except (OSError, ShellkeepError) as exc:
        log.debug("rendering the screen text of %s: %s", meta.id, exc)
        return None


def _from_index(conn: sqlite3.Connection, session_id: str) -> list[Chunk] | None:
    row = conn.execute("SELECT content_key IS NOT NULL AND content_key = meta_key FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or not row[0]:
        return None
    rows = conn.execute(
        "SELECT kind, ref, time_s, times, text FROM chunks WHERE session_id = ? AND kind IN (?, ?) ORDER BY rowid",
        (session_id, *SCREEN_KINDS),
    ).fetchall()
    return [(str(k), r, float(t), str(s or ""), str(x)) for k, r, t, s, x in rows]
