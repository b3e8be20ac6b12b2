"""Own the redaction rules and replace secrets in recorded text with ``[REDACTED:<name>]``.

``RULES`` is the one table of built-in rules: (name, pattern, example), in priority order.
A pattern is a Python regex; when it has a group named ``secret`` only that group is
replaced (``password=[REDACTED:password]``), else the whole match. Every example is fake,
shaped so that its rule matches it; the tests feed each one alone, inside text and split
at every offset.

``Redactor.redact`` works on a whole text. ``StreamRedactor`` works on the capture stream:
``feed`` returns what is safe to write now and holds back a tail that could be the start
of a secret still arriving, so a secret split across two reads is still caught. The hold
is exact rather than a fixed margin: each rule's regex is turned once into a second regex
that matches every *prefix* of a match, and the tail is held from the earliest position
where that prefix regex reaches the end. Ordinary output holds back nothing or a few
characters; a possible secret holds back at most its rule's longest match (4 KiB for
patterns without a bound), a private key block up to 16 KiB.

Text is ``str`` (already UTF-8 decoded), so a hold never splits a character. Escape
sequences stay as they are: a secret between two of them is replaced and they are kept,
and the keyword rules skip SGR colour codes between a keyword and its value. A secret
broken by an escape sequence in its middle is not recognised.

Speed: regexes compile on first use, never at import. Each rule's scan starts from a
literal (``ghp_``, ``eyJ``, ``://``, ``password``) that Python's regex engine, or
``str.find`` on the lower-cased text for case-insensitive rules, finds quickly, so text
without those literals costs one fast scan per rule.
"""

from __future__ import annotations

import importlib
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellkeep.config import RedactConfig

log = logging.getLogger(__name__)

MARKER = "[REDACTED:{name}]"
"""What a secret becomes; ``{name}`` is the rule's name."""

_HOLD_UNBOUNDED = 4096
"""Characters held back, at most, for a pattern whose matches have no length bound."""

_HOLD_MAX = 20 * 1024
"""No rule holds back more than this (the private-key rule needs a little over 16 KiB)."""


@dataclass(frozen=True, slots=True)
class RedactionRule:
    """One redaction rule: its marker name, a Python regex, and a fake example it matches."""

    name: str
    pattern: str
    example: str = ""


# Pieces shared by the keyword rules. SGR colour codes may sit between a keyword, its
# separator and its value (syntax-highlighted YAML or .env files); the value ends at
# whitespace, a quote, ',' or ';' or a control character (the start of an escape sequence),
# and a quoted value runs to its closing quote.
_SGR = r"(?:\x1b\[[0-9;]{0,32}m)"
_SEP = rf"[\"']?{_SGR}*[ \t]{{0,5}}[:=]{{1,3}}>?(?:[ \t]|{_SGR}){{0,8}}[\"']?"
_VALUE = (
    r"(?P<secret>(?<=\")[^\"\x00-\x1f\x7f]{1,256}"
    r"|(?<=')[^'\x00-\x1f\x7f]{1,256}"
    r"|(?<![\"'])[^\s\"'`,;\x00-\x1f\x7f]{1,256})"
)


def _keyword(keyword: str) -> str:
    """Return the pattern of ``<keyword> = <value>``, ``<keyword>: "<value>"`` and the like."""
    return f"(?i){keyword}{_SEP}{_VALUE}"


_PRIVATE_KEY = (
    r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:[\s\S]{0,16384}?-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
    # No END within 16 KiB (a cut or endless block): redact the key-shaped text after BEGIN.
    r"|[A-Za-z0-9+/=\s:,.-]{0,16384})"
)

_EXAMPLE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

