"""Follow what the program draws for the live status: when output came, and the last line.

The writer thread keeps the tail of the output text (after redaction) and, at most once a
second, hands an ``OutputActivity`` to the recorder's ``on_activity`` callback (the session's
``live.json``, ``store.live``). Only the judgement whether the last line is a prompt leaves
this module, never the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TAIL_CHARS = 256
"""How much of the text after the last newline is kept (a prompt is shorter)."""

PROMPT_ENDINGS = frozenset(">$#%:?›❯»]")
"""A line whose last visible character (trailing spaces aside) is one of these looks like a
prompt: ``> ``, ``$ ``, ``# ``, ``% ``, ``Password: ``, ``Continue? ``, ``❯``, ``[y/N]``."""

_ESCAPES: re.Pattern[str] | None = None  # compiled on first use (no work at import time)


@dataclass(frozen=True, slots=True)
class OutputActivity:
    """What the writer has seen of the program's output.

    output_at: when the last output was read, epoch seconds (wall clock), or None (none yet).
    output_bytes: raw output bytes so far. prompt: the last line looks like a prompt.
    """

    output_at: float | None
    output_bytes: int
    prompt: bool


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
    global _ESCAPES
    if _ESCAPES is None:
        _ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]")
    visible = _ESCAPES.sub("", line)
    parts = [p for p in visible.split("\r") if p.strip()]
    if not parts:
        return False
    return parts[-1].rstrip()[-1:] in PROMPT_ENDINGS
