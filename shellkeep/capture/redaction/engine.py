"""Own the compiled form of the redaction rules: finding secrets and the tail to hold back.

``_Engine`` scans a text for every rule's matches (``hits``), says where the tail that could
still grow into a secret begins (``hold_start``), and replaces secrets (``apply``). A rule is
tried only where one of its declared keywords is: the case-sensitive keywords of every rule
are found in one pass by an Aho-Corasick automaton (ahocorasick-rs, a DFA in Rust), the
lower-case ones by a second automaton over the text lower-cased (its UTF-8 bytes, as ASCII);
a rule with ``requires`` characters is skipped in a text that lacks them; a rule whose
keywords lie inside its matches is searched in a text that holds one, a rule without
keywords in every text.

The hold is exact: a position holds when the text from it on is a match or could still
become one, which the ``regex`` package's partial matching says (``compiled.could_grow``).
Only the positions of keywords (and of a keyword cut short at the end) are tried for rules
with starting keywords; a rule with ``keyword_within`` is searched from that far before its
keywords and the end; one without keywords from ``_HOLD_MAX`` before the end.
A secret with escape sequences, backspaces or DELs inside it is matched on what the screen
shows (``screen_view``), built only around the places the junction automaton finds (a
keyword an ESC/BS/DEL follows, or one cut by it). Regexes compile on first use, never at import.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable

from shellkeep.capture.redaction.compiled import PIECE, CompiledRule, Hit, LazyPattern, Span, add_hit, compile_rule, earliest_partial, piece_of_marker
from shellkeep.capture.redaction.cut_short import ESCAPE_SEEN, cut_short, typo_growing
from shellkeep.capture.redaction.rules import MARKER, RedactionRule
from shellkeep.capture.redaction.screen_view import (
    _AFTER,
    _ALONE,
    _PAIR,
    _COMMON_FINALS,
    _FINALS,
    _JUNCTION,
    _LITERAL,
    _REWRITE,
    _SCREEN_BACK,
    _SCREEN_CONTROLS,
    _SCREEN_SPREAD,
    _SCREEN_TAIL,
    _WORD_STARTS,
    _after_controls,
    _colour_rx,
    _fit_marker,
    _control_rx,
    _cut_escape_start,
    _escape_rx,
    _escapes_ending_at,
    _ScreenView,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

_HOLD_MAX = 20 * 1024
"""No hold is longer than this: a possible secret still growing there becomes its marker
(a private key block needs almost all of it)."""

_SMALL = 2048
"""Texts up to this long are first checked for any rule's keyword (the quiet check)."""

_SCREEN_WINDOW = 256
"""Characters shown of a secret within which an escape sequence inside it is looked for."""

# --------------------------------------------------------------------------- engine



def _settle(cut: int, hits: list[Hit]) -> int:
    """Move ``cut`` back before every match that crosses it."""
    moved = True
    while moved:
        moved = False
        for hit in hits:
            if hit[2] < cut < hit[3]:
                cut = hit[2]
                moved = True
    return cut


