"""Search encrypted sessions without putting their text into the SQLite index.

With ``encryption.encrypt = true`` the index keeps an encrypted session's metadata only
(its ``sessions`` row: id, name, agent, times, token counts — ``meta.json`` is not
encrypted either) and no transcript, prompt, answer or marker text. The text the index
would have held, its ``chunks`` rows, is stored instead beside the recording as
``search.jsonl``, encrypted like the recording (one JSON array
``[kind, ref, time_s, times, text]`` a line, as ``index._Content.chunks``).

A search decrypts these files and loads their chunks into an in-memory SQLite index with
the schema of ``index.sqlite3`` (``archive.fts.memory_index``: the same FTS5 table and
tokenizer), then runs the very query the index runs (``archive.fts.select_hits``): the
same query language, accent folding, bm25 rank and snippets as for plain sessions. No
pyte rendering at search time, no plaintext on disk (the database and SQLite's temporary
storage stay in memory). Cost: AES-GCM decryption, JSON parsing and FTS5 indexing of the
chunks that could match (``archive.fts.could_match`` passes over the others: a chunk
without any query word cannot be a hit; bm25 then weighs the words over the chunks kept),
bench/RESULTS-encrypted-search.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.fts import could_match, fts_query, memory_index, select_hits
from shellkeep.archive.hits import Chunk, SearchHit
from shellkeep.errors import DataError, KeyUnavailable, ShellkeepError
from shellkeep.vault.crypto import SEARCH_FILE, is_encrypted, key_id_of_file, split_records, write_records_atomic
from shellkeep.store.session import EXCHANGES_FILE, SCREEN_FILE, SessionMeta
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

log = get_logger(__name__)


def is_private(meta: SessionMeta) -> bool:
    """Return whether ``meta``'s session is encrypted (its text stays out of the index).

    Its recording is encrypted, or, for a session without one (imported from an agent's
    own history, ``detail = "conversation"``), its ``exchanges.jsonl`` is.
    """
    cast = Path(meta.cast)
    if is_encrypted(cast):
        return True
    return not cast.exists() and (is_encrypted(meta.folder / EXCHANGES_FILE) or is_encrypted(meta.folder / SCREEN_FILE))


def _key_id_of(meta: SessionMeta) -> str:
    """Return the key id of the session's recording, else of its exchanges ("" when neither is encrypted)."""
    folder = meta.folder
    return key_id_of_file(Path(meta.cast)) or key_id_of_file(folder / EXCHANGES_FILE) or key_id_of_file(folder / SCREEN_FILE) or ""


def save_content(meta: SessionMeta, chunks: Sequence[Chunk], vault: Vault) -> None:
    """Store the searchable text of an encrypted session, encrypted, as ``search.jsonl``.

    The key is the one the recording uses when it is current, else the current key.
    Raises OSError, KeyUnavailable.
    """
    data = "".join(json.dumps(list(c), ensure_ascii=False) + "\n" for c in chunks).encode("utf-8")
    key = vault.key_for_rewrite(_key_id_of(meta))
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


def missing_keys_line(missing: dict[str, str], what: str) -> str:
    """Return one line for the sessions (id -> key id) whose key no store holds.

    what: what was not done to them ("not searched", "not indexed").
    """
    count = len(missing)
    keys = sorted(set(missing.values()))
    return (
        f"{count} encrypted session{'' if count == 1 else 's'} {what}: "
        f"key{'' if len(keys) == 1 else 's'} {', '.join(keys)} missing (suspended); "
        "import it with 'shellkeep key import FILE'"
    )


def search_private(
    vault: Vault,
    sessions: Iterable[SessionMeta],
    query: str,
    *,
    limit: int = 20,
    build: Callable[[SessionMeta], Sequence[Chunk]] | None = None,
    on_skip: Callable[[str], None] | None = None,
) -> list[SearchHit]:
    """Search the encrypted sessions among ``sessions``; best hits first, at most ``limit``.

    Hits are those ``index.search`` gives for the same text in a plain session (kinds,
    times, snippets, highlights; bm25 ranks over these sessions' text).
    build: makes a session's chunks when its ``search.jsonl`` is missing (then stored for
    next time); None skips such sessions. Sessions whose key is missing are skipped with
    one logged warning for them all (``missing_keys_line``), also given to ``on_skip``; one whose file is damaged
    with a warning of its own. Raises UserInputError for an empty query.
    """
    fts_query(query)  # refuse a query without a word before decrypting anything
    keep = could_match(query)
    loaded: list[tuple[SessionMeta, list[Chunk]]] = []
    missing: dict[str, str] = {}  # session id -> the key id no store holds
    for meta in sessions:
        if not is_private(meta):
            continue
        try:
            chunks = load_content(meta, vault)
            if chunks is None and build is not None:
                chunks = list(build(meta))
                save_content(meta, chunks, vault)
        except KeyUnavailable:
            missing[meta.id] = key_id_of_file(meta.folder / SEARCH_FILE) or _key_id_of(meta) or "?"
            continue
        except (OSError, ShellkeepError) as exc:
            log.warning("skipping encrypted session %s in search: %s", meta.id, exc)
            continue
        kept = [chunk for chunk in chunks or () if keep is None or keep(chunk[4])]
        if kept:
            loaded.append((meta, kept))
    if missing:
        line = missing_keys_line(missing, "not searched")
        log.warning("%s", line)
        if on_skip is not None:
            on_skip(line)
    if not loaded:
        return []
    conn = memory_index()
    try:
        conn.execute("BEGIN")
        for meta, chunks in loaded:
            conn.execute(
                "INSERT INTO sessions (id, project, folder, name, agent, status, started_at, started_s, meta_key) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, '')",
                (meta.id, meta.project, str(meta.folder), meta.name, meta.agent, meta.status, meta.started_at),
            )
            conn.executemany(
                "INSERT INTO chunks (session_id, kind, ref, time_s, times, text) VALUES (?, ?, ?, ?, ?, ?)",
                [(meta.id, *chunk) for chunk in chunks],
            )
        conn.execute("COMMIT")
        return select_hits(conn, query, limit=limit)
    finally:
        conn.close()
