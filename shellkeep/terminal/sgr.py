"""Apply SGR (Select Graphic Rendition) parameters to pyte's character attributes.

ECMA-48 8.3.117 with xterm's extensions: 256-colour and truecolour in their semicolon form
(``38;5;n``, ``38;2;r;g;b``) and their colon form (ITU T.416: ``38:5:n``, ``38:2:cs:r:g:b``,
``38:2:r:g:b``), and ``4:0`` for no underline. Colours are kept in pyte's ``Char`` as strings:
``"default"``, a palette index (``"0"``-``"255"``) or ``"#rrggbb"``. Underline colours (58)
are read and ignored, as pyte keeps none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyte.screens import Char

__all__ = ["SgrItems", "apply_sgr", "set_colour", "sgr_items"]

#: SGR parameters as parsed: an ``int`` per semicolon field, a list for a colon group
#: (``None`` where a sub-parameter is empty).
SgrItems = Sequence[int | list[int | None]]

# Positions in pyte's Char: data, fg, bg, bold, italics, underscore, strikethrough, reverse, blink.
_FG, _BG, _BOLD, _ITALICS, _UNDERSCORE, _STRIKE, _REVERSE, _BLINK = range(1, 9)
_COLOUR_FIELDS = {38: _FG, 48: _BG, 58: None}  # 58: underline colour, not kept

# SGR codes that set one attribute to a fixed value: code -> (position, value).
_SETTINGS: dict[int, tuple[int, str | bool]] = {
    1: (_BOLD, True), 3: (_ITALICS, True), 4: (_UNDERSCORE, True), 21: (_UNDERSCORE, True),
    5: (_BLINK, True), 6: (_BLINK, True), 7: (_REVERSE, True), 9: (_STRIKE, True),
    22: (_BOLD, False), 23: (_ITALICS, False), 24: (_UNDERSCORE, False), 25: (_BLINK, False),
    27: (_REVERSE, False), 29: (_STRIKE, False), 39: (_FG, "default"), 49: (_BG, "default"),
    **{30 + n: (_FG, str(n)) for n in range(8)},
    **{40 + n: (_BG, str(n)) for n in range(8)},
    **{90 + n: (_FG, str(n + 8)) for n in range(8)},
    **{100 + n: (_BG, str(n + 8)) for n in range(8)},
}  # fmt: skip


def apply_sgr(attrs: Char, default: Char, items: SgrItems) -> Char:
    """Return ``attrs`` with the SGR parameters ``items`` applied, left to right.

    default: the screen's default character (its colours and reverse flag are what ``0``
    restores; DECSCNM makes it reverse). No parameters, or a lone ``0``, give ``default``.
    """
    if not items or (len(items) == 1 and items[0] == 0):
        return default
    fields: list[str | bool] = list(attrs)
    i, n = 0, len(items)
    while i < n:
        item = items[i]
        i += 1
        if isinstance(item, list):
            if _apply_colon_group(fields, item):
                continue
            code = item[0] or 0
        else:
            code = item
        setting = _SETTINGS.get(code)
        if setting is not None:
            fields[setting[0]] = setting[1]
        elif code == 0:
            fields[_FG], fields[_BG], fields[_REVERSE] = default.fg, default.bg, default.reverse
            fields[_BOLD] = fields[_ITALICS] = fields[_UNDERSCORE] = fields[_STRIKE] = fields[_BLINK] = False
        elif code in _COLOUR_FIELDS:
            colour, used = _semicolon_colour(items, i)
            i += used
            _set_field(fields, _COLOUR_FIELDS[code], colour)
    return type(attrs)._make(fields)


def set_colour(attrs: Char, m: re.Match[str]) -> Char:
    """Return ``attrs`` with the one colour of ``38;2;r;g;b``, ``48;5;n`` and the like applied.

    m: a match of ``terminal.syntax.Syntax.sgr_colour`` (groups: layer ``3``/``4``, index,
    r, g, b). An index past 255 changes nothing.
    """
    layer, index, r, g, b = m.groups()
    colour = _palette(int(index)) if index is not None else _rgb(int(r), int(g), int(b))
    if colour is None:
        return attrs
    fields = (attrs.data, colour, *attrs[2:]) if layer == "3" else (attrs.data, attrs.fg, colour, *attrs[3:])
    return type(attrs)._make(fields)


def sgr_items(body: str) -> list[int | list[int | None]] | None:
    """Parse SGR parameters where colon groups (``38:2::255:0:0``) become lists; None if malformed."""
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


def _apply_colon_group(fields: list[str | bool], item: list[int | None]) -> bool:
    """Apply a colon group that only exists in colon form; False for any other code."""
    code = item[0] or 0
    if code in _COLOUR_FIELDS:
        _set_field(fields, _COLOUR_FIELDS[code], _colon_colour(item[1:]))
        return True
    if code == 4:
        fields[_UNDERSCORE] = not (len(item) > 1 and item[1] == 0)
        return True
    return False


def _set_field(fields: list[str | bool], position: int | None, colour: str | None) -> None:
    if position is not None and colour is not None:
        fields[position] = colour


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


def _semicolon_colour(items: SgrItems, i: int) -> tuple[str | None, int]:
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