RULES: tuple[RedactionRule, ...] = (
    RedactionRule("private-key", _PRIVATE_KEY, _EXAMPLE_KEY),
    RedactionRule("aws-access-key-id", r"(?:AKIA|ASIA)[A-Z0-9]{16}", "AKIAFAKE7EXAMPLE2KEY"),
    RedactionRule(
        "aws-secret-access-key",
        rf"(?i)(?:aws_?secret_?access_?key|secretaccesskey){_SEP}(?P<secret>[A-Za-z0-9/+=]{{40}})",
        "aws_secret_access_key = FAKEwJalrXUtnFEMI/K7MDENG/bPxRfiEXAMPLE1",
    ),
    RedactionRule(
        "github-fine-grained",
        r"github_pat_[A-Za-z0-9_]{40,255}",
        "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000",
    ),
    RedactionRule(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,251}",
        "ghp_FAKE0123456789abcdefghijklmnopqrstuv",
    ),
    RedactionRule("gitlab-token", r"glpat-[A-Za-z0-9_-]{20,255}", "glpat-FAKE-example-01234567"),
    RedactionRule(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/]{20,200})",
        "https://hooks.slack.com/services/T00000000/B00000000/FAKEFAKEFAKEFAKEFAKEFAKE",
    ),
    RedactionRule(
        "slack-token",
        r"xox[abposre]-[0-9]{1,13}-[A-Za-z0-9-]{8,250}",
        "xoxb-0000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake",
    ),
    RedactionRule(
        "stripe-key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}", "sk_live_51FAKEexampleKEY0000000000"
    ),
    RedactionRule(
        "anthropic-key",
        r"sk-ant-[A-Za-z0-9_-]{20,250}",
        "sk-ant-api03-FAKEexampleKEY000000000000000000000000000000-FAKEAA",
    ),
    RedactionRule(
        "openai-key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{32,250})",
        "sk-proj-FAKEexample0000KEY0000fakeT3BlbkFJFAKE0000example",
    ),
    RedactionRule("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "AIzaSyFAKE-EXAMPLE_key00000000000000000"),
    RedactionRule("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_FAKEexample0000000000000000000000000"),
    RedactionRule(
        "pypi-token",
        r"pypi-AgE[A-Za-z0-9_-]{50,1000}",
        "pypi-AgEIcHlwaS5vcmcCJDUyOTJjYTdkLWZBS0UtNDFBS0UtODAwMC1GQUtFRkFLRUZBS0UAAiFAKE",
    ),
    RedactionRule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,1024}\.eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,1024}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsignatureFAKEsignature00",
    ),
    RedactionRule(
        "url-password",
        # From "://", so the scheme before it is kept; only the password is replaced.
        r"://[^\s:@/?#\[\]\"'<>\x00-\x1f\x7f]{1,128}:(?P<secret>[^\s@/\"'<>\x00-\x1f\x7f]{1,256})@",
        "postgres://app:FAKEpassw0rd@db.example.com:5432/app",
    ),
    RedactionRule(
        "bearer-token",
        r"(?i)bearer[ \t]+(?=[A-Za-z0-9._~+/-]{0,2048}[0-9])(?P<secret>[A-Za-z0-9._~+/-]{20,2048}=*)",
        "Authorization: Bearer FAKEopaqueToken0000000000",
    ),
    RedactionRule("api-key", _keyword(r"api[_-]?key"), 'api_key = "FAKE-api-key-0000"'),
    RedactionRule("token", _keyword("token"), "GITHUB_TOKEN=FAKEtoken123"),
    RedactionRule(
        "secret", _keyword(r"secret(?:[_-]?(?:access[_-]?)?key)?"), "client_secret: FAKEs3cr3tValue"
    ),
    RedactionRule("password", _keyword(r"pass(?:word|wd|phrase)?"), "password='FAKE hunter2'"),
)
"""The built-in rules, highest priority first (it names overlapping matches)."""


