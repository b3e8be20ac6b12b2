"""Emulate a terminal over recordings with pyte: screens at any time, the last screen fast.

A ``Terminal`` keeps one pyte ``Screen`` and feeds it the output of asciicast events. It
parses the escape sequences itself instead of through ``pyte.Stream``: pyte's stream draws
what it does not understand (private CSI with ``<``/``=``/``>``, colon SGR, intermediates,
DCS/APC strings) as stray text and runs at about 0.4 MB/s; the parser here drops those
sequences, draws runs of narrow characters in bulk and implements what pyte lacks (the
alternate screen 47/1047/1049, SU/SD, REP, colon and truecolour SGR).

``last_screen`` rebuilds the last screen of a recording from its end: it reads events
backwards from the end of the file until a point where the screen was cleared or reset (or a
byte budget is spent), finds the terminal size and screen (main or alternate) in effect there,
and renders only that tail. Seekable zstd files are read from the end the same way, through
the frames the vault decodes on demand; single-frame zstd, sealed and v1 files are streamed
from the start instead, keeping a bounded tail in memory.

Formats: asciicast v1/v2/v3 (docs.asciinema.org/manual/asciicast/v2), control functions per
ECMA-48 and xterm's ctlseqs (invisible-island.net/xterm/ctlseqs/ctlseqs.html).
"""

from __future__ import annotations

import copy
import html
import json
import math
import mmap
import operator
import os
import re
import unicodedata
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from shellkeep.asciicast.model import Event
from shellkeep.asciicast.reader import Cast
from shellkeep.errors import DataError
from shellkeep.termsize import TermSize
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    import pyte
    from pyte.screens import Char, Cursor, StaticDefaultDict

    _Buffer = dict[int, StaticDefaultDict[int, Char]]

__all__ = [
    "TAIL_BUDGET_BYTES",
    "Cell",
    "Colour",
    "Point",
    "ScreenSnapshot",
    "Tail",
    "Searchable",
    "TailReason",
    "Terminal",
    "iter_screens",
    "last_screen",
    "pyte_screen_class",
    "read_tail",
    "render_events",
    "screen_at",
]

log = get_logger(__name__)

#: A colour: ``None`` the terminal's default, an ``int`` 0-255 an xterm palette index
#: (0-7 ANSI, 8-15 bright), a ``str`` ``"#rrggbb"`` a truecolour value.
Colour = int | str | None

#: Bytes of event lines decoded from the end of a plain recording before ``read_tail`` gives
#: up looking for a clear and renders what it has (the start may then be cosmetically off).
TAIL_BUDGET_BYTES = 1 << 20
_CHECK_BYTES = 4 << 10  # least reading between two analyses of the tail window
_LOOK_FURTHER_BYTES = 64 << 10  # reading before a byte search decides the screen in use
_SEARCH_BLOCK_BYTES = 1 << 20
_MAX_PENDING = 4096  # longest unfinished escape sequence carried whole to the next event
_MARKER_LOOKAHEAD = 24  # a marker may straddle two events; longest marker is shorter
_ALT_MODES = frozenset({47, 1047, 1049})
_INTERMEDIATES = frozenset(" !\"#$%&'()*+,-./")
_DECAWM = 7 << 5  # pyte shifts private modes by 5 bits
_DECSCNM = 5 << 5
_DECOM = 6 << 5
_IRM = 4
_BULK_MIN = 8  # shorter runs of text are drawn character by character

TailReason = Literal["start", "reset", "clear", "alternate", "budget"]


# ---------------------------------------------------------------------------------------------
# The snapshot and its renderings


@dataclass(frozen=True, slots=True)
class Cell:
    """One character cell of a screen.

    char: the text shown (one character, or a base character with combining marks; ``""``
    for the right half of a double-width character). fg/bg: see ``Colour``.
    """

    char: str = " "
    fg: Colour = None
    bg: Colour = None
    bold: bool = False
    italic: bool = False
    underline: bool = False
    strikethrough: bool = False
    reverse: bool = False

    @property
    def is_blank(self) -> bool:
        """Return whether the cell shows nothing: a space without background or decoration."""
        return (
            self.char == " "
            and self.bg is None
            and not self.reverse
            and not self.underline
            and not self.strikethrough
        )


