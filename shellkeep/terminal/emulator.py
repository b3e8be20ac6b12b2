"""Emulate a terminal with pyte: the ``Terminal`` that recordings and live sessions are drawn on.

A ``Terminal`` keeps one pyte ``Screen`` and feeds it program output. It parses the escape
sequences itself (``terminal.syntax``) instead of through ``pyte.Stream``: pyte's stream draws
what it does not understand (private CSI with ``<``/``=``/``>``, colon SGR, intermediates,
DCS/APC strings) as stray text and runs at about 0.4 MB/s; the parser here drops those
sequences, draws runs of narrow characters in bulk and implements what pyte lacks (the
alternate screen 47/1047/1049, SU/SD, REP, colon and truecolour SGR, ``terminal.sgr``).
pyte is imported on first use, not with this module.

Control functions per ECMA-48 and xterm's ctlseqs (invisible-island.net/xterm/ctlseqs/ctlseqs.html).
"""

from __future__ import annotations

import copy
import math
import operator
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, cast

from shellkeep.asciicast.model import Event
from shellkeep.logs import get_logger
from shellkeep.terminal.sgr import SgrItems, apply_sgr, set_colour, sgr_items
from shellkeep.terminal.snapshot import Cell, Colour, Point, ScreenSnapshot
from shellkeep.terminal.syntax import BULK_MIN, int_params, shorten_pending, syntax, wide_run, width_of
from shellkeep.termsize import TermSize

if TYPE_CHECKING:
    import pyte
    from pyte.screens import Char, Cursor, StaticDefaultDict

    _Buffer = dict[int, StaticDefaultDict[int, Char]]
    _ScreenBase = pyte.Screen
else:
    _ScreenBase = object  # pyte.Screen, joined in by ``pyte_screen_class`` when pyte is loaded

__all__ = ["HookedScreen", "Terminal", "pyte_screen_class"]

log = get_logger(__name__)

_ALT_MODES = frozenset({47, 1047, 1049})
_INTERMEDIATES = frozenset(" !\"#$%&'()*+,-./")
_DECAWM = 7 << 5  # pyte shifts private modes by 5 bits
_DECSCNM = 5 << 5
_DECOM = 6 << 5
_IRM = 4


class HookedScreen(_ScreenBase):
    """A pyte screen that reports the lines scrolling off its top (see ``pyte_screen_class``)."""

    scrolled_off: Callable[[str], None] | None = None

    def index(self) -> None:
        """Move the cursor down a line; a line scrolling off the top goes to ``scrolled_off`` first."""
        hook = self.scrolled_off
        if hook is not None:
            top, bottom = self.margins or (0, self.lines - 1)
            if self.cursor.y == bottom and top == 0:
                hook(_row_text(self.buffer[0], self.columns) if 0 in self.buffer else "")
        super().index()


@cache
def pyte_screen_class() -> type[HookedScreen]:
    """Return the pyte screen class ``Terminal`` draws on (pyte imported on first use).

    It is ``pyte.Screen`` with ``HookedScreen`` before it: it reports each line scrolling
    off its top to its ``scrolled_off`` callable (None: nobody listens). Subclass it to
    watch other line operations (``shellkeep.terminal.transcript`` does).
    """
    import pyte

    return cast("type[HookedScreen]", type("HookedPyteScreen", (HookedScreen, pyte.Screen), {}))


_cell_text = operator.attrgetter("data")


def _row_text(row: StaticDefaultDict[int, Char], columns: int) -> str:
    """Return one pyte row's text up to ``columns``, trailing spaces stripped (as ``Screen.display``)."""
    if not row:
        return ""
    width = min(max(row) + 1, columns)
    return "".join(map(_cell_text, map(row.__getitem__, range(width)))).rstrip()


class _CellCache(dict[str, "Char"]):
    """Characters of one style, made on first use (a pyte ``Char`` per distinct text)."""

    __slots__ = ("_make", "_style")

    def __init__(self, attrs: Char) -> None:
        super().__init__()
        self._make = type(attrs)._make
        self._style = tuple(attrs)[1:]

    def __missing__(self, text: str) -> Char:
        cell: Char = self._make((text, *self._style))
        self[text] = cell
        return cell


