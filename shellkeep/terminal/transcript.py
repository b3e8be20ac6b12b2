"""Turn a recording into a plain-text transcript: what the user saw, each line once.

The recording is rendered with ``shellkeep.terminal.emulator.Terminal`` (pyte underneath). A line
enters the transcript when it leaves the screen: scrolled off the top (or out of a scroll
region), erased by a clear, pushed out by inserted or deleted lines, dropped by a reset,
a resize, or by leaving the alternate screen; whatever is still on screen at the end
comes last. Entering the alternate screen takes a snapshot of the main screen first, so
the order stays the order of first appearance. Each distinct line is kept once (exact
text after trailing spaces are stripped), so a TUI redrawing the same screen hundreds of
times adds its text once; blank lines are dropped.

Each line carries the time (float seconds since session start) of the event that first
drew on its row, the moment from which a replay shows it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, cast

from shellkeep.asciicast.model import Event
from shellkeep.asciicast.reader import Cast
from shellkeep.terminal.emulator import HookedScreen, Terminal, pyte_screen_class
from shellkeep.termsize import TermSize

if TYPE_CHECKING:
    _ScreenBase = HookedScreen
else:
    _ScreenBase = object  # the hooked pyte screen, joined in by ``_losing_screen_class``

__all__ = ["MAX_DISTINCT_LINES", "REORDER_LINES", "TranscriptLine", "iter_transcript", "read_transcript", "transcript_text"]

MAX_DISTINCT_LINES = 200_000
"""Most line hashes remembered for de-duplication; past it the memory starts afresh
(a bound of about 15 MB however long the recording; a line may then come back once)."""

REORDER_LINES = 5_000
"""Most lines held back to put them in order of first appearance (see ``iter_transcript``)."""


@dataclass(frozen=True, slots=True)
class TranscriptLine:
    """One line of a transcript: ``time_s`` float seconds since session start, ``text``
    without trailing spaces (never empty)."""

    time_s: float
    text: str


def iter_transcript(events: Iterable[Event], size: TermSize) -> Iterator[TranscriptLine]:
    """Yield the transcript lines of ``events`` (from a blank screen of ``size``), in order.

    ``o`` events are drawn and ``r`` events resize; others are ignored. Lines leave the
    screen out of order (a header stays while the text under it scrolls away), so they are
    held until no row still on screen was drawn earlier, at most ``REORDER_LINES`` of them:
    the output is in order of first appearance, and memory stays bounded whatever the
    length of the recording.
    """
    terminal = _Collector(size)
    held: list[tuple[float, int, TranscriptLine]] = []
    seq = 0
    for event in events:
        if event.code == "o":
            terminal.now_s = event.time
            terminal.feed(event.data)
        elif event.code == "r":
            terminal.now_s = event.time
            try:
                new_size = TermSize.parse(event.data)
            except ValueError:
                continue
            terminal.resize(new_size)
        else:
            continue
        if not terminal.lines_out:
            continue
        for line in terminal.take():
            heapq.heappush(held, (line.time_s, seq, line))
            seq += 1
        watermark = terminal.watermark()
        while held and (held[0][0] <= watermark or len(held) > REORDER_LINES):
            yield heapq.heappop(held)[2]
    terminal.emit_all()
    for line in terminal.take():
        heapq.heappush(held, (line.time_s, seq, line))
        seq += 1
    while held:
        yield heapq.heappop(held)[2]


def read_transcript(cast: Cast) -> Iterator[TranscriptLine]:
    """Yield the transcript lines of the recording ``cast`` (asciicast v1, v2 or v3).

    Raises DataError on a corrupt recording.
    """
    return iter_transcript(cast.events(), cast.header.size)


def transcript_text(cast: Cast) -> Iterator[str]:
    """Yield the transcript of the recording ``cast`` as text lines (no newlines)."""
    for line in read_transcript(cast):
        yield line.text


_DATA = attrgetter("data")


class _LosingScreen(_ScreenBase):
    """The terminal's screen, telling its owner which rows are about to be lost."""

    owner: _Collector

    def index(self) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y == bottom:
            self.owner.lose(range(top, top + 1), shift=(top, bottom, -1))
        super().index()

    def reverse_index(self) -> None:
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y == top:
            self.owner.lose(range(bottom, bottom + 1), shift=(top, bottom, 1))
        super().reverse_index()

    def insert_lines(self, count: int | None = None) -> None:
        count = count or 1
        top, bottom = self.margins or (0, self.lines - 1)
        y = self.cursor.y
        if top <= y <= bottom:
            count = min(count, bottom - y + 1)
            self.owner.lose(range(bottom - count + 1, bottom + 1), shift=(y, bottom, count))
        super().insert_lines(count)

    def delete_lines(self, count: int | None = None) -> None:
        count = count or 1
        top, bottom = self.margins or (0, self.lines - 1)
        y = self.cursor.y
        if top <= y <= bottom:
            count = min(count, bottom - y + 1)
            self.owner.lose(range(y, y + count), shift=(y, bottom, -count))
        super().delete_lines(count)

    def erase_in_display(self, how: int = 0, *args: object, **kwargs: object) -> None:
        y, x = self.cursor.y, self.cursor.x
        if how == 0:
            # The cursor row keeps what is left of the cursor (a shell's prompt being
            # redrawn at each key); it is whole-lost only by a clear from the home position.
            first = y if (x == 0 and y == 0) else y + 1
            self.owner.lose(range(first, self.lines))
        elif how == 1:
            self.owner.lose(range(0, y))
        else:
            self.owner.lose(range(self.lines))
        super().erase_in_display(how, *args, **kwargs)

    def reset(self) -> None:
        if getattr(self, "owner", None) is not None:
            self.owner.lose(range(self.lines))
        super().reset()


