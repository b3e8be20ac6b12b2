"""Stand in for the OpenAI Responses API on loopback, for driving Codex CLI in tests.

``OpenAIStandin`` answers what Codex asks of a model provider configured with
``base_url = "<base_url>/v1"`` and ``wire_api = "responses"``:

- ``HEAD``/``GET`` anything: 200; ``GET /v1/models`` lists one model (``{"data": [...],
  "models": []}``, enough for both the OpenAI shape and Codex's own).
- ``POST /v1/responses``: one assistant message. With ``"stream": true`` it is a
  server-sent-event stream of ``response.created``, ``response.in_progress``,
  ``response.output_item.added`` (a ``message`` item), ``response.content_part.added``,
  ``response.output_text.delta`` pieces, ``response.output_text.done``,
  ``response.content_part.done``, ``response.output_item.done`` and ``response.completed``
  (with ``usage``), each as ``event: <type>`` plus ``data: <json>``; otherwise one JSON
  response object.
- ``POST /v1/chat/completions`` (Qwen Code): one assistant message, by ``standin_chat.chat_reply``. With ``"stream": true``
  it is ``data: <chat.completion.chunk>`` lines (the role, the text in pieces, a last chunk
  with ``finish_reason: "stop"`` and ``usage``) and ``data: [DONE]``; otherwise one
  ``chat.completion`` object.
- Any other ``POST``: 404 with an OpenAI-shaped error.

Function calls (``script_function_calls``): queued ``FunctionCall`` answers are given first,
one per Responses conversation request, as a response whose one output item is ``{type:
function_call, name, arguments, call_id}`` (streamed as ``response.output_item.added``,
``response.function_call_arguments.delta``/``.done``, ``response.output_item.done``,
``response.completed``); Codex runs the function and sends its ``function_call_output`` in the
next request, which takes the next queued call or else a text answer as below. A function-call
answer does not consume the text script nor the count.

Answers: a *conversation* request (one that offers ``tools``) takes the next scripted answer
(``script()``), else the ``answer`` callable's text, else
``STANDIN-ANSWER-<n>: <last word of the prompt>``. Other Responses requests (side calls; Codex
0.171.0 asks for a thread title with ``tools: []`` and ``text.format`` of type ``json_schema``
``{"title": string}``) get ``side_answer``'s text, else a JSON object fitting the schema, else
a fixed text; they never consume the script nor the count.

Held answers (``StandinServer.hold``): a conversation Responses request matching the predicate
is kept open, answering nothing, until ``release()``; released, it gets a 500 ``server_error``
and never an answer (neither the script nor the count move).
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, Callable

from .standin_chat import ToolCall, chat_reply, content_texts, tool_call_reply, usage_of
from .standin_server import (
    CallQueue,
    Reply,
    StandinRequest,
    StandinServer,
    last_word,
    schema_answer,
    split_pieces,
)

DEFAULT_MODEL = "standin-model"
SIDE_ANSWER_TEXT = "Standin side answer"


@dataclasses.dataclass(frozen=True)
class OpenAIRequest(StandinRequest):
    """A request to the OpenAI stand-in, with readers for the Responses API body."""

    @property
    def is_responses(self) -> bool:
        """Tell whether this is a ``POST /v1/responses``."""
        return self.method == "POST" and self.path.rstrip("/").endswith("/responses")

    @property
    def is_chat(self) -> bool:
        """Tell whether this is a ``POST /v1/chat/completions``."""
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    @property
    def is_conversation(self) -> bool:
        """Tell whether this is a main-loop request (Responses or chat completions offering tools)."""
        return (self.is_responses or self.is_chat) and bool(self.body_dict().get("tools"))

    @property
    def input_items(self) -> list[dict[str, Any]]:
        """Return the request's ``input`` list (empty when there is none)."""
        items = self.body_dict().get("input")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []

    def texts(self) -> list[tuple[str, str]]:
        """Return ``(role, text)`` for every text part of every ``message`` input item
        (of every entry of ``messages`` for chat completions)."""
        if self.is_chat:
            messages = self.body_dict().get("messages")
            return [
                (str(m.get("role", "")), text)
                for m in (messages if isinstance(messages, list) else [])
                if isinstance(m, dict)
                for text in content_texts(m.get("content"))
            ]
        return [
            (str(item.get("role", "")), text)
            for item in self.input_items
            if item.get("type", "message") == "message"
            for text in content_texts(item.get("content"))
        ]

    def last_user_text(self) -> str:
        """Return what the user typed last: the last user text that is not injected context.

        Codex sends context (``<environment_context>``, ``AGENTS.md`` instructions) as user
        messages whose text starts with ``<`` or ``#``; those are skipped.
        """
        for role, text in reversed(self.texts()):
            stripped = text.strip()
            if role == "user" and stripped and not stripped.startswith(("<", "#")):
                return stripped
        return ""


