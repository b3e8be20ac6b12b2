"""Define the version-neutral model of a recording: ``Header``, ``Event``, ``TermSize``."""

from __future__ import annotations

from dataclasses import dataclass, field

from shellkeep.termsize import TermSize

__all__ = ["Event", "Header", "TermSize"]


@dataclass(frozen=True, slots=True)
class Header:
    """The header of a recording, whatever its version.

    timestamp: int seconds since the Unix epoch of the recording's start, or None.
    env: the recorded environment subset (SHELL, TERM), values may be None.
    """

    size: TermSize
    version: int = 2
    timestamp: int | None = None
    command: str | None = None
    title: str | None = None
    idle_time_limit: float | None = None
    env: dict[str, str | None] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a recording.

    time: float seconds since session start (absolute, also for v3 files, whose
    intervals the reader adds up). code: ``o`` output, ``i`` input, ``r`` resize
    (data ``"COLSxROWS"``), ``m`` marker (data a label), ``x`` exit (v3, data the status).
    """

    time: float
    code: str
    data: str