@dataclass(frozen=True, slots=True)
class Point:
    """A cell position: ``x`` column and ``y`` row, both 0-based from the top left."""

    x: int
    y: int


@dataclass(frozen=True, slots=True)
class ScreenSnapshot:
    """What a terminal showed at one moment.

    size: the screen's size; lines: ``size.rows`` rows of ``size.cols`` cells each.
    cursor: 0-based position, within the screen. alternate: whether the alternate screen
    (a full-screen program's) was showing. title: the last window title set by OSC 0/2.
    """

    size: TermSize
    cursor: Point
    cursor_visible: bool
    alternate: bool
    title: str
    lines: tuple[tuple[Cell, ...], ...]

    def _trimmed(self) -> list[tuple[Cell, ...]]:
        """Return the rows without trailing blank cells, trailing blank rows dropped."""
        rows: list[tuple[Cell, ...]] = []
        for row in self.lines:
            end = len(row)
            while end and row[end - 1].is_blank:
                end -= 1
            rows.append(row[:end])
        while rows and not rows[-1]:
            rows.pop()
        return rows

    def to_text(self) -> str:
        """Return the screen as plain text: one line per row, trailing spaces stripped,
        trailing blank lines dropped, no final newline."""
        lines = ["".join(cell.char for cell in row).rstrip(" ") for row in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def to_ansi(self) -> str:
        """Return the screen redrawn with SGR sequences, ready to print to a terminal.

        One line per row joined by ``\\n`` (no final newline), attributes reset at the end of
        every row that set any; palette colours as ``30-37``/``90-97``/``38;5;n``, truecolour
        as ``38;2;r;g;b`` (ECMA-48 SGR, xterm extensions). Trailing blank cells and rows are
        left out so the output does not wrap or scroll on a terminal of the same width.
        """
        out: list[str] = []
        for row in self._trimmed():
            parts: list[str] = []
            current = _BLANK_STYLE
            for cell in row:
                if not cell.char:
                    continue  # right half of a wide character
                style = _style_of(cell)
                if style != current:
                    parts.append(_sgr_sequence(style))
                    current = style
                parts.append(cell.char)
            if current != _BLANK_STYLE:
                parts.append("\x1b[0m")
            out.append("".join(parts))
        return "\n".join(out)

    def to_html(self, *, foreground: str = "#e5e5e5", background: str = "#000000") -> str:
        """Return the screen as one self-contained ``<pre>`` block with inline styles.

        foreground/background: CSS colours for the terminal's default colours. Palette colours
        use xterm's default palette. Text is HTML-escaped; trailing blank cells and rows are
        left out as in ``to_ansi``.
        """
        palette = _xterm_palette()
        rows: list[str] = []
        for row in self._trimmed():
            parts: list[str] = []
            run: list[str] = []
            run_style = _BLANK_STYLE

            def flush() -> None:
                if not run:
                    return
                text = html.escape("".join(run), quote=False)
                css = _css_of(run_style, palette, foreground, background)
                parts.append(f'<span style="{css}">{text}</span>' if css else text)
                run.clear()

            for cell in row:
                if not cell.char:
                    continue
                style = _style_of(cell)
                if style != run_style:
                    flush()
                    run_style = style
                run.append(cell.char)
            flush()
            rows.append("".join(parts))
        body = "\n".join(rows)
        return (
            f'<pre class="shellkeep-screen" style="margin:0;padding:0.5em;'
            f"color:{foreground};background:{background};"
            f'font-family:ui-monospace,Menlo,Consolas,monospace;line-height:1.2">{body}</pre>'
        )


# (fg, bg, bold, italic, underline, strikethrough, reverse)
_Style = tuple[Colour, Colour, bool, bool, bool, bool, bool]
_BLANK_STYLE: _Style = (None, None, False, False, False, False, False)


def _style_of(cell: Cell) -> _Style:
    return (cell.fg, cell.bg, cell.bold, cell.italic, cell.underline, cell.strikethrough, cell.reverse)


def _sgr_colour(colour: Colour, base: int) -> str:
    """Return SGR parameters for a colour; base 30 for foreground, 40 for background."""
    if isinstance(colour, int):
        if colour < 8:
            return str(base + colour)
        if colour < 16:
            return str(base + 60 + colour - 8)
        return f"{base + 8};5;{colour}"
    assert colour is not None
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"{base + 8};2;{r};{g};{b}"


def _sgr_sequence(style: _Style) -> str:
    fg, bg, bold, italic, underline, strike, reverse = style
    params = ["0"]
    if bold:
        params.append("1")
    if italic:
        params.append("3")
    if underline:
        params.append("4")
    if reverse:
        params.append("7")
    if strike:
        params.append("9")
    if fg is not None:
        params.append(_sgr_colour(fg, 30))
    if bg is not None:
        params.append(_sgr_colour(bg, 40))
    return f"\x1b[{';'.join(params)}m"


def _css_of(style: _Style, palette: Sequence[str], foreground: str, background: str) -> str:
    fg, bg, bold, italic, underline, strike, reverse = style
    fg_css = palette[fg] if isinstance(fg, int) else fg
    bg_css = palette[bg] if isinstance(bg, int) else bg
    if reverse:
        fg_css, bg_css = bg_css or background, fg_css or foreground
    rules = []
    if fg_css is not None:
        rules.append(f"color:{fg_css}")
    if bg_css is not None:
        rules.append(f"background:{bg_css}")
    if bold:
        rules.append("font-weight:bold")
    if italic:
        rules.append("font-style:italic")
    decorations = [name for flag, name in ((underline, "underline"), (strike, "line-through")) if flag]
    if decorations:
        rules.append(f"text-decoration:{' '.join(decorations)}")
    return ";".join(rules)


@cache
def _xterm_palette() -> tuple[str, ...]:
    """Return xterm's default 256-colour palette as ``#rrggbb`` strings (index 0-255)."""
    base = [
        "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
    ]  # fmt: skip
    levels = (0, 95, 135, 175, 215, 255)
    cube = [f"#{levels[r]:02x}{levels[g]:02x}{levels[b]:02x}" for r in range(6) for g in range(6) for b in range(6)]
    grey = [f"#{v:02x}{v:02x}{v:02x}" for v in range(8, 248, 10)]
    return tuple(base + cube + grey)


# ---------------------------------------------------------------------------------------------
# The terminal


@dataclass(frozen=True, slots=True)
class _Syntax:
    """Compiled patterns, built once on first use (no work at import time)."""

    token: re.Pattern[str]
    unfinished: re.Pattern[str]
    narrow: re.Pattern[str]  # a text of narrow characters only
    narrow_run: re.Pattern[str]  # a run of narrow characters worth drawing in bulk
    markers: re.Pattern[str]
    sgr_colour: re.Pattern[str]  # SGR parameters setting one colour and nothing else


@cache
def _syntax() -> _Syntax:
    token = re.compile(
        r"(?P<text>[^\x00-\x1f\x7f-\x9f]+)"
        r"|(?P<csi>\x1b\[[0-?]*[ -/]*[@-~])"
        r"|(?P<ctl>[\x00-\x1a\x1c-\x1f\x7f-\x9f])"
        # OSC ends at BEL or ST; an ESC that starts anything else aborts it (as in xterm).
        r"|(?P<osc>\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|(?=\x1b[^\\])))"
        # DCS, SOS, PM, APC strings (sixel, XTGETTCAP, kitty graphics): dropped whole.
        r"|(?P<str>\x1b[PX^_][^\x1b]*(?:\x1b\\|(?=\x1b[^\\])))"
        r"|(?P<esc>\x1b[ -/]*[0-OQ-WYZ\\`a-~])",
        re.DOTALL,
    )
    unfinished = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[PX^_][^\x1b]*\x1b?|[ -/]*)?\Z", re.DOTALL)
    markers = re.compile(
        r"\x1bc"
        r"|\x1b\[\?(?:[0-9;]*;)?(?:1049|1047|47)(?:;[0-9;]*)?[hl]"
        r"|\x1b\[2J"
        r"|\x1b\[(?:|1|;|1;|;1|1;1)[Hf]\x1b\[0?J"
    )
    narrow = _narrow_class()
    narrow_run = re.compile(f"[{narrow}]{{{_BULK_MIN},}}")
    sgr_colour = re.compile(r"([34])8;(?:5;(\d{1,3})|2;(\d{1,3});(\d{1,3});(\d{1,3}))")
    return _Syntax(token, unfinished, re.compile(f"[{narrow}]+"), narrow_run, markers, sgr_colour)


