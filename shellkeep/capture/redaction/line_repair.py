"""Own the repair of a line whose marker a later edit landed inside (``LineRepair``).

A marker is often wider than its secret (``[REDACTED:password]``, 19 columns, for a
14-column password), and a line editor's later edits on the line (backspaces, ``CSI D`` and
``C``, ``CSI P`` and ``@``, ``CSI K``, the tail redrawn after them) count columns on its own
screen, where the secret took its own width: they land inside the marker
(``[REDACTED:passwowr2"``). ``LineRepair`` keeps the current line, from its start, as the
program drew it (raw) and as it was written (markers in it), while a marker is on it. When,
after a written piece that the program drew with cursor moves after its secret, a marker on the
line is no longer whole on the recording's screen, or the text around the markers is no longer
the program's (whitespace aside: padding), it appends a redraw of the line as the program
now shows it with its secrets redacted again: from the first column that differs, an erase to
the end of the line (``CSI K``), and the cursor put where the program's cursor is, in the
recording's columns (``CSI n D``/``C``). A column not drawn since the line's start (its
last CR or LF: fish starts each piece with ``\\r`` and a ``CSI n C``) is not known: it is taken
as unchanged, and a redraw that would draw over it or erase it is not made.

No secret is written in clear by a redraw: a character drawn inside a redacted secret stays
inside a marker even where no rule matches the edited line any more, and every other
character of the line was written in clear already.

Only a line on one row is modelled: characters one column wide, BS, CR, TAB, bells, SGR,
modes, OSC strings, and the CSI edits ``@ P K X C D G`` and ``J`` (``0J``: on the one row
modelled, an erase to the end of the line, as zsh writes after each prompt). Anything else on
the line (a move to another row, a soft wrap's `` \\r``, a wide character, cursor save and
restore) leaves the line as it is written until its next line feed. Escape sequences: ECMA-48.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from shellkeep.capture.redaction.compiled import Span
from shellkeep.capture.redaction.rules import MARKER, MARKER_PREFIX

Taint = tuple[int, int, str]
"""A secret redacted in the raw line: (start, end) 0-based raw indices, its rule's name."""

_TAIL_MAX = 2048
"""Raw characters of one line kept at most; a longer line is left as it is written."""

_Cells = tuple[list[str], list[object], int]
"""A modelled row: its characters, a label per character (None: none), the cursor column (0-based)."""

_UNKNOWN = "\x00"
"""A column of a modelled row not drawn since the line's start (its last CR or LF): what the
screen shows there is not known (fish starts each piece with ``\\r`` and a ``CSI n C``)."""


