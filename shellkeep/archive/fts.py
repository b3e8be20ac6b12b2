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
from dataclasses import dataclass
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

# A query FTS5 cannot express alone (``NOT x``): every chunk is tested, each alternative as
# "in the FTS5 matches of its positive terms and not in those of its negated ones"; no rank.
_SCAN_SQL = (
    "SELECT c.session_id, c.kind, c.ref, c.time_s, c.times, c.text, NULL, 0.0, "
    "s.name, s.project, s.agent, s.started_at "
    "FROM chunks c JOIN sessions s ON s.id = c.session_id "
    "WHERE ({test}){where} ORDER BY s.started_at DESC, c.session_id DESC, c.time_s, c.id LIMIT ?"
)
_IN_MATCH = "c.id {op} (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)"


@dataclass(frozen=True, slots=True)
class Term:
    """One word, ``"quoted phrase"`` or ``prefix*`` of a query.

    fts: its FTS5 form (a quoted string, ``*`` after it for a prefix). pieces: its folded
    ``fold`` word characters split where the tokenizer splits them (``unique-word-42``:
    ``unique``, ``word``, ``42``). negated: it came after ``NOT`` (must not occur).
    """

    fts: str
    pieces: tuple[str, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed search query: alternatives joined by ``OR``, each a conjunction of terms.

    A hit (one chunk: a prompt, an answer, a marker label or a group of transcript lines)
    matches an alternative when it holds every term of it that is not negated and none that
    is. ``OR`` binds loosest, as in FTS5: ``a b OR c`` is ``(a AND b) OR c``.
    """

    alternatives: tuple[tuple[Term, ...], ...]

    @property
    def fts(self) -> str | None:
        """The FTS5 expression of the whole query, or None when an alternative has no
        positive term (``NOT x`` alone): FTS5 has no unary NOT, the caller scans instead."""
        parts = []
        for terms in self.alternatives:
            wanted = [t.fts for t in terms if not t.negated]
            if not wanted:
                return None
            expr = " ".join(wanted)
            unwanted = [t.fts for t in terms if t.negated]
            if unwanted:
                expr = (f"({expr})" if len(wanted) > 1 else expr) + "".join(f" NOT {u}" for u in unwanted)
            parts.append(expr)
        if len(parts) == 1:
            return parts[0]
        return " OR ".join(p if " " not in p else f"({p})" for p in parts)

    def terms(self) -> list[str]:
        """Return the folded words of the positive terms (for locating a hit in its chunk)."""
        return [piece for terms in self.alternatives for t in terms if not t.negated for piece in t.pieces]


def parse_query(text: str) -> Query:
    """Parse what a user typed into a search ``Query``; never a syntax error for FTS5.

    Words must all match (any order; ``AND`` between them may be written); ``"two words"``
    is a phrase; ``word*`` a prefix; ``OR`` between terms gives alternatives; ``NOT`` before
    a term says the hit must not hold it: ``a NOT b`` (= ``a AND NOT b``), ``a OR NOT b``,
    and ``NOT x`` alone (the hits without ``x``). Operators are upper-case; a misplaced one
    (leading ``OR``, trailing ``NOT``) is dropped, and characters that are not part of a
    word (parentheses, a lone ``-``) are taken literally inside a word and ignored alone.
    Raises UserInputError for a query without any word.
    """
    alternatives: list[tuple[Term, ...]] = []
    current: list[Term] = []
    negated = False
    for token in re.findall(_TOKEN, text):
        if token == "OR":
            if current:
                alternatives.append(tuple(current))
            current, negated = [], False
            continue
        if token in ("AND", "NOT"):
            negated = negated or token == "NOT"
            continue
        prefix = token.endswith("*") and not token.startswith('"')
        word = token.strip('"').rstrip("*") if prefix else token.strip('"')
        if not re.search(r"\w", word):
            continue
        fts = '"' + word.replace('"', '""') + '"' + ("*" if prefix else "")
        current.append(Term(fts, tuple(re.findall(r"[^\W_]+", fold(word))), negated))
        negated = False
    if current:
        alternatives.append(tuple(current))
    if not alternatives:
        if not text.strip():
            raise UserInputError("nothing to search for: the query is empty; give at least one word")
        raise UserInputError(f"nothing to search for in '{text}': it has no word; give at least one word")
    return Query(tuple(alternatives))


def fts_query(text: str) -> str | None:
    """Return the FTS5 expression of a query (``parse_query``), None for one FTS5 cannot
    express (an alternative that is only ``NOT x``). Raises UserInputError for a query
    without any word."""
    return parse_query(text).fts


def fold(text: str) -> str:
    """Return ``text`` lower-cased without diacritics, as the tokenizer compares words."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def query_terms(text: str) -> list[str]:
    """Return the folded words of a query's positive terms (for locating a hit within a chunk)."""
    return parse_query(text).terms()


_FOLDS_TO_ASCII: re.Pattern[str] | None = None


def could_match(query: str) -> Callable[[str], bool] | None:
    """Return a cheap test that is False only for chunk texts ``query`` cannot match, or None.

    For loading only the chunks worth indexing in memory. Every match holds all the
    tokens of the positive terms of at least one alternative (``parse_query``; a word such
    as ``unique-word-42`` is a phrase of three tokens); folded (``fold``) and ASCII, each token then occurs in the lower-cased
    text, unless a token of the text folds to ASCII from a Latin letter with a diacritic
    (``é``, ``İ``): texts holding any such letter are always kept. None (keep every chunk)
    when a folded query token is not ASCII, or an alternative has no positive term.
    """
    global _FOLDS_TO_ASCII
    words = [[piece for t in terms if not t.negated for piece in t.pieces] for terms in parse_query(query).alternatives]
    if not all(words) or not all(piece.isascii() for pieces in words for piece in pieces):
        return None  # an alternative without positive words (``NOT x``) can match any chunk
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
    Ranks are bm25 (lower is better; prompts x1.5, markers x1.2). A query with an
    alternative of negated terms only (``NOT x``) tests every chunk instead: rank 0.0 for
    all, newest session first, then in time order. Raises UserInputError for a query FTS5
    cannot parse.
    """
    import sqlite3

    parsed = parse_query(query)
    terms = parsed.terms()
    match = parsed.fts
    if match is not None:
        sql, params = _HITS_SQL.format(where=where), [match, *args, limit]
    else:
        test, matches = _scan_test(parsed)
        sql, params = _SCAN_SQL.format(test=test, where=where), [*matches, *args, limit]
    try:
        rows = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "fts5" in str(exc).lower() or "syntax" in str(exc).lower():
            raise UserInputError(f"cannot search for '{query}' ({exc}); quote it as a phrase") from exc
        raise
    hits = []
    for sid, kind, ref, time_s, stamps, text, snip, rank, name, project, agent, started_at in rows:
        snippet, highlights = parse_snippet(snip) if snip is not None else plain_snippet(text, terms)
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


def _scan_test(query: Query) -> tuple[str, list[str]]:
    """Return the SQL test of ``_SCAN_SQL`` for ``query`` and its FTS5 match arguments."""
    tests: list[str] = []
    matches: list[str] = []
    for terms in query.alternatives:
        wanted = [t.fts for t in terms if not t.negated]
        unwanted = [t.fts for t in terms if t.negated]
        clauses = []
        if wanted:
            clauses.append(_IN_MATCH.format(op="IN"))
            matches.append(" ".join(wanted))
        if unwanted:
            clauses.append(_IN_MATCH.format(op="NOT IN"))
            matches.append(" OR ".join(unwanted))
        tests.append("(" + " AND ".join(clauses) + ")")
    return " OR ".join(tests), matches


def plain_snippet(text: str, terms: Sequence[str]) -> tuple[str, list[list[int]]]:
    """Return a snippet of a chunk FTS5 did not mark, as ``parse_snippet`` does for one it did.

    About ``SNIPPET_TOKENS`` words from the first word holding a folded query term
    (``terms``, from ``Query.terms``), else from the start; such words are highlighted.
    """
    words = text.split()
    first = next((i for i, w in enumerate(words) if any(t in fold(w) for t in terms)), 0) if terms else 0
    start = max(0, first - 2)
    shown = words[start : start + SNIPPET_TOKENS]
    out = "…" if start else ""
    highlights: list[list[int]] = []
    for i, word in enumerate(shown):
        if i:
            out += " "
        if terms and any(t in fold(word) for t in terms):
            highlights.append([len(out), len(out) + len(word)])
        out += word
    if start + SNIPPET_TOKENS < len(words):
        out += "…"
    return out, highlights


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