@cache
def _width_of(ch: str) -> int:
    """Return the cells ``ch`` takes, as pyte measures it (wcwidth; -1 for controls)."""
    from wcwidth import wcwidth

    width: int = wcwidth(ch)
    return width


@cache
def _wide_run() -> re.Pattern[str]:
    """Return a pattern for runs of CJK/fullwidth characters pyte draws two cells wide.

    Built on first use (wcwidth checks each one) so that text without any costs nothing.
    """
    from wcwidth import wcwidth

    spans = [
        (0x1100, 0x115F), (0x2E80, 0x303E), (0x3041, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
        (0xA000, 0xA4CF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFF60),
        (0xFFE0, 0xFFE6),
    ]  # fmt: skip
    chars = [chr(code) for lo, hi in spans for code in range(lo, hi + 1) if wcwidth(chr(code)) == 2]
    return re.compile(f"[{_char_class(chars)}]{{{_BULK_MIN},}}")


def _char_class(chars: Sequence[str]) -> str:
    """Return the inside of a regex class matching exactly ``chars`` (sorted ascending)."""
    runs: list[tuple[int, int]] = []
    for ch in chars:
        code = ord(ch)
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs)


def _narrow_class() -> str:
    """Return a regex class of characters pyte draws one cell wide with no combining.

    Verified against wcwidth at first use, so the bulk path draws exactly what pyte would.
    """
    from wcwidth import wcwidth

    spans = [
        (0x20, 0x7E), (0xA0, 0x2FF), (0x370, 0x52F), (0x2010, 0x205E), (0x20A0, 0x20BF),
        (0x2100, 0x214F), (0x2190, 0x23FF), (0x2460, 0x27BF), (0x2800, 0x28FF),
        (0x2B00, 0x2BFF), (0xE000, 0xF8FF),
    ]  # fmt: skip
    chars = [chr(code) for lo, hi in spans for code in range(lo, hi + 1)]
    return _char_class([ch for ch in chars if wcwidth(ch) == 1 and not unicodedata.combining(ch)])


