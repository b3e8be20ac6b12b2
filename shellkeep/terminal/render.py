"""Render the rows of a screen snapshot as ANSI text for a terminal or as inline-styled HTML.

Colours and attributes are written as ECMA-48 SGR with xterm's 256-colour and truecolour
extensions (``38;5;n``, ``38;2;r;g;b``); HTML uses xterm's default palette.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellkeep.terminal.cell import Cell, Colour

    # (fg, bg, bold, italic, underline, strikethrough, reverse)
    _Style = tuple[Colour, Colour, bool, bool, bool, bool, bool]

__all__ = ["ansi_rows", "html_rows", "xterm_palette"]


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
def xterm_palette() -> tuple[str, ...]:
    """Return xterm's default 256-colour palette as ``#rrggbb`` strings (index 0-255)."""
    base = [
        "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
        "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
    ]  # fmt: skip
    levels = (0, 95, 135, 175, 215, 255)
    cube = [f"#{levels[r]:02x}{levels[g]:02x}{levels[b]:02x}" for r in range(6) for g in range(6) for b in range(6)]
    grey = [f"#{v:02x}{v:02x}{v:02x}" for v in range(8, 248, 10)]
    return tuple(base + cube + grey)


def ansi_rows(rows: Sequence[Sequence[Cell]]) -> str:
    """Return ``rows`` redrawn with SGR sequences, one line per row joined by ``\\n``.

    Attributes are reset at the end of every row that set any; the right halves of wide
    characters (cells holding ``""``) are skipped.
    """
    out: list[str] = []
    for row in rows:
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


def html_rows(rows: Sequence[Sequence[Cell]], *, foreground: str, background: str) -> str:
    """Return ``rows`` as one self-contained ``<pre>`` block with inline styles.

    foreground/background: CSS colours for the terminal's default colours.
    """
    palette = xterm_palette()
    lines: list[str] = []
    for row in rows:
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
        lines.append("".join(parts))
    body = "\n".join(lines)
    return (
        f'<pre class="shellkeep-screen" style="margin:0;padding:0.5em;'
        f"color:{foreground};background:{background};"
        f'font-family:ui-monospace,Menlo,Consolas,monospace;line-height:1.2">{body}</pre>'
    )
