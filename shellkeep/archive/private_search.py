"""Search encrypted sessions without putting their text into the SQLite index.

With ``encryption.encrypt = true`` the index keeps an encrypted session's metadata only
(its ``sessions`` row: id, name, agent, times, token counts — ``meta.json`` is not
encrypted either) and no transcript, prompt, answer or marker text. The text the index
would have held, its ``chunks`` rows, is stored instead beside the recording as
``search.jsonl``, encrypted like the recording (one JSON array
``[kind, ref, time_s, times, text]`` a line, as ``index._Content.chunks``). A search
decrypts these files one session at a time and scans them in memory: no pyte rendering at
search time, no plaintext on disk. Cost: AES-GCM decryption, JSON parsing and a
case-insensitive scan: about 0.2-0.3 s for 100 sessions of 70 KB of text each (7 MB; it
grows linearly), against about 26 s to render those transcripts with pyte at search time
(bench/RESULTS-encrypted-search.md).

Matching follows ``index.fts_query``: every word must occur in the chunk (any order),
``"two words"`` is a phrase, ``word*`` a prefix, ``OR`` between words an alternative,
``NOT word`` excludes. Matching is on lower-cased text, by substring for prefixes and on
word boundaries otherwise (a word is letters and digits, as FTS5's
unicode61 tokenizer splits). The rank is ``-matches`` (lower is better, like bm25).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.hits import Chunk, SearchHit
from shellkeep.errors import DataError, ShellkeepError, UserInputError
from shellkeep.vault.crypto import SEARCH_FILE, is_encrypted, key_id_of_file, split_records, write_records_atomic
from shellkeep.store.session import SessionMeta
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

log = get_logger(__name__)


_SNIPPET_WORDS = 16


def is_private(meta: SessionMeta) -> bool:
    """Return whether ``meta``'s session is encrypted (its text stays out of the index)."""
    return is_encrypted(Path(meta.cast))


def save_content(meta: SessionMeta, chunks: Sequence[Chunk], vault: Vault) -> None:
    """Store the searchable text of an encrypted session, encrypted, as ``search.jsonl``.

    The key is the one the recording uses when it is current, else the current key.
    Raises OSError, KeyUnavailable.
    """
    data = "".join(json.dumps(list(c), ensure_ascii=False) + "\n" for c in chunks).encode("utf-8")
    key = vault.key_for_rewrite(key_id_of_file(Path(meta.cast)) or "")
    write_records_atomic(meta.folder / SEARCH_FILE, split_records(data), key)


def load_content(meta: SessionMeta, vault: Vault) -> list[Chunk] | None:
    """Return the stored searchable text of a session, or None when it was never stored.

    Raises DataError for a damaged file, KeyUnavailable when its key is missing.
    """
    try:
        raw = vault.read_private(meta.folder / SEARCH_FILE)
    except FileNotFoundError:
        return None
    chunks: list[Chunk] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        try:
            kind, ref, time_s, stamps, text = json.loads(line)
            chunks.append((str(kind), ref if isinstance(ref, int) else None, float(time_s), str(stamps), str(text)))
        except (ValueError, TypeError) as exc:
            raise DataError(f"{meta.folder / SEARCH_FILE} is damaged ({exc}); run 'shellkeep reindex'") from exc
    return chunks


@dataclass(frozen=True, slots=True)
class _Term:
    text: str
    prefix: bool
    negate: bool
    alt: bool  # joined to the previous term by OR


def parse_query(query: str) -> list[_Term]:
    """Parse a search as ``index.fts_query`` reads it; raise UserInputError without a word."""
    terms: list[_Term] = []
    negate = alt = False
    for token in re.findall(r'"[^"]*"?|\S+', query):
        if token in ("OR", "NOT", "AND"):
            negate = token == "NOT" and bool(terms)
            alt = token == "OR" and bool(terms)
            continue
        prefix = token.endswith("*") and not token.startswith('"')
        word = token.strip('"').rstrip("*") if prefix else token.strip('"')
        if not re.search(r"[^\W_]", word):
            continue
        terms.append(_Term(" ".join(re.findall(r"[^\W_]+", word.lower())), prefix, negate, alt))
        negate = alt = False
    if not terms:
        raise UserInputError(f"nothing to search for in '{query}'; give at least one word")
    return terms


_ALNUM = r"[^\W_]"  # a letter or digit: FTS5's unicode61 tokenizer splits on everything else