@cache
def pyte_screen_class() -> type[pyte.Screen]:
    """Return the pyte screen class ``Terminal`` draws on (pyte imported on first use).

    It is ``pyte.Screen`` that reports each line scrolling off its top to its
    ``scrolled_off`` callable (None: nobody listens). Subclass it to watch other line
    operations (``shellkeep.terminal.transcript`` does).
    """
    import pyte

    class HookedScreen(pyte.Screen):
        """A pyte screen that reports the lines scrolling off its top."""

        scrolled_off: Callable[[str], None] | None = None

        def index(self) -> None:
            """Move the cursor down a line; a line scrolling off the top goes to ``scrolled_off`` first."""
            hook = self.scrolled_off
            if hook is not None:
                top, bottom = self.margins or (0, self.lines - 1)
                if self.cursor.y == bottom and top == 0:
                    hook(_row_text(self.buffer[0], self.columns) if 0 in self.buffer else "")
            super().index()

    return HookedScreen


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
        self._syntax = _syntax()
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
                    self._pending = _shorten_pending(text[pos:])
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
        if len(text) < _BULK_MIN:
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
        if len(text) < _BULK_MIN:
            self._draw_mixed(text)
            return
        pos = 0
        for m in _wide_run().finditer(text):
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
            width = _width_of(ch)
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
                params = _int_params(body[1:])
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
                    items = _sgr_items(body)
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
            params = self._params[body] = _int_params(body)
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
            params = _int_params(body)
            if params is None:
                return
            self._apply_sgr(params)
            if len(self._sgr_results) > 4096:
                self._sgr_results.clear()
            self._sgr_results[key] = cursor.attrs
        else:
            cursor.attrs = attrs

    def _set_colour(self, m: re.Match[str]) -> None:
        """Apply ``38;2;r;g;b``, ``48;5;n`` and the like, matched by ``_Syntax.sgr_colour``."""
        layer, index, r, g, b = m.groups()
        colour = _palette(int(index)) if index is not None else _rgb(int(r), int(g), int(b))
        if colour is None:
            return
        cursor = self._screen.cursor
        a = cursor.attrs
        fields = (a.data, colour, *a[2:]) if layer == "3" else (a.data, a.fg, colour, *a[3:])
        cursor.attrs = type(a)._make(fields)

    def _sgr(self, *params: int) -> None:
        self._apply_sgr(list(params))

    def _apply_sgr(self, items: Sequence[int | list[int | None]]) -> None:
        """Apply SGR parameters (ECMA-48 8.3.117 with xterm's 256/truecolour extensions).

        Colours are kept in pyte's ``Char`` as strings: ``"default"``, a palette index
        (``"0"``-``"255"``) or ``"#rrggbb"``. A list item is a colon group (ITU T.416 form).
        """
        screen = self._screen
        if not items or (len(items) == 1 and items[0] == 0):
            screen.cursor.attrs = screen.default_char
            return
        a = screen.cursor.attrs
        fg, bg, bold, italic = a.fg, a.bg, a.bold, a.italics
        underline, strike, reverse, blink = a.underscore, a.strikethrough, a.reverse, a.blink
        i, n = 0, len(items)
        while i < n:
            item = items[i]
            i += 1
            if isinstance(item, list):
                code = item[0] or 0
                if code in (38, 48, 58):
                    colour = _colon_colour(item[1:])
                    if colour is not None and code == 38:
                        fg = colour
                    elif colour is not None and code == 48:
                        bg = colour
                    continue
                if code == 4:
                    underline = not (len(item) > 1 and item[1] == 0)
                    continue
            else:
                code = item
            if code == 0:
                d = screen.default_char
                fg, bg, reverse = d.fg, d.bg, d.reverse
                bold = italic = underline = strike = blink = False
            elif code == 1:
                bold = True
            elif code == 3:
                italic = True
            elif code == 4 or code == 21:
                underline = True
            elif code == 5 or code == 6:
                blink = True
            elif code == 7:
                reverse = True
            elif code == 9:
                strike = True
            elif code == 22:
                bold = False
            elif code == 23:
                italic = False
            elif code == 24:
                underline = False
            elif code == 25:
                blink = False
            elif code == 27:
                reverse = False
            elif code == 29:
                strike = False
            elif 30 <= code <= 37:
                fg = str(code - 30)
            elif code == 39:
                fg = "default"
            elif 40 <= code <= 47:
                bg = str(code - 40)
            elif code == 49:
                bg = "default"
            elif 90 <= code <= 97:
                fg = str(code - 82)
            elif 100 <= code <= 107:
                bg = str(code - 92)
            elif code in (38, 48, 58):
                colour, used = _semicolon_colour(items, i)
                i += used
                if colour is not None and code == 38:
                    fg = colour
                elif colour is not None and code == 48:
                    bg = colour
        screen.cursor.attrs = type(a)(a.data, fg, bg, bold, italic, underline, strike, reverse, blink)