class Terminal:
    """Emulate one terminal with pyte, fed the output of a recording in order.

    The screen starts blank at ``size`` (main screen, or the alternate one when
    ``alternate``). Feed it text with ``feed`` (a sequence cut between two calls is kept
    and finished by the next) or whole events with ``apply``; take a ``snapshot`` at any
    time. What it understands: ECMA-48/VT220 editing and cursor control through pyte,
    plus the alternate screen (47/1047/1049, saving the main screen and restoring it on
    leave), SU/SD, REP, 256-colour, truecolour and colon SGR. Sequences that do not change
    the screen (kitty keyboard, modifyOtherKeys, synchronized output, queries, OSC 8
    hyperlinks, DCS/APC strings) are consumed without drawing anything.
    """

    def __init__(
        self,
        size: TermSize,
        *,
        alternate: bool = False,
        on_scroll_off: Callable[[str], None] | None = None,
        on_screen_lost: Callable[[], None] | None = None,
        on_reply: Callable[[str], None] | None = None,
    ) -> None:
        """Start a blank screen of ``size``.

        Args:
            alternate: start on the alternate screen (a tail that starts inside a TUI).
            on_scroll_off: called with the text of each line (trailing spaces stripped) that
                scrolls off the top of the screen, or of a scroll region whose top is the
                screen's top (line feed on the bottom line, SU), before it is lost.
            on_screen_lost: called just before the whole screen's text is lost, while
                ``text_lines`` still reads it: a full erase (ED 2, or ED 0 from the top left
                corner), a reset (``ESC c``), leaving the alternate screen.
            on_reply: called with the answer a terminal sends back to the program for the
                queries cursor position (``ESC[6n``), status (``ESC[5n``) and primary
                device attributes (``ESC[c``, answered ``ESC[?6c``, a VT102); without it
                queries are ignored, as a recording cannot be answered.
        """
        from pyte import charsets

        self._screen = pyte_screen_class()(columns=size.cols, lines=size.rows)
        self._screen.scrolled_off = on_scroll_off
        self._on_scroll_off = on_scroll_off
        self._on_screen_lost = on_screen_lost
        self._on_reply = on_reply
        self._latin1 = charsets.LAT1_MAP
        self._syntax = syntax()
        self._pending = ""
        self._last_char = ""
        self._saved_main: tuple[_Buffer, Cursor | None] | None = None
        self._cells: dict[Char, _CellCache] = {}
        self._params: dict[str, list[int] | None] = {}  # parsed CSI parameters by text
        self._sgr_results: dict[tuple[Char, str, bool], Char] = {}  # SGR outcome by attrs, text, DECSCNM
        self._csi_handlers = self._make_csi_handlers()
        if alternate:
            self._enter_alternate(save_cursor=False)

    # -- public ---------------------------------------------------------------------------

    @property
    def size(self) -> TermSize:
        """Return the current screen size."""
        return TermSize(self._screen.columns, self._screen.lines)

    @property
    def alternate(self) -> bool:
        """Return whether the alternate screen is showing."""
        return self._saved_main is not None

    @property
    def cursor(self) -> Point:
        """Return the cursor's position (0-based; ``x`` may equal the width after the last column)."""
        cursor = self._screen.cursor
        return Point(cursor.x, cursor.y)

    def text_lines(self) -> list[str]:
        """Return the screen's rows as text, trailing spaces stripped (cheaper than ``snapshot``)."""
        screen = self._screen
        buffer = screen.buffer
        return [_row_text(buffer[y], screen.columns) if y in buffer else "" for y in range(screen.lines)]

    def apply(self, event: Event) -> None:
        """Apply one asciicast event: ``o`` output is drawn, ``r`` resizes; others are ignored.

        A resize whose data is not ``COLSxROWS`` is ignored.
        """
        if event.code == "o":
            self.feed(event.data)
        elif event.code == "r":
            try:
                size = TermSize.parse(event.data)
            except ValueError:
                return
            self.resize(size)

    def feed(self, text: str) -> None:
        """Draw program output (text, with escape sequences) on the screen."""
        if self._pending:
            text = self._pending + text
            self._pending = ""
        syntax = self._syntax
        match = syntax.token.match
        n = len(text)
        pos = 0
        while pos < n:
            m = match(text, pos)
            if m is None:
                # An ESC starting a sequence that is unfinished (kept for the next call) or
                # malformed (the ESC is dropped and what follows is drawn as text).
                if syntax.unfinished.match(text, pos):
                    self._pending = shorten_pending(text[pos:])
                    return
                pos += 1
                continue
            kind = m.lastgroup
            end = m.end()
            if kind == "text":
                self._draw(text[pos:end])
            elif kind == "csi":
                self._csi(text[pos:end])
            elif kind == "ctl":
                self._control(text[pos])
            elif kind == "esc":
                self._escape(text[pos + 1 : end])
            elif kind == "osc":
                self._osc(text[pos + 2 : end])
            pos = end

    def resize(self, size: TermSize) -> None:
        """Resize the screen, keeping the cursor's line in view (as xterm does).

        When rows are removed, lines leave at the top only as far as needed to keep the
        cursor on screen, else at the bottom; columns are cut at the right. Scroll margins
        are reset. The main screen saved under the alternate one is resized too.
        """
        screen = self._screen
        old_rows, old_cols = screen.lines, screen.columns
        if (size.rows, size.cols) == (old_rows, old_cols):
            return
        if self._saved_main is not None:
            main, saved_cursor = self._saved_main
            _fit_buffer(main, saved_cursor or copy.copy(screen.cursor), old_rows, size)
        _fit_buffer(screen.buffer, screen.cursor, old_rows, size)
        screen.lines, screen.columns = size.rows, size.cols
        screen.margins = None
        if size.cols > old_cols:
            screen.tabstops.update(range(8 * math.ceil(old_cols / 8), size.cols, 8))
        else:
            screen.tabstops = {stop for stop in screen.tabstops if stop < size.cols}
        screen.dirty.update(range(size.rows))

    def snapshot(self) -> ScreenSnapshot:
        """Return what the screen shows now."""
        screen = self._screen
        rows, cols = screen.lines, screen.columns
        converted: dict[Char, Cell] = {}
        default = screen.default_char
        blank_row = None
        lines: list[tuple[Cell, ...]] = []
        for y in range(rows):
            line = screen.buffer.get(y)
            if not line:
                if blank_row is None:
                    blank_row = (_cell_of(default, converted),) * cols
                lines.append(blank_row)
                continue
            lines.append(tuple(_cell_of(line[x], converted) for x in range(cols)))
        cursor = screen.cursor
        return ScreenSnapshot(
            size=TermSize(cols, rows),
            cursor=Point(min(max(cursor.x, 0), cols - 1), min(max(cursor.y, 0), rows - 1)),
            cursor_visible=not cursor.hidden,
            alternate=self._saved_main is not None,
            title=screen.title,
            lines=tuple(lines),
        )

    # -- drawing ---------------------------------------------------------------------------

    def _draw(self, text: str) -> None:
        screen = self._screen
        if screen.charset or screen.g0_charset is not self._latin1 or _IRM in screen.mode:
            self._draw_with_pyte(text)
            return
        if len(text) < BULK_MIN:
            self._draw_mixed(text)
            return
        syntax = self._syntax
        if syntax.narrow.fullmatch(text):
            self._draw_narrow(text)
            return
        pos = 0
        for m in syntax.narrow_run.finditer(text):
            if m.start() > pos:
                self._draw_other(text[pos : m.start()])
            self._draw_narrow(m.group())
            pos = m.end()
        if pos < len(text):
            self._draw_other(text[pos:])

    def _draw_other(self, text: str) -> None:
        """Draw text that is not all narrow: runs of wide characters in bulk, the rest one by one."""
        if len(text) < BULK_MIN:
            self._draw_mixed(text)
            return
        pos = 0
        for m in wide_run().finditer(text):
            if m.start() > pos:
                self._draw_mixed(text[pos : m.start()])
            self._draw_wide(m.group())
            pos = m.end()
        if pos < len(text):
            self._draw_mixed(text[pos:])

    def _draw_with_pyte(self, text: str) -> None:
        # One character at a time: pyte's draw stops at the first zero-width character
        # that does not combine (a variation selector, a joiner) and drops the rest.
        draw = self._screen.draw
        for ch in text:
            draw(ch)
        self._last_char = text[-1]

    def _draw_mixed(self, text: str) -> None:
        """Draw characters of any width as pyte's ``draw`` does, without its per-call cost.

        Wide characters take two cells (the second holds ``""``); combining marks go to
        pyte, which joins them to the previous cell; other zero-width characters are skipped.
        """
        screen = self._screen
        cursor = screen.cursor
        cols = screen.columns
        attrs = cursor.attrs
        cells = self._cells.get(attrs)
        if cells is None and len(text) > 2:
            cells = self._cell_cache(attrs)
        if cells is not None:
            make = cells.__getitem__
        else:  # a character or two in a style of their own (a colour gradient): no cache
            style = tuple(attrs)[1:]
            new = type(attrs)._make

            def make(ch: str) -> Char:
                return new((ch, *style))

        autowrap = _DECAWM in screen.mode
        for ch in text:
            width = width_of(ch)
            if width == 1 or width == 2:
                if cursor.x >= cols:
                    if autowrap:
                        screen.carriage_return()
                        screen.linefeed()
                    else:
                        cursor.x = cols - width
                line = screen.buffer[cursor.y]
                x = cursor.x
                line[x] = make(ch)
                if width == 2 and x + 1 < cols:
                    line[x + 1] = make("")
                cursor.x = min(x + width, cols)
            elif width == 0 and unicodedata.combining(ch):
                screen.draw(ch)
        self._last_char = text[-1]

    def _draw_wide(self, text: str) -> None:
        """Draw double-width characters in bulk, with the same wrapping as pyte's ``draw``.

        Each takes a cell and a ``""`` cell after it; one that starts in the last column is
        cut (no second cell), as pyte does.
        """
        screen = self._screen
        cursor = screen.cursor
        cols = screen.columns
        make = self._cell_cache(cursor.attrs).__getitem__
        half = make("")
        autowrap = _DECAWM in screen.mode
        i, n = 0, len(text)
        while i < n:
            if cursor.x >= cols:
                if autowrap:
                    screen.carriage_return()
                    screen.linefeed()
                else:
                    cursor.x = max(cols - 2, 0)  # each further character overwrites the last two
                    i = n - 1
            x = cursor.x
            k = min(n - i, (cols - x + 1) // 2)
            end = x + 2 * k
            line = screen.buffer[cursor.y]
            line.update(zip(range(x, end, 2), map(make, text[i : i + k])))
            line.update((column, half) for column in range(x + 1, min(end, cols), 2))
            cursor.x = min(end, cols)
            i += k
        self._last_char = text[-1]

    def _cell_cache(self, attrs: Char) -> _CellCache:
        cells = self._cells.get(attrs)
        if cells is None:
            if len(self._cells) > 512:
                self._cells.clear()
            cells = self._cells[attrs] = _CellCache(attrs)
        return cells

    def _draw_narrow(self, text: str) -> None:
        """Draw single-width characters in bulk, with the same wrapping as pyte's ``draw``."""
        screen = self._screen
        cursor = screen.cursor
        cols = screen.columns
        make = self._cell_cache(cursor.attrs).__getitem__
        autowrap = _DECAWM in screen.mode
        i, n = 0, len(text)
        while i < n:
            if cursor.x >= cols:
                if autowrap:
                    screen.carriage_return()
                    screen.linefeed()
                else:
                    cursor.x = cols - 1  # each further character overwrites the last column
                    i = n - 1
            x = cursor.x
            k = min(n - i, cols - x)
            screen.buffer[cursor.y].update(zip(range(x, x + k), map(make, text[i : i + k])))
            cursor.x = x + k
            i += k
        self._last_char = text[-1]

    # -- controls and sequences ------------------------------------------------------------

    def _control(self, ch: str) -> None:
        screen = self._screen
        if ch == "\n" or ch == "\x0b" or ch == "\x0c":
            screen.linefeed()
        elif ch == "\r":
            screen.carriage_return()
        elif ch == "\x08":
            screen.backspace()
        elif ch == "\t":
            screen.tab()
        # BEL, SO/SI (ignored in UTF-8, as pyte does), NUL, DEL and C1 controls: nothing.

    def _escape(self, seq: str) -> None:
        """Handle ``ESC`` + ``seq`` (intermediates and a final byte, not CSI/OSC/DCS)."""
        screen = self._screen
        if seq == "c":
            if self._on_screen_lost is not None:
                self._on_screen_lost()
            screen.reset()
            screen.savepoints.clear()
            self._saved_main = None
            self._last_char = ""
        elif seq == "7":
            screen.save_cursor()
        elif seq == "8":
            screen.restore_cursor()
        elif seq == "D":
            screen.index()
        elif seq == "E":
            screen.carriage_return()
            screen.index()
        elif seq == "M":
            screen.reverse_index()
        elif seq == "H":
            screen.set_tab_stop()
        elif seq == "#8":
            screen.alignment_display()
        elif len(seq) == 2 and seq[0] in "()":
            # G0/G1 designation: xterm honours DEC line drawing (ESC ( 0) in UTF-8 too.
            screen.define_charset(seq[1], seq[0])
        # ESC = / ESC > (keypad), a lone ST, ESC % G and the rest: nothing to draw.

    def _osc(self, body: str) -> None:
        """Handle an OSC body (``Ps ; Pt`` plus its terminator): only titles change state."""
        body = body.removesuffix("\x07").removesuffix("\x1b\\")
        code, _, value = body.partition(";")
        if code in ("0", "2"):
            self._screen.set_title(value)
        if code in ("0", "1"):
            self._screen.set_icon_name(value)
        # 8 (hyperlinks), 52 (clipboard), 4/10/11 (colours and queries), 7, 133...: nothing.

    def _make_csi_handlers(self) -> dict[str, tuple[Callable[..., None], int]]:
        """Map a CSI final byte to its handler and how many parameters it takes."""
        s = self._screen
        return {
            "@": (s.insert_characters, 1),
            "A": (s.cursor_up, 1),
            "B": (s.cursor_down, 1),
            "C": (s.cursor_forward, 1),
            "D": (s.cursor_back, 1),
            "E": (s.cursor_down1, 1),
            "F": (s.cursor_up1, 1),
            "G": (s.cursor_to_column, 1),
            "`": (s.cursor_to_column, 1),
            "H": (self._cursor_position, 2),
            "f": (self._cursor_position, 2),
            "J": (self._erase_in_display, 1),
            "K": (self._erase_in_line, 1),
            "L": (s.insert_lines, 1),
            "M": (s.delete_lines, 1),
            "P": (s.delete_characters, 1),
            "X": (s.erase_characters, 1),
            "a": (s.cursor_forward, 1),
            "d": (s.cursor_to_line, 1),
            "e": (s.cursor_down, 1),
            "g": (s.clear_tab_stop, 1),
            "h": (s.set_mode, 16),
            "l": (s.reset_mode, 16),
            "m": (self._sgr, 64),
            "r": (s.set_margins, 2),
            "S": (self._scroll_up, 1),
            "T": (self._scroll_down, 1),
            "b": (self._repeat, 1),
            "s": (self._save_cursor, 2),
            "u": (self._restore_cursor, 2),
            "n": (self._device_status, 1),
            "c": (self._device_attributes, 1),
        }

    def _csi(self, seq: str) -> None:
        """Handle one complete CSI sequence ``ESC [ params intermediates final``."""
        final = seq[-1]
        body = seq[2:-1]
        if body:
            if body[-1] in _INTERMEDIATES:
                return  # DECSCUSR (SP q), DECSTR (! p), DECRQM ($ p)...: no visible effect
            lead = body[0]
            if lead in "<=>":
                return  # kitty keyboard (> u, < u, = u), modifyOtherKeys (> 4;2 m), DA2/DA3
            if lead == "?":
                params = int_params(body[1:])
                if params is None:
                    return
                if final == "h":
                    self._private_modes(params, enable=True)
                elif final == "l":
                    self._private_modes(params, enable=False)
                elif final == "J":
                    self._erase_in_display(*params[:1])
                elif final == "K":
                    self._erase_in_line(*params[:1])
                return  # ?u (kitty query), ?6n (DECXCPR), ?$p...: no visible effect
            if ":" in body:
                if final == "m":
                    items = sgr_items(body)
                    if items is not None:
                        self._apply_sgr(items)
                return
        if final == "m":
            self._sgr_cached(body)
            return
        entry = self._csi_handlers.get(final)
        if entry is None:
            return  # DA, DSR, XTWINOPS and other queries or reports
        params = self._params.get(body)
        if params is None:
            if len(self._params) > 65536:
                self._params.clear()
            params = self._params[body] = int_params(body)
            if params is None:
                return
        handler, arity = entry
        try:
            handler(*params[:arity])
        except Exception:  # noqa: BLE001 - pyte raises on some parameter values (e.g. ESC[5K)
            log.debug("ignored CSI %r", seq)

    def _private_modes(self, modes: list[int], *, enable: bool) -> None:
        screen = self._screen
        rest = []
        for mode in modes:
            if mode in _ALT_MODES:
                if enable:
                    self._enter_alternate(save_cursor=mode == 1049)
                else:
                    self._leave_alternate()
            elif mode == 1048:
                if enable:
                    screen.save_cursor()
                else:
                    screen.restore_cursor()
            elif mode != 3:  # DECCOLM (132 columns): xterm ignores it unless allowed
                rest.append(mode)
        if rest:
            if enable:
                screen.set_mode(*rest, private=True)
            else:
                screen.reset_mode(*rest, private=True)

    def _enter_alternate(self, *, save_cursor: bool) -> None:
        if self._saved_main is not None:
            return
        from pyte.screens import StaticDefaultDict

        screen = self._screen
        self._saved_main = (screen.buffer, copy.copy(screen.cursor) if save_cursor else None)
        # A blank buffer made as pyte makes its own.
        screen.buffer = defaultdict(lambda: StaticDefaultDict[int, "Char"](screen.default_char))
        screen.dirty.update(range(screen.lines))

    def _leave_alternate(self) -> None:
        if self._saved_main is None:
            return
        if self._on_screen_lost is not None:
            self._on_screen_lost()
        screen = self._screen
        screen.buffer, saved_cursor = self._saved_main
        self._saved_main = None
        if saved_cursor is not None:
            screen.cursor = saved_cursor
            screen.ensure_hbounds()
            screen.ensure_vbounds()
        screen.dirty.update(range(screen.lines))

    def _erase_in_display(self, how: int = 0, *_: int) -> None:
        if self._on_screen_lost is not None:
            cursor = self._screen.cursor
            if how == 2 or (how == 0 and cursor.x == 0 and cursor.y == 0):
                self._on_screen_lost()
        if how in (0, 1, 2):
            self._screen.erase_in_display(how)
        # 3 clears the scrollback only, which pyte does not keep.

    def _erase_in_line(self, how: int = 0, *_: int) -> None:
        if how in (0, 1, 2):
            self._screen.erase_in_line(how)

    def _scroll(self, count: int, *, up: bool) -> None:
        screen = self._screen
        top, bottom = screen.margins or (0, screen.lines - 1)
        count = min(max(count, 1), bottom - top + 1)
        if up and top == 0 and self._on_scroll_off is not None:
            for y in range(count):
                self._on_scroll_off(_row_text(screen.buffer[y], screen.columns) if y in screen.buffer else "")
        rows = [screen.buffer.pop(y, None) for y in range(top, bottom + 1)]
        blank: list[StaticDefaultDict[int, Char] | None] = [None] * count
        moved = rows[count:] + blank if up else blank + rows[:-count]
        for y, row in zip(range(top, bottom + 1), moved):
            if row is not None:
                screen.buffer[y] = row

    def _scroll_up(self, count: int = 0, *_: int) -> None:
        self._scroll(count, up=True)

    def _scroll_down(self, count: int = 0, *_: int) -> None:
        self._scroll(count, up=False)

    def _repeat(self, count: int = 0, *_: int) -> None:
        if self._last_char:
            self._draw(self._last_char * min(max(count, 1), 65535))

    def _device_status(self, what: int = 0, *_: int) -> None:
        if self._on_reply is None:
            return
        if what == 5:
            self._on_reply("\x1b[0n")
        elif what == 6:
            screen = self._screen
            y = screen.cursor.y + 1 - (screen.margins.top if _DECOM in screen.mode and screen.margins else 0)
            self._on_reply(f"\x1b[{y};{min(screen.cursor.x, screen.columns - 1) + 1}R")

    def _device_attributes(self, what: int = 0, *_: int) -> None:
        if self._on_reply is not None and what == 0:
            self._on_reply("\x1b[?6c")

    def _cursor_position(self, line: int = 0, column: int = 0) -> None:
        screen = self._screen
        if _DECOM in screen.mode:
            screen.cursor_position(line, column)  # relative to the margins: pyte's own
            return
        cursor = screen.cursor
        cursor.x = min(max(column - 1, 0), screen.columns - 1)
        cursor.y = min(max(line - 1, 0), screen.lines - 1)

    def _save_cursor(self, *params: int) -> None:
        if params in ((), (0,)):
            self._screen.save_cursor()

    def _restore_cursor(self, *params: int) -> None:
        if params in ((), (0,)):
            self._screen.restore_cursor()

    def _sgr_cached(self, body: str) -> None:
        """Apply ``CSI body m``; the outcome depends only on the attributes before it."""
        cursor = self._screen.cursor
        key = (cursor.attrs, body, _DECSCNM in self._screen.mode)
        attrs = self._sgr_results.get(key)
        if attrs is None:
            colour = self._syntax.sgr_colour.fullmatch(body)
            if colour is not None:  # one colour alone, as gradients and images send per cell
                self._set_colour(colour)
                return
            params = int_params(body)
            if params is None:
                return
            self._apply_sgr(params)
            if len(self._sgr_results) > 4096:
                self._sgr_results.clear()
            self._sgr_results[key] = cursor.attrs
        else:
            cursor.attrs = attrs

    def _set_colour(self, m: re.Match[str]) -> None:
        """Apply ``38;2;r;g;b``, ``48;5;n`` and the like, matched by ``Syntax.sgr_colour``."""
        cursor = self._screen.cursor
        cursor.attrs = set_colour(cursor.attrs, m)

    def _sgr(self, *params: int) -> None:
        self._apply_sgr(list(params))

    def _apply_sgr(self, items: SgrItems) -> None:
        """Apply SGR parameters (see ``terminal.sgr``); a list item is a colon group."""
        screen = self._screen
        screen.cursor.attrs = apply_sgr(screen.cursor.attrs, screen.default_char, items)


def _fit_buffer(buffer: _Buffer, cursor: Cursor, old_rows: int, size: TermSize) -> None:
    """Resize a pyte buffer in place: drop rows above (only as needed to keep ``cursor``'s
    line on screen) or below, drop columns at the right; moves ``cursor`` with its line."""
    shift = max(0, cursor.y - (size.rows - 1)) if size.rows < old_rows else 0
    rows = dict(buffer)
    buffer.clear()
    for y, line in rows.items():
        ny = y - shift
        if 0 <= ny < size.rows:
            for x in [x for x in line if x >= size.cols]:
                del line[x]
            buffer[ny] = line
    cursor.y = min(max(cursor.y - shift, 0), size.rows - 1)
    cursor.x = min(cursor.x, size.cols)


def _cell_of(char: Char, converted: dict[Char, Cell]) -> Cell:
    cell = converted.get(char)
    if cell is None:
        cell = converted[char] = Cell(
            char=char.data,
            fg=_colour_of(char.fg),
            bg=_colour_of(char.bg),
            bold=char.bold,
            italic=char.italics,
            underline=char.underscore,
            strikethrough=char.strikethrough,
            reverse=char.reverse,
        )
    return cell


def _colour_of(value: str) -> Colour:
    if value.startswith("#"):
        return value
    if value.isdigit():
        return int(value)
    return None  # "default" (or a pyte colour name, which this parser never sets)

