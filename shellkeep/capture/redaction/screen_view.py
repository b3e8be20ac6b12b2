r"""Own what a terminal shows of a text (``_ScreenView``) and the escape-sequence helpers.

What a terminal shows of a text: escape sequences (ECMA-48 CSI, OSC, DCS/SOS/PM/APC strings,
two-character escapes) draw nothing, a backspace moves the cursor one column left so that the
next character overstrikes the one there (``ab\bc`` shows ``ac``; ``\b \b`` erases), and a
DEL typed as input erases the character before it. A secret drawn with colours or cursor moves
between its characters, or typed and corrected, is matched on that view; ``_columns_kept``
fits a marker to the columns its secret took.
"""

from __future__ import annotations

import bisect
import functools
import re

_SCREEN_CONTROLS = ("\x1b", "\x08", "\x7f")
_COMMON_FINALS = ("m", "k", "h")  # SGR, EL and CUP end most escape sequences inside a word (lower-cased)
_FINALS = frozenset(map(chr, range(0x40, 0x7F)))  # the last character of a CSI sequence
_WORD_STARTS = tuple(" \t\n=:\"'>(/")  # what a secret's first character usually follows
_SCREEN_SPREAD = 12
"""Raw characters a secret may take per character shown (colour and cursor moves between them)."""
_SCREEN_TAIL = 8192
"""Raw characters at the end of the stream in which an ESC/BS/DEL makes its screen view checked for a hold."""
_SCREEN_BACK = 1024
"""Raw characters before the last ESC/BS/DEL of the stream where a hold across it may start."""
_REWRITE = 4
"""Characters after the last backspace at the end of a stream that may still be erased
(``\b \b`` cut after its space): the hold is also looked for before them."""
_LITERAL, _JUNCTION, _AFTER, _ALONE, _PAIR = 0, 1, 2, 3, 4
"""Kinds of junction pattern: a literal; a literal's start, then ESC/BS/DEL; an escape's final
and a literal without its first character; a literal's first character alone before an escape;
its first two characters alone before an escape (fish colours each key: ``ESC[36m gh ESC[30m
ESC(B ESC[m ESC[36m p``...)."""

@functools.cache
def _escape_rx() -> re.Pattern[str]:
    """Return the regex of one escape sequence (ECMA-48; a cut one at the end of a text too)."""
    return re.compile(
        r"\x1b(?:\[[0-?]*[ -/]*[@-~]?"  # CSI
        r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, ended by BEL or ST
        r"|[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
        r"|[ -/]*[0-~]?)"  # two-character escapes: ESC ( B, ESC 7, ESC =
    )


COLOUR = r"\x1b\[[0-9;:]*m|\x1b[()][0-9A-Za-z]"
"""An SGR sequence (a colour or attribute: ECMA-48 ``CSI ... m``) or a character set's
designation (``ESC ( B``, with which terminfo's sgr0 ends): neither draws nor moves."""


@functools.cache
def _colour_rx() -> re.Pattern[str]:
    """Return the regex of one ``COLOUR``."""
    return re.compile(COLOUR)


@functools.cache
def _controls_rx() -> re.Pattern[str]:
    """Return the regex of a run of escape sequences, backspaces and DELs."""
    return re.compile(f"(?:{_escape_rx().pattern}|[\\x08\\x7f])+")


@functools.cache
def _space_rx() -> re.Pattern[str]:
    """Return the regex of one whitespace character."""
    return re.compile(r"\s")


@functools.cache
def _control_rx() -> re.Pattern[str]:
    """Return the regex of one ESC, BS or DEL."""
    return re.compile("[\\x1b\\x08\\x7f]")