class Redactor:
    """Replace secrets in text with ``[REDACTED:<name>]``.

    Rules earlier in ``rules`` win where two matches overlap; overlapping matches are
    replaced together, so no part of either survives. A secret that an ``allowlist``
    regex matches in full is left alone. Safe to share between threads.
    """

    def __init__(self, rules: Iterable[RedactionRule] = RULES, allowlist: Iterable[str] = ()) -> None:
        """Keep the rules; nothing is compiled until the first text arrives."""
        self._rules = tuple(rules)
        self._allowlist = tuple(allowlist)
        self._engine: _Engine | None = None

    @property
    def rules(self) -> tuple[RedactionRule, ...]:
        """Return the rules, highest priority first."""
        return self._rules

    def redact(self, text: str) -> str:
        """Return ``text`` with every secret replaced.

        A private key's BEGIN line without its END line redacts the key-shaped text
        after it (up to 16 KiB).
        """
        if not text:
            return text
        engine = self.engine()
        if not engine.rules:
            return text
        hits = engine.hits(text, engine.lower(text))
        return engine.apply(text, hits, len(text)) if hits else text

    def engine(self) -> _Engine:
        """Return the compiled rules, compiling them on first use."""
        engine = self._engine
        if engine is None:
            engine = self._engine = _Engine(self._rules, self._allowlist)
        return engine


class StreamRedactor:
    """Redact a stream of text that arrives in pieces (one per capture read).

    ``feed`` returns the part of everything fed so far that is safe to write now; it holds
    back the tail from the earliest position where a secret could still be arriving
    (usually nothing). ``flush`` returns the held tail, redacted as it stands: call it at the
    end of the stream, or when the tail has waited long enough that it must reach the disk;
    a secret that is still arriving at that moment is cut in two and may escape.
    Not thread-safe: one instance per stream, used by one thread.
    """

    def __init__(self, redactor: Redactor) -> None:
        """Redact with ``redactor``'s rules."""
        self._redactor = redactor
        self._held = ""

    @property
    def held(self) -> int:
        """Return the number of characters held back."""
        return len(self._held)

    def feed(self, text: str) -> str:
        """Add ``text`` to the stream; return the redacted text that is safe to write now."""
        buf = self._held + text if self._held else text
        if not buf:
            return ""
        engine = self._redactor.engine()
        if not engine.rules:
            self._held = ""
            return buf
        low = engine.lower(buf)
        hits = engine.hits(buf, low)
        cut = engine.hold_start(buf, low)
        if hits and cut < len(buf):
            cut = _settle(cut, hits)
        if len(buf) - cut > _HOLD_MAX:  # only a pattern without a length bound gets here
            cut = len(buf)
        self._held = buf[cut:]
        if not hits:
            return buf[:cut]
        return engine.apply(buf, hits, cut)

    def flush(self) -> str:
        """Return the held tail, redacted, and hold nothing."""
        held, self._held = self._held, ""
        return self._redactor.redact(held)


def build_redactor(config: RedactConfig) -> Redactor:
    """Return the Redactor for the ``[redact]`` settings.

    The user's patterns come first, then ``RULES``; with ``enabled = false`` it has no
    rules and returns text unchanged.
    """
    if not config.enabled:
        return Redactor(rules=(), allowlist=())
    user = tuple(RedactionRule(p.name, p.pattern) for p in config.patterns)
    return Redactor(rules=user + RULES, allowlist=config.allowlist)


# --------------------------------------------------------------------------- engine

# A hit is (secret_start, secret_end, match_start, match_end, priority, name).
_Hit = tuple[int, int, int, int, int, str]


def _settle(cut: int, hits: list[_Hit]) -> int:
    """Move ``cut`` back before every match that crosses it."""
    moved = True
    while moved:
        moved = False
        for hit in hits:
            if hit[2] < cut < hit[3]:
                cut = hit[2]
                moved = True
    return cut


@dataclass(frozen=True, slots=True)
class _Rule:
    """One compiled rule and what the engine derived from its regex."""

    name: str
    priority: int
    rx: re.Pattern[str]
    ci: bool
    literals: tuple[str, ...]  # every match starts with one of these (lower-cased if ci)
    find_literals: bool  # scan by finding literals rather than with rx.finditer
    prefix: re.Pattern[str] | None  # fullmatch(text, pos): text[pos:] may begin a match
    prefix_search: re.Pattern[str] | None  # the same, ending in \Z, for search()
    window: int  # the longest a match can be: a hold never starts further back
    secret: int  # group number of "secret", or 0 for the whole match