def _finder(term: _Term) -> re.Pattern[str]:
    words = [re.escape(w) for w in term.text.split()]
    body = r"[\W_]+".join(words)
    return re.compile(rf"(?<!{_ALNUM}){body}" + ("" if term.prefix else rf"(?!{_ALNUM})"))


def _matches(text: str, groups: list[list[tuple[_Term, re.Pattern[str]]]]) -> list[tuple[int, int]] | None:
    """Return the spans of the matched terms, or None when the chunk does not match."""
    spans: list[tuple[int, int]] = []
    for group in groups:  # groups are ANDed; terms within one are ORed
        found = False
        for term, pattern in group:
            hits = [m.span() for m in pattern.finditer(text)]
            if term.negate:
                if hits:
                    return None
                found = True
                continue
            if hits:
                found = True
                spans += hits
        if not found:
            return None
    return spans if spans else None


def _groups(terms: list[_Term]) -> list[list[tuple[_Term, re.Pattern[str]]]]:
    groups: list[list[tuple[_Term, re.Pattern[str]]]] = []
    for term in terms:
        if term.alt and groups:
            groups[-1].append((term, _finder(term)))
        else:
            groups.append([(term, _finder(term))])
    return groups


def _snippet(text: str, spans: list[tuple[int, int]]) -> tuple[str, list[list[int]]]:
    """Return up to ``_SNIPPET_WORDS`` words around the first span on one line, and highlights."""
    first = min(spans)[0]
    flat = text.replace("\n", " ")
    words = list(re.finditer(r"\S+", flat))
    at = next((i for i, w in enumerate(words) if w.end() > first), 0)
    lo = max(0, at - _SNIPPET_WORDS // 2)
    hi = min(len(words), lo + _SNIPPET_WORDS)
    if not words:
        return "", []
    start, end = words[lo].start(), words[hi - 1].end()
    prefix = "…" if lo > 0 else ""
    snippet = prefix + flat[start:end] + ("…" if hi < len(words) else "")
    shift = len(prefix) - start
    highlights = sorted([[s + shift, e + shift] for s, e in spans if s >= start and e <= end])
    return snippet, highlights


def search_private(
    vault: Vault,
    sessions: Iterable[SessionMeta],
    query: str,
    *,
    limit: int = 20,
    build: Callable[[SessionMeta], Sequence[Chunk]] | None = None,
) -> list[SearchHit]:
    """Search the encrypted sessions among ``sessions``; best hits first, at most ``limit``.

    build: makes a session's chunks when its ``search.jsonl`` is missing (then stored for
    next time); None skips such sessions. A session whose key is missing or whose file is
    damaged is skipped with a logged warning. Raises UserInputError for an empty query.
    """
    groups = _groups(parse_query(query))
    hits: list[SearchHit] = []
    for meta in sessions:
        if not is_private(meta):
            continue
        try:
            chunks = load_content(meta, vault)
            if chunks is None and build is not None:
                chunks = list(build(meta))
                save_content(meta, chunks, vault)
        except (OSError, ShellkeepError) as exc:
            log.warning("skipping encrypted session %s in search: %s", meta.id, exc)
            continue
        for kind, ref, time_s, stamps, text in chunks or ():
            spans = _matches(text.lower(), groups)
            if spans is None:
                continue
            snippet, highlights = _snippet(text, spans)
            hits.append(
                SearchHit(
                    session_id=meta.id,
                    session_name=meta.name,
                    project=meta.project,
                    agent=meta.agent,
                    started_at=meta.started_at,
                    kind=kind,
                    exchange=ref if kind in ("prompt", "answer") else None,
                    time=round(_line_time(time_s, stamps, text, spans), 2),
                    snippet=snippet,
                    highlights=highlights,
                    rank=-float(len(spans)) * (1.5 if kind == "prompt" else 1.0),
                )
            )
    hits.sort(key=lambda h: (h.rank, h.started_at), reverse=False)
    return hits[:limit]


def _line_time(time_s: float, stamps: str, text: str, spans: list[tuple[int, int]]) -> float:
    """Return the time of the line holding the first match (else the chunk's time)."""
    if not stamps:
        return float(time_s)
    line = text.count("\n", 0, min(spans)[0])
    times = stamps.split()
    return float(times[line]) if line < len(times) else float(time_s)