def _cut_escape_start(text: str, start: int) -> int:
    """Return where an escape sequence cut by the end of ``text`` begins (-1: none is cut).

    Only a short one counts (a CSI or two-character escape, an OSC or DCS string up to 256
    characters): a longer unterminated string is written as it is.
    """
    esc = text.rfind("\x1b", start)
    if esc == -1:
        return -1
    m = _escape_rx().match(text, esc)
    if m is None or m.end() != len(text):
        return -1
    body = text[esc + 1 :]
    if not body:
        return esc
    if body[0] == "[":
        return esc if not ("\x40" <= body[-1] <= "\x7e") or len(body) == 1 else -1
    if body[0] in "]PX^_":
        return esc if len(body) <= 256 and not body.endswith(("\x07", "\x1b\\")) else -1
    return esc if not ("\x30" <= body[-1] <= "\x7e") else -1


def _escapes_ending_at(text: str, end: int) -> int:
    """Return where the run of escape sequences that ends at ``end`` starts (-1: none ends there)."""
    rx = _escape_rx()
    start = -1
    while True:
        esc = text.rfind("\x1b", max(0, end - 64), end)
        m = rx.match(text, esc) if esc != -1 else None
        if m is None or m.end() != end:
            return start
        start = end = esc


def _after_controls(text: str, pos: int) -> int:
    """Return the index after the escape sequences, backspaces and DELs starting at ``pos``."""
    m = _controls_rx().match(text, pos)
    return pos if m is None else m.end()


def _has_screen_controls(text: str, start: int = 0, end: int | None = None) -> bool:
    """Return whether ``text[start:end]`` holds an ESC, BS or DEL."""
    if start == 0 and end is None:
        return "\x1b" in text or "\x08" in text or "\x7f" in text
    return any(text.find(ch, start, end) != -1 for ch in _SCREEN_CONTROLS)


class _ScreenView:
    """What the screen shows of ``raw``: ``text``, and where each of its characters came from.

    Indices are 0-based; ``span`` maps a view span to the raw span holding all its characters
    (with what was removed between them), ``first_raw`` the raw index where a view suffix starts.
    The text is one regex substitution; the map back is built on first use only (most views
    show no secret).
    """

    __slots__ = ("_cum", "_index", "_stops", "_stripped", "changed", "raw", "rewritable", "text")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        stripped = _escape_rx().sub("", raw) if "\x1b" in raw else raw
        self._stripped = stripped
        edits = _line_edits(raw) if len(stripped) != len(raw) else []
        self._stops: list[int] | None = None  # view positions where removed text was
        self._cum: list[int] = [0]  # raw characters removed before each stop, cumulated
        self._index: list[int] | None = None  # view position -> stripped position, after backspaces
        text = stripped
        self.rewritable = len(text)  # where the cursor was after the last backspace: text from there may be redrawn
        if edits or "\x08" in stripped or "\x7f" in stripped:
            text, self._index, self.rewritable = _overstrike(stripped, edits)
        self.text = text
        self.changed = text != raw

    def _raw(self, pos: int) -> int:
        """Return the raw index of the stripped character at ``pos``."""
        stops = self._stops
        if stops is None:
            stops = self._stops = []
            removed = 0
            for m in _escape_rx().finditer(self.raw) if len(self._stripped) != len(self.raw) else ():
                a, b = m.span()
                stops.append(a - removed)
                removed += b - a
                self._cum.append(removed)
        return pos + self._cum[bisect.bisect_right(stops, pos)]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Return the raw span of the view's characters ``start:end`` (end > start)."""
        if self._index is None:
            return self._raw(start), self._raw(end - 1) + 1
        where = [self._raw(i) for i in self._index[start:end]]
        return min(where), max(where) + 1

    def first_raw(self, start: int) -> int:
        """Return the raw index where the view's characters from ``start`` on begin."""
        if start >= len(self.text):
            return len(self.raw)
        return self.span(start, len(self.text))[0]