class _Engine:
    """The compiled form of a Redactor's rules and allowlist."""

    def __init__(self, rules: tuple[RedactionRule, ...], allowlist: tuple[str, ...]) -> None:
        self.rules = tuple(_compile_rule(rule, i) for i, rule in enumerate(rules))
        self._allow = tuple(re.compile(entry) for entry in allowlist)
        self._any_ci = any(r.ci for r in self.rules)
        partial_cs: set[str] = set()
        partial_ci: set[str] = set()
        for r in self.rules:
            for lit in r.literals:
                (partial_ci if r.ci else partial_cs).update(lit[:k] for k in range(1, len(lit)))
        self._partial_cs = frozenset(partial_cs)
        self._partial_ci = frozenset(partial_ci)
        self._max_partial = max(map(len, partial_cs | partial_ci), default=0)

    def lower(self, text: str) -> str | None:
        """Return ``text`` lower-cased when a rule needs it and indices stay aligned."""
        if not self._any_ci:
            return None
        low = text.lower()
        return low if len(low) == len(text) else None

    def hits(self, text: str, low: str | None) -> list[_Hit]:
        """Return every match of every rule in ``text`` (overlaps included)."""
        hits: list[_Hit] = []
        for r in self.rules:
            if r.find_literals and (low is not None or not r.ci):
                hay = low if r.ci else text
                assert hay is not None
                for lit in r.literals:
                    pos = hay.find(lit)
                    while pos != -1:
                        m = r.rx.match(text, pos)
                        if m is None:
                            pos = hay.find(lit, pos + 1)
                            continue
                        _add_hit(hits, r, m)
                        pos = hay.find(lit, max(m.end(), pos + 1))
            else:
                for m in r.rx.finditer(text):
                    _add_hit(hits, r, m)
        return hits

    def hold_start(self, text: str, low: str | None) -> int:
        """Return where the tail that could still grow into a secret begins (len = none)."""
        n = len(text)
        best = n
        for k in range(min(self._max_partial, n), 0, -1):
            tail = text[n - k :]
            if tail in self._partial_cs or (
                self._partial_ci and (low[n - k :] if low is not None else tail.lower()) in self._partial_ci
            ):
                best = n - k
                break
        for r in self.rules:
            start = max(0, n - r.window)
            if start >= best:
                continue
            if r.prefix is not None and r.literals and (low is not None or not r.ci):
                hay = low if r.ci else text
                assert hay is not None
                for lit in r.literals:
                    pos = hay.find(lit, start)
                    while pos != -1 and pos < best:
                        if r.prefix.fullmatch(text, pos) is not None:
                            best = pos
                            break
                        pos = hay.find(lit, pos + 1)
            elif r.prefix_search is not None:
                m = r.prefix_search.search(text, start)
                if m is not None and m.start() < best:
                    best = m.start()
            else:  # no prefix regex could be derived: hold the whole window
                best = start
        return best

    def apply(self, text: str, hits: list[_Hit], cut: int) -> str:
        """Return ``text[:cut]`` with the secrets of the hits that end by ``cut`` replaced."""
        spans: list[list[int | str]] = []  # [start, end, priority, name], merged
        for start, end, _ms, _me, priority, name in sorted(hits):
            if end > cut or self._allowed(text[start:end]):
                continue
            if spans and start < int(spans[-1][1]):
                last = spans[-1]
                last[1] = max(int(last[1]), end)
                if priority < int(last[2]):
                    last[2], last[3] = priority, name
            else:
                spans.append([start, end, priority, name])
        out: list[str] = []
        pos = 0
        for start, end, _priority, name in spans:
            out.append(text[pos : int(start)])
            out.append(MARKER.format(name=name))
            pos = int(end)
        out.append(text[pos:cut])
        return "".join(out)

    def _allowed(self, secret: str) -> bool:
        return any(rx.fullmatch(secret) is not None for rx in self._allow)


def _add_hit(hits: list[_Hit], r: _Rule, m: re.Match[str]) -> None:
    start, end = m.span(r.secret) if r.secret and m.start(r.secret) != -1 else m.span()
    if end > start:
        hits.append((start, end, m.start(), m.end(), r.priority, r.name))


