"""Tests for shellkeep/agents/base.py and records.py: the records adapters return and their JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellkeep.agents.base import (
    MAX_TOOL_RESULT_CHARS,
    MAX_TOOL_SUMMARY_CHARS,
    AgentAdapter,
    AgentSession,
    Exchange,
    ToolCall,
    Usage,
)
from shellkeep.agents.records import ExchangeBuilder, iso_utc, summarize_arguments, summarize_result
from shellkeep.errors import DataError

FULL = Exchange(
    index=3,
    time="2026-03-14T07:30:01.500Z",
    prompt="fix it",
    answer="done",
    tool_calls=(ToolCall(name="Bash", summary="pytest -q"),),
    tool_results=("3 passed",),
    model="model-x",
    usage=Usage(input=1, output=2, cache_read=3, cache_write=4),
)


@pytest.mark.parametrize(
    "exchange",
    [FULL, Exchange(index=0, time=None, prompt="", answer="")],
    ids=["full", "minimal"],
)
def test_exchange_round_trips_through_json(exchange: Exchange) -> None:
    line = json.dumps(exchange.to_json())
    assert Exchange.from_json(json.loads(line)) == exchange


def test_exchange_json_keys_are_the_contract() -> None:
    data = FULL.to_json()
    assert list(data) == ["index", "time", "prompt", "answer", "tool_calls", "tool_results", "model", "usage"]
    assert data["tool_calls"] == [{"name": "Bash", "summary": "pytest -q"}]
    assert data["usage"] == {"input": 1, "output": 2, "cache_read": 3, "cache_write": 4}


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"index": "1"}, "index"),
        ({"prompt": 5}, "prompt"),
        ({"tool_calls": ["x"]}, "tool_calls"),
        ({"tool_results": [1]}, "tool_results"),
        ({"usage": {"input": True}}, "input"),
    ],
    ids=["index-str", "prompt-int", "call-not-object", "result-not-str", "usage-bool"],
)
def test_exchange_from_json_names_the_bad_key(data: dict[str, object], key: str) -> None:
    with pytest.raises(DataError, match=key):
        Exchange.from_json(data)


def test_agent_session_round_trips_through_json() -> None:
    session = AgentSession(agent="claude", session_id="abc", transcript=Path("/x/abc.jsonl"))
    assert AgentSession.from_json(json.loads(json.dumps(session.to_json()))) == session
    assert AgentSession.from_json({"agent": "generic", "session_id": None, "transcript": None}).transcript is None
    with pytest.raises(DataError):
        AgentSession.from_json({"agent": 3})


def test_usage_adds_field_by_field() -> None:
    assert Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40) == Usage(11, 22, 33, 44)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-03-14T07:30:01.5Z", "2026-03-14T07:30:01.500Z"),
        ("2026-03-14T08:30:01+01:00", "2026-03-14T07:30:01.000Z"),
        ("2026-03-14T07:30:01.123456789Z", "2026-03-14T07:30:01.123Z"),
        (1773473400000, "2026-03-14T07:30:00.000Z"),
        (1773473400, "2026-03-14T07:30:00.000Z"),
        ("yesterday", None),
        (None, None),
        (True, None),
    ],
    ids=["z-short-fraction", "offset", "nanoseconds", "epoch-ms", "epoch-s", "garbage", "none", "bool"],
)
def test_iso_utc_normalises_timestamps(value: object, expected: str | None) -> None:
    assert iso_utc(value) == expected


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"command": "pytest -q", "description": "run"}, "pytest -q"),
        ('{"cmd": "ls -la", "workdir": "/x"}', "ls -la"),
        ({"command": ["bash", "-lc", "make"]}, "bash -lc make"),
        ({"file_path": "/a/b.py", "old_string": "x"}, "/a/b.py"),
        ({"n": 1}, '{"n":1}'),
        ("free\ntext", "free text"),
    ],
    ids=["command", "json-string", "argv-list", "file-path", "no-key", "plain-string"],
)
def test_summarize_arguments_picks_the_telling_value(arguments: object, expected: str) -> None:
    assert summarize_arguments(arguments) == expected


def test_summaries_are_one_line_and_bounded() -> None:
    long = "word " * 200
    assert len(summarize_arguments({"command": long})) == MAX_TOOL_SUMMARY_CHARS
    result = summarize_result([{"type": "text", "text": long}])
    assert len(result) == MAX_TOOL_RESULT_CHARS and result.endswith("…") and "\n" not in result
    assert summarize_result({"type": "image", "source": {"data": "A" * 10_000}}) == "[image]"


def test_builder_drops_what_comes_before_the_first_prompt() -> None:
    builder = ExchangeBuilder()
    builder.answer("orphan answer")
    builder.tool_call("Bash", {"command": "ls"})
    builder.prompt("first", "2026-03-14T07:30:00Z")
    builder.answer("one")
    builder.answer("two")
    builder.add_usage(Usage(input=1))
    builder.add_usage(Usage(output=2))
    builder.prompt("second")
    [first, second] = builder.exchanges()
    assert (first.index, first.prompt, first.answer, first.usage) == (0, "first", "one\n\ntwo", Usage(1, 2, 0, 0))
    assert (second.index, second.answer, second.usage, second.time) == (1, "", None, None)


def test_every_builtin_adapter_satisfies_the_protocol() -> None:
    from shellkeep.agents.registry import builtin_adapters

    for adapter in builtin_adapters():
        assert isinstance(adapter, AgentAdapter), adapter
        if adapter.name != "generic":  # the generic one stands in for programs without a transcript
            assert adapter.has_native_transcript, adapter
            assert adapter.agent_name(["/opt/bin/x", "--flag"]) == adapter.name, adapter
