"""Own the secrets a session has redacted so far: the same secret gets the same name, wherever it appears.

A session's streams (typed input, output drawn on the screen) share one ``names`` dict from
secret text to the name of the rule that first redacted it. Once a secret is known, a rule
that finds the same text under another name (``password = "x"`` typed, ``token: x`` shown)
gives it the first name, and the text shown bare later (``echo $DB_PASSWORD`` printing the
value typed in ``DB_PASSWORD=...``) is redacted under that name too, also when it is split
across two reads. So is a piece of it drawn again after a cursor move: a line editor that
draws the rest of a line again after an edit, or fish that suggests the rest of a command line
from its history (``hp_...`` after a typed ``g``), draws a secret's tail where its start is
already on the screen. Only values that look like secrets are kept (``_learnable``), at most
``_KNOWN_MAX`` of them, in memory only.
"""

from __future__ import annotations

import functools
import re

from shellkeep.capture.redaction.compiled import CUT_SHORT, PIECE, Hit, Span
from shellkeep.capture.redaction.screen_view import COLOUR, _colour_rx, _escape_rx

_KNOWN_MAX = 256
"""The most secrets a session keeps: each costs a ``str.find`` per read."""

_MIN_LEN, _MAX_LEN = 8, 256
"""The lengths of a secret worth keeping: a shorter value is too likely plain text."""

_BLOCK = 4
"""The shortest end of a known secret redacted when a cursor move follows it (fish suggests the
rest of a command line, then moves back), and the shortest piece at the end of the output held."""


_MOVE_BACK = 48
"""Characters before the text searched where a cursor move a piece follows may begin."""

_INSERTED = 2
"""Characters a redraw after a cursor move may draw before the rest of a known secret (the key
inserted in its middle, drawn with the rest after it)."""


def _learnable(secret: str) -> bool:
    """Return whether ``secret`` is worth recognising bare: 8 to 256 printable characters on
    one line, no whitespace, not only letters (a word such as ``command`` is not kept)."""
    return (
        _MIN_LEN <= len(secret) <= _MAX_LEN
        and secret.isprintable()
        and not any(ch.isspace() for ch in secret)
        and not secret.isalpha()
    )