class LineRepair:
    """Append a redraw after written text that left a marker on its line broken (see the module).

    Only lines a marker is written on are looked at: output without secrets costs one check.

    One per output stream, used by one thread. ``repair`` is called with each piece written.
    """

    __slots__ = ("_off", "_raw", "_rec", "_taint")

    def __init__(self) -> None:
        """Start with no marker on the line."""
        self._raw: str | None = None  # the raw line from its start; None: no marker on it (or given up)
        self._rec = ""  # the written line from its start
        self._taint: list[Taint] = []  # the secrets redacted in _raw
        self._off = False  # given up on the line until its next line feed

    @property
    def following(self) -> bool:
        """Return whether a marker is on the current line (or one was, on a line given up)."""
        return self._raw is not None or self._off

    def reset(self) -> None:
        """Forget the line (what was written does not follow the raw text any more)."""
        self._raw, self._rec, self._taint, self._off = None, "", [], True

    def repair(self, line: str, raw: str, written: str, taint: list[Taint], secrets: Callable[[str], list[Span]]) -> tuple[str, bool]:
        """Return ``written`` with a redraw after each line it left with a broken marker, and
        whether one ends it (the cursor is then where the program's is: nothing is owed).

        Args:
            line: the raw text of the current line before ``raw`` (from its last CR or LF),
                ``written`` the same with ``raw``'s secrets replaced.
            raw: the raw text that ``written`` writes.
            taint: the secrets replaced in ``raw`` (indices into ``raw``).
            secrets: the spans of the secrets in a line of shown text.
        """
        if self._off:
            if "\n" not in written:
                return written, False
            self._off = False  # a new line: followed from its start when a marker is on it
            raw_at, rec_at = raw.rfind("\n") + 1, written.rfind("\n") + 1
            if MARKER_PREFIX in written[rec_at:] and len(raw) - raw_at <= _TAIL_MAX:
                self._raw, self._rec = raw[raw_at:], written[rec_at:]
                self._taint = [(max(0, s - raw_at), e - raw_at, n) for s, e, n in taint if e > raw_at]
            return written, False
        if self._raw is None:
            if MARKER_PREFIX not in written:
                return written, False  # the common case: no marker on the line
            if len(line) >= _TAIL_MAX:
                return written, False
            self._raw, self._rec, self._taint = line, line, []
        return self._follow(raw, written, taint, secrets)

    def _follow(self, raw: str, written: str, taint: list[Taint], secrets: Callable[[str], list[Span]]) -> tuple[str, bool]:
        """Repair the lines of ``written`` that hold a marker (the followed line first); keep the last."""
        assert self._raw is not None
        raw_shift, rec_shift = len(self._raw), len(self._rec)
        raw_all = self._raw + raw
        rec_all = self._rec + written
        if any("\n" in raw[s:e] for s, e, _n in taint):  # a secret over several lines: rows no longer match
            self.reset()
            self._off = "\n" not in written
            return written, False
        taints = self._taint + [(s + raw_shift, e + raw_shift, name) for s, e, name in taint]
        # The lines to look at, as (raw start, raw end, written start, written end) in raw_all and
        # rec_all: the followed one, and each one a marker is written on (found by its secret:
        # the n-th marker written is the n-th secret replaced), without splitting the whole text.
        raw_end, rec_end = raw_all.find("\n", raw_shift), rec_all.find("\n", rec_shift)
        if (raw_end == -1) != (rec_end == -1):
            self.reset()
            return written, False
        if raw_end == -1:
            lines = [(0, len(raw_all), 0, len(rec_all))]
        else:
            lines = [(0, raw_end, 0, rec_end)]
            later = [(s, e) for s, e, _n in taints if s > raw_end]
            at = rec_all.find(MARKER_PREFIX, rec_end)
            for s, _e in later:
                if at == -1:
                    break
                lines.append((raw_all.rfind("\n", 0, s) + 1, _line_end(raw_all, s), rec_all.rfind("\n", 0, at) + 1, _line_end(rec_all, at)))
                at = rec_all.find(MARKER_PREFIX, at + 1)
        out: list[str] = []
        pos = 0  # in written
        redrew = ""  # the redraw that ends written
        done = -1
        for raw_lo, raw_hi, rec_lo, rec_hi in lines:
            if rec_lo <= done:
                continue  # a line already looked at (two markers on it)
            done = rec_lo
            line_taint = [(s - raw_lo, e - raw_lo, n) for s, e, n in taints if s < raw_hi and e > raw_lo]
            redraw = _redraw(raw_all[raw_lo:raw_hi], rec_all[rec_lo:rec_hi], line_taint, secrets)
            if redraw:
                end = rec_hi - rec_shift  # its line feed (or the end) in written
                out += (written[pos:end], redraw)
                pos = end
                redrew = redraw if rec_hi == len(rec_all) else ""
        out.append(written[pos:])
        start = raw_all.rfind("\n") + 1
        raw_line, rec_line = raw_all[start:], rec_all[rec_all.rfind("\n") + 1 :] + redrew
        if MARKER_PREFIX not in rec_line or len(raw_line) > _TAIL_MAX or len(rec_line) > _TAIL_MAX:
            self._raw, self._rec, self._taint = None, "", []
            self._off = MARKER_PREFIX in rec_line
        else:
            self._raw, self._rec = raw_line, rec_line
            self._taint = [(max(0, s - start), e - start, n) for s, e, n in taints if e > start]
        return "".join(out), bool(redrew)


def _line_end(text: str, at: int) -> int:
    """Return where the line holding ``text[at]`` ends (its line feed, or the end of ``text``)."""
    end = text.find("\n", at)
    return len(text) if end == -1 else end


