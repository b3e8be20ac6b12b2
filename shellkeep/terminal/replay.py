"""Replay recordings on the terminal emulator: the screen at any time, the last screen fast.

The recording comes opened (an ``asciicast.reader.Cast``, from the vault) and, for the last
screen, optionally with its plain bytes to read from the end (``terminal.tail``); this layer
opens no file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from shellkeep.asciicast.model import Event
from shellkeep.asciicast.reader import Cast
from shellkeep.asciicast.tail import Searchable
from shellkeep.terminal.emulator import Terminal
from shellkeep.terminal.snapshot import ScreenSnapshot
from shellkeep.terminal.tail import read_tail
from shellkeep.termsize import TermSize

__all__ = ["iter_screens", "last_screen", "render_events", "screen_at"]


def render_events(events: Iterable[Event], size: TermSize, *, alternate: bool = False) -> ScreenSnapshot:
    """Render events from a blank screen of ``size`` and return the final screen.

    ``o`` events are drawn, ``r`` events resize; ``i``, ``m`` and ``x`` are ignored.
    alternate: start on the alternate screen (used when a tail starts inside a full-screen
    program).
    """
    terminal = Terminal(size, alternate=alternate)
    for event in events:
        terminal.apply(event)
    return terminal.snapshot()


def screen_at(cast: Cast, time_s: float) -> ScreenSnapshot:
    """Return the screen of the recording ``cast`` at ``time_s`` seconds since its start.

    Replays from the start (every event with ``time <= time_s``); ``math.inf`` gives the
    screen at the end by full replay. Raises DataError on a corrupt recording.
    """
    return next(iter_screens(cast, [time_s]))


def iter_screens(cast: Cast, times: Iterable[float]) -> Iterator[ScreenSnapshot]:
    """Yield the screen of ``cast`` at each of ``times`` (float seconds since start), in one replay.

    times must not decrease (ValueError otherwise). Raises DataError on a corrupt recording.
    """
    terminal = Terminal(cast.header.size)
    events = iter(cast.events())
    waiting: Event | None = None
    previous = -math.inf
    for time_s in times:
        if time_s < previous:
            raise ValueError(f"times must not decrease: {time_s} after {previous}")
        previous = time_s
        while True:
            if waiting is None:
                waiting = next(events, None)
                if waiting is None:
                    break
            if waiting.time > time_s:
                break
            terminal.apply(waiting)
            waiting = None
        yield terminal.snapshot()


def last_screen(cast: Cast, size_hint: TermSize | None = None, *, mapped: Searchable | None = None) -> ScreenSnapshot:
    """Return the last screen of the recording ``cast``, without replaying all of it.

    mapped: the recording's plain bytes with random access when the vault can give them
    (``vault.recording.open_tail_source``: a plain file mapped, a seekable zstd file's
    frames): it is then read from its end (see ``terminal.tail.read_tail``), for a 100 MB
    recording in a fraction of a second; otherwise the events are streamed once.
    size_hint: the terminal size in effect at the start of the recording when the caller
    knows better than the header (resize events still apply); None means the header's.
    Raises DataError on a corrupt recording.
    """
    tail = read_tail(cast, mapped=mapped, size_hint=size_hint)
    return render_events(tail.events, tail.size, alternate=tail.alternate)
