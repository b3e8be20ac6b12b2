"""Own the searchable text of what a session's screen showed, as ``sync`` carries it.

``sync push`` sends, beside each session with a recording, ``screen.jsonl.zst``: the
transcript and marker chunks the index keeps of it (``[kind, ref, time_s, times, text]`` a
line, as the ``chunks`` table; JSON Lines compressed with zstd, RFC 8878), sealed in the
bucket like every object when encryption is on. ``sync pull`` fetches it with the exchanges,
and the other machine indexes it (``archive.content``) until the recording itself is
fetched: a search there finds what was only on this machine's screen, with no recording
pulled. The chunks are read from this machine's index when it holds the session's current
content (or from ``search.jsonl`` for an encrypted one), else rendered.

Compact: a screen line whose words the exchanges already hold (an agent's answer as its TUI
drew it: every run of ``_GRAM`` words of the line is in a prompt or answer) is left out,
since the exchanges travel anyway. On a real Claude Code session of 8 exchanges that keeps
41 of 496 lines: 0.6 KB pulled instead of 14.4 KB (bench/screen_text_bench.py).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from shellkeep.archive.hits import Chunk
from shellkeep.errors import DataError, ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import SCREEN_FILE, SessionMeta

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

log = get_logger(__name__)

_WORD = re.compile(r"\w+")

SCREEN_KINDS = ("transcript", "marker")
"""The chunks of a session only its recording holds (prompts and answers travel as exchanges)."""

_GRAM = 3
"""Words in a run: a line whose every run of this many words is in the exchanges is held by them."""

_LEVEL = 19
"""zstd level: the text is made once a push and read once a pull; small beats fast here."""


def encode(chunks: Sequence[Chunk]) -> bytes:
    """Return ``chunks`` as compressed JSON Lines (the same chunks give the same bytes)."""
    import zstandard

    data = "".join(json.dumps(list(c), ensure_ascii=False) + "\n" for c in chunks).encode("utf-8")
    return zstandard.ZstdCompressor(level=_LEVEL).compress(data)


def decode(raw: bytes, where: str) -> list[Chunk]:
    """Return the chunks of a ``screen.jsonl.zst``; raises DataError when it is damaged."""
    import zstandard

    try:
        text = zstandard.ZstdDecompressor().decompressobj().decompress(raw).decode("utf-8", "replace")
        chunks: list[Chunk] = []
        for line in text.splitlines():
            kind, ref, time_s, stamps, body = json.loads(line)
            if kind in SCREEN_KINDS:
                chunks.append((str(kind), ref if isinstance(ref, int) else None, float(time_s), str(stamps), str(body)))
        return chunks
    except (zstandard.ZstdError, ValueError, TypeError) as exc:
        raise DataError(f"{where} is damaged ({exc}); pull the session again") from exc


def read_screen_text(meta: SessionMeta, vault: Vault) -> list[Chunk]:
    """Return the chunks of a pulled session's ``screen.jsonl.zst`` ([] when it has none).

    Raises DataError for a damaged file, KeyUnavailable when its key is missing.
    """
    try:
        raw = vault.read_private(meta.folder / SCREEN_FILE)
    except FileNotFoundError:
        return []
    return decode(raw, str(meta.folder / SCREEN_FILE))


def screen_text(paths: Paths, meta: SessionMeta, vault: Vault) -> bytes | None:
    """Return the ``screen.jsonl.zst`` of an ended session of this machine, None when it has no
    recording or its screen showed nothing. Blocks while a recording not indexed yet is rendered."""
    if not os.path.exists(meta.cast):
        return None
    chunks = _indexed(paths, meta, vault)
    if chunks is None:
        from shellkeep.archive.content import content_of

        chunks = [c for c in content_of(meta, vault).chunks if c[0] in SCREEN_KINDS]
    from shellkeep.vault.exchanges import read_exchanges

    said: set[tuple[str, ...]] = set()
    try:
        for exchange in read_exchanges(meta, vault):
            said.update(_grams(exchange.prompt))
            said.update(_grams(exchange.answer))
    except (OSError, ShellkeepError) as exc:  # nothing left out then
        log.debug("reading the exchanges of %s: %s", meta.id, exc)
    chunks = [kept for c in chunks if (kept := _unsaid(c, said)) is not None]
    return encode(chunks) if chunks else None


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
    from shellkeep.archive.private_search import is_private, load_content

    try:
        if is_private(meta):
            stored = load_content(meta, vault)
            return None if stored is None else [c for c in stored if c[0] in SCREEN_KINDS]
        if not paths.index.exists():
            return None
        from shellkeep.archive.index import with_index

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