def _redraw(raw: str, rec: str, taint: list[Taint], secrets: Callable[[str], list[Span]]) -> str:
    """Return the redraw that makes the written line ``rec`` show the raw line ``raw`` with its
    secrets redacted, when a marker of ``rec`` is broken or the text around its markers is not
    the program's ("" otherwise, or when either line cannot be modelled)."""
    first = rec.find(MARKER_PREFIX)
    secret = min((a for a, _b, _n in taint), default=-1)
    if first == -1 or secret != first or raw[:first] != rec[:first]:
        return ""  # no marker of a secret of this raw line (the two lines do not match)
    if not _may_move(raw, secret) or not _may_move(rec, first):
        return ""  # the program drew on after its secret, moving nothing back: the markers are whole
    markers = [(m.start(), m.end()) for m in _marker_rx().finditer(rec)]
    if not markers:
        return ""
    labels: list[object] = [None] * len(rec)
    for k, (a, b) in enumerate(markers):
        labels[a:b] = [k] * (b - a)
    shown = _model(rec, labels)
    if shown is None:
        return ""
    broken = _broken(shown[1], markers)
    raw_labels: list[object] = [None] * len(raw)
    for a, b, name in taint:
        raw_labels[a:b] = [name] * (b - a)
    program = _model(raw, raw_labels)
    if program is None:
        return ""
    cells, names, cursor = program
    text = "".join(cells)
    redacted, column, drawn = _redacted(text, names, secrets(text), cursor)
    now = "".join(shown[0])
    if not broken and now.split() == redacted.split():
        return ""  # the markers whole, the text around them as the program has it (padding aside)
    if now == redacted and shown[2] == column:
        return ""
    # A column not known on either row is taken as unchanged: it is never drawn over.
    differ = next((i for i, (a, b) in enumerate(zip(now, redacted)) if a != b and _UNKNOWN not in (a, b)), min(len(now), len(redacted)))
    # From the start of the marker it falls in: every cell of a broken marker is drawn over.
    differ = next((a for a, b in drawn if a <= differ < b), differ)
    if _UNKNOWN in redacted[differ:] or _UNKNOWN in now[differ:]:
        return ""  # the redraw would draw over (or erase) a column not known: left as it is written
    parts = [_move(shown[2], differ), redacted[differ:]]
    if len(now) > len(redacted):
        parts.append("\x1b[K")
    parts.append(_move(len(redacted), column))
    return "".join(parts)


def _may_move(rec: str, start: int) -> bool:
    """Return whether ``rec`` from ``start`` on holds what may move the cursor back (BS, CR, ESC;
    not the CR that ends a line of output)."""
    end = len(rec) - 1 if rec.endswith("\r") else len(rec)
    return rec.find("\x08", start, end) != -1 or rec.find("\r", start, end) != -1 or rec.find("\x1b", start, end) != -1


def _broken(labels: list[object], markers: list[tuple[int, int]]) -> bool:
    """Return whether a marker has some of its cells on the row, but not all of them in order."""
    where: dict[object, list[int]] = {}
    for col, label in enumerate(labels):
        if label is not None:
            where.setdefault(label, []).append(col)
    for k, cols in where.items():
        assert isinstance(k, int)
        a, b = markers[k]
        if len(cols) != b - a or cols[-1] - cols[0] != b - a - 1:
            return True
    return False


def _redacted(text: str, names: list[object], spans: list[Span], cursor: int) -> tuple[str, int, list[tuple[int, int]]]:
    """Return ``text`` with the spans and the runs of characters drawn from a secret (``names``)
    replaced by markers, the column ``cursor`` maps to (a cursor inside a secret: its marker's
    start), and the columns of each marker (start, end)."""
    marks: list[tuple[int, int, str]] = [(s, e, name) for s, e, _priority, name in spans]
    col = 0
    while col < len(names):
        name = names[col]
        if name is None:
            col += 1
            continue
        end = col
        while end < len(names) and names[end] == name:
            end += 1
        marks.append((col, end, str(name)))
        col = end
    marks.sort()
    merged: list[tuple[int, int, str]] = []
    for s, e, name in marks:
        if merged and s <= merged[-1][1]:  # overlapping or touching: one marker
            ps, pe, pname = merged[-1]
            merged[-1] = (ps, max(pe, e), pname)
        else:
            merged.append((s, e, name))
    out: list[str] = []
    drawn: list[tuple[int, int]] = []
    pos = 0
    column = -1
    width = 0  # columns written so far
    for s, e, name in merged:
        out.append(text[pos:s])
        width += s - pos
        if column == -1 and cursor < e:
            column = width - (s - cursor) if cursor < s else width
        marker = MARKER.format(name=name)
        out.append(marker)
        drawn.append((width, width + len(marker)))
        width += len(marker)
        pos = e
    if column == -1:
        column = width + cursor - pos
    out.append(text[pos:])
    return "".join(out), column, drawn


def _move(at: int, to: int) -> str:
    """Return the relative cursor move (CUB, CUF) from column ``at`` to column ``to``."""
    if to < at:
        return f"\x1b[{at - to}D"
    if to > at:
        return f"\x1b[{to - at}C"
    return ""