@functools.cache
def _edit_rx() -> re.Pattern[str]:
    """Return the regex of the CSI sequences a line editor edits a line with (ECMA-48): ICH
    ``@`` insert blanks, DCH ``P`` delete characters, EL ``K`` erase to the line end, CUF ``C``
    and CUB ``D`` cursor right and left (typed arrows too)."""
    return re.compile(r"\x1b\[(\d{0,4})([@PKCD])")


@functools.cache
def _editing_rx() -> re.Pattern[str]:
    """Return the regex of what makes a text a line editor's edit: a character deleted or
    inserted (DCH, ICH), a backspace, a DEL, a typed Ctrl-K or Ctrl-U."""
    return re.compile(r"\x1b\[\d{0,4}[P@]|[\x08\x7f\x0b\x15]")


def _line_edits(raw: str) -> list[tuple[int, str, int]]:
    """Return the line edits in ``raw`` (``_edit_rx``) as (index in the text with escape
    sequences removed, final character, count), in order."""
    if _editing_rx().search(raw) is None:
        return []  # no character deleted, inserted or erased: a TUI's erase and moves are its layout
    edits: list[tuple[int, str, int]] = []
    removed = 0
    for m in _escape_rx().finditer(raw):
        a, b = m.span()
        e = _edit_rx().fullmatch(raw, a, b)
        if e is not None:
            edits.append((a - removed, e.group(2), int(e.group(1) or (0 if e.group(2) == "K" else 1))))
        removed += b - a
    return edits


def _edit(out: list[str], index: list[int], cursor: int, final: str, count: int, at: int) -> int:
    """Apply one line edit (``_edit_rx``) at ``cursor`` on the last line of ``out``, from which
    no other line starts; return the cursor after it (``at``: the index given to blanks)."""
    if final == "P":
        del out[cursor : cursor + count], index[cursor : cursor + count]
    elif final == "@":
        out[cursor:cursor] = [" "] * count
        index[cursor:cursor] = [at] * count
    elif final == "K" and count == 0:
        del out[cursor:], index[cursor:]
    elif final == "C":
        cursor = min(len(out), cursor + count)
    return cursor


def _overstrike(text: str, edits: list[tuple[int, str, int]] | None = None) -> tuple[str, list[int], int]:
    """Apply backspaces (cursor one column left, never past a line start; the next character
    overstrikes) and DELs (erase the character before); a carriage return, like a line feed,
    starts a new line after all the text (not at the cursor, which a backspace may have moved
    back: readline's ``\b\b\r\n`` after an insertion). ``edits`` (``_line_edits``): cursor
    moves and the characters deleted, inserted and erased on the line (readline's ``CSI P``
    and ``CSI K``; a typed arrow key), and the typed kills Ctrl-K (``\x0b``) and Ctrl-U
    (``\x15``) applied the same way. Return the text shown, for each of its characters its
    index in ``text``, and the cursor's position after the last of them."""
    out: list[str] = []
    index: list[int] = []
    cursor = line = pos = 0
    back = -1  # no backspace yet: nothing is to be redrawn
    todo = edits or []
    k = 0
    for m in _stroke_rx().finditer(text):
        i = m.start()
        while k < len(todo) and todo[k][0] <= i:  # the edits before this control character
            at, final, count = todo[k]
            k += 1
            cursor = _draw_run(out, index, cursor, text, pos, at)
            pos = at
            if final == "D":
                cursor = back = max(line, cursor - count)
            else:
                cursor = _edit(out, index, cursor, final, count, at)
        cursor = _draw_run(out, index, cursor, text, pos, i)
        pos = i + 1
        ch = text[i]
        if ch == "\x08":
            if cursor > line:
                cursor -= 1
            back = cursor
        elif ch == "\x7f":
            if cursor > line:
                cursor -= 1
                del out[cursor], index[cursor]
            back = cursor
        elif ch in "\r\n":  # a line end; a carriage return too (typed Enter, a line editor's
            out.append(ch)  # redraw after backspaces): what follows is never drawn over the line
            index.append(i)
            cursor = line = len(out)
        elif ch == "\x0b":
            del out[cursor:], index[cursor:]
        else:  # Ctrl-U
            del out[line:cursor], index[line:cursor]
            cursor = back = line
    for at, final, count in todo[k:]:
        cursor = _draw_run(out, index, cursor, text, pos, at)
        pos = at
        if final == "D":
            cursor = back = max(line, cursor - count)
        else:
            cursor = _edit(out, index, cursor, final, count, max(0, at - 1))
    _draw_run(out, index, cursor, text, pos, len(text))
    return "".join(out), index, back if back >= 0 else len(out)


