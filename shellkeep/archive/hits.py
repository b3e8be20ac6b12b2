"""What a search returns: ``SearchHit``, shared by the index's search and the search of sealed sessions."""

from __future__ import annotations

from dataclasses import dataclass

Chunk = tuple[str, "int | None", float, str, str]
"""(kind, ref, time_s, times, text) as in the index's ``chunks`` table."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result (field names are the ``search --json`` contract).

    kind: ``transcript`` (what the screen showed), ``prompt``, ``answer`` or ``marker``.
    exchange: 1-based number of the exchange for prompts and answers, else None.
    time: float seconds since the session's start where the hit is (for ``replay --at``).
    snippet: the text around the match on one line; highlights: ``[start, end)`` character
    ranges of the matched terms in ``snippet``. rank: bm25 score, lower is better.
    machine: the host name of the machine a pulled session was recorded on (``search
    --remote``), None for a session of this machine.
    """

    session_id: str
    session_name: str | None
    project: str
    agent: str
    started_at: str
    kind: str
    exchange: int | None
    time: float
    snippet: str
    highlights: list[list[int]]
    rank: float
    machine: str | None = None
