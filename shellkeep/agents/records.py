"""Turn raw transcript values into exchange fields: typed access, summaries, times, the builder.

Transcripts are other programs' JSON; the accessors here narrow ``object`` values to the
type expected and return None otherwise, so a parser never trips over a field that changed
shape. ``ExchangeBuilder`` collects one conversation's prompts, answers, tool calls and
usage in file order and hands out ``Exchange`` records.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from datetime import datetime, timezone

from shellkeep.agents.base import (
    MAX_TOOL_RESULT_CHARS,
    MAX_TOOL_SUMMARY_CHARS,
    Exchange,
    ToolCall,
    Usage,
)

__all__ = [
    "ExchangeBuilder",
    "JsonObject",
    "as_dict",
    "as_int",
    "as_list",
    "as_str",
    "dig",
    "iso_utc",
    "last",
    "one_line",
    "parse_time",
    "shorten",
    "summarize_arguments",
    "summarize_result",
    "texts_of",
]

JsonObject = dict[str, object]
"""A JSON object as ``json.loads`` returns it, values not yet narrowed."""

# Argument keys that name what a tool call is about, most telling first.
_SUMMARY_KEYS = (
    "command",
    "cmd",
    "file_path",
    "filePath",
    "absolute_path",
    "path",
    "notebook_path",
    "pattern",
    "url",
    "query",
    "description",
    "prompt",
)


def as_dict(value: object) -> JsonObject | None:
    """Return ``value`` when it is a JSON object, else None."""
    if isinstance(value, dict):
        return value
    return None


def as_list(value: object) -> list[object]:
    """Return ``value`` when it is a JSON array, else an empty list."""
    if isinstance(value, list):
        return value
    return []


def as_str(value: object) -> str | None:
    """Return ``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None


def as_int(value: object) -> int:
    """Return ``value`` as an int when it is a JSON number (not a bool), else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value:  # NaN is not a count
        return int(value)
    return 0


def dig(value: object, *keys: str) -> object:
    """Return ``value[k1][k2]...`` through nested JSON objects, or None where a step is missing."""
    for key in keys:
        obj = as_dict(value)
        if obj is None:
            return None
        value = obj.get(key)
    return value


def shorten(text: str, max_chars: int) -> str:
    """Return ``text`` cut to at most ``max_chars`` characters, ending in ``…`` when cut."""
    if len(text) <= max_chars:
        return text
    return text[: max(max_chars - 1, 0)] + "…"


def one_line(text: str) -> str:
    """Return ``text`` with every run of whitespace (newlines too) turned into one space."""
    return " ".join(text.split())


def summarize_arguments(arguments: object) -> str:
    """Return a tool call's arguments as one line of at most ``MAX_TOOL_SUMMARY_CHARS``.

    A JSON object with a telling key (command, file path, pattern, url, query...) gives
    that value; a JSON string holding an object is decoded first; anything else is
    compact JSON.
    """
    if isinstance(arguments, str):
        stripped = arguments.strip()
        if stripped.startswith("{"):
            with contextlib.suppress(ValueError):
                arguments = json.loads(stripped)
    obj = as_dict(arguments)
    if obj is not None:
        for key in _SUMMARY_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value.strip():
                return shorten(one_line(value), MAX_TOOL_SUMMARY_CHARS)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return shorten(one_line(" ".join(str(v) for v in value)), MAX_TOOL_SUMMARY_CHARS)
    if isinstance(arguments, str):
        return shorten(one_line(arguments), MAX_TOOL_SUMMARY_CHARS)
    try:
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(arguments)
    return shorten(one_line(text), MAX_TOOL_SUMMARY_CHARS)


def summarize_result(result: object) -> str:
    """Return a tool result as one line of at most ``MAX_TOOL_RESULT_CHARS`` characters.

    Strings are used as they are; content-block lists (``[{"type": "text", "text": ...}]``)
    give their texts; objects give their ``output``, ``content``, ``error`` or ``text``
    field when it is a string, else compact JSON.
    """
    return shorten(one_line(_result_text(result)), MAX_TOOL_RESULT_CHARS)


def _result_text(result: object) -> str:
    """Return the readable text inside a tool result of any of the shapes agents use."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return " ".join(_result_text(item) for item in result)
    obj = as_dict(result)
    if obj is not None:
        if obj.get("type") in ("image", "input_image", "inlineData"):
            return "[image]"
        for key in ("output", "content", "error", "text", "result", "response", "functionResponse"):
            if key in obj and obj[key] not in (None, "", [], {}):
                return _result_text(obj[key])
    try:
        return json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(result)


_FRACTION = r"\.(\d+)"


