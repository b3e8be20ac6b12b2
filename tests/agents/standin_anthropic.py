"""Stand in for the Anthropic Messages API on loopback, for driving Claude Code in tests.

``AnthropicStandin`` answers what Claude Code asks of ``ANTHROPIC_BASE_URL`` (Messages API,
``anthropic-version: 2023-06-01``):

- ``HEAD /`` and any ``GET``: 200 ``{}`` (Claude Code probes ``HEAD /`` at start).
- ``POST /v1/messages`` (any query string; Claude Code sends ``?beta=true``): one assistant
  text answer. With ``"stream": true`` it is a server-sent-event stream of ``message_start``,
  ``content_block_start``, ``ping``, ``content_block_delta`` (``text_delta`` pieces),
  ``content_block_stop``, ``message_delta`` (``stop_reason: end_turn`` and ``usage``) and
  ``message_stop``; otherwise one JSON message. ``usage`` carries ``input_tokens``,
  ``output_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``.
- ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}``, N estimated from the body size.
- Any other ``POST``: 404 with an Anthropic-shaped error.

Tool calls (``script_tool_uses``): queued ``ToolUse`` answers are given first, one per
conversation request, as an assistant message holding one ``tool_use`` block (``stop_reason:
tool_use``; streamed as ``input_json_delta`` pieces); Claude Code runs the tool and sends its
``tool_result`` in the next request, which takes the next queued tool use or else a text answer
as below. A tool-use answer does not consume the text script nor the count.

Answers. A *conversation* request (one that offers ``tools``, as Claude Code's main loop
does) takes the next scripted answer (``script()``), else the ``answer`` callable's text, else
``STANDIN-ANSWER-<n>: <last word of the prompt>`` with n counting conversation answers from 1.
*Side* requests (no ``tools``: the session-title request, quick haiku calls) get
``side_answer``'s text, else a JSON object that fits the schema when the request asks for
structured output (``output_config.format`` of type ``json_schema``), else a fixed text. Side
requests never consume the script nor the count.

What Claude Code 2.1.197 sends (seen against this stand-in): ``HEAD /``; on the first prompt a
title request (no tools, ``output_config.format`` = json_schema ``{"title": string}``, the
prompt wrapped in ``<session>...</session>``) racing the conversation request (28 tools,
``system`` a list of blocks starting with an ``x-anthropic-billing-header`` text, the last user
message a ``<system-reminder>`` text block followed by the typed prompt). Both carry the
headers ``x-api-key``, ``anthropic-version``, ``anthropic-beta`` and
``x-claude-code-session-id`` (the session id that names the transcript file).

Held answers (``StandinServer.hold``): a conversation request matching the predicate is kept
open, answering nothing, until ``release()``; released, it gets a 529 ``overloaded_error`` and
never an answer (neither the script nor the count move).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

from .standin_server import (
    CallQueue,
    Reply,
    StandinRequest,
    StandinServer,
    last_word,
    schema_answer,
    split_pieces,
)

DEFAULT_MODEL = "claude-standin"
SIDE_ANSWER_TEXT = "Standin side answer"


@dataclasses.dataclass(frozen=True)
class AnthropicRequest(StandinRequest):
    """A request to the Anthropic stand-in, with readers for the Messages API body."""

    @property
    def is_messages(self) -> bool:
        """Tell whether this is a ``POST /v1/messages`` (not count_tokens)."""
        return self.method == "POST" and self.path.rstrip("/") == "/v1/messages"

    @property
    def is_conversation(self) -> bool:
        """Tell whether this is a main-loop Messages request (one that offers tools)."""
        return self.is_messages and bool(self.body_dict().get("tools"))

    @property
    def session_id(self) -> str | None:
        """Return Claude Code's ``x-claude-code-session-id`` header, if sent."""
        return self.headers.get("x-claude-code-session-id")

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Return the request's ``messages`` list (empty when there is none)."""
        messages = self.body_dict().get("messages")
        return list(messages) if isinstance(messages, list) else []

    def texts(self) -> list[tuple[str, str]]:
        """Return ``(role, text)`` for every text block of every message, in order."""
        return [
            (str(message.get("role", "")), text)
            for message in self.messages
            for text in content_texts(message.get("content"))
        ]

    def last_user_text(self) -> str:
        """Return what the user typed last: the last user text block that is not a reminder.

        Claude Code puts context in ``<system-reminder>`` text blocks next to the typed
        prompt; blocks starting with ``<`` are skipped. Returns ``""`` when there is none.
        """
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            for text in reversed(content_texts(message.get("content"))):
                stripped = text.strip()
                if stripped and not stripped.startswith("<"):
                    return stripped
        return ""

    def system_text(self) -> str:
        """Return the system prompt as one string (blocks joined by newlines)."""
        system = self.body_dict().get("system")
        if isinstance(system, str):
            return system
        return "\n".join(content_texts(system))


@dataclasses.dataclass(frozen=True)
class ToolUse:
    """A scripted answer that calls a tool: ``name`` (``TodoWrite``, ``TaskCreate``...) with ``input``."""

    name: str
    input: dict[str, Any]


