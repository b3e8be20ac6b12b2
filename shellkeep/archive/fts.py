"""Own full-text matching: the query language, the FTS5 hit query, and a private in-memory index.

Every search, of plain sessions in ``index.sqlite3`` and of encrypted ones decrypted in
memory (``archive.private_search``), goes through ``select_hits``: the same FTS5 query
(``fts_query``), the same bm25 rank and the same ``snippet()`` over a ``chunks_fts`` table
made by the index's own schema scripts (``archive.migrations``: tokenizer
``unicode61 remove_diacritics 2``, so ``cafe`` finds ``café`` in both). Format: SQLite FTS5
(sqlite.org/fts5.html).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.hits import SearchHit
from shellkeep.archive.migrations import migrate
from shellkeep.errors import UserInputError

if TYPE_CHECKING:
    import sqlite3

SNIPPET_OPEN = "\x02"
SNIPPET_CLOSE = "\x03"
SNIPPET_TOKENS = 16
_TOKEN = r'"[^"]*"?|\S+'

_HITS_SQL = (
    "SELECT c.session_id, c.kind, c.ref, c.time_s, c.times, c.text, "
    f"snippet(chunks_fts, 0, '{SNIPPET_OPEN}', '{SNIPPET_CLOSE}', '…', {SNIPPET_TOKENS}), "
    "bm25(chunks_fts) * (CASE c.kind WHEN 'prompt' THEN 1.5 WHEN 'marker' THEN 1.2 ELSE 1.0 END) AS rank, "
    "s.name, s.project, s.agent, s.started_at "
    "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid JOIN sessions s ON s.id = c.session_id "
    "WHERE chunks_fts MATCH ?{where} ORDER BY rank LIMIT ?"
)


def fts_query(text: str) -> str:
    """Turn what a user typed into an FTS5 query that cannot be a syntax error.

    Words must all match (any order); ``"two words"`` is a phrase; ``word*`` a prefix;
    ``OR`` and ``NOT`` between words are operators. Everything else is quoted literally.
    Raises UserInputError for a query without any word.
    """
    parts: list[str] = []
    for token in re.findall(_TOKEN, text):
        if token in ("OR", "NOT", "AND"):
            if parts and parts[-1] not in ("OR", "NOT", "AND"):
                parts.append(token)
            continue
        prefix = token.endswith("*") and not token.startswith('"')
        word = token.strip('"').rstrip("*") if prefix else token.strip('"')
        if not re.search(r"\w", word):
            continue
        quoted = '"' + word.replace('"', '""') + '"'
        parts.append(quoted + ("*" if prefix else ""))
    while parts and parts[-1] in ("OR", "NOT", "AND"):
        parts.pop()
    if not parts:
        raise UserInputError(f"nothing to search for in '{text}'; give at least one word")
    return " ".join(parts)


def fold(text: str) -> str:
    """Return ``text`` lower-cased without diacritics, as the tokenizer compares words."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def query_terms(text: str) -> list[str]:
    """Return the folded words of a query (for locating a hit within a chunk)."""
    words: list[str] = []
    for token in re.findall(_TOKEN, text):
        if token in ("OR", "NOT", "AND"):
            continue
        words.extend(fold(w) for w in re.findall(r"\w+", token))
    return words


_FOLDS_TO_ASCII: re.Pattern[str] | None = None