def _shorten_pending(rest: str) -> str:
    """Keep an unfinished sequence for the next feed, without hoarding a long string's body.

    The body of a DCS/SOS/PM/APC string (an image, a sixel) is never needed, nor that of a
    long OSC: keep the opener (OSC gets a code nothing handles) and a final ESC that may
    start the ST ending it.
    """
    if len(rest) <= _MAX_PENDING:
        return rest
    if rest[1] in "]PX^_":
        opener = "\x1b]-;" if rest[1] == "]" else rest[:2]
        return opener + ("\x1b" if rest.endswith("\x1b") else "")
    return ""  # a CSI this long is garbage


def _int_params(body: str) -> list[int] | None:
    """Parse ``1;2;;3`` into ``[1, 2, 0, 3]`` (missing means 0, capped at 9999 as pyte does)."""
    try:
        params = [int(p) if p else 0 for p in body.split(";")]
    except ValueError:
        return None
    if len(body) > 4 * len(params) and max(params) > 9999:  # only a long text can hold one
        params = [min(p, 9999) for p in params]
    return params


def _sgr_items(body: str) -> list[int | list[int | None]] | None:
    """Parse SGR parameters where colon groups (``38:2::255:0:0``) become lists."""
    items: list[int | list[int | None]] = []
    try:
        for part in body.split(";"):
            if ":" in part:
                items.append([int(p) if p else None for p in part.split(":")])
            else:
                items.append(int(part) if part else 0)
    except ValueError:
        return None
    return items


