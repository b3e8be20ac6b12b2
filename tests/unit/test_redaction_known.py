"""The secrets a session has redacted (capture/redaction/known.py): one name per secret in
every stream of a session, also where the secret is shown bare later."""

from __future__ import annotations

import pytest

from shellkeep.capture.redaction import Redactor, StreamRedactor

REDACTOR = Redactor()


def streams() -> tuple[StreamRedactor, StreamRedactor]:
    """Return a session's (input, output) streams, sharing what they redacted."""
    known: dict[str, str] = {}
    return StreamRedactor(REDACTOR, known=known), StreamRedactor(REDACTOR, keep_columns=True, known=known)


def test_a_value_typed_in_an_assignment_is_redacted_when_shown_bare_under_the_same_name() -> None:
    typed, shown = streams()
    assert typed.feed("export DB_PASSWORD=FAKEhunter2x\r") == "export DB_PASSWORD=[REDACTED:password]\r"
    out = shown.feed("$ echo $DB_PASSWORD\r\nFAKEhunter2x\r\n") + shown.flush()
    assert out == "$ echo $DB_PASSWORD\r\n[REDACTED:password]\x1b[7D\r\n"
    # Without the shared memory the value shown bare is stored as it is.
    assert "FAKEhunter2x" in StreamRedactor(REDACTOR, keep_columns=True).feed("FAKEhunter2x\r\n")


def test_the_same_secret_gets_the_first_name_in_another_context_and_stream() -> None:
    typed, shown = streams()
    assert typed.feed('password = "FAKEs3cretValue9"\r') == 'password = "[REDACTED:password]"\r'
    out = shown.feed("token: FAKEs3cretValue9\r\n") + shown.flush()
    assert out == "token: [REDACTED:password]\x1b[3D\r\n"  # not [REDACTED:token]: one secret, one name


@pytest.mark.parametrize("split", range(1, 12))
def test_a_known_secret_split_across_two_reads_is_still_caught(split: int) -> None:
    typed, shown = streams()
    typed.feed("export DB_PASSWORD=FAKEhunter2x\r")
    text = "value FAKEhunter2x done\r\n"
    at = len("value ") + split
    out = shown.feed(text[:at]) + shown.feed(text[at:]) + shown.flush()
    assert "FAKE" not in out and "[REDACTED:password]" in out


def test_a_short_or_plain_word_value_is_not_learned() -> None:
    typed, shown = streams()
    typed.feed("password=hunter2\r")  # 7 characters
    typed.feed("password=correcthorsebattery\r")  # letters only: a word
    out = shown.feed("hunter2 correcthorsebattery\r\n") + shown.flush()
    assert out == "hunter2 correcthorsebattery\r\n"


def test_no_two_rule_examples_share_a_secret() -> None:
    # In a session one secret keeps one name: two rules' examples with the same secret would
    # be redacted under one name (the corpus tests print every example in one session).
    from shellkeep.capture.redaction import RULES

    engine = REDACTOR._compiled()
    names: dict[str, set[str]] = {}
    for rule in RULES:
        for start, end, _priority, name in engine.spans(rule.example, engine.hits(rule.example), 0, len(rule.example)):
            names.setdefault(rule.example[start:end], set()).add(name)
    assert {secret: found for secret, found in names.items() if len(found) > 1} == {}
