"""Find the start of a token of a format with a literal start that a line editor drew (or
keys typed) without the rest of it: cut short by a redraw, or followed by a stray character
typed inside it and erased after. Too short (or too long) for the rule, a secret all the same.
"""

from __future__ import annotations

import functools
import re

from shellkeep.capture.redaction.compiled import CUT_SHORT, CompiledRule, Hit

_CUT_SHORT = 8
"""Token characters after a token format's literal from which a start cut short is a secret."""

ESCAPE_SEEN = 7
"""Characters before a token's start searched for the end of an escape sequence (``ESC [ 1 ; 5 C``
is 6, its echoed form ``^[[1;5C`` 7): a key's start typed after a cursor move is a word start."""


@functools.cache
def _token_run_rx() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z0-9_-]+")


def cut_short(hits: list[Hit], r: CompiledRule, text: str, at: int, after: int) -> None:
    """Add the start of a token of ``r``'s format cut short at ``at`` to ``hits``: its literal
    at a word's start and ``_CUT_SHORT`` token characters or more (not a word in one case),
    then a character that ends every match and that an editor's redraw leaves there: a space
    or a control character (a line end, a backspace, an escape sequence, Ctrl-W), or the
    ``^`` of an echoed control character.

    A line editor or a TUI's input box draws a token typed there in growing prefixes, each
    erased or drawn over (``ghp_A1b2C3d4E5f6`` then ``\r``, a backspace, a cursor move), and a
    token edited in its middle is drawn once without its last key: too short for the rule,
    but a secret all the same. A token typed with a stray character inside it (erased after)
    is drawn and typed whole with it: from ``_CUT_SHORT`` characters of the format on, the
    token characters after the stray one go with it (``_typo_end``).
    """
    if in_word(text, at):
        return  # inside a word (``task-manager``'s ``sk-``, ``sb_secret_``'s ``secret_``) or base64
    run = _token_run_rx().match(text, after)
    if run is None or run.end() - after < _CUT_SHORT or run.end() == len(text):
        return
    stop = text[run.end()]
    if not (stop <= " " or stop in "\x7f^"):
        return  # cut by a character a line editor does not draw (base64's ``+/``, punctuation)
    if _a_word(run.group()):
        return  # a word, not random characters (``sk-management``)
    end = run.end()
    partial = r.partial.get()
    if partial.fullmatch(text, at, end, partial=True) is None:
        if _typo_end(r, text, at, after, end) is None:
            return
    elif partial.fullmatch(text, at, end + 1, partial=True) is not None:
        return
    hits.append((at, end, at, end, CUT_SHORT + r.priority, r.name))


def _a_word(chars: str) -> bool:
    return chars.isalpha() and (chars.islower() or chars.isupper())


@functools.cache
def _escape_end_rx() -> re.Pattern[str]:
    return re.compile(r"(?:\x1b|\^\[)[\[O][0-?]*[ -/]*[@-~]\Z")  # as sent, or as a tty echoes it


def in_word(text: str, at: int) -> bool:
    """Return whether ``text[at]`` is inside a word or base64 (not after an escape sequence's
    final letter: a key's start typed after a cursor move, ``ESC [ C``, echoed ``^[[C``)."""
    if not at or not (text[at - 1].isalnum() or text[at - 1] in "_+/="):
        return False
    return _escape_end_rx().search(text, max(0, at - ESCAPE_SEEN - 1), at) is None


def _typo_end(r: CompiledRule, text: str, at: int, after: int, end: int) -> int | None:
    """Return where ``text[at:end]`` stops being a start of ``r``'s format, when ``_CUT_SHORT``
    of its characters (not a word) come before a token character it does not allow there
    (None: too few, or no such character).

    A stray character typed inside a token and erased after: the line editor drew (and the
    keys typed) the whole token with it, which matches no rule, then only the cursor moves
    and the deletion. Only formats with a literal start: a keyword rule's value is not a token.
    """
    partial = r.partial.get()
    if r.has_secret or partial.fullmatch(text, at, after, partial=True) is None:
        return None
    # Every prefix of a prefix is a prefix: find the longest one by bisection.
    lo, hi = after, end  # fullmatch holds at lo, fails at hi
    if partial.fullmatch(text, at, hi, partial=True) is not None:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if partial.fullmatch(text, at, mid, partial=True) is not None:
            lo = mid
        else:
            hi = mid
    return lo if lo - after >= _CUT_SHORT and not _a_word(text[after:lo]) else None


def typo_growing(r: CompiledRule, text: str, at: int, after: int) -> bool:
    """Return whether a token of ``r``'s format typed with a stray character inside it could be
    growing up to the end of ``text`` from ``at`` (held back until it ends: see ``_typo_end``)."""
    if r.has_secret or in_word(text, at):
        return False
    run = _token_run_rx().match(text, after)
    return run is not None and run.end() == len(text) and _typo_end(r, text, at, after, run.end()) is not None
