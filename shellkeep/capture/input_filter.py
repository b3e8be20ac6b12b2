"""Remove the terminal's own answers to queries from recorded input.

Programs such as Claude Code ask the terminal for its cursor position, identity, colours
and modes; the answers arrive on stdin like keystrokes but were never typed. Sequences
follow ECMA-48 and xterm's ctlseqs: CSI replies (cursor position ``R``, device attributes
``c``, mode reports ``$y``, kitty keyboard flags ``?…u``, window reports ``t``), OSC and
DCS replies, and focus in/out reports.
"""

from __future__ import annotations

import re
from functools import lru_cache

_REPLIES = (
    r"\x1b\[\d+;\d+R",  # cursor position report
    r"\x1b\[[?>=][\d;]*c",  # primary/secondary/tertiary device attributes
    r"\x1b\[\??[\d;]*\$y",  # DECRQM mode report
    r"\x1b\[\?\d*u",  # kitty keyboard protocol flags
    r"\x1b\[\d+(?:;\d+){1,2}t",  # window size / position reports
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)",  # OSC replies (colours, clipboard, title)
    r"\x1bP[^\x1b]*\x1b\\",  # DCS replies (XTVERSION, DECRQSS, XTGETTCAP)
    r"\x1b\[[IO]",  # focus in / focus out
)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    return re.compile("|".join(_REPLIES))


def strip_terminal_replies(text: str) -> str:
    """Return ``text`` without the terminal's answers to queries (see module docstring)."""
    if "\x1b" not in text:
        return text
    return _pattern().sub("", text)
