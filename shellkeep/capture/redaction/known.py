"""Own the secrets a session has redacted so far: the same secret gets the same name, wherever it appears.

A session's streams (typed input, output drawn on the screen) share one ``names`` dict from
secret text to the name of the rule that first redacted it. Once a secret is known, a rule
that finds the same text under another name (``password = "x"`` typed, ``token: x`` shown)
gives it the first name, and the text shown bare later (``echo $DB_PASSWORD`` printing the
value typed in ``DB_PASSWORD=...``) is redacted under that name too, also when it is split
across two reads. Only values that look like secrets are kept (``_learnable``), at most
``_KNOWN_MAX`` of them, in memory only.
"""

from __future__ import annotations

from shellkeep.capture.redaction.compiled import CUT_SHORT, Hit, Span

_KNOWN_MAX = 256
"""The most secrets a session keeps: each costs a ``str.find`` per read."""

_MIN_LEN, _MAX_LEN = 8, 256
"""The lengths of a secret worth keeping: a shorter value is too likely plain text."""


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

    __slots__ = ("_names",)

    def __init__(self, names: dict[str, str]) -> None:
        """Share ``names`` (secret text -> rule name) with the session's other streams."""
        self._names = names

    def __bool__(self) -> bool:
        return bool(self._names)

    def learn(self, text: str, spans: list[Span]) -> None:
        """Keep the secrets of ``spans`` in ``text`` with their names (the first name stays)."""
        names = self._names
        for start, end, priority, name in spans:
            if len(names) >= _KNOWN_MAX:
                return
            if priority >= CUT_SHORT:
                continue  # a token's start cut short: a piece of a secret, not one
            secret = text[start:end]
            if secret not in names and _learnable(secret):
                names[secret] = name

    def named(self, text: str, lo: int, base: int, hits: list[Hit], priority: int) -> list[Hit]:
        """Return ``hits`` with a known secret's name on each hit of exactly that text, plus
        the known secrets found bare in ``text`` from ``lo`` (ending after ``base``) that no
        hit covers, at ``priority`` (the lowest: a longer token holding one keeps its name)."""
        names = self._names
        out = [(h[0], h[1], h[2], h[3], h[4], names.get(text[h[0] : h[1]], h[5])) for h in hits]
        covered = [(h[0], h[1]) for h in hits]
        for secret, name in names.items():
            at = text.find(secret, lo)
            while at != -1:
                end = at + len(secret)
                if end > base and not any(s <= at and end <= e for s, e in covered):
                    out.append((at, end, at, end, priority, name))
                at = text.find(secret, at + 1)
        return out

    def hold_start(self, text: str, start: int) -> int:
        """Return where the tail of ``text`` from ``start`` on that begins a known secret (but
        is not all of it) starts: it must be held until it is decided (``len(text)``: none)."""
        n = len(text)
        best = n
        for secret in self._names:
            first = secret[0]
            at = text.find(first, max(start, n - len(secret) + 1))
            while at != -1 and at < best:
                if secret.startswith(text[at:]):
                    best = at
                    break
                at = text.find(first, at + 1)
        return best
