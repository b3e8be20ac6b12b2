r"""Drop the cursor moves that leave the cursor where it is, so a line drawn key by key reads whole.

fish draws each key of its command line as a carriage return, a cursor forward (ECMA-48 CUF,
``CSI n C``) to the key's column, and the key: ``\r ESC[23C A \r ESC[24C 1 ...``. Seen as text,
every character of a typed token is on a line of its own, so no rule matches it and the token
was stored in clear. After the first such move on a row, the column is known: printable ASCII
characters move it one right, a backspace one left, SGR colours, erases to the line end
(``CSI K``), private modes, character sets and OSC strings not at all. A later ``\r ESC[nC`` to that very column moves
nothing, and dropping it leaves the screen as it was while the keys read as one word, which
the redaction rules (and a line editor's edits, ``LineRepair``) then see whole.

Anything else (another cursor move, a line feed, a tab, a character beyond ASCII, whose width
is not known here, an escape sequence cut between two reads) forgets the column until the
next ``\r ESC[nC``, which is then kept: only a move proven idle is dropped. While the column is
known, the start of a move cut by the end of a read (``\r ESC[1``) is held until the read that
completes it (``take`` returns it at a quiet spell or the stream's end). A move to the
column after the last one (a character drawn in a terminal's last column leaves the cursor
there, not past it) is never idle, as fish never moves past the last column.
"""

from __future__ import annotations

import functools
import re

from shellkeep.capture.redaction.screen_view import COLOUR

__all__ = ["NoOpMoves"]

@functools.cache
def _piece_rx() -> re.Pattern[str]:
    """Return the regex of one piece of output as ``_elide`` follows the column through it."""
    return re.compile(
        r"(\r\x1b\[(\d{0,4})C)"  # 1, 2: a carriage return and a cursor forward: to column n
        r"|([ -~]+)"  # 3: printable ASCII, one column each
        r"|(\x08)"  # 4: a backspace
        # 5: what moves no cursor: a colour or character set, an erase to the line end, a private
        # mode (the cursor shown or hidden), an OSC string (the window title)
        rf"|({COLOUR}|\x1b\[[0-2]?K|\x1b\[\?[0-9;]*[hl]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\))"
        r"|[\s\S]"  # anything else: the column is not known any more
    )


@functools.cache
def _cut_move_rx() -> re.Pattern[str]:
    """Return the regex of the start of a ``\r ESC[nC`` at the end of a piece (its rest comes
    with the next read)."""
    return re.compile(r"\r(?:\x1b(?:\[\d{0,4})?)?\Z")


_MAX_TEXT = 1024
"""Characters of one piece of output above which it is passed on as it is (and the column
forgotten): a line editor draws a key in a few dozen, a program's output comes in 4 KiB reads."""


class NoOpMoves:
    """Drop ``\r ESC[nC`` moves to the column the cursor is at, in a stream of output pieces.

    ``feed`` returns each piece with those moves left out (see the module doc); the screen
    a terminal draws from the result is the one it draws from the input. Not thread-safe.
    """

    __slots__ = ("_column", "_pending")

    def __init__(self) -> None:
        self._column: int | None = None  # the cursor's column, when known since a \r ESC[nC
        self._pending = ""  # the start of a \r ESC[nC cut by the end of the last piece

    @property
    def pending(self) -> int:
        """Return the number of characters held back (the start of a move cut by a read)."""
        return len(self._pending)

    def take(self) -> str:
        """Return the characters held back, and hold nothing (the stream's end, a quiet spell)."""
        pending, self._pending = self._pending, ""
        if pending:
            self._column = None
        return pending

    def feed(self, text: str) -> str:
        """Return ``text`` without its idle ``\r ESC[nC`` moves; the start of one cut by the end
        of ``text`` is held back while the column is known (``take`` returns it)."""
        if self._pending:
            text, self._pending = self._pending + text, ""
        if self._column is None and "\r\x1b[" not in text:
            return text
        if len(text) > _MAX_TEXT:
            self._column = None
            return text
        cut = _cut_move_rx().search(text, max(0, len(text) - 8))
        if cut is None:
            return self._elide(text)
        body = self._elide(text[: cut.start()])
        if self._column is None:
            return body + text[cut.start() :]
        self._pending = text[cut.start() :]
        return body

    def _elide(self, text: str) -> str:
        """Return ``text`` without its idle moves, following the column through it."""
        out: list[str] = []
        pos = 0
        column = self._column
        for m in _piece_rx().finditer(text):
            if m.group(1) is not None:
                target = int(m.group(2) or 1) or 1
                if target == column:
                    out.append(text[pos : m.start()])
                    pos = m.end()
                column = target
            elif m.group(3) is not None:
                if column is not None:
                    column += m.end() - m.start()
            elif m.group(4) is not None:
                if column is not None:
                    column = max(0, column - 1)
            elif m.group(5) is None:
                column = None
        self._column = column
        if not out:
            return text
        out.append(text[pos:])
        return "".join(out)
