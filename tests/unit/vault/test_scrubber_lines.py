"""Tests for shellkeep/vault/scrubber.py's JSONL line redaction (agent transcript copies, exchanges):
a clean line is kept byte for byte, a secret in any string of it is caught, with the built-in
rules and with a user's rule anchored to the start of a string."""

from __future__ import annotations

import json

import pytest

from shellkeep.capture.redaction import RULES, redactor_for
from shellkeep.config import RedactConfig, RedactPattern
from shellkeep.vault.scrubber import redact_jsonl_line


@pytest.mark.parametrize("rule", RULES[:12], ids=lambda r: r.name)
def test_a_secret_in_any_string_of_a_line_is_redacted(rule) -> None:  # type: ignore[no-untyped-def]
    redactor = redactor_for(None)
    line = json.dumps({"type": "user", "message": {"content": [{"text": "clean words"}, {"text": rule.example}]}}).encode() + b"\n"
    redacted = redact_jsonl_line(line, redactor)
    assert rule.example.encode() not in redacted and b"REDACTED" in redacted
    assert json.loads(redacted)["type"] == "user"


def test_a_clean_line_is_kept_byte_for_byte() -> None:
    line = b'{"type": "assistant",  "message": {"content": "nothing secret here", "n": [1, 2]}}\n'
    assert redact_jsonl_line(line, redactor_for(None)) is line


def test_a_user_rule_anchored_to_a_string_s_start_still_catches_it() -> None:
    config = RedactConfig(patterns=(RedactPattern(name="ticket", pattern=r"^TCK-[0-9]{6}$"),))
    line = json.dumps({"a": "first string", "b": ["TCK-123456"], "c": "last"}).encode() + b"\n"
    redacted = redact_jsonl_line(line, redactor_for(config))
    assert b"TCK-123456" not in redacted and b"REDACTED:ticket" in redacted
