#!/usr/bin/env python3
"""Compare shellkeep's redaction rules with gitleaks' published rule set; print what is missing.

Usage: .venv/bin/python scripts/rules-vs-gitleaks.py GITLEAKS_TOML [--samples N] [--json]

GITLEAKS_TOML is gitleaks' config/gitleaks.toml (its default rule set), from a clone or a
fetched copy (``git -C gitleaks show HEAD:config/gitleaks.toml > gitleaks.toml``), or ``-``
for standard input. For each gitleaks rule with a regex, fake samples are generated from
that regex (exrex; the Go RE2 syntax translated where Python's differs), kept when the regex
matches them and their secret reaches the rule's entropy, and fed inside a line of text to
shellkeep's built-in ``Redactor``. A rule is covered when its secret is gone from every
redacted sample; partly covered when from some. The rules not fully covered are printed
with their keywords, so a new vendor in gitleaks shows up here to be added to
shellkeep/capture/redaction/rules.py (from the vendor's published format, never guessed).
Exit status: 0 when every rule is covered, 1 when some are not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib  # type: ignore[no-redef]
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_TRIES = 40
"""Samples drawn per rule to find the ones its own regex and entropy accept."""


@dataclass(frozen=True)
class Coverage:
    """One gitleaks rule: its id, keywords, samples tried, and how many shellkeep redacted."""

    rule_id: str
    keywords: tuple[str, ...]
    samples: int
    redacted: int
    names: tuple[str, ...]  # the shellkeep rules whose markers replaced it


def _python_regex(go_regex: str) -> str:
    """Return a Go RE2 pattern in Python's syntax (the few constructs gitleaks uses that differ)."""
    if "(?i)" in go_regex[1:]:  # RE2 takes a flag group anywhere; Python only at the start
        go_regex = "(?i)" + go_regex.replace("(?i)", "")
    out = go_regex.replace(r"\z", r"\Z").replace("[[:alnum:]]", "[A-Za-z0-9]").replace("[[:alpha:]]", "[A-Za-z]")
    return out.replace("[:alnum:]", "A-Za-z0-9").replace("[:alpha:]", "A-Za-z").replace("[:digit:]", "0-9")


_TEMPLATE = (
    (r"(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)", r"(?:=|: ?)"),
    (r"[\w.-]{0,50}?", r"(?:[A-Za-z0-9]{1,8}_)?"),
    (r"(?:[ \t\w.-]{0,20})", r"(?:_[A-Za-z0-9]{1,8}){0,2}"),
    ("[\\s'\"]{0,3}", "[\"']?"),
    ("[\\x60'\"\\s=]{0,5}", "[\"']?"),
)
"""The pieces of gitleaks' template for a vendor's keyword rule (its name, the separator, the
quotes) as samples draw them: the usual forms (``MY_VENDOR_API_KEY = "value"``), not any text
the regex allows (``x.-vendor- \t||\x0b`value``)."""


def _sampling_regex(pattern: str) -> str:
    r"""Return ``pattern`` (Python syntax) for drawing realistic samples: ``\w`` and ``\s`` as
    RE2 reads them (ASCII; a space for ``\s``), an unescaped ``.`` as a dot (``hooks.slack.com``),
    and the pieces of the keyword rules' template in their usual forms (``_TEMPLATE``)."""
    for piece, usual in _TEMPLATE:
        pattern = pattern.replace(piece, usual)
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "w":
                out.append("A-Za-z0-9_" if in_class else "[A-Za-z0-9_]")
            elif nxt == "s":
                out.append(" " if in_class else "[ ]")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class and pattern[i - 1] not in "[^":
            in_class = False
        elif ch == "." and not in_class:
            ch = "\\."
        out.append(ch)
        i += 1
    return "".join(out)


def _entropy(text: str) -> float:
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in Counter(text).values()) if n else 0.0


def _samples(rule: dict[str, object], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """Return up to ``count`` (sample, secret) pairs the rule's own regex and entropy accept."""
    import exrex

    pattern = _python_regex(str(rule["regex"]))
    try:
        rx = re.compile(pattern)
    except re.error:
        return []
    drawn = _sampling_regex(pattern)
    group = int(rule.get("secretGroup", 1 if rx.groups else 0))  # type: ignore[call-overload]
    entropy = float(rule.get("entropy", 0.0))  # type: ignore[arg-type]
    out: list[tuple[str, str]] = []
    random.seed(rng.random())  # exrex draws from the random module
    for _ in range(_TRIES):
        if len(out) >= count:
            break
        sample = exrex.getone(drawn, 8)
        m = rx.search(sample)
        if m is None:
            continue
        secret = m.group(group) if group <= rx.groups and m.group(group) else m.group(0)
        if _entropy(secret) >= entropy and "\n" not in sample:
            out.append((sample, secret))
    return out


def coverage(rules: list[dict[str, object]], count: int, seed: int = 26) -> list[Coverage]:
    """Return the coverage of each gitleaks rule that has a regex, in the file's order."""
    from shellkeep.capture.redaction import Redactor

    redactor = Redactor()
    rng = random.Random(seed)
    result = []
    for rule in rules:
        if "regex" not in rule:
            continue  # a rule on file paths only (pkcs12-file)
        pairs = _samples(rule, count, rng)
        redacted = 0
        names: set[str] = set()
        for sample, secret in pairs:
            text = redactor.redact(f"found {sample} here\n")
            if secret not in text:
                redacted += 1
                names.update(re.findall(r"\[REDACTED:([^\]]+)\]", text))
        keywords = tuple(str(k) for k in rule.get("keywords", ()))  # type: ignore[attr-defined]
        result.append(Coverage(str(rule["id"]), keywords, len(pairs), redacted, tuple(sorted(names))))
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("toml", help="gitleaks' config/gitleaks.toml, or - for standard input")
    parser.add_argument("--samples", type=int, default=8, help="samples per rule (default 8)")
    parser.add_argument("--json", action="store_true", help="print every rule's coverage as JSON")
    args = parser.parse_args(argv)
    try:
        raw = sys.stdin.buffer.read() if args.toml == "-" else Path(args.toml).read_bytes()
        config = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        print(f"rules-vs-gitleaks: cannot read {args.toml!r}: {exc}", file=sys.stderr)
        return 2
    rules = config.get("rules")
    if not isinstance(rules, list) or not rules:
        print(f"rules-vs-gitleaks: {args.toml!r} has no [[rules]]; give gitleaks' config/gitleaks.toml", file=sys.stderr)
        return 2
    result = coverage(rules, args.samples)
    if args.json:
        print(json.dumps([c.__dict__ for c in result], indent=1))
    full = [c for c in result if c.samples and c.redacted == c.samples]
    part = [c for c in result if 0 < c.redacted < c.samples]
    none = [c for c in result if c.samples and not c.redacted]
    untried = [c for c in result if not c.samples]
    if not args.json:
        print(f"gitleaks rules: {len(result)}; covered {len(full)}, partly {len(part)}, missing {len(none)}, no sample {len(untried)}")
        for label, group in (("missing", none), ("partly", part), ("no sample", untried)):
            for c in group:
                print(f"{label}: {c.rule_id} ({c.redacted}/{c.samples}) keywords {', '.join(c.keywords) or '-'}")
    return 0 if not none and not part else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