class _Engine:
    """The compiled form of a Redactor's rules and allowlist."""

    def __init__(self, rules: tuple[RedactionRule, ...], allowlist: tuple[str, ...]) -> None:
        self.rules = tuple(compile_rule(rule, i) for i, rule in enumerate(rules))
        self._allow = tuple(re.compile(entry) for entry in allowlist)
        # Also a cursor move's escape sequence before a token's start (``ESC [ 1 2 C``): its final
        # letter does not put the start inside a word (``cut_short.in_word``).
        self.context_chars = max(ESCAPE_SEEN, max((r.lookbehind for r in self.rules), default=0)) + 1
        partial_cs: set[str] = set()
        partial_ci: set[str] = set()
        for r in self.rules:
            # A case-sensitive rule's starts spelt out too (``dop_v1_`` beside ``do``): a text
            # without any of them whole is quiet, and its tail may be one cut short.
            for lit in (*r.literals, *r.scan_literals) if not r.ci else r.literals:
                (partial_ci if r.ci else partial_cs).update(lit[:k] for k in range(1, len(lit)))
        self._partial_cs = frozenset(partial_cs)
        self._partial_ci = frozenset(partial_ci)
        self._max_partial = max(map(len, partial_cs | partial_ci), default=0)
        self._max_literal = max((len(lit) for r in self.rules for lit in r.literals), default=0)
        self._partial_last = frozenset(p[-1] for p in partial_cs) | frozenset(
            ch for p in partial_ci for ch in (p[-1], p[-1].upper())
        )
        # The same partials as tries of their characters read backwards (a key "" marks a whole
        # partial), walked from the end of an ASCII text: a few steps instead of a set lookup
        # per length up to the longest partial (43 characters for the built-in rules).
        self._partial_tries = (_reversed_trie(partial_cs), _reversed_trie(partial_ci))
        # Rules without a starting literal: a text rules one out when it lacks all its needles
        # (as ``hits`` checks); a rule without needles keeps every text from being quiet.
        self._literalless = tuple(r for r in self.rules if not r.literals)
        self._can_be_quiet = all(r.needles for r in self._literalless)
        self._last_quiet: tuple[str, bool] = ("", True)  # the last text _quiet judged (feed asks twice)
        self._scan_rules = tuple(r for r in self.rules if r.literals and not r.ci)  # the automaton's
        self._ci_literal_rules = tuple(r for r in self.rules if r.literals and r.ci)
        ci_literals = sorted({lit for r in self._ci_literal_rules for lit in r.literals})
        self._ci_literals = tuple(ci_literals)
        self._ci_entries = tuple(tuple(r for r in self._ci_literal_rules if lit in r.literals) for lit in ci_literals)
        self._ci_scan: tuple[Any, Any] | None = None  # automata of the lower-case keywords, on first use
        self._ascii_keywords = all(lit.isascii() for r in self.rules for lit in (*r.literals, *r.scan_literals))
        self._last_ci: tuple[str, list[tuple[int, int, int]] | None] = ("", [])
        ci = sorted({lit for r in self.rules if r.ci for lit in r.literals}, key=len, reverse=True)
        # For the quiet check: the case-sensitive keywords (the automaton), the lower-case ones
        # (the same lower-case scan hits uses), the needles of the rules without a starting
        # keyword looked up with ``in``; all in C. A case-insensitive needle (a user's rule)
        # needs one regex instead: the witness (an alternation of case-insensitive literals
        # tries each at every position: ~5 µs for a few characters).
        witnesses = ["(?i:" + "|".join(map(re.escape, ci)) + ")"] if ci else []
        for r in self._literalless:
            witnesses += [f"(?i:{re.escape(needle)})" if r.ci else re.escape(needle) for needle in r.needles]
        self._quiet_witness = LazyPattern("|".join(witnesses)) if witnesses else None
        self._cs_needles = tuple(n for r in self._literalless if not r.ci for n in r.needles)
        self._ci_needles = tuple(n for r in self._literalless if r.ci for n in r.needles)
        self._automaton: tuple[tuple[Any, Any], tuple[tuple[CompiledRule, ...], ...]] | None = None  # on first scan
        self._automaton_lock = threading.Lock()
        self._hold_entries: tuple[tuple[CompiledRule, ...], ...] = ()  # per keyword of the automaton: the rules it may start
        self._last_found: tuple[str, list[tuple[int, int, int]]] = ("", [])  # the automaton's last answer
        self._last_needles: tuple[str | None, dict[str, int]] = (None, {})  # the needles' first places in the last text
        self._last_lower: tuple[str, str | None] = ("", "")  # the needles' first places in the last text
        self._lookbehind = max((r.lookbehind for r in self.rules), default=0)
        self._junctions: tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]] | None = None  # on first screen text
        self._screen_starts: frozenset[str] = frozenset()  # every start of every literal, lower-cased

    def _quiet(self, text: str) -> bool:
        """Return True when a short text holds no rule's starting keyword and no needle of a rule
        without one, so nothing can match in it.

        The common case of typed keys and their echo: two automaton passes (the case-sensitive
        keywords; the lower-case ones) and a few ``in`` lookups, all in C. The last answer is
        kept (``hits`` and ``hold_start`` ask about the same text).
        """
        if len(text) > _SMALL or not self._can_be_quiet:
            return False
        last = self._last_quiet  # one tuple, read once: the engine is shared between threads
        if last[0] is text:
            return last[1]
        quiet = self._judge_quiet(text)
        self._last_quiet = (text, quiet)
        return quiet

    def _judge_quiet(self, text: str) -> bool:
        if self._found(text):  # kept: hits and hold_start of a text that is not quiet use it
            return False
        if any(needle in text for needle in self._cs_needles):
            return False
        if not self._ci_needles:
            found = self._ci_found(text)  # the lower-case keywords, in C (kept for hits and hold_start too)
            if found is not None:
                return not found
        witness = self._quiet_witness.get() if self._quiet_witness is not None else None
        return witness is None or witness.search(text) is None

    def _literal_matches(self, text: str, *, overlapping: bool) -> list[tuple[int, int, int]]:
        """Return (literal index, start, end) of the case-sensitive literals in ``text``.

        ASCII text (an O(1) check in CPython) is scanned as bytes, where indices are the
        same: 1.5-3x faster than letting the automaton map a str's indices itself.
        """
        automata, entries = self._scan_automaton()
        if not entries:
            return []
        return _automaton_matches(automata, text, overlapping=overlapping, ascii_keywords=self._ascii_keywords)

    def lower(self, text: str) -> str | None:
        """Return ``text`` lower-cased, or None when that would move characters' indices."""
        low = text.lower()
        return low if len(low) == len(text) else None

    def hits(self, text: str) -> list[Hit]:
        """Return every match of every rule in ``text`` (overlaps included).

        Case-sensitive rules with starting keywords are found in one pass of the automaton,
        then each rule's own regex at the positions of its keywords; case-insensitive ones at
        the keywords ``str.find`` finds in the lower-cased text; the others are searched in a
        text that holds one of their needles (or in every text, for a rule without any).
        """
        hits: list[Hit] = []
        if self._quiet(text):
            return hits
        if self._ci_literal_rules:
            self._scan_ci(text, hits)
        firsts = self._needle_firsts(text) if self._literalless else {}
        for r in self._literalless:
            if r.needles and all(firsts[needle] == -1 for needle in r.needles):
                continue  # a rule without a starting literal, and its needles are absent
            for m in r.rx.finditer(text):
                add_hit(hits, r, m)
        if self._scan_rules:
            self._scan_literals(text, hits)
        return hits

    def _scan_literals(self, text: str, hits: list[Hit]) -> None:
        """Find the matches of the case-sensitive rules with starting keywords at their keywords.

        One pass of an Aho-Corasick automaton over the keywords of every such rule (overlapping
        matches, character indices), then each rule's regex at its keyword's positions; a
        rule looks at its keyword again only after its last match. (One regex alternation of
        ~150 literals tries each at every position: 3 MB/s of base64; ``str.find`` per literal
        scans the text ~60 times: ~100 MB/s.)
        """
        entries = self._scan_automaton()[1]
        resume: dict[tuple[int, int], int] = {}
        for index, at, _end in self._found(text):
            for r in entries[index]:
                key = (index, r.priority)
                if at < resume.get(key, 0):
                    continue
                m = r.rx.match(text, at)
                if m is not None:
                    add_hit(hits, r, m)
                    resume[key] = max(m.end(), at + 1)
                elif not r.has_secret:
                    cut_short(hits, r, text, at, _end)

    def _scan_ci(self, text: str, hits: list[Hit]) -> None:
        """Find the matches of the case-insensitive rules with starting keywords at their
        keywords in the lower-cased text (every match of each, where lower-casing moves characters)."""
        rules = [r for r in self._ci_literal_rules if not r.requires or any(ch in text for ch in r.requires)]
        if not rules:
            return  # each lacks every character its matches need one of (most escape-heavy output)
        found = self._ci_found(text)
        if found is None:
            for r in rules:
                for whole in r.rx.finditer(text):
                    add_hit(hits, r, whole)
            return
        wanted = {r.priority for r in rules}
        resume: dict[tuple[int, int], int] = {}
        for index, at, _end in found:
            for r in self._ci_entries[index]:
                key = (index, r.priority)
                if r.priority not in wanted or at < resume.get(key, 0):
                    continue
                m = r.rx.match(text, at)
                if m is not None:
                    add_hit(hits, r, m)
                    resume[key] = max(m.end(), at + 1)
                elif not r.has_secret:
                    cut_short(hits, r, text, at, _end)

    def _ci_found(self, text: str) -> list[tuple[int, int, int]] | None:
        """Return the overlapping matches of the case-insensitive keywords in ``text`` lower-cased,
        or None when lower-casing moves characters (the last answer is kept).

        The keywords are ASCII, and no character beyond ASCII lower-cases to ASCII but the
        Kelvin sign (and the dotted capital I, which moves characters): the UTF-8 bytes
        lower-cased as ASCII find the same places as ``str.lower`` would, several times faster.
        """
        last = self._last_ci
        if last[0] is text:
            return last[1]
        found: list[tuple[int, int, int]] | None = None
        automata = self._ci_automata()
        if text.isascii():
            found = automata[0].find_matches_as_indexes(text.encode("ascii").lower(), overlapping=True)
        elif "\u0130" not in text and self._ascii_keywords:
            raw = text.encode("utf-8", "surrogatepass")
            if "\u212a" in text:  # the Kelvin sign lower-cases to "k"
                raw = text.lower().encode("utf-8", "surrogatepass")
            found = _char_indices(raw, automata[0].find_matches_as_indexes(raw.lower(), overlapping=True))
        else:
            low = self.lower(text)
            found = None if low is None else _automaton_matches(automata, low, overlapping=True, ascii_keywords=False)
        self._last_ci = (text, found)
        return found

    def _ci_automata(self) -> tuple[Any, Any]:
        """Return the automata (bytes, str) of the lower-case keywords, built on first use."""
        automata = self._ci_scan
        if automata is None:
            import ahocorasick_rs  # loaded already: the literal scan's

            dfa = ahocorasick_rs.Implementation.DFA
            automata = self._ci_scan = (
                ahocorasick_rs.BytesAhoCorasick([lit.encode() for lit in self._ci_literals], implementation=dfa),
                ahocorasick_rs.AhoCorasick(list(self._ci_literals), implementation=dfa),
            )
        return automata

    def _needle_firsts(self, text: str) -> dict[str, int]:
        """Return where each needle first occurs in ``text`` (-1: not there), lower-case
        needles in the lower-cased text; found once a text (``hits`` and ``hold_start`` ask)."""
        last = self._last_needles
        if last[0] is text:
            return last[1]
        firsts = {needle: text.find(needle) for needle in self._cs_needles}
        if self._ci_needles:
            low = text.lower()
            firsts.update((needle, low.find(needle)) for needle in self._ci_needles)
        self._last_needles = (text, firsts)
        return firsts

    def _found(self, text: str) -> list[tuple[int, int, int]]:
        """Return the automaton's overlapping keyword matches in ``text`` (the last answer is
        kept: ``hits`` and ``hold_start`` ask about the same text)."""
        last = self._last_found  # one tuple, read once: the engine is shared between threads
        if last[0] is text:
            return last[1]
        found = self._literal_matches(text, overlapping=True)
        self._last_found = (text, found)
        return found

    def _scan_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[CompiledRule, ...], ...]]:
        """Return the automata (for bytes, for str) of every case-sensitive literal and, per literal, its rules."""
        built = self._automaton
        if built is None:
            with self._automaton_lock:  # the writer thread and the run's metadata may both ask first
                built = self._build_automaton()
        return built

    def _build_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[CompiledRule, ...], ...]]:
        if self._automaton is None:
            import ahocorasick_rs  # a compiled module: loaded with the engine, on the writer thread

            by_literal: dict[str, list[CompiledRule]] = {}
            holding: dict[str, list[CompiledRule]] = {}  # a keyword's shared start too ("pat-" of "pat-na")
            for r in self.rules:
                if r.literals and not r.ci:
                    for lit in r.scan_literals:
                        by_literal.setdefault(lit, []).append(r)
                    for lit in {*r.literals, *r.scan_literals}:
                        holding.setdefault(lit, []).append(r)
            literals = list(holding)
            dfa = ahocorasick_rs.Implementation.DFA
            automata = (
                ahocorasick_rs.BytesAhoCorasick([lit.encode() for lit in literals], implementation=dfa),
                ahocorasick_rs.AhoCorasick(literals, implementation=dfa),
            ) if literals else (None, None)
            self._hold_entries = tuple(tuple(holding[lit]) for lit in literals)  # first: _automaton says it is built
            self._automaton = (automata, tuple(tuple(by_literal.get(lit, ())) for lit in literals))
        return self._automaton

    def screen_hits(self, text: str, first: int = 0) -> list[Hit]:
        """Return the matches that only the screen shows: on the text with its escape sequences
        removed and backspaces applied (``_ScreenView``), mapped back to ``text``'s indices, each
        with an escape sequence or backspace inside its match (the whole span is its secret's).

        The view is built only around the places where a secret could cross one: a rule's
        literal with an escape sequence or backspace after it within the rule's reach, or a
        literal cut by one (``gh`` ESC[31m ``p_``, found as ``gh`` + ESC, or as an SGR's ``m``
        + ``hp_``). Hits starting before ``first`` are left out. Text without ESC, BS or DEL
        has none (the caller checks).
        """
        hits: list[Hit] = []
        for start, end in self._screen_regions(text, first):
            view = _ScreenView(text[start:end])
            if not view.changed:
                continue
            for vs, ve, vms, vme, priority, name in self.hits(view.text):
                ms, me = view.span(vms, vme)
                if me - ms == vme - vms:
                    continue  # nothing removed inside it: the scan of the text itself has it
                ss, se = view.span(vs, ve)
                if start + ms >= first:
                    hits.append((start + ss, start + se, start + ms, start + me, priority, name))
        return hits

    def screen_hold_start(self, text: str, first: int, *, escapes: bool = True, partials: bool = True) -> int:
        """Return where the tail that could still grow into a secret on the screen begins
        (``hold_start`` of the tail's ``_ScreenView``, mapped back; len = none).

        escapes: an escape sequence cut at the end is held whole (False: only what the text
        before it may be starting is). partials: as ``hold_start``'s.
        """
        n = len(text)
        last = max(text.rfind(ch, max(first, n - _SCREEN_TAIL)) for ch in _SCREEN_CONTROLS)
        if last == -1:
            return n
        cut_escape = _cut_escape_start(text, max(first, n - _SCREEN_TAIL))
        if cut_escape != -1:  # the rest of an escape sequence is still to come: hold it whole
            if cut_escape == first:
                return first if escapes else n
            head = text[:cut_escape]  # and what the text before it may be starting
            held = min(self.hold_start(head, first, partials=partials),
                       self.screen_hold_start(head, first, escapes=escapes, partials=partials))
            return min(cut_escape, held) if escapes else (held if held < cut_escape else n)
        run = _escapes_ending_at(text, n)
        moved = run != -1 and any(m.group()[-1] not in "mK" for m in _escape_rx().finditer(text, run))
        # A possible secret crossing the last ESC/BS/DEL starts at most a window before it.
        start = max(first, last - _SCREEN_BACK)
        view = _ScreenView(text[start:])
        if start > max(first, n - _SCREEN_TAIL) and len(view.text) < _SCREEN_BACK // _SCREEN_SPREAD:
            # Dense with escape sequences (a TUI's input box draws each key between its own mode
            # and colour sequences, 30 and more a character): look back over the whole tail, so a
            # token typed there is still held from its first character.
            start = max(first, n - _SCREEN_TAIL)
            view = _ScreenView(text[start:])
        cut = self.hold_start(view.text, 0, partials=partials)
        if 0 < len(view.text) - view.rewritable <= _REWRITE:  # a backspace may come back over what follows it
            before = self.hold_start(view.text[: view.rewritable], 0, partials=partials)
            if before < view.rewritable:
                cut = min(cut, before)
        if cut >= len(view.text):
            return n
        if moved and not any(ch.isalnum() for ch in view.text[cut:]):
            # The cursor moved on after punctuation that could start a literal (vi's "-- INSERT --"
            # then a cursor move): the next text most likely lands elsewhere; do not hold a
            # status line back until the next output.
            return n
        return start + view.first_raw(cut)

    def _screen_regions(self, text: str, first: int) -> list[tuple[int, int]]:
        """Return the merged regions of ``text`` whose screen view may hold a crossing match.

        Each place the junction automaton finds is checked before it costs a view: a literal
        counts when a partial match of its rule still holds up to the next ESC/BS/DEL and one
        character past it; a literal's start cut by an escape sequence when the character after
        the sequences continues some literal.
        """
        low = self.lower(text)
        if low is None:
            return [(first, len(text))]  # lower-casing moves characters: look at all of it
        automata, kinds = self._junction_automaton()
        if automata[0] is None:
            return []
        found = (automata[0].find_matches_as_indexes(low.encode("ascii"), overlapping=True) if low.isascii()
                 else automata[1].find_matches_as_indexes(low, overlapping=True))
        n = len(text)
        starts = self._screen_starts
        control = _control_rx()
        backspaces = "\x08" in text or "\x7f" in text
        regions: list[tuple[int, int]] = []
        for index, at, end in found:
            kind, reach, extra = kinds[index]
            if regions and at < regions[-1][1] - reach // 2:
                continue  # well inside a region already taken
            if kind == _LITERAL:
                literal, priorities = extra
                if literal is not None and not text.startswith(literal, at):
                    continue  # a case-sensitive literal in other letters
                # The first ESC/BS/DEL after it: no other is before it, so it is within the window.
                limit = at + reach // _SCREEN_SPREAD
                ctrl = text.find("\x1b", end, limit)
                if backspaces:
                    found_ctrl = control.search(text, end, limit)
                    ctrl = -1 if found_ctrl is None else found_ctrl.start()
                if ctrl == -1:
                    continue  # nothing to cross
                if not self._may_cross(text, at, ctrl, priorities):
                    continue
            elif kind == _JUNCTION:  # a literal's start, then ESC/BS/DEL at end - 1
                after = _after_controls(text, end - 1)
                if after < n and low[at : end - 1] + low[after] not in starts:
                    continue
            elif kind == _AFTER:  # an escape's final and the rest of a literal: its start before the escapes
                run = _escapes_ending_at(text, at + 1)
                k = len(extra) if extra else 1
                if run < k or (extra and low[run - k : run] != extra):
                    continue
                at = run - k
            elif kind == _PAIR:  # a word's first two characters, then an escape sequence
                after = _after_controls(text, end - 1)
                if after < n and low[end - 3 : end - 1] + low[after] not in starts:
                    continue
                at = end - 3
            else:  # _ALONE: a word's first character, then an escape sequence
                if text[at] in _FINALS and _escapes_ending_at(text, at + 1) == -1 and "\x1b" in text[max(0, at - 64) : at]:
                    continue  # a letter of the text before it, not an escape's end (unless that is not here)
                after = _after_controls(text, end - 1)
                if after < n and low[end - 2] + low[after] not in starts:
                    continue
                at = end - 2
            lo = max(first - self._lookbehind, at - self._lookbehind - 1, 0)
            hi = min(n, at + reach)
            if regions and lo <= regions[-1][1]:
                regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
            else:
                regions.append((lo, hi))
        return regions

    def _may_cross(self, text: str, at: int, ctrl: int, priorities: tuple[int, ...]) -> bool:
        """Return whether a match of one of the rules could start at ``at`` and go on past the
        ESC/BS/DEL at ``ctrl`` (a partial match holds up to it and one shown character on)."""
        after = _after_controls(text, ctrl)
        probe = text[at:ctrl] + text[after : after + 1]
        for priority in priorities:
            r = self.rules[priority]
            if text[ctrl] != "\x1b" or r.may_start(probe, 0):
                return True
        return False

    def _junction_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]]:
        """Return the automata (bytes, str) of the lower-cased literals and their cut forms,
        and per pattern (kind, reach in characters of raw text, what its check needs)."""
        built = self._junctions
        if built is None:
            with self._automaton_lock:
                built = self._junctions
                if built is None:
                    built = self._junctions = self._build_junctions()
        return built

    def _build_junctions(self) -> tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]]:
        import ahocorasick_rs

        patterns: dict[str, tuple[int, int, Any]] = {}
        starts: set[str] = set()

        def add(pattern: str, kind: int, reach: int, extra: Any = None) -> None:
            old = patterns.get(pattern)
            if old is None:
                patterns[pattern] = (kind, reach, extra)
            elif old[0] == kind == _LITERAL:
                literal = old[2][0] if old[2][0] == extra[0] else None  # differing cases: check none
                priorities = tuple(sorted({*old[2][1], *extra[1]}))
                patterns[pattern] = (kind, max(reach, old[1]), (literal, priorities))
            elif old[0] == kind:
                patterns[pattern] = (kind, max(reach, old[1]), old[2] if old[2] == extra else None)

        for r in self.rules:
            reach = _SCREEN_WINDOW * _SCREEN_SPREAD + 256
            for lit in (r.scan_literals if not r.ci else r.literals) or r.needles:
                low = lit.lower()
                if len(low) != len(lit):
                    continue
                add(low, _LITERAL, reach, (None if r.ci else lit, (r.priority,)))
                starts.update(low[:k] for k in range(1, len(low) + 1))
                for k in range(1, len(low)):
                    for sep in _SCREEN_CONTROLS:
                        # Two characters then ESC end many coloured words ("main.py" ESC): those
                        # literals cut after 1 or 2 characters are found from the other side.
                        if k >= 3 or sep != "\x1b":
                            add(low[:k] + sep, _JUNCTION, reach)
                    if k <= 2 and len(low) - k >= 2:
                        for final in _COMMON_FINALS:
                            add(final + low[k:], _AFTER, reach + 64, low[:k])
                if low[0].isalnum():
                    for before in (*_COMMON_FINALS, *_WORD_STARTS):
                        add(before + low[0] + "\x1b", _ALONE, reach + 64)
                        if len(low) >= 3:
                            add(before + low[:2] + "\x1b", _PAIR, reach + 64)
        patterns = {k: v if v[0] != _AFTER or v[2] is not None else (v[0], v[1], "") for k, v in patterns.items()}
        self._screen_starts = frozenset(starts)
        keys = list(patterns)
        dfa = ahocorasick_rs.Implementation.DFA
        automata = (
            ahocorasick_rs.BytesAhoCorasick([k.encode() for k in keys], implementation=dfa),
            ahocorasick_rs.AhoCorasick(keys, implementation=dfa),
        ) if keys else (None, None)
        return automata, tuple(patterns[k] for k in keys)

    def hold_start(self, text: str, first: int, *, partials: bool = True) -> int:
        """Return where the tail that could still grow into a secret begins (len = none).

        Positions before ``first`` (context already written) are not considered, nor those
        more than ``_HOLD_MAX`` from the end. partials: a tail that is a rule's starting
        keyword cut short (``gh`` of ``ghp_``) counts; False: only a tail from a whole
        starting keyword on does (and, for rules without starting keywords, any possible start).
        """
        n = len(text)
        best = n
        if partials and n > first and text[-1] in self._partial_last:  # a keyword cut short
            best = _partial_start(text, max(first, n - self._max_partial), self._partial_tries)
        lo = max(first, n - _HOLD_MAX)
        if not self._quiet(text):
            # No keyword in a quiet text, so no hold but a keyword cut short (just found).
            best = self._keyword_hold(text, lo, best)
        return self._literalless_hold(text, lo, best) if self._literalless else best

    def _keyword_hold(self, text: str, lo: int, best: int) -> int:
        """Return the earliest keyword position from ``lo`` on where a match of its rule could
        be growing up to the end of ``text`` (else ``best``)."""
        if self._scan_rules:
            self._scan_automaton()
            entries = self._hold_entries
            for index, at, _end in self._found(text):
                if lo <= at < best and any(r.may_start(text, at) or typo_growing(r, text, at, _end) for r in entries[index]):
                    best = at
        if not self._ci_literal_rules:
            return best
        found = self._ci_found(text)
        if found is None:  # lower-casing moves characters: search them as rules without keywords
            for r in self._ci_literal_rules:
                best = earliest_partial(r, text, lo, best)
            return best
        for index, at, _end in found:
            if lo <= at < best and any(r.may_start(text, at) for r in self._ci_entries[index]):
                best = at
        return best

    def _literalless_hold(self, text: str, lo: int, best: int) -> int:
        """Return the earliest start from ``lo`` on of a possible match of a rule without a
        starting keyword that reaches the end of ``text`` (else ``best``)."""
        n = len(text)
        firsts = self._needle_firsts(text)
        for r in self._literalless:
            start = lo
            if r.needles:  # a match holds a needle within its first characters, or is cut before it
                start = n - r.reach
                for needle in r.needles:
                    at = firsts[needle]
                    if lo > at != -1:  # before the context: look again from it
                        at = (text.lower() if r.ci else text).find(needle, lo)
                    if at != -1 and at - r.within < start:
                        start = at - r.within
                if start < lo:
                    start = lo
            if start < best:
                best = earliest_partial(r, text, start, best)
        return best

    def still_growing(self, text: str, start: int) -> CompiledRule | None:
        """Return the first rule whose match could start at ``start`` and go on past the end
        of ``text`` although it is longer than any hold (None: no such rule)."""
        if len(text) - start <= _HOLD_MAX:
            return None
        head = text[start : start + self._max_literal]
        for r in self.rules:
            if r.literals and not (head.lower() if r.ci else head).startswith(r.literals):
                continue
            if r.may_start(text, start):
                return r
        return None

    def apply(self, text: str, hits: list[Hit], base: int, cut: int) -> str:
        """Return ``text[base:cut]`` with the secrets of the hits inside it replaced by bare markers."""
        return self.draw(text, self.spans(text, hits, base, cut), base, cut)[0]

    def spans(self, text: str, hits: list[Hit], base: int, cut: int) -> list[Span]:
        """Return the secrets of the hits that end in ``text[base:cut]``, overlapping ones
        merged under the name of the highest priority, in order; allowed ones left out."""
        spans: list[Span] = []
        for start, end, _ms, _me, priority, name in sorted(hits):
            if end <= base or end > cut or self._allowed(text[start:end]):
                continue
            # A secret begun in text released before it was decided (``StreamRedactor.release``):
            # its part already written stays; the rest becomes the marker.
            start = max(start, base)
            if spans and start < spans[-1][1]:
                last_start, last_end, last_priority, last_name = spans[-1]
                if priority < last_priority:
                    last_priority, last_name = priority, name
                spans[-1] = (last_start, max(last_end, end), last_priority, last_name)
            else:
                spans.append((start, end, priority, name))
        return spans

    @staticmethod
    def draw(text: str, spans: list[Span], base: int, cut: int, *, keep_columns: bool = False) -> tuple[str, int]:
        """Return ``text[base:cut]`` with each span replaced by its marker, and the columns a
        cursor-back still owes to the next text written (0 unless ``keep_columns``).

        keep_columns: a one-line secret's marker keeps the secret's columns on the screen
        where it can without text landing inside it (``_fit_marker``).
        """
        out: list[str] = []
        pos = base
        owed = 0
        for k, (start, end, priority, name) in enumerate(spans):
            out.append(text[pos:start])
            marker = MARKER.format(name=name)
            shown = _colour_rx().sub("", text[start:end]) if keep_columns and priority >= PIECE else ""  # its colours drawn with it
            if shown and shown.isascii() and shown.isprintable():
                out.append(piece_of_marker(marker, priority, len(shown)))
                pos, owed = end, 0
            elif keep_columns:
                stop = spans[k + 1][0] if k + 1 < len(spans) else cut
                drawn, owed, pos = _fit_marker(marker, text, start, end, stop)
                out.append(drawn)
            else:
                out.append(marker)
                pos = end
        out.append(text[pos:cut])
        return "".join(out), owed

    def _allowed(self, secret: str) -> bool:
        return any(rx.fullmatch(secret) is not None for rx in self._allow)



