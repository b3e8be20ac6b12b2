"""Follow what the program draws for the live status: when output came, and the last line.

The writer thread keeps the tail of the output text (after redaction) and, at most once a
second, hands an ``OutputActivity`` to the recorder's ``on_activity`` callback (the session's
``live.json``, ``store.live``). For an agent whose adapter knows how its prompt or approval
dialog looks (``agents`` ``WaitingHints``) it also keeps the last ``RECENT_CHARS`` of that
text in a ``RecentOutput``, judged only when a report is made. What leaves this module for
``live.json`` is a judgement (a prompt, a hint's reason), never the text; the last visible
line goes to the notifiers only (``app.notify``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAIL_CHARS = 256
"""How much of the text after the last newline is kept (a prompt is shorter)."""

PROMPT_ENDINGS = frozenset(">$#%:?›❯»]")
"""A line whose last visible character (trailing spaces aside) is one of these looks like a
prompt: ``> ``, ``$ ``, ``# ``, ``% ``, ``Password: ``, ``Continue? ``, ``❯``, ``[y/N]``."""

RECENT_CHARS = 4096
"""How much of the latest output text ``RecentOutput`` keeps for the adapter's hints."""

LAST_LINE_CHARS = 200
"""The longest line ``RecentOutput.judge`` returns."""

_ESCAPES: re.Pattern[str] | None = None  # compiled on first use (no work at import time)
_SPACES: re.Pattern[str] | None = None
_ROW_MOVES: re.Pattern[str] | None = None
_LINE_ENDS: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class OutputActivity:
    """What the writer has seen of the program's output.

    output_at: when the last output was read, epoch seconds (wall clock), or None (none yet).
    output_bytes: raw output bytes so far. prompt: the last line looks like a prompt.
    """

    output_at: float | None
    output_bytes: int
    prompt: bool
    hint: str | None = None
    """The reason of the adapter's hint that matched the latest output ("approval",
    "input"), or None: no hint matched, or the agent has none."""
    last_line: str = ""
    """The last visible line of the latest output, redacted as recorded, escapes removed
    (for notifications; never written to ``live.json``); "" when not kept."""


def last_line(tail: str, text: str) -> str:
    """Return the text after the last newline of ``tail + text``, at most ``TAIL_CHARS`` of it."""
    cut = text.rfind("\n")
    if cut >= 0:
        return text[cut + 1 :][-TAIL_CHARS:]
    return (tail + text)[-TAIL_CHARS:]


def looks_like_prompt(line: str) -> bool:
    """Return whether ``line`` (raw output after the last newline) ends in a prompt.

    Escape sequences (ECMA-48 CSI, OSC, two-byte ESC) are removed and only what follows the
    last carriage return counts (a redrawn line); then the last visible character must be one
    of ``PROMPT_ENDINGS``.
    """
    visible = _escapes().sub("", line)
    parts = [p for p in visible.split("\r") if p.strip()]
    if not parts:
        return False
    return parts[-1].rstrip()[-1:] in PROMPT_ENDINGS


def _escapes() -> re.Pattern[str]:
    global _ESCAPES
    if _ESCAPES is None:
        _ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
    return _ESCAPES


def visible_text(text: str) -> str:
    """Return ``text`` (raw output) as the words a screen would show, for hint patterns.

    TUIs draw with cursor movement (Claude Code puts ``ESC[23G`` between words), so an
    escape sequence or control character becomes one space, except that a line feed, a
    carriage return and a CSI that moves the cursor to another row (``A B E F H f d``) end
    a line (``\n``); runs of spaces become one space and lines are stripped. Format:
    ECMA-48 CSI, OSC and two-byte ESC sequences.
    """
    global _SPACES, _LINE_ENDS, _ROW_MOVES
    if _SPACES is None or _LINE_ENDS is None or _ROW_MOVES is None:
        _SPACES = re.compile(r"[ \t\xa0]{2,}|[\t\xa0]")
        _LINE_ENDS = re.compile(r" *\n *")
        _ROW_MOVES = re.compile(r"\x1b\[[0-?]*[ -/]*[ABEFHfd]|\r\n?")
    # Passes of compiled patterns with plain replacements, no Python per match: this runs
    # once a second on the writer thread, beside the relay.
    text = _SPACES.sub(" ", _escapes().sub(" ", _ROW_MOVES.sub("\n", text)))
    return _LINE_ENDS.sub("\n", text).strip(" ")


class RecentOutput:
    """Keep the latest output text and judge it: the adapter's waiting hints, the last line.

    Args:
        hints: reason ("approval", "input") -> regular expressions (Python ``re``) matched
            against ``visible_text`` of the last ``RECENT_CHARS`` characters; compiled on the
            first judgement (on the writer thread, after the child runs). A bad pattern is
            left out.

    ``feed`` runs once per output event on the writer thread and only keeps text; the
    patterns run in ``judge``, once per report (at most once a second).
    Not thread-safe: the writer thread feeds and judges it; read it elsewhere only once the
    recorder is closed.
    """

    __slots__ = ("_hints", "_compiled", "_text")

    def __init__(self, hints: dict[str, tuple[str, ...]] | None = None) -> None:
        self._hints = dict(hints or {})
        self._compiled: list[tuple[str, re.Pattern[str]]] | None = None
        self._text = ""

    def feed(self, text: str) -> None:
        """Keep ``text`` (output after redaction) as the newest part of the recent text."""
        if len(text) >= RECENT_CHARS:
            self._text = text[-RECENT_CHARS:]
        elif text:
            self._text = (self._text + text)[-RECENT_CHARS:]

    def judge(self) -> tuple[str | None, str]:
        """Return (hint, line): what the recent text shows; cost: the patterns over 4 KiB.

        hint: the reason whose pattern matched latest in the recent text, or None. The
        latest match wins: an approval dialog answered and followed by the agent's ready
        prompt is an ``input`` wait, not an ``approval`` one. line: when a hint matched, the
        line holding the last match of that reason's first pattern that matched (list the
        pattern of the line worth showing first: the dialog's question); else the last
        non-blank line. At most ``LAST_LINE_CHARS``; "" when there is no text.
        """
        if self._compiled is None:
            self._compiled = []
            for reason, patterns in self._hints.items():
                for pattern in patterns:
                    try:
                        self._compiled.append((reason, re.compile(pattern)))
                    except re.error:
                        pass
        visible = visible_text(self._text)
        best: tuple[int, str] | None = None
        shown: dict[str, int] = {}  # reason -> start of its first matching pattern's last match
        for reason, compiled in self._compiled:
            last = None
            for last in compiled.finditer(visible):
                pass
            if last is None:
                continue
            shown.setdefault(reason, last.start())
            if best is None or last.end() > best[0]:
                best = (last.end(), reason)
        if best is not None:
            at = shown[best[1]]
            start = visible.rfind("\n", 0, at) + 1
            end = visible.find("\n", at)
            return best[1], visible[start : None if end < 0 else end][:LAST_LINE_CHARS]
        for line in reversed(visible.split("\n")):
            if line:
                return None, line[:LAST_LINE_CHARS]
        return None, ""
