"""Turn a recording into a plain-text transcript: what the user saw, each line once.

The recording is rendered with ``shellkeep.terminal.emulator.Terminal`` (pyte underneath). A line
enters the transcript when it leaves the screen: scrolled off the top (or out of a scroll
region), erased by a clear, pushed out by inserted or deleted lines, dropped by a reset,
a resize, or by leaving the alternate screen; whatever is still on screen at the end
comes last. Entering the alternate screen takes a snapshot of the main screen first, so
the order stays the order of first appearance. A redraw adds nothing: a line whose exact
text (trailing spaces stripped) is kept already is not kept again, so a TUI redrawing the
same screen hundreds of times adds its text once. Output going down the screen is not a
redraw: a row drawn below every row drawn before (or at the bottom as the screen scrolls),
with no clear, inserted or deleted lines or other screen since, keeps its repeats when it
scrolls off or the recording ends (``echo x`` run three times is there three times).
Blank lines are dropped.

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
from typing import TYPE_CHECKING, TypeVar, cast

from shellkeep.asciicast.model import Event
from shellkeep.asciicast.reader import Cast
from shellkeep.terminal.emulator import HookedScreen, Terminal, pyte_screen_class
from shellkeep.termsize import TermSize

if TYPE_CHECKING:
    _ScreenBase = HookedScreen
else:
    _ScreenBase = object  # the hooked pyte screen, joined in by ``_losing_screen_class``

__all__ = ["MAX_DISTINCT_LINES", "REORDER_LINES", "TranscriptLine", "iter_transcript", "read_transcript", "transcript_text"]

_T = TypeVar("_T")

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
            # A line scrolled off the whole screen (into a terminal's scrollback) is output,
            # kept even when it repeats one; scrolled inside a region, a TUI's view.
            self.owner.lose(range(top, top + 1), shift=(top, bottom, -1), scrolled=not self.margins)
        super().index()

    def reverse_index(self) -> None:
        self.owner.redrawn()
        top, bottom = self.margins or (0, self.lines - 1)
        if self.cursor.y == top:
            self.owner.lose(range(bottom, bottom + 1), shift=(top, bottom, 1))
        super().reverse_index()

    def insert_lines(self, count: int | None = None) -> None:
        self.owner.redrawn()
        count = count or 1
        top, bottom = self.margins or (0, self.lines - 1)
        y = self.cursor.y
        if top <= y <= bottom:
            count = min(count, bottom - y + 1)
            self.owner.lose(range(bottom - count + 1, bottom + 1), shift=(y, bottom, count))
        super().insert_lines(count)

    def delete_lines(self, count: int | None = None) -> None:
        self.owner.redrawn()
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
        self.owner.redrawn()
        super().erase_in_display(how, *args, **kwargs)

    def reset(self) -> None:
        if getattr(self, "owner", None) is not None:
            self.owner.lose(range(self.lines))
            self.owner.redrawn()
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
        self._fresh: list[bool] = [False] * size.rows
        """Per row: drawn as output going down the screen (not a redraw): a repeat is kept."""
        self._linear = True
        """No redraw since the cursor last went below ``_low`` (see ``redrawn``)."""
        self._low = 0
        """The lowest row drawn on so far."""

    # -- what the screen reports ------------------------------------------------------

    def lose(self, rows: range, shift: tuple[int, int, int] | None = None, *, scrolled: bool = False) -> None:
        """Emit ``rows`` (about to leave the screen), then move the row times along.

        shift: (top, bottom, delta): rows top..bottom move by delta (negative: up).
        scrolled: the rows scroll off the screen, or the recording ends: a row drawn as
        output going down (``_fresh``) is kept even when its text came before (``echo x``
        run twice); otherwise (a clear, a TUI's redraw) a text already kept is not again.
        """
        for y in rows:
            self._emit_row(y, repeat=scrolled and 0 <= y < len(self._fresh) and self._fresh[y])
        since, fresh = self._since, self._fresh
        for y in rows:
            if 0 <= y < len(since):
                since[y] = None
                fresh[y] = False
        if shift is not None:
            top, bottom, delta = shift
            since[top : bottom + 1] = _shifted(since[top : bottom + 1], delta, None)
            fresh[top : bottom + 1] = _shifted(fresh[top : bottom + 1], delta, False)

    def redrawn(self) -> None:
        """Note a redraw (a clear, lines inserted or deleted, another screen): rows drawn
        from now on, down to the lowest row drawn before, are a redraw, not new output."""
        self._linear = False

    def emit_all(self) -> None:
        """Emit every row on screen (the end of the recording), top to bottom."""
        self.lose(range(self._screen.lines), scrolled=True)

    def watermark(self) -> float:
        """Return the earliest time a row still on screen was drawn (inf: none)."""
        return min((t for t in self._since if t is not None), default=math.inf)

    def take(self) -> list[TranscriptLine]:
        """Return and forget the lines emitted so far."""
        out, self.lines_out = self.lines_out, []
        return out

    def _emit_row(self, y: int, *, repeat: bool = False) -> None:
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
        if key in self._seen and not repeat:
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
        self._note_row(y)
        if y < len(since) and since[y] is None:
            since[y] = self.now_s
            self._fresh[y] = self._linear
        super()._draw(text)
        y = self._screen.cursor.y
        self._note_row(y)
        if y < len(since) and since[y] is None:
            since[y] = self.now_s
            self._fresh[y] = self._linear

    def _note_row(self, y: int) -> None:
        """Drawing above the lowest row drawn so far is a redraw (the cursor went back up);
        below it, new output again."""
        if y < self._low:
            self._linear = False
        elif y > self._low:
            self._low, self._linear = y, True

    def _enter_alternate(self, *, save_cursor: bool) -> None:
        if self._saved_main is None and hasattr(self, "_since"):
            self.lose(range(self._screen.lines))
            self.redrawn()
        super()._enter_alternate(save_cursor=save_cursor)

    def _leave_alternate(self) -> None:
        if self._saved_main is not None:
            self.lose(range(self._screen.lines))
            self.redrawn()
        super()._leave_alternate()

    def _scroll(self, count: int, *, up: bool) -> None:
        self.redrawn()
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
            self._fresh = [False] * size.rows
            self.redrawn()
        super().resize(size)


def _shifted(block: list[_T], delta: int, blank: _T) -> list[_T]:
    """Return ``block`` moved by ``delta`` rows (negative: up), ``blank`` filling in."""
    fill = [blank] * abs(delta)
    return block[-delta:] + fill if delta < 0 else fill + block[: len(block) - delta]