_Trie = dict[str, "_Trie"]


def _reversed_trie(words: Iterable[str]) -> _Trie:
    """Return a trie of ``words`` read backwards; the key "" marks the end of a word."""
    root: _Trie = {}
    for word in words:
        node = root
        for ch in reversed(word):
            node = node.setdefault(ch, {})
        node[""] = {}
    return root


def _partial_start(text: str, lo: int, tries: tuple[_Trie, _Trie]) -> int:
    """Return where the longest tail of ``text`` from ``lo`` on that the first trie holds, or
    the second holds lower-cased character by character, begins (``len(text)``: none)."""
    n = len(text)
    best = n
    for trie, fold in zip(tries, (False, True)):
        node = trie
        i = n - 1
        while i >= lo:
            node = node.get(text[i].lower() if fold else text[i])  # type: ignore[assignment]
            if node is None:
                break
            if "" in node and i < best:
                best = i
            i -= 1
    return best


def _automaton_matches(automata: tuple[Any, Any], text: str, *, overlapping: bool, ascii_keywords: bool) -> list[tuple[int, int, int]]:
    """Return (keyword index, start, end) of the keywords the automata (bytes, str) find in ``text``.

    Text is scanned as UTF-8 bytes: for ASCII text (an O(1) check in CPython) the indices
    are the same; otherwise the few matches' byte offsets are turned into character indices
    (ASCII keywords: as long in bytes as in characters). Either is 1.5-3x faster than
    letting the automaton map a str's indices itself, which is left for keywords beyond ASCII.
    """
    if text.isascii():
        return automata[0].find_matches_as_indexes(text.encode("ascii"), overlapping=overlapping)  # type: ignore[no-any-return]
    if ascii_keywords:
        raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate (surrogateescape) stays one character
        return _char_indices(raw, automata[0].find_matches_as_indexes(raw, overlapping=overlapping))
    try:
        return automata[1].find_matches_as_indexes(text, overlapping=overlapping)  # type: ignore[no-any-return]
    except UnicodeEncodeError:  # a lone surrogate (bytes read with surrogateescape): '?' in its place, same indices
        safe = text.encode("utf-8", "replace").decode("utf-8")
        return automata[1].find_matches_as_indexes(safe, overlapping=overlapping)  # type: ignore[no-any-return]


def _char_indices(raw: bytes, found: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Return the automaton's matches of ASCII keywords in UTF-8 ``raw`` with character indices."""
    if not found:
        return found
    out = []
    byte = char = 0
    for index, start, end in sorted(found, key=lambda f: f[1]):
        char += len(raw[byte:start].decode("utf-8", "surrogatepass"))
        byte = start
        out.append((index, char, char + end - start))
    return out