# --------------------------------------------------------------------------- rule analysis
#
# What the engine needs from a regex beyond matching it: the literals every match starts
# with (for fast scanning), the longest a match can be (the hold window), and a "prefix"
# regex that matches every prefix of every match (for the hold). They come from the parse
# tree of Python's own regex parser (re._parser, sre_parse before 3.11). Where that fails
# (an unusual construct, a future parser) the engine falls back to slower scanning or a
# longer hold, never to missing a secret.


class _Unsupported(Exception):
    """The regex uses a construct the prefix builder does not handle."""


def _sre() -> tuple[object, object]:
    """Return Python's regex parser and constants modules."""
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:  # Python 3.10
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


def _compile_rule(rule: RedactionRule, priority: int) -> _Rule:
    rx = re.compile(rule.pattern)
    ci = bool(rx.flags & re.IGNORECASE)
    literals: tuple[str, ...] = ()
    prefix: re.Pattern[str] | None = None
    prefix_search: re.Pattern[str] | None = None
    window = _HOLD_UNBOUNDED
    try:
        parser, consts = _sre()
        tree = parser.parse(rule.pattern)  # type: ignore[attr-defined]
        _lo, hi = tree.getwidth()
        window = min(int(hi), _HOLD_MAX) if hi < _HOLD_MAX else _HOLD_UNBOUNDED
        literals = _starting_literals(list(tree), consts, ci)
        source = _Prefix(consts).of_sequence(list(tree))
        if len(source) > 200_000:
            raise _Unsupported("prefix regex too large")
        flags = rx.flags & ~(re.VERBOSE | re.DEBUG)
        prefix = re.compile(source, flags)
        prefix_search = re.compile(f"(?:{source})\\Z", flags)
    except (_Unsupported, re.error, RecursionError, AttributeError, ImportError, TypeError, ValueError) as exc:
        log.warning("redaction rule %r: partial matches cannot be checked (%s); holding back more", rule.name, exc)
        prefix = prefix_search = None
    find_literals = bool(literals) and (ci or len(literals) > 1)
    secret = rx.groupindex.get("secret", 0)
    return _Rule(rule.name, priority, rx, ci, literals, find_literals, prefix, prefix_search, window, secret)


def _starting_literals(items: list[tuple[object, object]], c: object, ci: bool) -> tuple[str, ...]:
    """Return strings one of which every match starts with, or () when there is none."""
    found, _complete = _literals_of(items, c, limit=16)
    if not found or any(not s for s in found):
        return ()
    if ci:
        lowered = {s.lower() for s in found}
        if any(len(a) != len(b) for a, b in zip(sorted(found, key=str.lower), sorted(lowered))):
            return ()
        found = sorted(lowered)
    unique = sorted(set(found))
    common = os.path.commonprefix(unique)
    if len(unique) > 1 and len(common) >= 2:
        unique = [common]
    return tuple(unique)


def _literals_of(items: list[tuple[object, object]], c: object, limit: int) -> tuple[list[str], bool]:
    """Return (literal starts of a node sequence, whether the sequence is all literal)."""
    acc = [""]
    for op, av in items:
        complete = True
        if op is c.LITERAL:  # type: ignore[attr-defined]
            opts = [chr(av)]  # type: ignore[arg-type]
        elif op is c.IN and all(o is c.LITERAL for o, _ in av):  # type: ignore[attr-defined, union-attr, attr-defined]
            opts = [chr(v) for _, v in av]  # type: ignore[union-attr]
        elif op is c.SUBPATTERN and not av[1] and not av[2]:  # type: ignore[attr-defined, index]
            opts, complete = _literals_of(list(av[3]), c, limit)  # type: ignore[index]
        elif op is c.BRANCH:  # type: ignore[attr-defined]
            opts = []
            for alt in av[1]:  # type: ignore[index]
                sub, sub_complete = _literals_of(list(alt), c, limit)
                opts += sub
                complete = complete and sub_complete
        else:
            return acc, False
        joined = [a + o for a in acc for o in opts]
        if len(joined) > limit:
            return acc, False
        acc = joined
        if not complete:
            return acc, False
    return acc, True


