"""Own the searchable text of what a session's screen showed, as ``sync`` carries it.

``sync push`` sends, beside each session with a recording, ``screen.jsonl.zst``: the
transcript and marker chunks the index keeps of it (``[kind, ref, time_s, times, text]`` a
line, as the ``chunks`` table; JSON Lines compressed with zstd, RFC 8878), sealed in the
bucket like every object when encryption is on. ``sync pull`` fetches it with the exchanges,
and the other machine indexes it (``archive.content``) until the recording itself is
fetched: a search there finds what was only on this machine's screen, with no recording
pulled. The chunks are read from this machine's index when it holds the session's current
content (or from ``search.jsonl`` for an encrypted one), else rendered, and made compact
(``archive.screen_compact``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from shellkeep.archive.hits import Chunk
from shellkeep.errors import DataError
from shellkeep.store.session import SCREEN_FILE, SessionMeta

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

SCREEN_KINDS = ("transcript", "marker")
"""The chunks of a session only its recording holds (prompts and answers travel as exchanges)."""

_LEVEL = 19
"""zstd level: the text is made once a push and read once a pull; small beats fast here..."""

_FAST_LEVEL = 3
_FAST_ABOVE_BYTES = 1 << 20
"""...up to this size; a bigger text (a huge recording) would take seconds a MB at level 19."""


def encode(chunks: Sequence[Chunk]) -> bytes:
    """Return ``chunks`` as compressed JSON Lines (the same chunks give the same bytes)."""
    import zstandard

    data = "".join(json.dumps(list(c), ensure_ascii=False) + "\n" for c in chunks).encode("utf-8")
    return zstandard.ZstdCompressor(level=_LEVEL if len(data) <= _FAST_ABOVE_BYTES else _FAST_LEVEL).compress(data)


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