def _palette(index: int | None) -> str | None:
    if index is None or not 0 <= index <= 255:
        return None
    return str(index)


def _rgb(r: int | None, g: int | None, b: int | None) -> str:
    return f"#{min(r or 0, 255):02x}{min(g or 0, 255):02x}{min(b or 0, 255):02x}"  # never negative


def _colon_colour(sub: list[int | None]) -> str | None:
    """Colour of ``38:5:n``, ``38:2:cs:r:g:b`` or ``38:2:r:g:b`` (``sub`` without the 38)."""
    if not sub:
        return None
    if sub[0] == 5 and len(sub) >= 2:
        return _palette(sub[1])
    if sub[0] == 2:
        if len(sub) >= 5:
            return _rgb(sub[2], sub[3], sub[4])
        if len(sub) == 4:
            return _rgb(sub[1], sub[2], sub[3])
    return None


def _semicolon_colour(items: Sequence[int | list[int | None]], i: int) -> tuple[str | None, int]:
    """Colour of ``38;5;n`` or ``38;2;r;g;b`` starting after the 38; returns (colour, items used)."""
    left = len(items) - i
    if left <= 0 or isinstance(items[i], list):
        return None, 0
    mode = items[i]
    if mode == 5:
        index = items[i + 1] if left >= 2 else None
        return (_palette(index) if isinstance(index, int) else None), min(2, left)
    if mode == 2:
        if left < 4:
            return None, left
        r, g, b = items[i + 1], items[i + 2], items[i + 3]
        if isinstance(r, int) and isinstance(g, int) and isinstance(b, int):
            return _rgb(r, g, b), 4
        return None, 4
    return None, 1


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


# ---------------------------------------------------------------------------------------------
# Rendering recordings


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


def last_screen(
    cast: Cast, size_hint: TermSize | None = None, *, mapped: Path | Searchable | None = None
) -> ScreenSnapshot:
    """Return the last screen of the recording ``cast``, without replaying all of it.

    mapped: the recording's file when it holds plain asciicast v2/v3 (not sealed, not
    compressed), or its plaintext as ``Searchable`` bytes (seekable zstd): it is then read
    from its end (see ``read_tail``), for a 100 MB recording in a fraction of a second;
    otherwise the events are streamed once.
    size_hint: the terminal size in effect at the start of the recording when the caller
    knows better than the header (resize events still apply); None means the header's.
    Raises DataError on a corrupt recording.
    """
    tail = read_tail(cast, mapped=mapped, size_hint=size_hint)
    return render_events(tail.events, tail.size, alternate=tail.alternate)


# ---------------------------------------------------------------------------------------------
# Reading a recording from its end


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
    for m in _syntax().markers.finditer(joined):
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