_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
_AT = {
    "AT_BEGINNING": "^",
    "AT_BEGINNING_STRING": r"\A",
    "AT_END": "$",
    "AT_END_STRING": r"\Z",
    "AT_BOUNDARY": r"\b",
    "AT_NON_BOUNDARY": r"\B",
}
_FORWARD_AT = {"AT_END", "AT_END_STRING", "AT_BOUNDARY", "AT_NON_BOUNDARY"}
_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.ASCII, "a"))


def _esc(code: int) -> str:
    ch = chr(code)
    if ch.isascii() and ch.isalnum():
        return ch
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class _Prefix:
    """Build regex source from a parse tree: ``emit`` the node itself, or ``of_*`` a regex
    matching every prefix of what the node matches (the empty one included).

    The prefix regex may match more than the true prefixes (that holds back a little
    more), never less (that would let a split secret through). So assertions that look
    forward (lookaheads, ``$``, ``\\b``) are dropped from it, since the text they look at
    may not have arrived; lookbehinds and ``^`` look at text already there and are kept.
    """

    def __init__(self, c: object) -> None:
        self.c = c

    def _op(self, name: str) -> object:
        return getattr(self.c, name, None)

    def _is(self, op: object, *names: str) -> bool:
        return any(op is self._op(n) and op is not None for n in names)

    def emit(self, items: list[tuple[object, object]]) -> str:
        """Return the regex source of a node sequence, forward assertions dropped."""
        return "".join(self._emit_node(op, av) for op, av in items)

    def _emit_node(self, op: object, av: object) -> str:
        if self._is(op, "LITERAL"):
            return _esc(av)  # type: ignore[arg-type]
        if self._is(op, "NOT_LITERAL"):
            return f"[^{_esc(av)}]"  # type: ignore[arg-type]
        if self._is(op, "ANY"):
            return "."
        if self._is(op, "IN"):
            return self._emit_class(av)  # type: ignore[arg-type]
        if self._is(op, "BRANCH"):
            return "(?:" + "|".join(self.emit(list(alt)) for alt in av[1]) + ")"  # type: ignore[index]
        if self._is(op, "SUBPATTERN"):
            _group, add, remove, sub = av  # type: ignore[misc]
            return f"(?{_flags(add, remove)}:{self.emit(list(sub))})"
        if self._is(op, "MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av  # type: ignore[misc]
            lazy = "?" if self._is(op, "MIN_REPEAT") else ""
            return f"(?:{self.emit(list(sub))}){self._quant(lo, hi)}{lazy}"
        if self._is(op, "ATOMIC_GROUP"):
            return f"(?:{self.emit(list(av))})"  # type: ignore[call-overload]
        if self._is(op, "AT"):
            name = str(av)
            if name in _FORWARD_AT:
                return ""
            if name not in _AT:
                raise _Unsupported(name)
            return _AT[name]
        if self._is(op, "ASSERT", "ASSERT_NOT"):
            direction, sub = av  # type: ignore[misc]
            if direction > 0:
                return ""
            kind = "=" if self._is(op, "ASSERT") else "!"
            return f"(?<{kind}{self._emit_exact(list(sub))})"
        raise _Unsupported(str(op))

    def _emit_exact(self, items: list[tuple[object, object]]) -> str:
        """Return a lookbehind's body as written (it must keep its fixed width)."""
        out = []
        for op, av in items:
            if self._is(op, "AT"):
                if str(av) not in _AT:
                    raise _Unsupported(str(av))
                out.append(_AT[str(av)])
            elif self._is(op, "ASSERT", "ASSERT_NOT"):
                raise _Unsupported("assertion inside a lookbehind")
            else:
                out.append(self._emit_node(op, av))
        return "".join(out)

    def _emit_class(self, items: list[tuple[object, object]]) -> str:
        parts = []
        for op, av in items:
            if self._is(op, "NEGATE"):
                parts.insert(0, "^")
            elif self._is(op, "LITERAL"):
                parts.append(_esc(av))  # type: ignore[arg-type]
            elif self._is(op, "RANGE"):
                lo, hi = av  # type: ignore[misc]
                parts.append(f"{_esc(lo)}-{_esc(hi)}")
            elif self._is(op, "CATEGORY") and str(av) in _CATEGORIES:
                parts.append(_CATEGORIES[str(av)])
            else:
                raise _Unsupported(str(op))
        return "[" + "".join(parts) + "]"

    def _quant(self, lo: int, hi: int) -> str:
        return f"{{{lo},}}" if hi is self._op("MAXREPEAT") or hi >= 2**32 else f"{{{lo},{hi}}}"

    def of_sequence(self, items: list[tuple[object, object]]) -> str:
        """Return a regex matching every prefix of what the node sequence matches."""
        groups = self._literal_runs(items)
        return self._of_groups(groups, 0)

    def _literal_runs(self, items: list[tuple[object, object]]) -> list[tuple[str, object]]:
        """Join consecutive literals into ("run", text); other nodes become ("node", node)."""
        groups: list[tuple[str, object]] = []
        for op, av in items:
            if self._is(op, "LITERAL"):
                if groups and groups[-1][0] == "run":
                    groups[-1] = ("run", str(groups[-1][1]) + _esc(av))  # type: ignore[arg-type]
                    continue
                groups.append(("run", _esc(av)))  # type: ignore[arg-type]
            else:
                groups.append(("node", (op, av)))
        return groups

    def _of_groups(self, groups: list[tuple[str, object]], i: int) -> str:
        if i == len(groups):
            return ""
        kind, value = groups[i]
        rest = self._of_groups(groups, i + 1)
        if kind == "run":
            chars = re.findall(r"\\U[0-9a-f]{8}|\\u[0-9a-f]{4}|\\x[0-9a-f]{2}|.", str(value))
            partial = "|".join("".join(chars[:k]) for k in range(len(chars) - 1, 0, -1))
            full = "".join(chars)
            return f"(?:{full}{rest}|{partial})" if partial else f"(?:{full}{rest}|)"
        op, av = value  # type: ignore[misc]
        if self._is(op, "AT") or (self._is(op, "ASSERT", "ASSERT_NOT") and av[0] > 0):
            if self._is(op, "AT") and str(av) in _FORWARD_AT:
                return rest
            if self._is(op, "ASSERT", "ASSERT_NOT"):
                return rest
            return f"(?:{self._emit_node(op, av)}{rest})"
        if self._is(op, "ASSERT", "ASSERT_NOT"):  # lookbehind: looks at text already there
            return f"(?:{self._emit_node(op, av)}{rest})"
        return f"(?:{self._emit_node(op, av)}{rest}|{self._of_node(op, av)})"

    def _of_node(self, op: object, av: object) -> str:
        """Return a regex matching every prefix of what one node matches."""
        if self._is(op, "LITERAL", "NOT_LITERAL", "ANY", "IN"):
            return f"(?:{self._emit_node(op, av)})?"
        if self._is(op, "BRANCH"):
            return "(?:" + "|".join(self.of_sequence(list(alt)) for alt in av[1]) + ")"  # type: ignore[index]
        if self._is(op, "SUBPATTERN"):
            _group, add, remove, sub = av  # type: ignore[misc]
            return f"(?{_flags(add, remove)}:{self.of_sequence(list(sub))})"
        if self._is(op, "ATOMIC_GROUP"):
            return f"(?:{self.of_sequence(list(av))})"  # type: ignore[call-overload]
        if self._is(op, "MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av  # type: ignore[misc]
            if hi == 0:
                return ""
            upper = "" if hi is self._op("MAXREPEAT") or hi >= 2**32 else str(hi - 1)
            return f"(?:(?:{self.emit(list(sub))}){{0,{upper}}}{self.of_sequence(list(sub))})"
        raise _Unsupported(str(op))


def _flags(add: int, remove: int) -> str:
    on = "".join(letter for bit, letter in _FLAG_LETTERS if add & bit)
    off = "".join(letter for bit, letter in _FLAG_LETTERS if remove & bit)
    return on + (f"-{off}" if off else "")