def could_match(query: str) -> Callable[[str], bool] | None:
    """Return a cheap test that is False only for chunk texts ``query`` cannot match, or None.

    For loading only the chunks worth indexing in memory. Every FTS5 match holds all the
    tokens of at least one query word (a word such as ``unique-word-42`` is a phrase of
    three tokens); folded (``fold``) and ASCII, each token then occurs in the lower-cased
    text, unless a token of the text folds to ASCII from a Latin letter with a diacritic
    (``é``, ``İ``): texts holding any such letter are always kept. None (keep every chunk)
    when a folded query token is not ASCII.
    """
    global _FOLDS_TO_ASCII
    words = [
        pieces
        for token in re.findall(_TOKEN, query)
        if token not in ("OR", "NOT", "AND") and (pieces := re.findall(r"[^\W_]+", fold(token)))
    ]
    if not words or not all(piece.isascii() for pieces in words for piece in pieces):
        return None
    if _FOLDS_TO_ASCII is None:
        # Latin-1 Supplement, Latin Extended-A/B, combining diacritics, Latin Extended Additional, -C, -D, -E
        _FOLDS_TO_ASCII = re.compile("[\u00c0-\u024f\u0300-\u036f\u1e00-\u1eff\u2c60-\u2c7f\ua720-\ua7ff\uab30-\uab6f]")
    folds = _FOLDS_TO_ASCII.search

    def test(text: str) -> bool:
        low = text.lower()
        if any(all(piece in low for piece in pieces) for pieces in words):
            return True
        return not low.isascii() and folds(text) is not None

    return test


def hit_time(time_s: float, stamps: str, text: str, terms: Sequence[str]) -> float:
    """Return the time of the first line of a chunk holding a query term (else the chunk's).

    stamps: the chunk's per-line times, space-separated ("" for one-time chunks).
    """
    if not stamps:
        return float(time_s)
    times = stamps.split()
    for i, line in enumerate(text.split("\n")):
        folded = fold(line)
        if any(term in folded for term in terms) and i < len(times):
            return float(times[i])
    return float(time_s)


def parse_snippet(raw: str) -> tuple[str, list[list[int]]]:
    """Split FTS5's marked snippet into plain one-line text and ``[start, end)`` highlight ranges."""
    out: list[str] = []
    highlights: list[list[int]] = []
    pos = 0
    start = 0
    for ch in raw.replace("\n", " ⏎ "):
        if ch == SNIPPET_OPEN:
            start = pos
        elif ch == SNIPPET_CLOSE:
            highlights.append([start, pos])
        else:
            out.append(ch)
            pos += 1
    return "".join(out), highlights


def select_hits(
    conn: sqlite3.Connection, query: str, *, where: str = "", args: Sequence[object] = (), limit: int = 20
) -> list[SearchHit]:
    """Return the best ``limit`` hits of ``query`` (typed as for ``fts_query``) among ``chunks``.

    conn: an index with the schema of ``archive.migrations`` (the file, or ``memory_index``).
    where: extra ``AND ...`` clauses on the sessions table, alias ``s``, with ``args``.
    Ranks are bm25 (lower is better; prompts x1.5, markers x1.2). Raises UserInputError
    for a query FTS5 cannot parse.
    """
    import sqlite3

    match = fts_query(query)
    terms = query_terms(query)
    try:
        rows = conn.execute(_HITS_SQL.format(where=where), [match, *args, limit]).fetchall()
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
            raise UserInputError(f"cannot search for '{query}' ({exc}); quote it as a phrase") from exc
        raise
    hits = []
    for sid, kind, ref, time_s, stamps, text, snip, rank, name, project, agent, started_at in rows:
        snippet, highlights = parse_snippet(snip)
        hits.append(
            SearchHit(
                session_id=sid,
                session_name=name,
                project=project,
                agent=agent,
                started_at=started_at,
                kind=kind,
                exchange=ref if kind in ("prompt", "answer") else None,
                time=round(hit_time(time_s, stamps, text, terms), 2),
                snippet=snippet,
                highlights=highlights,
                rank=round(rank, 4),
            )
        )
    return hits


def memory_index() -> sqlite3.Connection:
    """Return a new in-memory index with the schema of ``index.sqlite3`` (same tokenizer).

    Nothing of it reaches a file: the database and SQLite's temporary storage (sorts) are
    in memory. The caller closes it.
    """
    import sqlite3

    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("PRAGMA temp_store = MEMORY")
    migrate(conn, Path(":memory:"))
    return conn
