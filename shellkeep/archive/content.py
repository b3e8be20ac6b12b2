"""Build what a session adds to the full-text index: transcript chunks, markers, prompts and answers.

No database here: the content is rendered (with pyte, through ``terminal.transcript``) before
the short write transaction that stores it (``archive.index.store_session``). An encrypted
session's content is not returned but stored encrypted beside it (``archive.private_search``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.private_search import is_private, save_content
from shellkeep.archive.screen_text import read_screen_text
from shellkeep.errors import DataError, KeyUnavailable, ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta
from shellkeep.vault.crypto import key_id_of_file

if TYPE_CHECKING:
    from shellkeep.archive.timeline import Marker
    from shellkeep.asciicast.model import Event
    from shellkeep.terminal.transcript import TranscriptLine
    from shellkeep.vault.access import Vault

__all__ = ["CHUNK_CHARS", "CHUNK_LINES", "Content", "MAX_TRANSCRIPT_CHARS", "content_of", "indexed_content"]

log = get_logger(__name__)

MAX_TRANSCRIPT_CHARS = 16_000_000
"""Most transcript characters indexed per session; the rest of a huge recording is still
replayable and exportable, only not searchable."""

CHUNK_LINES = 20
CHUNK_CHARS = 2_000


@dataclass(slots=True)
class Content:
    """What a session adds to the full-text index (built outside any transaction)."""

    chunks: list[tuple[str, int | None, float, str, str]] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


def content_of(meta: SessionMeta, vault: Vault) -> Content:
    """Render the transcript, read markers and exchanges of a session (no database here).

    An unreadable recording leaves the transcript empty (with a logged warning): the session
    is still listed and its exchanges searchable.
    """
    # The emulator, the timeline and the exchanges (with redaction) are imported here, on the
    # cold path of indexing a session: listing and searching an index that is up to date,
    # what ``shellkeep ls`` and ``search`` do at each start, never need them.
    from shellkeep.archive.timeline import Marker, exchange_offset_s, with_checkpoints
    from shellkeep.store.checkpoints import read_checkpoints
    from shellkeep.terminal.transcript import iter_transcript
    from shellkeep.vault.exchanges import read_exchanges

    content = Content()
    markers = content.markers

    def watch(events: Iterable[Event]) -> Iterator[Event]:
        for event in events:
            if event.code == "m":
                markers.append(Marker(len(markers) + 1, event.time, event.data))
            yield event

    kept = meta.detail == "full" or os.path.exists(meta.cast)  # record.detail: none may have been kept
    if meta.extra.get("remote") and not os.path.exists(meta.cast):
        kept = False  # a pulled session whose recording is not fetched yet (app.remote): the text pulled with it
        try:
            content.chunks += read_screen_text(meta, vault)
        except ShellkeepError as exc:
            log.warning("could not index the screen text of %s: %s", meta.id, exc)
    try:
        if kept:
            cast = vault.open_recording(Path(meta.cast))
            events = watch(cast.events())
            _add_transcript(content, iter_transcript(events, cast.header.size), meta.id)
            for _ in events:  # past the indexed size: markers only
                pass
    except (OSError, DataError) as exc:
        log.warning("could not index the recording of %s: %s", meta.id, exc)
    try:
        markers[:] = with_checkpoints(markers, read_checkpoints(meta.folder))
    except OSError as exc:
        log.warning("could not read the checkpoints of %s: %s", meta.id, exc)
    for marker in markers:
        if marker.label:
            content.chunks.append(("marker", marker.n, marker.time_s, "", marker.label))
    for exchange in read_exchanges(meta, vault):
        at = exchange_offset_s(meta, exchange) or 0.0
        number = exchange.index + 1
        if exchange.prompt.strip():
            content.chunks.append(("prompt", number, at, "", exchange.prompt))
        answer = exchange.answer
        if exchange.tool_calls:
            answer += "\n" + "\n".join(f"{c.name}: {c.summary}" for c in exchange.tool_calls)
        if answer.strip():
            content.chunks.append(("answer", number, at, "", answer))
    return content


def indexed_content(vault: Vault, meta: SessionMeta, missing: dict[str, str] | None = None) -> Content:
    """Return what the index keeps of an ended session (no database here).

    A plain session: its ``content_of``. An encrypted one: nothing; its text is stored
    encrypted as ``search.jsonl`` instead. Failing to build or store that (a missing key,
    a full disk) is logged: a search builds it later (``private_search.search_private``).
    missing: collects session id -> key id for a missing key instead of logging it (the
    caller reports them all in one line).
    """
    if not is_private(meta):
        return content_of(meta, vault)
    try:
        save_content(meta, content_of(meta, vault).chunks, vault)
    except (OSError, ShellkeepError) as exc:
        if missing is not None and isinstance(exc, KeyUnavailable):
            missing[meta.id] = key_id_of_file(Path(meta.cast)) or "?"
        else:
            log.warning("could not store the search text of encrypted session %s (%s); a search will", meta.id, exc)
    return Content()


def _add_transcript(content: Content, lines: Iterable[TranscriptLine], session_id: str) -> None:
    total = 0
    texts: list[str] = []
    times: list[float] = []
    size = 0

    def flush() -> None:
        nonlocal size
        if texts:
            stamps = " ".join(f"{t:.2f}" for t in times)
            content.chunks.append(("transcript", None, times[0], stamps, "\n".join(texts)))
            texts.clear()
            times.clear()
            size = 0

    for line in lines:
        text = line.text
        texts.append(text)
        times.append(line.time_s)
        size += len(text) + 1
        total += len(text) + 1
        if len(texts) >= CHUNK_LINES or size >= CHUNK_CHARS:
            flush()
        if total >= MAX_TRANSCRIPT_CHARS:
            log.warning("the transcript of %s is longer than %d characters; indexed up to there", session_id, MAX_TRANSCRIPT_CHARS)
            break
    flush()