@functools.cache
def _stroke_rx() -> re.Pattern[str]:
    """Return the regex of the characters ``_overstrike`` acts on (the others are drawn)."""
    return re.compile("[\x08\x7f\r\n\x0b\x15]")


def _draw_run(out: list[str], index: list[int], cursor: int, text: str, start: int, end: int) -> int:
    """Draw ``text[start:end]`` at ``cursor`` (over what is there, then after it); return the cursor after it."""
    if end <= start:
        return cursor
    n = end - start
    out[cursor : cursor + n] = text[start:end]
    index[cursor : cursor + n] = range(start, end)
    return cursor + n


def _secret_width(secret: str) -> int:
    """Return the columns ``secret`` took on the screen (-1: unknown, or over several lines)."""
    if "\n" in secret or "\r" in secret:
        return -1
    shown = _ScreenView(secret).text if _has_screen_controls(secret) else secret
    if shown.isascii():
        return len(shown) if shown.isprintable() else -1
    import wcwidth  # pyte's; only for a secret beyond ASCII

    width: int = wcwidth.wcswidth(shown)
    return width


def _columns_kept(marker: str, secret: str) -> str:
    """Return ``marker`` fitted to the columns ``secret`` took on the screen: padded with
    spaces when the secret was wider, followed by a cursor-back (CUB, ECMA-48 ``CSI n D``)
    over its extra columns when it was narrower, so the text after it is drawn where it was.
    The marker itself stays whole in the recording. A secret over several lines, or one
    whose width is unknown (control characters), gets the bare marker. ``_fit_marker``
    decides, from what follows, whether the cursor-back may be used."""
    width = _secret_width(secret)
    if width <= 0 or width == len(marker):
        return marker
    if width > len(marker):
        return marker + " " * (width - len(marker))
    return f"{marker}\x1b[{len(marker) - width}D"


_PRINTS, _MOVES, _UNDECIDED = 0, 1, 2
"""What the text after a marker does first: draws a character where the cursor is; moves the
cursor (a line end, a backspace, a cursor-moving escape sequence); nothing yet (the text ends)."""

_MOVING_FINALS = frozenset("ABCDEFGHIZ`adefHf")
"""Final characters of the CSI sequences that move the cursor (CUU ... CUP, CHA, VPA, HVP)."""


@functools.cache
def _row_end_rx() -> re.Pattern[str]:
    """Return the regex of what ends a row of drawn text: a line end, a backspace, a cursor move."""
    return re.compile(r"[\r\n\x08\x0b\x0c]|\x1b(?:\[[0-?]*[ -/]*[ABCDEFGHIZ`adef]|[78EMD])")


def _after_marker(text: str, pos: int, stop: int) -> tuple[int, int]:
    """Return what ``text[pos:stop]`` does first to the cursor after a marker (``_PRINTS``,
    ``_MOVES`` or ``_UNDECIDED``) and where that is: escape sequences that neither move the
    cursor nor draw (SGR colours, modes, erasing from the cursor) and bells are stepped over."""
    rx = _escape_rx()
    i = pos
    while i < stop:
        ch = text[i]
        if ch == "\x1b":
            m = rx.match(text, i, stop)
            if m is None:
                i += 1
                continue
            seq = m.group()
            if m.end() == stop and _cut_escape_start(seq, 0) == 0:
                return _UNDECIDED, i  # an escape sequence cut by the end: decided by what it becomes
            if (seq[1] == "[" and seq[-1] in _MOVING_FINALS) or seq in ("\x1b7", "\x1b8", "\x1bE", "\x1bM", "\x1bD"):
                return _MOVES, i
            i = m.end()
        elif ch in "\r\n\x08\x0b\x0c":
            return _MOVES, i
        elif ch < " " and ch != "\t":
            i += 1  # a bell or another control that draws nothing
        else:
            return _PRINTS, i  # a character (or a tab, which moves on) drawn from the cursor
    return _UNDECIDED, stop