def _model(text: str, labels: list[object]) -> _Cells | None:
    """Return the row ``text`` draws from column 0 (``_Cells``, each character labelled with
    ``labels`` of the raw index it came from), or None when it does what is not modelled."""
    cells: list[str] = []
    tags: list[object] = []
    cursor = 0
    pos = 0
    n = len(text)
    token = _token_rx().match
    while pos < n:
        m = token(text, pos)
        if m is None:
            return None  # an escape sequence cut or unknown
        end = m.end()
        kind = m.lastgroup
        if kind == "text":
            run = text[pos:end]
            if not run.isascii() and not _narrow(run):
                return None
            if cursor > len(cells):
                pad = cursor - len(cells)
                cells += [_UNKNOWN] * pad
                tags += [None] * pad
            cells[cursor : cursor + len(run)] = run
            tags[cursor : cursor + len(run)] = labels[pos:end]
            cursor += len(run)
        elif kind == "ctl":
            ch = text[pos]
            if ch == "\x08":
                cursor = max(0, cursor - 1)
            elif ch == "\r":
                if pos and text[pos - 1] == " ":
                    return None  # a soft wrap's `` \r`` (readline, zle): the next row is drawn on
                cursor = 0
            elif ch == "\t":
                cursor = (cursor // 8 + 1) * 8
            elif ch in "\x0b\x0c\n":
                return None
        elif kind == "csi":
            cursor = _csi(m.group("params"), m.group("final"), cells, tags, cursor)
            if cursor < 0:
                return None
        elif kind == "esc":
            if m.group("esc_final") in "78DEMc":
                return None  # cursor saved, restored, or moved to another row
        pos = end
    return cells, tags, cursor


def _csi(params: str, final: str, cells: list[str], tags: list[object], cursor: int) -> int:
    """Apply one CSI sequence to the row; return the cursor after it (-1: not modelled)."""
    if params[:1] in ("?", ">", "<", "=") or final in "mhlntq":
        return cursor  # modes, colours, queries: nothing drawn, the cursor stays
    if not params.isdigit() and params:
        return -1
    count = int(params) if params else 0
    if final == "J":
        if count:
            return -1  # an erase of the rows above, or of the whole screen
        final = "K"  # to the end of the screen: on the one row modelled, to the end of the line
    if final == "K":
        if count == 0:
            del cells[cursor:], tags[cursor:]
        elif count == 1:
            upto = min(cursor + 1, len(cells))
            cells[:upto] = [" "] * upto
            tags[:upto] = [None] * upto
        else:
            cells[:] = [" "] * len(cells)
            tags[:] = [None] * len(tags)
        return cursor
    count = max(count, 1)
    if final == "D":
        return max(0, cursor - count)
    if final == "C":
        return cursor + count
    if final == "G":
        return count - 1
    if final == "P":
        del cells[cursor : cursor + count], tags[cursor : cursor + count]
        return cursor
    if final == "@":
        if cursor < len(cells):
            cells[cursor:cursor] = [" "] * count
            tags[cursor:cursor] = [None] * count
        return cursor
    if final == "X":
        upto = min(cursor + count, len(cells))
        cells[cursor:upto] = [" "] * max(0, upto - cursor)
        tags[cursor:upto] = [None] * max(0, upto - cursor)
        return cursor
    return -1


def _narrow(run: str) -> bool:
    """Return whether every character of ``run`` takes one column."""
    import wcwidth  # pyte's; only for text beyond ASCII

    return all(wcwidth.wcwidth(ch) == 1 for ch in run)


@functools.cache
def _token_rx() -> re.Pattern[str]:
    """Return the regex of one token of a line: a run of characters drawn, one control
    character, a CSI sequence, a string (OSC, DCS, SOS, PM, APC) or a two-character escape.

    An escape sequence cut at the end (``\\x1b[``, ``\\x1b[1``, an OSC not ended) is no token:
    its introducer (``[ ] P X ^ _``) is never taken as a two-character escape's final, so the
    line is not modelled until the sequence is complete, and no redraw is put inside it."""
    return re.compile(
        r"(?P<text>[^\x00-\x1f\x7f\x1b]+)"
        r"|(?P<csi>\x1b\[(?P<params>[0-?]*)[ -/]*(?P<final>[@-~]))"
        r"|(?P<string>\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\)"
        r"|(?P<esc>\x1b[ -/]*(?P<esc_final>[0-OQ-WYZ\\`-~]))"
        r"|(?P<ctl>[\x00-\x1a\x1c-\x1f\x7f])"
    )


@functools.cache
def _marker_rx() -> re.Pattern[str]:
    """Return the regex of a whole marker."""
    return re.compile(re.escape(MARKER_PREFIX) + r"[a-z0-9-]+\]")