def iso_utc(value: object) -> str | None:
    """Return a timestamp as ISO 8601 UTC with milliseconds (``2026-11-29T09:15:03.000Z``).

    Accepts ISO 8601 strings (``Z`` or an offset; naive ones are taken as UTC) and epoch
    numbers (milliseconds when above 1e11, else seconds). Anything else gives None.
    """
    moment: datetime | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else float(value)
        try:
            moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    elif isinstance(value, str) and value:
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        # Python 3.10's fromisoformat wants 3 or 6 fraction digits.
        text = re.sub(_FRACTION, lambda m: "." + (m.group(1) + "000000")[:6], text, count=1)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
    if moment is None:
        return None
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(value: object) -> datetime | None:
    """Return a timestamp accepted by ``iso_utc`` as an aware UTC datetime, or None."""
    text = iso_utc(value)
    if text is None:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class ExchangeBuilder:
    """Collect one conversation in file order and hand out its exchanges.

    ``prompt`` opens an exchange; answers, tool calls, results, usage and model that come
    before the first prompt (a transcript read from its middle) are dropped.
    """

    def __init__(self) -> None:
        """Start with no exchange."""
        self._done: list[Exchange] = []
        self._open = False
        self._time: str | None = None
        self._prompt = ""
        self._answers: list[str] = []
        self._calls: list[ToolCall] = []
        self._results: list[str] = []
        self._model: str | None = None
        self._usage: Usage | None = None

    @property
    def is_open(self) -> bool:
        """Return whether an exchange has been opened by a prompt."""
        return self._open

    @property
    def is_answered(self) -> bool:
        """Return whether the open exchange has any answer text, tool call or result yet."""
        return bool(self._answers or self._calls or self._results)

    @property
    def current_prompt(self) -> str | None:
        """Return the open exchange's prompt, or None when no exchange is open."""
        return self._prompt if self._open else None

    def prompt(self, text: str, time: object = None) -> None:
        """Close the open exchange and open a new one for ``text`` sent at ``time`` (any ``iso_utc`` input)."""
        self._close()
        self._open = True
        self._time = iso_utc(time)
        self._prompt = text
        self._answers = []
        self._calls = []
        self._results = []
        self._model = None
        self._usage = None

    def answer(self, text: str) -> None:
        """Add one paragraph of the agent's text (blank text is ignored)."""
        if self._open and text.strip():
            self._answers.append(text.strip())

    def tool_call(self, name: str, arguments: object) -> None:
        """Add a tool call; ``arguments`` is summarised with ``summarize_arguments``."""
        if self._open:
            self._calls.append(ToolCall(name=name or "?", summary=summarize_arguments(arguments)))

    def tool_result(self, result: object) -> None:
        """Add a tool result; summarised with ``summarize_result``."""
        if self._open:
            self._results.append(summarize_result(result))

    def add_usage(self, usage: Usage) -> None:
        """Add tokens spent on the open exchange."""
        if self._open:
            self._usage = usage if self._usage is None else self._usage + usage

    def set_model(self, model: str | None) -> None:
        """Record the model that answered (the last one set wins)."""
        if self._open and model:
            self._model = model

    def end(self) -> None:
        """Close the open exchange; what comes before the next prompt is dropped."""
        self._close()

    def exchanges(self) -> list[Exchange]:
        """Close the open exchange and return all exchanges, indexed from 0."""
        self._close()
        return [_reindexed(e, i) for i, e in enumerate(self._done)]

    def _close(self) -> None:
        """Turn the open exchange into an ``Exchange``."""
        if not self._open:
            return
        self._done.append(
            Exchange(
                index=len(self._done),
                time=self._time,
                prompt=self._prompt,
                answer="\n\n".join(self._answers),
                tool_calls=tuple(self._calls),
                tool_results=tuple(self._results),
                model=self._model,
                usage=self._usage,
            )
        )
        self._open = False


def _reindexed(exchange: Exchange, index: int) -> Exchange:
    """Return ``exchange`` with ``index`` (a copy when it differs)."""
    if exchange.index == index:
        return exchange
    return Exchange(
        index=index,
        time=exchange.time,
        prompt=exchange.prompt,
        answer=exchange.answer,
        tool_calls=exchange.tool_calls,
        tool_results=exchange.tool_results,
        model=exchange.model,
        usage=exchange.usage,
    )


def last(exchanges: list[Exchange], limit: int | None) -> list[Exchange]:
    """Return the last ``limit`` exchanges (all when None), re-indexed from 0."""
    if limit is not None:
        exchanges = exchanges[-limit:] if limit > 0 else []
    return [_reindexed(e, i) for i, e in enumerate(exchanges)]


def texts_of(blocks: Iterable[object], *, text_key: str = "text") -> list[str]:
    """Return the text of every block that has one, skipping thought blocks (``thought: true``)."""
    texts: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
            continue
        obj = as_dict(block)
        if obj is None or obj.get("thought") is True:
            continue
        kind = obj.get("type")
        if kind not in (None, "text", "input_text", "output_text"):
            continue
        text = as_str(obj.get(text_key))
        if text is not None:
            texts.append(text)
    return texts
