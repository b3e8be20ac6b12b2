"""Find where the last screen of a recording starts, reading as little of it as possible.

``read_tail`` reads a recording's events backwards from its end (through
``asciicast.tail.TailReader``, over bytes the vault maps or decodes on demand) until a point
where the screen was cleared or reset (or a byte budget is spent), finds the terminal size and
screen (main or alternate) in effect there, and returns the events from that point on:
rendering only them gives the last screen. Recordings that cannot be read from their end
(single-frame zstd, sealed, v1) are streamed from the start instead, keeping a bounded tail.

Formats: asciicast v1/v2/v3 (docs.asciinema.org/manual/asciicast/v2), control functions per
ECMA-48 and xterm's ctlseqs (invisible-island.net/xterm/ctlseqs/ctlseqs.html).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from shellkeep.asciicast.model import Event
from shellkeep.asciicast.reader import Cast
from shellkeep.asciicast.tail import Searchable, TailReader, decode_line
from shellkeep.termsize import TermSize

__all__ = ["TAIL_BUDGET_BYTES", "Tail", "TailReason", "read_tail"]

#: Bytes of event lines decoded from the end of a plain recording before ``read_tail`` gives
#: up looking for a clear and renders what it has (the start may then be cosmetically off).
TAIL_BUDGET_BYTES = 1 << 20
_CHECK_BYTES = 4 << 10  # least reading between two analyses of the tail window
_LOOK_FURTHER_BYTES = 64 << 10  # reading before a byte search decides the screen in use
_MARKER_LOOKAHEAD = 24  # a marker may straddle two events; longest marker is shorter
# An alternate screen switch or a reset as written in an event line's JSON text.
_ALTERNATE_NEEDLES = (b"[?1049", b"[?1047", b"[?47", b"u001bc", b"u001Bc")

TailReason = Literal["start", "reset", "clear", "alternate", "budget"]


@cache
def _marker_pattern() -> re.Pattern[str]:
    """Return the pattern of resets, alternate screen switches and full clears (built on first use)."""
    return re.compile(
        r"\x1bc"
        r"|\x1b\[\?(?:[0-9;]*;)?(?:1049|1047|47)(?:;[0-9;]*)?[hl]"
        r"|\x1b\[2J"
        r"|\x1b\[(?:|1|;|1;|;1|1;1)[Hf]\x1b\[0?J"
    )


@dataclass(frozen=True, slots=True)
class Tail:
    """The end of a recording that is enough to rebuild its last screen.

    size: the terminal size in effect where the tail starts. alternate: whether the
    alternate screen was showing there. events: the ``o`` and ``r`` events from the start
    point on; the first may begin inside an event's data, at the clear it starts from
    (times as stored: for v3 files read from the end, intervals, not absolute).
    reason: why it starts there: ``start`` (the recording's start), ``reset`` (ESC c),
    ``clear`` (a full erase of the screen), ``alternate`` (entering the alternate screen),
    ``budget`` (no clear within ``TAIL_BUDGET_BYTES``; the screen may be incomplete).
    bytes_read: bytes of the file decoded as events (the whole file when streamed: v1,
    sealed, or zstd without a seek table).
    bytes_searched: bytes searched (without decoding) for the last resize and alternate
    screen switch before the start; bytes_total: the file's size on disk (its
    plaintext's, read as ``Searchable`` bytes).
    """

    size: TermSize
    alternate: bool
    events: tuple[Event, ...]
    reason: TailReason
    bytes_read: int
    bytes_searched: int
    bytes_total: int


@dataclass(frozen=True, slots=True)
class _Marker:
    offset: int  # in the event's data
    kind: Literal["reset", "enter", "leave", "clear"]


@dataclass(frozen=True, slots=True)
class _Start:
    index: int  # in the window's events
    offset: int  # in that event's data
    alternate: bool
    reason: TailReason


class _NeedInitial(Exception):
    """The choice of a start depends on the (unknown) screen in use at the window start.

    flag_only: the window holds no switch, so the start is right either way and only the
    snapshot's ``alternate`` flag depends on it.
    """

    def __init__(self, *, flag_only: bool = False) -> None:
        super().__init__()
        self.flag_only = flag_only


def _markers(text: str, lookahead: str = "") -> list[_Marker]:
    """Find clears, resets and alternate screen switches starting in ``text``.

    lookahead: the start of the next output, so a marker cut between two events is found.
    """
    found: list[_Marker] = []
    joined = text + lookahead[:_MARKER_LOOKAHEAD] if lookahead else text
    for m in _marker_pattern().finditer(joined):
        if m.start() >= len(text):
            break
        token = m.group()
        if token == "\x1bc":
            found.append(_Marker(m.start(), "reset"))
        elif token.startswith("\x1b[?"):
            found.append(_Marker(m.start(), "enter" if token[-1] == "h" else "leave"))
        else:
            found.append(_Marker(m.start(), "clear"))
    return found


def _final_alternate(markers: Iterable[_Marker], initial: bool | None) -> bool | None:
    state = initial
    for marker in markers:
        if marker.kind == "reset" or marker.kind == "leave":
            state = False
        elif marker.kind == "enter":
            state = True
    return state


def _choose_start(window: Sequence[tuple[Event, list[_Marker]]], initial: bool | None) -> _Start | None:
    """Return the latest point from which rendering fresh gives the final screen, or None.

    initial: the screen in use at the window's start (True alternate, None unknown); raises
    _NeedInitial when the answer depends on it (a None answer never does: the window holds
    no start). Rules, with the emulation's semantics: a reset is always a start; entering
    the alternate screen from the main one is a start when the recording ends on the
    alternate screen; a clear is a start unless it clears the alternate screen and the
    recording ends on the main one.
    """
    state = initial
    candidates: list[tuple[int, _Marker, bool | None]] = []
    for index, (_event, markers) in enumerate(window):
        for marker in markers:
            candidates.append((index, marker, state))
            if marker.kind == "reset" or marker.kind == "leave":
                state = False
            elif marker.kind == "enter":
                state = True
    final = state
    for index, marker, before in reversed(candidates):
        if marker.kind == "reset":
            return _Start(index, marker.offset, False, "reset")
        if marker.kind == "enter":
            if before is None:
                raise _NeedInitial
            if before is False and final is True:
                return _Start(index, marker.offset, False, "alternate")
        elif marker.kind == "clear":
            if before is None:
                raise _NeedInitial(flag_only=final is None)
            elif not (before is True and final is False):
                return _Start(index, marker.offset, before, "clear")
    return None


def _tail_from(
    window: Sequence[tuple[Event, list[_Marker]]], start: _Start | None, initial: bool
) -> tuple[list[Event], bool, TailReason, int]:
    """Cut the window at ``start`` (None: keep it whole); return events, alternate flag, reason
    and the index in ``window`` where the kept part begins."""
    if start is None:
        return [event for event, _ in window], initial, "budget", 0
    if not window:
        return [], start.alternate, start.reason, 0
    first, _ = window[start.index]
    events = [Event(first.time, first.code, first.data[start.offset :])]
    events.extend(event for event, _ in window[start.index + 1 :])
    return events, start.alternate, start.reason, start.index


def read_tail(
    cast: Cast,
    *,
    mapped: Searchable | None = None,
    size_hint: TermSize | None = None,
    budget_bytes: int = TAIL_BUDGET_BYTES,
) -> Tail:
    """Find where the last screen of a recording starts and return the events from there.

    mapped: the plain bytes of ``cast`` with random access, when the vault can give them
    (``vault.recording.open_tail_source``: a plain file mapped in memory, a seekable zstd
    file's frames decoded on demand). They are read backwards, event line by event line,
    until a reset, a clear or an alternate screen switch that starts the final screen (see
    ``_choose_start``), or until ``budget_bytes`` of lines are decoded. The size at the start
    is that of the last resize before it (found with a backwards byte search), else
    ``size_hint``, else the header's. Without ``mapped`` (single-frame zstd, sealed) and for v1
    the events are streamed once, keeping a bounded tail. A cut last line is ignored.

    Raises DataError on a corrupt recording (a malformed line other than the last);
    KeyUnavailable when a sealed recording's key cannot be found.
    """
    base_size = size_hint or cast.header.size
    if mapped is not None and cast.preloaded is None:
        reader = TailReader(mapped, cast.header.version, cast.name)
        return _read_tail_backwards(reader, base_size, budget_bytes)
    return _read_tail_streamed(cast.events(), base_size, budget_bytes)


def _read_tail_streamed(events: Iterable[Event], size: TermSize, budget: int) -> Tail:
    """Stream every event, keeping a tail of at most ``budget`` characters of output."""
    kept: deque[Event] = deque()
    kept_chars = 0
    read = 0
    initial = False
    evicted = False
    for event in events:
        if event.code not in ("o", "r"):
            continue
        kept.append(event)
        kept_chars += len(event.data)
        read += len(event.data)
        while kept_chars > budget and len(kept) > 1:
            old = kept.popleft()
            kept_chars -= len(old.data)
            evicted = True
            if old.code == "r":
                size = _parse_size(old.data, size)
            else:
                nxt = next((e.data for e in kept if e.code == "o"), "")
                initial = _final_alternate(_markers(old.data, nxt), initial) or False
    window = _with_markers(list(kept))
    start = _choose_start(window, initial)
    if start is None and not evicted:
        start = _Start(0, 0, False, "start")
    kept_events, alternate, reason, begin = _tail_from(window, start, initial)
    for event, _ in window[:begin]:
        if event.code == "r":
            size = _parse_size(event.data, size)
    return Tail(size, alternate, tuple(kept_events), reason, read, 0, read)


def _with_markers(events: Sequence[Event]) -> list[tuple[Event, list[_Marker]]]:
    window: list[tuple[Event, list[_Marker]]] = []
    following = ""
    for event in reversed(events):
        if event.code == "o":
            window.append((event, _markers(event.data, following)))
            following = event.data
        else:
            window.append((event, []))
    window.reverse()
    return window


def _parse_size(data: str, fallback: TermSize) -> TermSize:
    try:
        return TermSize.parse(data)
    except ValueError:
        return fallback




class _AlternateSearch:
    """Answers which screen was showing at a point of a recording read from its end."""

    def __init__(self, reader: TailReader) -> None:
        self.reader = reader
        self._alternate_at: tuple[int, bool] | None = None  # (marker line offset, state after it)

    def alternate_before(self, limit: int) -> bool:
        """Return whether the alternate screen was showing at byte ``limit`` (a line start).

        Searches back for the last output event holding an alternate screen switch or a
        reset (in the JSON text: ``[?1049``, ``[?1047``, ``[?47``, ``\\u001bc``). A switch
        whose mode is not its first parameter is not found (rare; the damage is cosmetic).
        """
        if self._alternate_at is not None and self._alternate_at[0] < limit:
            return self._alternate_at[1]  # no switch between that one and ``limit``
        for begin, line in self.reader.lines_holding(_ALTERNATE_NEEDLES, limit):
            event = decode_line(line)
            if event is None or event.code != "o":
                continue
            state = _final_alternate(_markers(event.data), None)
            if state is not None:
                self._alternate_at = (begin, state)
                return state
        self._alternate_at = (-1, False)
        return False


def _read_tail_backwards(reader: TailReader, fallback: TermSize, budget: int) -> Tail:
    """Read a plain recording backwards from its end; see ``read_tail``.

    The window grows one event line at a time. A start can only be a marker, so the window
    is analysed only once it holds new markers: at most every quarter of what was read so
    far (fewer analyses as it grows) and always before decoding a long line. When a start
    depends on the screen in use before the window, reading goes on for a while (the switch
    is usually near, and a switch cut between two events is only seen this way) before a
    byte search answers.
    """
    search = _AlternateSearch(reader)
    total = len(reader.data)
    # Output and resize events with their markers and line offsets, last first.
    backwards: list[tuple[Event, list[_Marker]]] = []
    offsets: list[int] = []
    read = 0
    checked_at = 0
    unchecked = False  # markers were added since the last analysis
    waiting_since: int | None = None  # bytes read when a start first needed the state before
    following = ""
    start: _Start | None = None
    initial: bool | None = None
    whole = True  # the window reaches the recording's start

    def analyse(*, resolve: bool) -> _Start | None:
        nonlocal initial, waiting_since
        window = backwards[::-1]
        try:
            found = _choose_start(window, None)
        except _NeedInitial as need:
            if not resolve and not need.flag_only:
                waiting_since = read if waiting_since is None else waiting_since
                return None
            initial = search.alternate_before(offsets[-1] if offsets else total)
            found = _choose_start(window, initial)
        waiting_since = None
        return found

    for offset, line in reader.lines_backwards():
        due = unchecked and (read - checked_at >= max(_CHECK_BYTES, read // 4) or len(line) > _CHECK_BYTES)
        overdue = waiting_since is not None and (
            read - waiting_since >= _LOOK_FURTHER_BYTES or len(line) > _LOOK_FURTHER_BYTES
        )
        if due or overdue:
            start = analyse(resolve=overdue)
            checked_at, unchecked = read, False
            if start is not None:
                whole = False
                break
        if read >= budget:
            whole = False
            break
        read += len(line) + 1
        event = reader.decode(offset, line)
        if event is None:
            continue  # a cut last line is the end of the recording
        if event.code == "o":
            markers = _markers(event.data, following)
            backwards.append((event, markers))
            offsets.append(offset)
            following = event.data
            unchecked = unchecked or bool(markers)
        elif event.code == "r":
            backwards.append((event, []))
            offsets.append(offset)
    window = backwards[::-1]
    if whole:
        initial = False
        start = _choose_start(window, False) or _Start(0, 0, False, "start")
    elif start is None:
        start = analyse(resolve=True)
        if start is None and initial is None:
            initial = search.alternate_before(offsets[-1] if offsets else total)
    events, alternate, reason, first = _tail_from(window, start, bool(initial))
    size: TermSize | None = None
    for event, _ in window[:first]:
        if event.code == "r":
            size = _parse_size(event.data, size or fallback)
    if size is None:
        size = reader.size_before(offsets[len(offsets) - 1 - first] if offsets else total, fallback)
    return Tail(size, alternate, tuple(events), reason, read, reader.searched, total)
