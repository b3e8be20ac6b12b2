"""Tokenise terminal output: the escape-sequence syntax the emulator parses, and character widths.

The patterns split program output into runs of text, CSI, OSC, DCS/SOS/PM/APC strings, other
escapes and C0/C1 controls (ECMA-48; xterm's ctlseqs, invisible-island.net/xterm/ctlseqs/
ctlseqs.html), and find runs of characters that can be drawn in bulk because pyte would draw
each of them one (or two) cells wide. Everything is built on first use (no work at import).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

__all__ = ["BULK_MIN", "Syntax", "int_params", "shorten_pending", "syntax", "wide_run", "width_of"]

BULK_MIN = 8
"""Shorter runs of text are drawn character by character."""
_MAX_PENDING = 4096  # longest unfinished escape sequence carried whole to the next event


@dataclass(frozen=True, slots=True)
class Syntax:
    """Compiled patterns, built once on first use (no work at import time)."""

    token: re.Pattern[str]
    unfinished: re.Pattern[str]
    narrow: re.Pattern[str]  # a text of narrow characters only
    narrow_run: re.Pattern[str]  # a run of narrow characters worth drawing in bulk
    sgr_colour: re.Pattern[str]  # SGR parameters setting one colour and nothing else


@cache
def syntax() -> Syntax:
    """Return the compiled patterns (built on the first call)."""
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
    narrow = _narrow_class()
    narrow_run = re.compile(f"[{narrow}]{{{BULK_MIN},}}")
    sgr_colour = re.compile(r"([34])8;(?:5;(\d{1,3})|2;(\d{1,3});(\d{1,3});(\d{1,3}))")
    return Syntax(token, unfinished, re.compile(f"[{narrow}]+"), narrow_run, sgr_colour)


@cache
def width_of(ch: str) -> int:
    """Return the cells ``ch`` takes, as pyte measures it (wcwidth; -1 for controls)."""
    from wcwidth import wcwidth

    width: int = wcwidth(ch)
    return width


@cache
def wide_run() -> re.Pattern[str]:
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
    return re.compile(f"[{_char_class(chars)}]{{{BULK_MIN},}}")


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


def shorten_pending(rest: str) -> str:
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


def int_params(body: str) -> list[int] | None:
    """Parse ``1;2;;3`` into ``[1, 2, 0, 3]`` (missing means 0, capped at 9999 as pyte does)."""
    try:
        params = [int(p) if p else 0 for p in body.split(";")]
    except ValueError:
        return None
    if len(body) > 4 * len(params) and max(params) > 9999:  # only a long text can hold one
        params = [min(p, 9999) for p in params]
    return params
