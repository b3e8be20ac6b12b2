"""The asciicast v2 encoder: lines are valid JSON whatever the text holds."""

from __future__ import annotations

import json

import pytest

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Header, TermSize


def test_header_line() -> None:
    line = encode_header(Header(size=TermSize(120, 40), timestamp=1700000000, command="claude", title=None, env={"TERM": "xterm"}))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"version": 2, "width": 120, "height": 40, "timestamp": 1700000000, "command": "claude", "env": {"TERM": "xterm"}}


@pytest.mark.parametrize(
    "text",
    ["plain", "\x00\x01\x1b[31m\x7f", "żółć €", "quote \" backslash \\ newline \n", "\ufffd", "\u2028\u2029"],
    ids=["plain", "controls", "utf8", "json-specials", "replacement", "line-separators"],
)
def test_event_lines_are_valid_json(text: str) -> None:
    line = encode_event(1.5, "o", text)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == [1.5, "o", text]


def test_times_have_microsecond_precision() -> None:
    assert json.loads(encode_event(0.1234567, "o", "x"))[0] == 0.123457