class KnownSecrets:
    """A stream's view of the secrets its session has redacted (one shared ``names`` dict)."""

    __slots__ = ("_grams", "_indexed", "_names")

    def __init__(self, names: dict[str, str]) -> None:
        """Share ``names`` (secret text -> rule name) with the session's other streams."""
        self._names = names
        self._indexed = 0  # how many of names _grams holds (names only grow)
        self._grams: dict[str, list[str]] = {}  # each _BLOCK characters of a secret -> the secrets holding them

    def __bool__(self) -> bool:
        return bool(self._names)

    def learn(self, text: str, spans: list[Span]) -> None:
        """Keep the secrets of ``spans`` in ``text`` with their names (the first name stays)."""
        names = self._names
        for start, end, priority, name in spans:
            if len(names) >= _KNOWN_MAX:
                return
            if priority >= CUT_SHORT:
                continue  # a token's start cut short, or a piece of a known one: not a secret of its own
            secret = text[start:end]
            if "\x1b" in secret:  # drawn with colours (a screen view's match): the secret is what it shows
                secret = _escape_rx().sub("", secret)
            if secret not in names and _learnable(secret):
                names[secret] = name

    def named(self, text: str, lo: int, base: int, hits: list[Hit], priority: int) -> list[Hit]:
        """Return ``hits`` with a known secret's name on each hit of exactly that text, plus
        the known secrets found bare in ``text`` from ``lo`` (ending after ``base``) and the
        pieces of them drawn again after a cursor move (``_redrawn``) that no hit covers, at
        ``priority`` (the lowest: a longer token holding one keeps its name); a piece's at
        ``PIECE`` with its offset and the secret's length."""
        names = self._names
        out = [(h[0], h[1], h[2], h[3], h[4], names.get(text[h[0] : h[1]], h[5])) for h in hits]
        covered = [(h[0], h[1]) for h in hits]
        for secret, name in names.items():
            at = text.find(secret, lo)
            while at != -1:
                end = at + len(secret)
                if end > base and not any(s <= at and end <= e for s, e in covered):
                    out.append((at, end, at, end, priority, name))
                    covered.append((at, end))
                at = text.find(secret, at + 1)
        for at, end, offset, secret in self._redrawn(text, lo):
            if end > base and not any(s < end and at < e for s, e in covered):
                out.append((at, end, at, end, PIECE + offset * 512 + len(secret), names[secret]))
                covered.append((at, end))
        return out

    def hold_start(self, text: str, start: int) -> int:
        """Return where the tail of ``text`` from ``start`` on that begins a known secret (but
        is not all of it), or is a piece of one ``_BLOCK`` characters or longer drawn after a
        cursor move that may go on, starts: it must be held until it is decided
        (``len(text)``: none)."""
        n = len(text)
        best = n
        if n - start >= _BLOCK and self._names:
            self._index()
            for secret in self._grams.get(text[n - _BLOCK :], ()):  # a piece of it, maybe cut by the read
                m = _BLOCK
                while n - m > start and text[n - m - 1 :] in secret:
                    m += 1
                if secret.find(text[n - m :]) + m < len(secret) and _move_end_rx().search(text, max(0, n - m - 32), n - m):
                    best = min(best, n - m)
        for secret in self._names:
            first = secret[0]
            at = text.find(first, max(start, n - len(secret) + 1))
            while at != -1 and at < best:
                if secret.startswith(text[at:]):
                    best = at
                    break
                at = text.find(first, at + 1)
        return best

    def _index(self) -> None:
        """Index each ``_BLOCK`` characters of the secrets learned since the last call."""
        names = self._names
        if self._indexed == len(names):
            return
        for secret in list(names)[self._indexed :]:  # the dict keeps its order: the new ones last
            for j in range(len(secret) - _BLOCK + 1):
                holders = self._grams.setdefault(secret[j : j + _BLOCK], [])
                if secret not in holders:
                    holders.append(secret)
        self._indexed = len(names)

    def _redrawn(self, text: str, lo: int) -> list[tuple[int, int, int, str]]:
        """Return the pieces of known secrets drawn right after a cursor move in ``text`` from
        ``lo``: the rest of a line a line editor draws again after an edit, or fish's
        suggestion of the rest of a command line from its history, where the secret's start is
        on the screen already. Each is (start, end, where it starts in its secret, the secret):
        ``_MIN_LEN`` characters of it or more, or its end ``_BLOCK`` long or more with another
        cursor move after it; colours between its characters are part of it."""
        if not self._names or ("\r" not in text and "\x1b" not in text and "\x08" not in text):
            return []
        self._index()
        grams = self._grams
        n = len(text)
        found: list[tuple[int, int, int, str]] = []
        for move in _move_rx().finditer(text, max(0, lo - _MOVE_BACK)):  # the move may be in what was written
            holders = None
            for p in range(move.end(), min(n, move.end() + _INSERTED + 1)):  # after a key inserted before the rest
                if p > move.end() and not text[p - 1].isprintable():
                    break
                probe = text[p : p + _BLOCK]
                if "\x1b" in probe:  # a colour inside the first characters
                    probe = _colour_rx().sub("", text[p : p + 16 * _BLOCK])[:_BLOCK]
                holders = grams.get(probe) if p >= lo else None
                if holders:
                    break
            if not holders:
                continue
            best: tuple[int, int, int, str] | None = None
            longest = 0
            for secret in holders:
                size = len(secret)
                i = secret.find(probe)
                while i != -1:
                    b, k = _extend(text, p, secret, i)
                    if (k - i >= _MIN_LEN or (k == size and k - i >= _BLOCK and b < n and text[b] in "\r\x1b\x08")) and k - i > longest:
                        best, longest = (p, b, i, secret), k - i
                    i = secret.find(probe, i + 1)
            if best is not None:
                found.append(best)
        return found


def _extend(text: str, at: int, secret: str, i: int) -> tuple[int, int]:
    """Return how far ``text`` from ``at`` goes on as ``secret`` from ``i`` (colours between
    its characters skipped): the end in ``text`` and in ``secret``."""
    n, size = len(text), len(secret)
    b, k = at, i
    while b < n and k < size:
        if text[b] == secret[k]:
            b, k = b + 1, k + 1
        elif text[b] == "\x1b" and (colour := _colour_rx().match(text, b)) is not None:
            b = colour.end()
        else:
            break
    return b, k


_MOVE = r"(?:(?<! )\r{}|\x08|\x1b\[[0-9;]*[A-HKdf])(?:{})*"
"""A cursor move a redraw starts with (a carriage return, a backspace, CUU-CUP, VPA, HVP, an
erase to the line end) and the colours after it; ``{}`` holds what may follow the carriage
return, then the colours' pattern. A carriage return after a space is readline's soft wrap
(`` \r`` after the last column, ``StreamRedactor._blank_wrapped``): what follows continues the line."""


@functools.cache
def _move_rx() -> re.Pattern[str]:
    """Return the regex of a cursor move that a redraw starts with (``_MOVE``; a carriage
    return not before a line feed)."""
    return re.compile(_MOVE.format(r"(?!\n)", COLOUR))


@functools.cache
def _move_end_rx() -> re.Pattern[str]:
    """Return ``_move_rx`` anchored at the end of the text searched."""
    return re.compile(_MOVE.format("", COLOUR) + r"\Z")
