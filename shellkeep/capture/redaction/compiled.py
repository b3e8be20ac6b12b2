"""Own one rule's compiled form: its regexes, compiled on first use, and its partial matches.

A ``CompiledRule`` holds a rule's ``re`` regex (whole matches) and the same pattern in the
``regex`` package, whose partial matching (``match``/``search`` with ``partial=True``) says
whether a text could still become a match at its end: the hold of ``StreamRedactor``.
"""

from __future__ import annotations

import collections
import functools
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from shellkeep.capture.redaction.rules import RedactionRule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    import regex

Hit = tuple[int, int, int, int, int, str]
"""One match: (secret_start, secret_end, match_start, match_end, priority, name)."""

Span = tuple[int, int, int, str]
"""One secret to replace: (start, end, priority, name), overlapping matches merged."""

_LOOKBEHIND_WIDE = 64
"""Characters of context kept for a lookbehind that is not one character wide."""


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """One rule as the engine uses it: its regexes (compiled on first use) and keywords."""

    name: str
    priority: int
    rx: LazyPattern  # the rule's regex (``re``), for whole matches
    partial: LazyPartial  # the same regex in the ``regex`` package, for partial matches
    ci: bool  # case-insensitive as a whole: its keywords are lower-case
    literals: tuple[str, ...]  # every match starts with one of these (several sharing a start: that start)
    find_literals: bool  # scan by finding literals with str.find rather than with the automaton
    needles: tuple[str, ...]  # every match holds one of these (a rule without starting literals)
    within: int  # the most characters a match has before its needle
    reach: int  # within plus the longest needle: a match cut before its needle starts this far from the end
    lookbehind: int  # characters before a match its regex may look at
    has_secret: bool  # the pattern has a group named "secret"
    requires: str  # every match holds one of these characters ("": no such test)
    min_entropy: float = 0.0  # Shannon bits per character a secret needs
    scan_literals: tuple[str, ...] = ()  # the declared starting keywords, spelt out

    def may_start(self, text: str, pos: int) -> bool:
        """Return whether ``text[pos:]`` is a match or could still become one."""
        return could_grow(self.partial.get(), text, pos)


CUT_SHORT = 1 << 20
"""Added to a rule's priority in the hit of a token's start cut short (``cut_short.cut_short``):
the name of a whole match over it wins, and the session does not learn it as a secret."""

PIECE = 1 << 21
"""The priority of a hit on a piece of a secret the session knows (``known.KnownSecrets``), plus
its offset in the secret times 512 and the secret's length (at most 256): any other hit's name
wins over it, the session does not learn it, and on a screen it is drawn as the columns of the
whole secret's marker it stands for (``piece_of_marker``)."""


def piece_of_marker(marker: str, priority: int, width: int) -> str:
    """Return what a piece of a known secret (``PIECE``) ``width`` columns wide shows of
    ``marker``: the marker's columns at the piece's offset, the marker padded to the secret's
    width with spaces first. A line editor's redraw of the piece where the secret's start is
    on the screen so shows the same whole marker."""
    offset, size = divmod(priority - PIECE, 512)
    whole = marker.ljust(size)
    return whole[offset : offset + width].ljust(width)


def add_hit(hits: list[Hit], r: CompiledRule, m: re.Match[str]) -> None:
    start, end = m.span("secret") if r.has_secret and m.start("secret") != -1 else m.span()
    if end > start and (not r.min_entropy or _entropy(m.string[start:end]) >= r.min_entropy):
        hits.append((start, end, m.start(), m.end(), r.priority, r.name))


def _entropy(text: str) -> float:
    """Return the Shannon entropy of ``text`` in bits per character."""
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in collections.Counter(text).values())


def could_grow(rx: regex.Pattern[str], text: str, pos: int) -> bool:
    """Return whether ``text[pos:]`` is a match of ``rx`` or a prefix of one.

    A ``match`` with ``partial=True`` answers most cheaply: no match at all, or one that
    reaches the end (partial or whole), says it; only a whole match that ends before the
    end needs ``fullmatch`` (a longer one may still be growing: ``ab|abcdef`` on ``abcd``).
    ``fullmatch`` alone can cost a scan of the rest of the text.
    """
    m = rx.match(text, pos, partial=True)
    if m is None:
        return False
    if m.partial or m.end() == len(text):
        return True
    return rx.fullmatch(text, pos, partial=True) is not None


def earliest_partial(r: CompiledRule, text: str, start: int, stop: int) -> int:
    """Return the earliest position in ``start:stop`` from which ``text`` is a match of ``r``
    or could still become one (``stop``: none).

    A search with ``partial=True`` prefers a whole match anywhere to a partial one: a whole
    match that does not reach the end hides a partial match that begins before it, so those
    are looked for in the text up to it (every prefix of a possible match is one too).
    """
    rx = r.partial.get()
    n = len(text)
    pos = start
    while pos < stop:
        m = rx.search(text, pos, partial=True)
        if m is None or m.start() >= stop:
            return stop
        at = m.start()
        if m.partial:
            return at
        q = pos
        while q < at:
            hidden = rx.search(text, q, at, partial=True)
            if hidden is None:
                break
            if could_grow(rx, text, hidden.start()):
                return hidden.start()
            q = hidden.start() + 1
        if m.end() == n or rx.fullmatch(text, at, partial=True) is not None:
            return at
        pos = at + 1
    return stop