class Searchable(Protocol):
    """A recording's plaintext as random-access bytes (``vault.seekable.SeekableFrames``):
    what the backward reader uses of a memory map."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: slice, /) -> bytes: ...
    def find(self, sub: bytes, start: int = ..., end: int | None = ..., /) -> int: ...
    def rfind(self, sub: bytes, start: int = ..., end: int | None = ..., /) -> int: ...


def read_tail(
    cast: Cast,
    *,
    mapped: Path | Searchable | None = None,
    size_hint: TermSize | None = None,
    budget_bytes: int = TAIL_BUDGET_BYTES,
) -> Tail:
    """Find where the last screen of a recording starts and return the events from there.

    mapped: the file of ``cast`` when it is plain asciicast on disk (``vault.recording``
    knows; or its plaintext as ``Searchable`` bytes, a seekable zstd file's frames decoded
    on demand): it is mapped and read backwards, event line by event line, until a reset, a
    clear or an alternate screen switch that starts the final screen (see
    ``_choose_start``), or until ``budget_bytes`` of lines are decoded. The size at the start
    is that of the last resize before it (found with a backwards byte search), else
    ``size_hint``, else the header's. Without ``mapped`` (single-frame zstd, sealed) and for v1
    the events are streamed once, keeping a bounded tail. A cut last line is ignored.

    Raises DataError on a corrupt recording (a malformed line other than the last);
    KeyUnavailable when a sealed recording's key cannot be found.
    """
    base_size = size_hint or cast.header.size
    if isinstance(mapped, Path) and cast.preloaded is None:
        with open(mapped, "rb") as fh:
            total = os.fstat(fh.fileno()).st_size
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _read_tail_backwards(str(mapped), data, total, cast.header.version, base_size, budget_bytes)
    if mapped is not None and cast.preloaded is None:
        total = len(mapped)
        return _read_tail_backwards(cast.name, mapped, total, cast.header.version, base_size, budget_bytes)
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


class _MappedRecording:
    """A plain recording mapped in memory, read from its end (asciicast v2/v3 lines)."""

    def __init__(self, data: mmap.mmap | Searchable, version: int) -> None:
        self.data = data
        self.version = version
        newline = data.find(b"\n")
        self.body_start = newline + 1 if newline >= 0 else len(data)
        self.searched = 0  # bytes covered by backwards searches
        self._alternate_at: tuple[int, bool] | None = None  # (marker line offset, state after it)

    def lines_backwards(self) -> Iterator[tuple[int, bytes]]:
        """Yield (offset, line) of the non-empty event lines, last first."""
        data = self.data
        end = len(data)
        while end > self.body_start:
            nl = data.rfind(b"\n", self.body_start, end)
            begin = nl + 1 if nl >= 0 else self.body_start
            line = data[begin:end].strip()
            end = nl if nl >= 0 else self.body_start
            if line and not (self.version == 3 and line.startswith(b"#")):
                yield begin, line

    def line_at(self, pos: int) -> tuple[int, bytes]:
        """Return (offset, line) of the line holding byte ``pos``."""
        begin = self.data.rfind(b"\n", self.body_start, pos) + 1 or self.body_start
        end = self.data.find(b"\n", pos)
        return begin, self.data[begin : end if end >= 0 else len(self.data)].strip()

    def lines_holding(self, needles: Sequence[bytes], limit: int) -> Iterator[tuple[int, bytes]]:
        """Yield (offset, line) of lines before ``limit`` holding any of ``needles``, last first.

        Searches backwards block by block, so the cost grows with the distance to the hit.
        """
        data = self.data
        longest = max(len(needle) for needle in needles)
        high = limit
        while high > self.body_start:
            low = max(self.body_start, high - _SEARCH_BLOCK_BYTES)
            # Needles that straddle ``low`` are found here; they do not fit the next block.
            from_ = max(self.body_start, low - longest + 1)
            pos = max(data.rfind(needle, from_, high) for needle in needles)
            if pos < 0:
                self.searched += high - low
                high = low
                continue
            begin, line = self.line_at(pos)
            self.searched += high - begin
            yield begin, line
            high = begin

    def size_before(self, limit: int, fallback: TermSize) -> TermSize:
        """Return the size set by the last resize event before byte ``limit``, else ``fallback``."""
        for _, line in self.lines_holding((b', "r", "', b',"r","'), limit):
            event = _decode(line)
            if event is not None and event[1] == "r":
                try:
                    return TermSize.parse(event[2])
                except ValueError:
                    continue
        return fallback

    def alternate_before(self, limit: int) -> bool:
        """Return whether the alternate screen was showing at byte ``limit`` (a line start).

        Searches back for the last output event holding an alternate screen switch or a
        reset (in the JSON text: ``[?1049``, ``[?1047``, ``[?47``, ``\\u001bc``). A switch
        whose mode is not its first parameter is not found (rare; the damage is cosmetic).
        """
        if self._alternate_at is not None and self._alternate_at[0] < limit:
            return self._alternate_at[1]  # no switch between that one and ``limit``
        needles = (b"[?1049", b"[?1047", b"[?47", b"u001bc", b"u001Bc")
        for begin, line in self.lines_holding(needles, limit):
            event = _decode(line)
            if event is None or event[1] != "o":
                continue
            state = _final_alternate(_markers(event[2]), None)
            if state is not None:
                self._alternate_at = (begin, state)
                return state
        self._alternate_at = (-1, False)
        return False


def _decode(line: bytes) -> tuple[float, str, str] | None:
    """Decode one event line ``[time, code, data]``; None when it is not one."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(obj, list) and len(obj) == 3):
        return None
    t, code, data = obj
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not isinstance(code, str) or not isinstance(data, str):
        return None
    return float(t), code, data


def _read_tail_backwards(
    path: str, data: mmap.mmap | Searchable, total: int, version: int, fallback: TermSize, budget: int
) -> Tail:
    """Read a plain recording backwards from its end; see ``read_tail``.

    The window grows one event line at a time. A start can only be a marker, so the window
    is analysed only once it holds new markers: at most every quarter of what was read so
    far (fewer analyses as it grows) and always before decoding a long line. When a start
    depends on the screen in use before the window, reading goes on for a while (the switch
    is usually near, and a switch cut between two events is only seen this way) before a
    byte search answers.
    """
    rec = _MappedRecording(data, version)
    # Output and resize events with their markers and line offsets, last first.
    backwards: list[tuple[Event, list[_Marker]]] = []
    offsets: list[int] = []
    read = 0
    checked_at = 0
    unchecked = False  # markers were added since the last analysis
    waiting_since: int | None = None  # bytes read when a start first needed the state before
    following = ""
    last_line = True
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
            initial = rec.alternate_before(offsets[-1] if offsets else len(data))
            found = _choose_start(window, initial)
        waiting_since = None
        return found

    for offset, line in rec.lines_backwards():
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
        decoded = _decode(line)
        if decoded is None:
            if last_line:
                last_line = False
                continue  # a cut last line is the end of the recording
            raise DataError(f"{path}: the line at byte {offset} is not a valid asciicast v{version} event")
        last_line = False
        t, code, text = decoded
        if code == "o":
            markers = _markers(text, following)
            backwards.append((Event(t, code, text), markers))
            offsets.append(offset)
            following = text
            unchecked = unchecked or bool(markers)
        elif code == "r":
            backwards.append((Event(t, code, text), []))
            offsets.append(offset)
    window = backwards[::-1]
    if whole:
        initial = False
        start = _choose_start(window, False) or _Start(0, 0, False, "start")
    elif start is None:
        start = analyse(resolve=True)
        if start is None and initial is None:
            initial = rec.alternate_before(offsets[-1] if offsets else len(data))
    events, alternate, reason, first = _tail_from(window, start, bool(initial))
    size: TermSize | None = None
    for event, _ in window[:first]:
        if event.code == "r":
            size = _parse_size(event.data, size or fallback)
    if size is None:
        size = rec.size_before(offsets[len(offsets) - 1 - first] if offsets else len(data), fallback)
    return Tail(size, alternate, tuple(events), reason, read, rec.searched, total)