@cache
def _losing_screen_class() -> type[_LosingScreen]:
    """Return ``_LosingScreen`` joined to the terminal's pyte screen class (pyte loaded on first use)."""
    return cast("type[_LosingScreen]", type("LosingScreen", (_LosingScreen, pyte_screen_class()), {}))


class _Collector(Terminal):
    """A ``Terminal`` that collects the lines leaving its screen (see the module doc)."""

    def __init__(self, size: TermSize) -> None:
        super().__init__(size)
        screen = self._screen
        screen.__class__ = _losing_screen_class()
        cast(_LosingScreen, screen).owner = self
        self._csi_handlers = self._make_csi_handlers()  # bind the hooked methods
        self.now_s = 0.0
        self.lines_out: list[TranscriptLine] = []
        self._since: list[float | None] = [None] * size.rows
        self._seen: set[int] = set()

    # -- what the screen reports ------------------------------------------------------

    def lose(self, rows: range, shift: tuple[int, int, int] | None = None) -> None:
        """Emit ``rows`` (about to leave the screen), then move the row times along.

        shift: (top, bottom, delta): rows top..bottom move by delta (negative: up).
        """
        for y in rows:
            self._emit_row(y)
        since = self._since
        for y in rows:
            if 0 <= y < len(since):
                since[y] = None
        if shift is not None:
            top, bottom, delta = shift
            block = since[top : bottom + 1]
            blank: list[float | None] = [None] * abs(delta)
            if delta < 0:
                block = block[-delta:] + blank
            else:
                block = blank + block[: len(block) - delta]
            since[top : bottom + 1] = block

    def emit_all(self) -> None:
        """Emit every row on screen (the end of the recording), top to bottom."""
        self.lose(range(self._screen.lines))

    def watermark(self) -> float:
        """Return the earliest time a row still on screen was drawn (inf: none)."""
        return min((t for t in self._since if t is not None), default=math.inf)

    def take(self) -> list[TranscriptLine]:
        """Return and forget the lines emitted so far."""
        out, self.lines_out = self.lines_out, []
        return out

    def _emit_row(self, y: int) -> None:
        screen = self._screen
        row = screen.buffer.get(y)
        if not row:
            return
        # Cells past the last one written are blank: stop there (rows are sparse dicts).
        width = min(max(row) + 1, screen.columns)
        text = "".join(map(_DATA, map(row.__getitem__, range(width)))).rstrip()
        if not text:
            return
        key = hash(text)
        if key in self._seen:
            return
        if len(self._seen) >= MAX_DISTINCT_LINES:
            self._seen.clear()
        self._seen.add(key)
        since = self._since[y] if y < len(self._since) else None
        self.lines_out.append(TranscriptLine(self.now_s if since is None else since, text))

    # -- Terminal operations that bypass pyte's line methods ----------------------------

    def _draw(self, text: str) -> None:
        since = self._since
        y = self._screen.cursor.y
        if y < len(since) and since[y] is None:
            since[y] = self.now_s
        super()._draw(text)
        y = self._screen.cursor.y
        if y < len(since) and since[y] is None:
            since[y] = self.now_s

    def _enter_alternate(self, *, save_cursor: bool) -> None:
        if self._saved_main is None and hasattr(self, "_since"):
            self.lose(range(self._screen.lines))
        super()._enter_alternate(save_cursor=save_cursor)

    def _leave_alternate(self) -> None:
        if self._saved_main is not None:
            self.lose(range(self._screen.lines))
        super()._leave_alternate()

    def _scroll(self, count: int, *, up: bool) -> None:
        screen = self._screen
        top, bottom = screen.margins or (0, screen.lines - 1)
        count = min(max(count, 1), bottom - top + 1)
        if up:
            self.lose(range(top, top + count), shift=(top, bottom, -count))
        else:
            self.lose(range(bottom - count + 1, bottom + 1), shift=(top, bottom, count))
        super()._scroll(count, up=up)

    def resize(self, size: TermSize) -> None:
        if (size.rows, size.cols) != (self._screen.lines, self._screen.columns):
            self.lose(range(self._screen.lines))
            self._since = [None] * size.rows
        super().resize(size)