class LazyPattern:
    """A ``re`` regex compiled on first use. Most rules never need their regex (a short read
    lacks their keyword); compiling them all up front cost about 5 ms at every session start,
    on the path to the first write. Raises ``re.error`` on first use when the pattern does
    not compile (config validation has compiled it already)."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        """Return the compiled regex."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source)
        return compiled

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """Return ``re.Pattern.match(text, pos)``."""
        return self.get().match(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Return ``re.Pattern.finditer(text)``."""
        return self.get().finditer(text)


class LazyPartial:
    """The same pattern in the ``regex`` package (its partial matching), compiled on first use."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str) -> None:
        self._source = source
        self._compiled: regex.Pattern[str] | None = None

    def get(self) -> regex.Pattern[str]:
        """Return the compiled regex (the package loads with the first rule that needs it)."""
        compiled = self._compiled
        if compiled is None:
            import regex  # a compiled module: loaded on the writer thread, after the child started

            compiled = self._compiled = _compile_partial(regex, self._source)
        return compiled


def _compile_partial(module: Any, source: str) -> regex.Pattern[str]:
    """Return ``source`` compiled by the ``regex`` package for partial matching, shared by
    every engine of the process.

    Its lazy quantifiers are made greedy first: a fullmatch (partial or whole) depends only
    on the strings a pattern matches, which laziness does not change, and regex 2026.x
    answers a lazy repeat followed by a literal wrongly (``B.{0,50}?EN`` calls a text of 100
    ``x`` after ``B`` a partial match), which held a private key block past its bound.
    """
    cached = _PARTIALS.get(source)
    if cached is None:
        cached = _PARTIALS[source] = module.compile(_greedy(source))
    return cached  # type: ignore[no-any-return]


_PARTIALS: dict[str, Any] = {}


def _greedy(pattern: str) -> str:
    """Return ``pattern`` with the ``?`` that makes a quantifier lazy removed.

    A lexer, not a parser: escapes and character classes are stepped over; a ``?`` right
    after ``*``, ``+``, ``?`` or a ``{m,n}`` that is a quantifier is the lazy mark.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    quantified = False  # the last token was a quantifier
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            quantified = False
            continue
        if ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i : j + 1])
            i = j + 1
            quantified = False
            continue
        if ch == "?" and quantified:
            i += 1  # the lazy mark
            quantified = False
            continue
        if ch == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close != -1 else ""
            if body and all(c.isdigit() or c == "," for c in body) and body[0] != ",":
                out.append(pattern[i : close + 1])
                i = close + 1
                quantified = i > 1 and out[-2:-1] != ["("]
                continue
        quantified = ch in "*+?" and i > 0 and pattern[i - 1] != "("
        out.append(ch)
        i += 1
    return "".join(out)


@functools.cache
def _flags_rx() -> re.Pattern[str]:
    """Return the regex of global inline flags at the start of a pattern (``(?i)``)."""
    return re.compile(r"\(\?([aiLmsux]+)\)")


@functools.cache
def _narrow_lookbehind_rx() -> re.Pattern[str]:
    """Return the regex of a lookbehind one character wide (``(?<![A-Za-z])``, ``(?<=\")``)."""
    return re.compile(r"\(\?<[=!](?:\[(?:\\.|[^\]\\])+\]|\\.|[^()\[\\|?*+{])\)")


def compile_rule(rule: RedactionRule, priority: int) -> CompiledRule:
    """Build one rule from its declared keywords; its regexes compile on first use.

    Case-insensitive: the pattern starts with global flags holding ``i``. The context kept
    for lookbehinds: one character when each is one character wide (``(?<![A-Za-z])``),
    else ``_LOOKBEHIND_WIDE``.
    """
    flags = _flags_rx().match(rule.pattern)
    ci = flags is not None and "i" in flags.group(1)
    lookbehinds = rule.pattern.count("(?<=") + rule.pattern.count("(?<!")
    narrow = len(_narrow_lookbehind_rx().findall(rule.pattern))
    lookbehind = 0 if not lookbehinds else 1 if narrow == lookbehinds else _LOOKBEHIND_WIDE
    keywords = tuple(k.lower() for k in rule.keywords) if ci else rule.keywords
    starts = () if rule.keyword_within else keywords
    literals = starts
    common = os.path.commonprefix(sorted(set(starts)))
    if len(set(starts)) > 1 and len(common) >= 2:
        literals = (common,)  # several starts sharing a prefix: hold back and look for that
    return CompiledRule(
        rule.name, priority, LazyPattern(rule.pattern), LazyPartial(rule.pattern), ci, literals,
        bool(literals) and ci, keywords if rule.keyword_within else (), rule.keyword_within,
        rule.keyword_within + max(map(len, keywords), default=0), lookbehind,
        "(?P<secret>" in rule.pattern, rule.requires, rule.min_entropy, starts,
    )