def tool_results(request: AnthropicRequest) -> list[dict[str, Any]]:
    """Return every ``tool_result`` block of the request's user messages, in order."""
    return [
        block
        for message in request.messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def content_texts(content: Any) -> list[str]:
    """Return the texts of a Messages API ``content`` value (a string or a list of blocks)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(str(block.get("text", "")))
        elif block.get("type") == "tool_result":
            out.extend(content_texts(block.get("content")))
    return out


def _default_side_text(request: AnthropicRequest) -> str:
    """Answer a side request: a JSON object when it asks for structured output, else a text."""
    output_config = request.body_dict().get("output_config")
    fmt = output_config.get("format") if isinstance(output_config, dict) else None
    return schema_answer(fmt) or SIDE_ANSWER_TEXT


class AnthropicStandin(StandinServer[AnthropicRequest]):
    """Serve a scripted stand-in of the Anthropic Messages API on ``127.0.0.1``.

    Put ``base_url`` in ``ANTHROPIC_BASE_URL``. See the module docstring for what is answered.

    Args:
        answer: choose the text of a conversation answer from the request.
        side_answer: choose the text of a side answer (requests without tools).
        model: the model name in answers when the request names none.
    """

    request_type = AnthropicRequest
    name = "anthropic-standin"

    def __init__(
        self,
        answer: Callable[[AnthropicRequest], str] | None = None,
        side_answer: Callable[[AnthropicRequest], str] | None = None,
        model: str = DEFAULT_MODEL,
    ) -> None:
        super().__init__(answer)
        self._side_answer = side_answer
        self._model = model
        self._tool_uses: CallQueue[ToolUse] = CallQueue()

    def script_tool_uses(self, uses: list[ToolUse]) -> None:
        """Queue tool calls for the next conversation answers, one each, before any text answer."""
        self._tool_uses.extend(uses)

    def default_answer(self, n: int, request: AnthropicRequest) -> str:
        """Return ``STANDIN-ANSWER-<n>: <last word of the last prompt>``."""
        return f"STANDIN-ANSWER-{n}: {last_word(request.last_user_text())}"

    def conversation_requests(self) -> list[AnthropicRequest]:
        """Return the main-loop Messages requests received so far (see ``is_conversation``)."""
        return [r for r in self.requests() if r.is_conversation]

    def side_requests(self) -> list[AnthropicRequest]:
        """Return the Messages requests that are not conversation requests."""
        return [r for r in self.requests() if r.is_messages and not r.is_conversation]

    def handle(self, request: AnthropicRequest) -> Reply:
        """Answer HEAD/GET, count_tokens and Messages requests (see the module docstring)."""
        path = request.path.rstrip("/")
        if request.method in ("HEAD", "GET"):
            return Reply.json({})
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            return Reply.json({"input_tokens": _input_tokens(request)})
        if not request.is_messages:
            return Reply.json(
                {"type": "error",
                 "error": {"type": "not_found_error", "message": f"no {path} here"}},
                status=404,
            )
        if request.is_conversation and self.wait_if_held(request):
            return Reply.json(
                {"type": "error", "error": {"type": "overloaded_error", "message": "released by the test"}},
                status=529,
            )
        use = self._tool_uses.pop() if request.is_conversation else None
        if use is not None:
            message = self._tool_message(request, use)
            if request.body_dict().get("stream"):
                return Reply.sse(_tool_stream_events(message, use))
            return Reply.json(message)
        if request.is_conversation:
            text = self.next_answer(request)
        elif self._side_answer is not None:
            text = self._side_answer(request)
        else:
            text = _default_side_text(request)
        message = self._message(request, text)
        if request.body_dict().get("stream"):
            return Reply.sse(_stream_events(message, text))
        return Reply.json(message)

    def _message(self, request: AnthropicRequest, text: str) -> dict[str, Any]:
        return {
            "id": self.new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": request.body_dict().get("model") or self._model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": _input_tokens(request),
                "output_tokens": max(1, len(text.split())),
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        }


    def _tool_message(self, request: AnthropicRequest, use: ToolUse) -> dict[str, Any]:
        message = self._message(request, "")
        message["content"] = [{"type": "tool_use", "id": self.new_id("toolu"), "name": use.name, "input": use.input}]
        message["stop_reason"] = "tool_use"
        return message


def _tool_stream_events(message: dict[str, Any], use: ToolUse) -> list[tuple[str, dict[str, Any]]]:
    """Return the Messages API stream events that deliver *message* (one tool_use block)."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    block = dict(message["content"][0], input={})
    arguments = json.dumps(use.input)
    half = len(arguments) // 2
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        *(
            ("content_block_delta",
             {"type": "content_block_delta", "index": 0,
              "delta": {"type": "input_json_delta", "partial_json": piece}})
            for piece in (arguments[:half], arguments[half:])
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta",
         {"type": "message_delta",
          "delta": {"stop_reason": "tool_use", "stop_sequence": None},
          "usage": message["usage"]}),
        ("message_stop", {"type": "message_stop"}),
    ]


def _input_tokens(request: StandinRequest) -> int:
    """Estimate input tokens as a quarter of the body's bytes (at least 1)."""
    return max(1, len(request.raw_body) // 4)


def _stream_events(message: dict[str, Any], text: str) -> list[tuple[str, dict[str, Any]]]:
    """Return the Messages API stream events that deliver *message* (one text block)."""
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start",
         {"type": "content_block_start", "index": 0,
          "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
    ]
    events += [
        ("content_block_delta",
         {"type": "content_block_delta", "index": 0,
          "delta": {"type": "text_delta", "text": piece}})
        for piece in split_pieces(text)
    ]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta",
         {"type": "message_delta",
          "delta": {"stop_reason": "end_turn", "stop_sequence": None},
          "usage": message["usage"]}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events
