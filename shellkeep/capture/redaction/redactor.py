"""Own the redactors: ``Redactor`` for a whole text, ``StreamRedactor`` for the capture stream.

``Redactor.redact`` works on a whole text. ``StreamRedactor`` works on the capture stream:
``feed`` returns what is safe to write now and holds back a tail that could be the start of
a secret still arriving, for as long as it could, so a secret split across two reads however
far apart is still caught (on output, ``release`` lets a quiet second write a tail that no
rule's starting keyword begins). The hold is exact: the tail is held from the earliest
position where the text is a match or could still become one (the engine's partial
matching). Ordinary output holds back nothing or a few characters; a possible secret at most
20 KiB, at which bound it is written as its rule's marker.

Text is ``str`` (already UTF-8 decoded), so a hold never splits a character. Escape
sequences stay as they are: a secret between two of them is replaced and they are kept, and
the keyword rules skip SGR colour codes between a keyword and its value. A secret with escape
sequences, backspaces or DELs inside it is matched on what the screen shows (``screen_view``),
mapped back so its whole raw span becomes the marker. ``keep_columns`` (output streams) makes
a one-line secret's marker keep its screen columns where no text lands inside the marker
(``screen_view._fit_marker``), and a line whose marker a later edit lands inside is redrawn
(``line_repair``); ``known`` shares the redacted secrets between a session's streams.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable

from shellkeep.capture.redaction.compiled import CompiledRule, Hit, Span
from shellkeep.capture.redaction.known import KnownSecrets
from shellkeep.capture.redaction.line_repair import LineRepair
from shellkeep.capture.redaction.engine import _HOLD_MAX, _Engine, _settle
from shellkeep.capture.redaction.noop_moves import NoOpMoves
from shellkeep.capture.redaction.rules import MARKER, MARKER_PREFIX, RULES, RedactionRule, user_rule
from shellkeep.capture.redaction.screen_view import _cut_escape_start, _escape_rx, _has_screen_controls, _ScreenView, _settle_owed

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.config import RedactConfig


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
        self._specific: _Engine | None = None  # the rules with starting literals
        self._lock = threading.Lock()  # the writer and metadata threads compile it only once

    @property
    def rules(self) -> tuple[RedactionRule, ...]:
        """Return the rules, highest priority first."""
        return self._rules

    def redact(self, text: str) -> str:
        """Return ``text`` with every secret replaced.

        A private key's BEGIN line without its END line redacts the key-shaped text
        after it (up to 16 KiB); a block whose END is followed by more key-shaped text and
        another END (two copies interleaved) is redacted up to that second END.
        """
        if not text:
            return text
        engine = self._compiled()
        if not engine.rules:
            return text
        hits = engine.hits(text)
        if _has_screen_controls(text):
            hits += engine.screen_hits(text)
        if MARKER_PREFIX in text:  # a marker is the value redacted already: it keeps its rule's name
            hits = [hit for hit in hits if not _WHOLE_MARKER.fullmatch(text, hit[0], hit[1])]
        return engine.apply(text, hits, 0, len(text)) if hits else text

    def _compiled(self) -> _Engine:
        """Return the compiled rules, compiling them on first use."""
        engine = self._engine
        if engine is None:
            with self._lock:
                engine = self._engine
                if engine is None:
                    engine = self._engine = _Engine(self._rules, self._allowlist)
        return engine

    def _compiled_specific(self) -> _Engine:
        """Return the engine of the rules with a starting literal (a token format: ``ghp_``,
        ``AKIA``, ``-----BEGIN``; a keyword: ``password``), built on first use."""
        engine = self._specific
        if engine is None:
            full = self._compiled()
            with self._lock:
                engine = self._specific
                if engine is None:
                    keep = [rule for rule, r in zip(self._rules, full.rules) if r.literals]
                    engine = self._specific = _Engine(tuple(keep), self._allowlist)
        return engine


class StreamRedactor:
    """Redact a stream of text that arrives in pieces (one per capture read).

    ``feed`` returns the part of everything fed so far that is safe to write now; it holds
    back the tail from the earliest position where a secret could still be arriving
    (usually nothing), for as long as it could: no clock releases it, so a secret typed or
    printed in two parts minutes apart is still caught whole. ``flush`` returns the held
    tail, redacted as it stands: call it at the end of the stream only.

    ``release`` is the output stream's clock (the writer calls it once output has been quiet
    for a second): it writes the held tail, redacted as it stands, unless a rule with a
    starting literal (a token format: ``ghp_``, ``AKIA``, ``sk-ant-``, ``-----BEGIN``; or a
    keyword: ``password``, ``token``) has seen that literal whole and could still be
    matching, or the tail is a quoted value its closing quote would make a secret. So a plain
    last word held only by the rules without a starting literal (``deploy``: the Terraform
    token's 14 characters before ``.atlasv1.``; ``vim``: an Azure secret's 3 before a digit
    and ``Q~``), a literal cut short (``s`` of ``s.``, ``gh`` of ``ghp_``) or an unfinished
    escape sequence is written; ``ghp_`` and half a token, or ``Password: ``, stays held. The
    released text stays as context: a match that begins in it and goes on in later text
    still has its later part replaced by the marker.

    The hold is bounded: no hold exceeds ``_HOLD_MAX`` (20 KiB). A possible secret still
    growing at the bound becomes its rule's marker rather than clear text, and the text that
    goes on continuing it (checked with the rule's partial match from its first 1 KiB) is
    swallowed into that marker until it stops.

    On a screen stream, a secret a line editor draws across the right margin (readline and
    zle write the last column's character, then `` \r`` for a terminal that delays the wrap,
    xterm's ``xenl``) is cut there for the rules; its part on the next row is blanked with
    spaces (its columns kept) when the written text ends with a marker and `` \r``, up to the
    first character no token holds (``_WRAPPED_TAIL``), so no piece of it is left in clear.
    Not thread-safe: one instance per stream, used by one thread.
    """

    def __init__(self, redactor: Redactor, *, keep_columns: bool = False, known: dict[str, str] | None = None) -> None:
        """Redact with ``redactor``'s rules.

        keep_columns: for a stream drawn on a screen (output): a one-line secret's marker
        keeps the secret's columns where no text would land inside it (``_fit_marker``:
        padded with spaces, or followed by a cursor-back when the cursor moves on next), so
        the screen rebuilt from the recording keeps its columns; a line editor's later edit
        that lands inside a marker is followed by a redraw of the line (``LineRepair``).
        Not for typed input.
        known: the secrets the session's streams have redacted, shared between them
        (``KnownSecrets``): the same secret gets the same name in each, also shown bare.
        """
        self._redactor = redactor
        self._keep_columns = keep_columns
        self._known = KnownSecrets(known) if known is not None else None
        self._owed = 0  # what a narrower marker in the written text still owes the next text (_settle_owed)
        self._held = ""
        self._context = ""
        self._released = 0  # characters at the end of _context written by release(): a match may begin there
        self._open: tuple[CompiledRule, str] | None = None  # (rule, first chars) of a secret cut at the bound
        self._wrapped = False  # the written text ended with a marker drawn up to a soft wrap
        self._last_written = ""  # the end of what was written (screen streams), for a marker cut from its wrap
        self._line = ""  # the raw text written on the current line (``_line_view``)
        self._repair = LineRepair() if keep_columns else None  # a marker an edit landed inside
        self._moves = NoOpMoves() if keep_columns else None  # fish's idle \r ESC[nC between keys

    @property
    def held(self) -> int:
        """Return the number of characters held back."""
        return len(self._held) + (self._moves.pending if self._moves is not None else 0)

    def feed(self, text: str) -> str:
        """Add ``text`` to the stream; return the redacted text that is safe to write now."""
        if self._moves is not None:
            text = self._moves.feed(text)
        return self._blank_wrapped(self._feed(text))

    def _draw(self, engine: _Engine, buf: str, hits: list[Hit], base: int, cut: int) -> str:
        """Return ``buf[base:cut]`` with its secrets replaced, as written next: markers fitted to
        the screen (``keep_columns``), a cursor-back still owed by the last one settled."""
        spans = engine.spans(buf, hits, base, cut) if hits else []
        if self._known is not None and spans:
            self._known.learn(buf, spans)
        if not self._keep_columns:
            return engine.draw(buf, spans, base, cut)[0] if spans else buf[base:cut]
        written, owed = engine.draw(buf, spans, base, cut, keep_columns=True) if spans else (buf[base:cut], 0)
        still = self._owed
        if still and written:
            written, still = _settle_owed(written, still)
        self._owed = owed if spans else still
        repair = self._repair
        assert repair is not None
        if spans or repair.following:  # else no marker of ours is on the line: nothing to repair
            taint = [(s - base, e - base, name) for s, e, _priority, name in spans]
            written, redrew = repair.repair(self._line, buf[base:cut], written, taint, functools.partial(self._secrets, engine))
            if redrew:
                self._owed = 0  # the line redrawn, the cursor where the program's is
        return written

    def _context_chars(self, engine: _Engine) -> int:
        """Return how much written text to keep as context: the rules' lookbehind, or once the
        session knows a secret, enough to see the cursor move before a piece of it drawn again
        (``KnownSecrets``: fish moves back, then sets its colours, then draws the piece)."""
        return max(engine.context_chars, _MOVE_CONTEXT) if self._known else engine.context_chars

    def _secrets(self, engine: _Engine, text: str) -> list[Span]:
        """Return the secrets in ``text``, a line as shown (``LineRepair``), named as known."""
        hits = self._with_known(text, 0, 0, engine.hits(text), engine)
        return engine.spans(text, hits, 0, len(text)) if hits else []

    def _with_known(self, buf: str, lo: int, base: int, hits: list[Hit], engine: _Engine) -> list[Hit]:
        """Return ``hits`` named and completed by the session's known secrets (``KnownSecrets``)."""
        known = self._known
        return known.named(buf, lo, base, hits, len(engine.rules)) if known else hits

    def _blank_wrapped(self, written: str) -> str:
        """Blank what continues a secret past a soft wrap in ``written`` (see the class)."""
        if not self._keep_columns or not written:
            return written
        lead = self._last_written
        if not self._wrapped and " \r" not in written and not (written[0] == "\r" and lead.endswith(" ")):
            # The common case: no soft wrap. Keep the end of what was written, cheaply.
            self._last_written = written[-_LAST_WRITTEN:] if len(written) >= _LAST_WRITTEN else (lead + written)[-_LAST_WRITTEN:]
            return written
        buf = lead + written
        out: list[str] = []
        pos = len(lead)
        while True:
            if not self._wrapped:
                found = next((m for m in _marker_at_wrap_rx().finditer(buf, max(0, pos - _LAST_WRITTEN)) if m.end() > pos), None)
                if found is None:
                    out.append(buf[pos:])
                    break
                out.append(buf[pos : found.end()])
                pos = found.end()
            # At the start of a row that continues a secret: blank its characters.
            tail = _wrapped_tail_rx().match(buf, pos)
            end = tail.end() if tail is not None else pos
            out.append(" " * (end - pos))
            pos = end
            self._wrapped = True
            if pos == len(buf):
                break  # it may go on in the next text
            if buf.startswith(" \r", pos):  # wrapped once more
                out.append(" \r")
                pos += 2
                continue
            self._wrapped = False
        result = "".join(out)
        self._last_written = (lead + result)[-_LAST_WRITTEN:]
        return result

    def _feed(self, text: str) -> str:
        engine = self._redactor._compiled()
        if not engine.rules:
            return text
        if self._open is not None:
            text = self._swallow(engine, text)
            if self._open is not None or not text:
                return ""
        # The last characters already written stay as context (never written again), so a
        # lookbehind or a \b at the start of a match sees what the whole text would show.
        base = len(self._context)
        lo = base - self._released  # a match may begin in text written by release()
        buf = self._context + self._held + text
        if len(buf) == base:
            return ""
        hits = [h for h in engine.hits(buf) if h[2] >= lo and h[3] > base]
        cut = engine.hold_start(buf, lo)
        if _has_screen_controls(buf):  # a secret may be drawn with escape sequences or backspaces inside
            hits += [h for h in engine.screen_hits(buf, lo) if h[3] > base]
            cut = min(cut, engine.screen_hold_start(buf, lo))
        if self._line and (_has_screen_controls(buf) or _has_screen_controls(self._line)):
            line_hits, line_cut = self._line_view(engine, buf, base)
            hits += line_hits
            cut = min(cut, line_cut)
        if self._known:
            hits = self._with_known(buf, lo, base, hits, engine)
            cut = min(cut, self._known.hold_start(buf, base))
        if hits and cut < len(buf):
            cut = _settle(cut, hits)
        if cut < base:  # what release() wrote may still be growing into a secret: hold all that is new
            self._held = buf[base:]
            return ""
        # At the bound: a possible secret that would still grow past it is written as its marker.
        starts = [base] if self._held and cut > base else []
        if hits:
            starts += sorted(h[2] for h in hits if h[3] == len(buf) and h[2] < cut)  # a match up to the end
        for start in starts:
            rule = engine.still_growing(buf, start)
            if rule is not None:
                return self._cut_off(engine, buf, base, hits, start, rule)
        if len(buf) - cut > _HOLD_MAX:
            return self._cut_off(engine, buf, base, hits, cut, engine.still_growing(buf, cut) or engine.rules[0])
        return self._advance(engine, buf, base, hits, cut)

    def flush(self) -> str:
        """Return the held tail, redacted as it stands, and hold nothing."""
        return self._cut_move() + self._blank_wrapped(self._flush())

    def _cut_move(self) -> str:
        """Return the start of a move the idle-move filter holds (``NoOpMoves.take``), fed on."""
        if self._moves is None or not self._moves.pending:
            return ""
        return self._blank_wrapped(self._feed(self._moves.take()))

    def _flush(self) -> str:
        engine = self._redactor._compiled()
        self._open = None
        if not self._held or not engine.rules:
            held, self._held = self._held, ""
            return held
        base = len(self._context)
        buf = self._context + self._held
        return self._advance(engine, buf, base, self._hits_at_end(engine, buf, base), len(buf))

    def release(self) -> str:
        """After a quiet spell on an output stream: return the held tail, redacted as it
        stands, unless a token format's literal has been seen whole and its match could still
        be growing (then return "" and go on holding). See the class docstring."""
        return self._cut_move() + self._blank_wrapped(self._release())

    def _release(self) -> str:
        engine = self._redactor._compiled()
        if not self._held or self._open is not None or not engine.rules:
            return ""
        base = len(self._context)
        lo = base - self._released
        buf = self._context + self._held
        n = len(buf)
        specific = self._redactor._compiled_specific()
        if specific.rules:
            cut = specific.hold_start(buf, lo, partials=False)
            if _has_screen_controls(buf):
                cut = min(cut, specific.screen_hold_start(buf, lo, escapes=False, partials=False))
            if cut < n:
                return ""
        if specific.rules and _has_screen_controls(self._line + buf) and self._line_view(specific, buf, base)[1] < n:
            return ""  # a token format edited on the line may still grow (a keyword-only rule's match is released, as above)
        if self._known and n - self._known.hold_start(buf, base) >= _KNOWN_HELD:
            return ""  # the start of a secret the session knows, as a literal of a token format
        hits = self._hits_at_end(engine, buf, base)
        if self._unclosed_quote(engine, buf, lo, hits):
            return ""
        # Where a match may still be growing from: it stays context, for the text that follows.
        start = engine.hold_start(buf, max(lo, n - _HOLD_MAX))
        if _has_screen_controls(buf):
            start = min(start, engine.screen_hold_start(buf, max(lo, n - _HOLD_MAX)))
        written = self._draw(engine, buf, hits, base, n)
        self._wrote(buf[base:n])
        self._held = ""
        self._released = n - start
        self._context = buf[max(0, start - self._context_chars(engine)) :]
        return written

    @staticmethod
    def _unclosed_quote(engine: _Engine, buf: str, lo: int, hits: list[Hit]) -> bool:
        """Return whether the end of ``buf`` is a quoted value its closing quote would make a
        secret (``password="hunter2``): as it stands no rule matches it, so it must stay held."""
        n = len(buf)
        if '"' not in buf and "'" not in buf:
            return False
        for quote in "\"'":
            for h in engine.hits(buf + quote):
                if h[2] >= lo and h[0] < n <= h[1] and not any(k[0] <= h[0] and k[1] >= n for k in hits):
                    return True
        return False

    def _hits_at_end(self, engine: _Engine, buf: str, base: int) -> list[Hit]:
        """Return the matches in ``buf`` that end after ``base`` and begin after the context
        (or in text written by ``release``)."""
        lo = base - self._released
        hits = [h for h in engine.hits(buf) if h[2] >= lo and h[3] > base]
        if _has_screen_controls(buf):
            hits += [h for h in engine.screen_hits(buf, lo) if h[3] > base]
        if self._line and (_has_screen_controls(buf) or _has_screen_controls(self._line)):
            hits += self._line_view(engine, buf, base)[0]
        return self._with_known(buf, lo, base, hits, engine)

    def _line_view(self, engine: _Engine, buf: str, base: int) -> tuple[list[Hit], int]:
        """Return the secrets and the hold (``screen_hold_start``) that only the screen view of
        the current line shows, its start already written: a token edited in its middle (a
        character deleted with ``CSI P`` and the tail redrawn, the rest killed with Ctrl-K and
        typed again) has its tail drawn after its start was. A secret begun in the written
        part has its new part become the marker, and the new text is held while one may grow."""
        line = self._line
        n = len(buf)
        if not line or not engine._found(line):
            return [], n  # no rule's keyword on the line: nothing begun there
        full = line + buf[base : base + 2 * _LINE_MAX]  # a secret begun on the line ends near it
        off = len(line) - base  # buf index = full index - off
        view = _ScreenView(full)
        esc = _cut_escape_start(line, 0)  # an escape sequence cut by what was written: its rest is not a marker's
        if esc != -1:
            m = _escape_rx().match(full, esc)
            base = max(base, base + (m.end() if m else esc) - len(line))
        hits: list[Hit] = []
        for vs, ve, vms, vme, priority, name in engine.hits(view.text) if view.changed else ():
            ms, me = view.span(vms, vme)
            if ms < len(line) < me:
                ss, se = view.span(vs, ve)
                hits.append((max(ss - off, base), se - off, max(ms - off, base), me - off, priority, name))
        if len(full) - off < n:
            return hits, n
        held = engine.screen_hold_start(full, 0)
        return hits, (n if held >= len(full) else max(held - off, base))

    def _wrote(self, raw: str) -> None:
        """Keep the raw text written on the current line, up to ``_LINE_MAX`` characters."""
        line = self._line + raw
        end = max(line.rfind("\n"), line.rfind("\r"))
        if "\x1b[" in line:  # a full-screen TUI moves the cursor to a row and column: a new line
            for m in _ADDRESSED.finditer(line, end + 1):
                end = m.end() - 1
        self._line = line[end + 1 :][-_LINE_MAX:] if end != -1 or len(line) > _LINE_MAX else line

    def _advance(self, engine: _Engine, buf: str, base: int, hits: list[Hit], cut: int) -> str:
        """Write ``buf[base:cut]``, hold the rest and keep the context; return what is written."""
        written = self._draw(engine, buf, hits, base, cut)  # the line before it is the repair's start
        self._wrote(buf[base:cut])
        self._held = buf[cut:]
        self._released = 0
        self._context = buf[max(0, cut - self._context_chars(engine)) : cut]
        return written

    def _cut_off(self, engine: _Engine, buf: str, base: int, hits: list[Hit], start: int, rule: CompiledRule) -> str:
        """Write ``buf[base:start]``, then ``rule``'s marker for all of ``buf[start:]``."""
        start = max(start, base)
        written = self._draw(engine, buf, hits, base, start)
        self._line = ""
        if self._repair is not None:
            self._repair.reset()  # a bare marker for text over several lines
        self._owed = 0  # the marker of the cut-off secret is bare
        self._held = ""
        self._released = 0
        self._context = buf[-engine.context_chars :]
        self._open = (rule, buf[start : start + _OPEN_ANCHOR])
        return written + MARKER.format(name=rule.name)

    def _swallow(self, engine: _Engine, text: str) -> str:
        """Drop the start of ``text`` that still continues the secret cut off at the bound;
        return the rest (the secret has ended when it is not empty)."""
        assert self._open is not None
        rule, anchor = self._open
        partial = rule.partial.get()
        joined = anchor + text
        if partial.fullmatch(joined, partial=True) is not None:
            self._context = joined[-engine.context_chars :]
            return ""
        # Every prefix of a prefix is a prefix: find the longest one by bisection.
        lo, hi = len(anchor), len(joined)  # fullmatch holds at lo, fails at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if partial.fullmatch(joined, 0, mid, partial=True) is not None:
                lo = mid
            else:
                hi = mid
        self._open = None
        self._context = joined[max(0, lo - engine.context_chars) : lo]
        return joined[lo:]


_WHOLE_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
"""A redaction marker, as a secret's whole span: a text redacted again keeps its names."""

_KNOWN_HELD = 3
"""Characters of a known secret's start at the end of the output that ``release`` keeps holding."""

_OPEN_ANCHOR = 1024
"""Characters of a secret cut off at the bound kept to check that later text continues it."""

_LAST_WRITTEN = 512
"""Characters of written text kept to see a marker and its padding before a later `` \r``."""

_MOVE_CONTEXT = 48
"""Characters of written text kept as context once the session knows a secret (``_context_chars``)."""

_LINE_MAX = 512
"""Raw characters of the current line kept for its screen view (``StreamRedactor._line_view``)."""

_ADDRESSED = re.compile(r"\x1b\[[0-9;]*[Hfd]")
"""Cursor addressing to an absolute row (CUP, HVP, VPA): what follows is drawn on another line,
as full-screen TUIs (OpenCode, vim) draw without CR or LF. Relative moves (CUU, CUB) stay on the
line: a line editor or an Ink input box redraws the same line with them."""

_WRAPPED_TAIL = r"[A-Za-z0-9_+/=.~-]*"
"""The characters a secret's part past a soft wrap may hold (those of token formats)."""


@functools.cache
def _wrapped_tail_rx() -> re.Pattern[str]:
    return re.compile(_WRAPPED_TAIL)


@functools.cache
def _marker_at_wrap_rx() -> re.Pattern[str]:
    """A marker, its padding, then a soft wrap's `` \r``."""
    return re.compile(re.escape(MARKER_PREFIX) + r"[^\]\s]*\] * \r")


@functools.cache
def _builtin_redactor() -> Redactor:
    return Redactor()


def default_stream_redactor(screen: bool = False) -> StreamRedactor:
    """Return a new StreamRedactor with the built-in rules only (compiled once, shared).

    screen: the stream is drawn on a screen (output): markers keep the secrets' columns.
    Prefer ``StreamRedactor(build_redactor(config.redact))``, which adds the user's
    patterns and allowlist.
    """
    return StreamRedactor(_builtin_redactor(), keep_columns=screen)


@functools.lru_cache(maxsize=8)
def redactor_for(config: RedactConfig | None) -> Redactor:
    """Return the Redactor of ``config`` (None: the built-in rules), one per config and process.

    Shared so its rules compile once: the writer thread, the metadata of a run and the
    conversation stored at its end all redact with the same object.
    """
    return _builtin_redactor() if config is None else build_redactor(config)


def build_redactor(config: RedactConfig) -> Redactor:
    """Return the Redactor for the ``[redact]`` settings.

    The user's patterns come first, then ``RULES``; with ``enabled = false`` it has no
    rules and returns text unchanged.
    """
    if not config.enabled:
        return Redactor(rules=(), allowlist=())
    user = tuple(user_rule(p.name, p.pattern) for p in config.patterns)
    return Redactor(rules=user + RULES, allowlist=config.allowlist)
