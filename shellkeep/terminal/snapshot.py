"""Define what a terminal showed at one moment: ``ScreenSnapshot``, its ``Cell``s and ``Point``s.

A snapshot is a plain value (no pyte inside), taken by ``terminal.emulator.Terminal`` and
turned into text, ANSI or HTML here through ``terminal.render``.
"""

from __future__ import annotations

from dataclasses import dataclass

from shellkeep.terminal import render
from shellkeep.terminal.cell import Cell, Colour, Point
from shellkeep.termsize import TermSize

__all__ = ["Cell", "Colour", "Point", "ScreenSnapshot"]


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
        return render.ansi_rows(self._trimmed())

    def to_html(self, *, foreground: str = "#e5e5e5", background: str = "#000000") -> str:
        """Return the screen as one self-contained ``<pre>`` block with inline styles.

        foreground/background: CSS colours for the terminal's default colours. Palette colours
        use xterm's default palette. Text is HTML-escaped; trailing blank cells and rows are
        left out as in ``to_ansi``.
        """
        return render.html_rows(self._trimmed(), foreground=foreground, background=background)