def _fit_marker(marker: str, text: str, start: int, end: int, stop: int) -> tuple[str, int, int]:
    """Return how a marker replacing the secret ``text[start:end]`` is drawn with what follows
    it up to ``stop``: (the marker and that text as written, what is still owed to the next
    text written (``_settle_owed``), ``stop``).

    A secret wider than its marker: the marker padded to its columns (``_columns_kept``). A
    narrower one: the text after it must not land inside the marker ("[REDACTED:pass\"ord]").
    When that text moves the cursor first (a line end, a cursor move), a cursor-back over the
    marker's extra columns keeps every column as it was. When it draws first, it is drawn
    after the marker, and as many spaces as the marker took in excess are taken from the
    first run of spaces that long on the rest of the row (a TUI's padding before its border),
    so the columns after that run are kept. When nothing follows yet, the decision is owed
    to the next text written, which settles it the same way.
    """
    secret = text[start:end]
    width = _secret_width(secret)
    extra = len(marker) - width
    if width <= 0 or extra <= 0:
        return _columns_kept(marker, secret) + text[end:stop], 0, stop
    after, owed = _settle_after(text, end, stop, extra)
    return marker + after, owed, stop


def _settle_after(text: str, at: int, stop: int, extra: int) -> tuple[str, int]:
    """Return ``text[at:stop]``, drawn after a marker ``extra`` columns wider than its secret,
    as written, and what is still owed: ``extra`` (undecided: nothing drew or moved yet),
    ``-extra`` (drawn on, its row still ``extra`` columns to the right), or 0."""
    kind, i = _after_marker(text, at, stop)
    if kind == _UNDECIDED:
        return text[at:stop], extra
    if kind == _MOVES:
        return f"{text[at:i]}\x1b[{extra}D{text[i:stop]}", 0
    return _absorbed(text, at, stop, extra)


def _absorbed(text: str, at: int, stop: int, extra: int) -> tuple[str, int]:
    """Return ``text[at:stop]`` with ``extra`` spaces taken from the runs of spaces before its
    row ends (a line end or a cursor move), in order, each giving all its spaces but one (so
    no two words run together), and what is still owed: 0, or minus the spaces still to take
    when the row goes on past ``stop``."""
    row = _row_end_rx().search(text, at, stop)
    row_end = row.start() if row is not None else stop
    out: list[str] = []
    pos = at
    for run in _spaces_rx().finditer(text, at, row_end):
        if extra <= 0:
            break
        take = min(extra, len(run.group()) - 1)
        out.append(text[pos : run.end() - take])
        pos = run.end()
        extra -= take
    out.append(text[pos:stop])
    return "".join(out), 0 if row is not None or extra <= 0 else -extra


@functools.cache
def _spaces_rx() -> re.Pattern[str]:
    """Return the regex of a run of two spaces or more."""
    return re.compile("  +")


def _settle_owed(text: str, owed: int) -> tuple[str, int]:
    """Return ``text``, written after a marker that still owes ``owed`` (``_settle_after``:
    a cursor-back when positive, spaces to take from its row when negative), as written, and
    what is still owed after it."""
    if owed > 0:
        return _settle_after(text, 0, len(text), owed)
    return _absorbed(text, 0, len(text), -owed)
