"""Define ``TermSize``, the one way sizes travel between the pty, capture and format layers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TermSize:
    """A terminal size in character cells: ``cols`` columns by ``rows`` rows."""

    cols: int
    rows: int

    def __str__(self) -> str:
        return f"{self.cols}x{self.rows}"

    @classmethod
    def parse(cls, text: str) -> TermSize:
        """Parse ``"COLSxROWS"`` (the payload of an asciicast ``r`` event); raises ValueError."""
        cols_s, sep, rows_s = text.partition("x")
        if not sep:
            raise ValueError(f"bad terminal size {text!r}")
        cols, rows = int(cols_s), int(rows_s)
        if cols <= 0 or rows <= 0:
            raise ValueError(f"bad terminal size {text!r}")
        return cls(cols, rows)
