"""Define the parts of a screen: a ``Cell`` with its ``Colour``s, and a ``Point`` on it.

Plain values with no pyte inside; ``terminal.snapshot`` holds them in a ``ScreenSnapshot`` and
``terminal.render`` turns them into ANSI or HTML.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Cell", "Colour", "Point"]

#: A colour: ``None`` the terminal's default, an ``int`` 0-255 an xterm palette index
#: (0-7 ANSI, 8-15 bright), a ``str`` ``"#rrggbb"`` a truecolour value.
Colour = int | str | None


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