@dataclasses.dataclass(frozen=True)
class FunctionCall:
    """A scripted answer that calls a function: ``name`` (``update_plan``...) with ``arguments``;
    ``namespace`` names the tool namespace the function is offered in (Codex 0.171 offers an MCP
    server's tools in one, ``mcp__<server>``), None for a top-level function."""

    name: str
    arguments: dict[str, Any]
    namespace: str | None = None


def function_outputs(request: OpenAIRequest) -> list[dict[str, Any]]:
    """Return every ``function_call_output`` input item of the request, in order."""
    return [item for item in request.input_items if item.get("type") == "function_call_output"]


def _default_side_text(request: OpenAIRequest) -> str:
    """Answer a side request: a JSON object when it asks for structured output, else a text."""
    text_config = request.body_dict().get("text")
    fmt = text_config.get("format") if isinstance(text_config, dict) else None
    return schema_answer(fmt) or SIDE_ANSWER_TEXT


class OpenAIStandin(StandinServer[OpenAIRequest]):
    """Serve a scripted stand-in of the OpenAI Responses API on ``127.0.0.1``.

    Configure the agent with ``api_base`` (``<base_url>/v1``). See the module docstring.

    Args:
        answer: choose the text of a conversation answer from the request.
        side_answer: choose the text of an answer to a request without tools.
        model: the model name in answers when the request names none.
    """

    request_type = OpenAIRequest
    name = "openai-standin"

    def __init__(
        self,
        answer: Callable[[OpenAIRequest], str] | None = None,
        side_answer: Callable[[OpenAIRequest], str] | None = None,
        model: str = DEFAULT_MODEL,
    ) -> None:
        super().__init__(answer)
        self._side_answer = side_answer
        self.model = model
        self._calls: CallQueue[FunctionCall] = CallQueue()
        self.chat_tool_calls: CallQueue[ToolCall] = CallQueue()

    def script_chat_tool_calls(self, calls: list[ToolCall]) -> None:
        """Queue tool calls for the next chat-completions conversation answers (Qwen Code), one each."""
        self.chat_tool_calls.extend(calls)

    def script_function_calls(self, calls: list[FunctionCall]) -> None:
        """Queue function calls for the next Responses conversation answers, one each, before any text."""
        self._calls.extend(calls)

    @property
    def api_base(self) -> str:
        """Return ``http://127.0.0.1:<port>/v1`` (a provider's ``base_url``)."""
        return f"{self.base_url}/v1"

    def default_answer(self, n: int, request: OpenAIRequest) -> str:
        """Return ``STANDIN-ANSWER-<n>: <last word of the last prompt>``."""
        return f"STANDIN-ANSWER-{n}: {last_word(request.last_user_text())}"

    def conversation_requests(self) -> list[OpenAIRequest]:
        """Return the main-loop Responses requests received so far."""
        return [r for r in self.requests() if r.is_conversation]

    def handle(self, request: OpenAIRequest) -> Reply:
        """Answer HEAD/GET, models and Responses requests (see the module docstring)."""
        if request.method in ("HEAD", "GET"):
            if request.path.rstrip("/").endswith("/models"):
                return Reply.json(
                    {"object": "list",
                     "data": [{"id": self.model, "object": "model", "owned_by": "standin"}],
                     "models": []}
                )
            return Reply.json({})
        chat_call = self.chat_tool_calls.pop() if request.is_chat and request.is_conversation else None
        if chat_call is not None:
            model = str(request.body_dict().get("model") or self.model)
            return tool_call_reply(self.new_id("chatcmpl"), self.new_id("call"), model, chat_call,
                                   usage_of(request, chat_call.name), stream=bool(request.body_dict().get("stream")))
        if request.is_chat:
            text = self.next_answer(request) if request.is_conversation else (
                self._side_answer(request) if self._side_answer is not None else SIDE_ANSWER_TEXT
            )
            model = str(request.body_dict().get("model") or self.model)
            return chat_reply(self.new_id("chatcmpl"), model, text, usage_of(request, text),
                              stream=bool(request.body_dict().get("stream")), usage_apart=False)
        if not request.is_responses:
            return Reply.json(
                {"error": {"message": f"no {request.path} here", "type": "invalid_request_error",
                           "code": "not_found"}},
                status=404,
            )
        if request.is_conversation and self.wait_if_held(request):
            return Reply.json(
                {"error": {"message": "released by the test", "type": "server_error", "code": "server_error"}},
                status=500,
            )
        call = self._calls.pop() if request.is_conversation else None
        if call is not None:
            response, item = self._response(request, "")
            item = {"id": self.new_id("fc"), "type": "function_call", "status": "completed",
                    "name": call.name, "arguments": json.dumps(call.arguments), "call_id": self.new_id("call")}
            if call.namespace is not None:
                item["namespace"] = call.namespace
            response["output"] = [item]
            if request.body_dict().get("stream"):
                return Reply.sse(_call_stream_events(response, item))
            return Reply.json(response)
        if request.is_conversation:
            text = self.next_answer(request)
        elif self._side_answer is not None:
            text = self._side_answer(request)
        else:
            text = _default_side_text(request)
        response, item = self._response(request, text)
        if request.body_dict().get("stream"):
            return Reply.sse(_stream_events(response, item, text))
        return Reply.json(response)

    def _response(self, request: OpenAIRequest, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
        item = {
            "id": self.new_id("msg"),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        input_tokens = max(1, len(request.raw_body) // 4)
        output_tokens = max(1, len(text.split()))
        response = {
            "id": self.new_id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "model": request.body_dict().get("model") or self.model,
            "output": [item],
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            },
        }
        return response, item


def _stream_events(
    response: dict[str, Any], item: dict[str, Any], text: str
) -> list[tuple[str, dict[str, Any]]]:
    """Return the Responses API stream events that deliver *response* (one message item)."""
    pending = dict(response, status="in_progress", output=[], usage=None)
    open_item = dict(item, status="in_progress", content=[])
    ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": pending}),
        ("response.in_progress", {"type": "response.in_progress", "response": pending}),
        ("response.output_item.added",
         {"type": "response.output_item.added", "output_index": 0, "item": open_item}),
        ("response.content_part.added",
         {"type": "response.content_part.added", **ids,
          "part": {"type": "output_text", "text": "", "annotations": []}}),
    ]
    events += [
        ("response.output_text.delta", {"type": "response.output_text.delta", **ids, "delta": p})
        for p in split_pieces(text)
    ]
    events += [
        ("response.output_text.done", {"type": "response.output_text.done", **ids, "text": text}),
        ("response.content_part.done",
         {"type": "response.content_part.done", **ids,
          "part": {"type": "output_text", "text": text, "annotations": []}}),
        ("response.output_item.done",
         {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return [(name, dict(data, sequence_number=i)) for i, (name, data) in enumerate(events)]


def _call_stream_events(response: dict[str, Any], item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Return the Responses API stream events that deliver *response* (one function_call item)."""
    pending = dict(response, status="in_progress", output=[], usage=None)
    ids = {"item_id": item["id"], "output_index": 0}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": pending}),
        ("response.in_progress", {"type": "response.in_progress", "response": pending}),
        ("response.output_item.added",
         {"type": "response.output_item.added", "output_index": 0, "item": dict(item, status="in_progress", arguments="")}),
        ("response.function_call_arguments.delta",
         {"type": "response.function_call_arguments.delta", **ids, "delta": item["arguments"]}),
        ("response.function_call_arguments.done",
         {"type": "response.function_call_arguments.done", **ids, "arguments": item["arguments"]}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return [(name, dict(data, sequence_number=i)) for i, (name, data) in enumerate(events)]
