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


_MAX_HELD = 512


def _unfinished_tail(text: str) -> int:
    """Return where an escape sequence still being received starts in ``text``, else -1."""
    start = text.rfind("\x1b")
    if start == -1 or len(text) - start > _MAX_HELD:
        return -1
    tail = text[start:]
    if tail == "\x1b":
        return start
    kind = tail[1]
    if kind == "[":
        body = tail[2:]
        # CSI: parameter and intermediate bytes, then one final byte in @..~ (ECMA-48 5.4).
        return start if all("\x20" <= c <= "\x3f" for c in body) else -1
    if kind in "]P_^":
        return -1 if ("\x07" in tail or "\x1b\\" in tail) else start
    return -1


class TerminalReplyFilter:
    """Strip terminal replies from an input stream whose reads may split a reply in two.

    ``feed`` holds back an unfinished escape sequence at the end of a read until the next
    read completes it; ``flush`` releases it (a lone Esc key press is still recorded).
    """

    def __init__(self) -> None:
        self._held = ""

    @property
    def held(self) -> int:
        """Return the number of characters held back."""
        return len(self._held)

    def feed(self, text: str) -> str:
        """Take a read's decoded text; return what is ready, replies removed."""
        text = self._held + text
        cut = _unfinished_tail(text)
        if cut == -1:
            self._held = ""
        else:
            text, self._held = text[:cut], text[cut:]
        return strip_terminal_replies(text)

    def flush(self) -> str:
        """Return whatever is held back, replies removed."""
        text, self._held = self._held, ""
        return strip_terminal_replies(text)
