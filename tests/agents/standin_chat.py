"""Stand in for the OpenAI Chat Completions API on loopback, for driving OpenCode and Copilot CLI.

``ChatStandin`` answers what an OpenAI-compatible provider client asks (OpenCode's
``@ai-sdk/openai-compatible``, Copilot CLI's ``openai`` JS client with
``COPILOT_PROVIDER_BASE_URL=<api_base>``):

- ``HEAD``/``GET`` anything: 200; ``GET /v1/models`` lists one model.
- ``POST /v1/chat/completions``: one assistant message. With ``"stream": true`` it is a
  server-sent-event stream of ``chat.completion.chunk`` objects (a role chunk, the text in
  pieces, a ``finish_reason: "stop"`` chunk, a chunk with ``usage`` and no choices) and
  ``data: [DONE]``, each as a bare ``data:`` line (no ``event:`` name, as OpenAI sends them);
  otherwise one ``chat.completion`` object.
- Any other ``POST``: 404 with an OpenAI-shaped error.

Tool calls (``script_tool_calls``): queued ``ToolCall`` answers are given first, one per
conversation request, as an assistant message with one ``tool_calls`` entry (``finish_reason:
"tool_calls"``; streamed as a role chunk, the call with its arguments in two pieces, the finish
chunk); the agent runs the tool and sends a ``role: tool`` message in the next request, which
takes the next queued call or else a text answer. A tool-call answer does not consume the text
script nor the count.

Usage is deterministic: ``prompt_tokens`` is the request body's length in bytes // 4 (at
least 1), ``completion_tokens`` the answer's word count (``usage_of`` computes both).

Answers: a *conversation* request (one that offers ``tools``) takes the next scripted answer,
else the ``answer`` callable's text, else ``Echo: <last prompt>``. Other requests (OpenCode's
title request, which offers no tools) get ``side_answer``'s text, else ``Standin title``; they
never consume the script nor the count.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from typing import Any, Callable

from .standin_server import CallQueue, Reply, StandinRequest, StandinServer, split_pieces

DEFAULT_MODEL = "mock-model"
SIDE_ANSWER_TEXT = "Standin title"

# Copilot CLI puts the time before what the user typed: "<current_datetime>…</current_datetime>\n\n".
_LEADING_TAGS = re.compile(r"\A(?:\s*<([a-z_]+)>.*?</\1>)+\s*", re.DOTALL)


@dataclasses.dataclass(frozen=True)
class ChatRequest(StandinRequest):
    """A request to the chat stand-in, with readers for the Chat Completions body."""

    @property
    def is_chat(self) -> bool:
        """Tell whether this is a ``POST …/chat/completions``."""
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    @property
    def is_conversation(self) -> bool:
        """Tell whether this is a main-loop request (one that offers tools)."""
        return self.is_chat and bool(self.body_dict().get("tools"))

    def texts(self) -> list[tuple[str, str]]:
        """Return ``(role, text)`` for every message, its text parts joined, leading tags removed.

        A leading ``<tag>…</tag>`` block (Copilot's ``<current_datetime>``) is not what the
        user typed and is cut off.
        """
        found = []
        for message in self.body_dict().get("messages") or []:
            if not isinstance(message, dict):
                continue
            text = "".join(content_texts(message.get("content"))).strip()
            found.append((str(message.get("role", "")), _LEADING_TAGS.sub("", text)))
        return found

    def exchange_texts(self) -> list[tuple[str, str]]:
        """Return ``texts()`` without system messages and empty ones."""
        return [(role, text) for role, text in self.texts() if role in ("user", "assistant") and text]

    def last_user_text(self) -> str:
        """Return the text of the last user message (leading tags removed), or ''."""
        for role, text in reversed(self.texts()):
            if role == "user" and text:
                return text
        return ""


def content_texts(content: Any) -> list[str]:
    """Return the texts of a chat message's or a Responses item's ``content``: a string, or a
    list of parts of type ``text``, ``input_text`` or ``output_text``."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        str(part.get("text", ""))
        for part in content
        if isinstance(part, dict) and part.get("type", "text") in ("input_text", "output_text", "text")
    ]


@dataclasses.dataclass(frozen=True)
class ToolCall:
    """A scripted answer that calls a tool: ``name`` (``todo_write``, ``todowrite``...) with ``arguments``."""

    name: str
    arguments: dict[str, Any]


def tool_messages(request: StandinRequest) -> list[dict[str, Any]]:
    """Return the ``role: tool`` messages of a chat request (the tools' results), in order."""
    messages = request.body_dict().get("messages")
    return [m for m in (messages if isinstance(messages, list) else []) if isinstance(m, dict) and m.get("role") == "tool"]


def tool_call_reply(completion_id: str, call_id: str, model: str, call: ToolCall, usage: dict[str, int], *, stream: bool) -> Reply:
    """Return a chat completion whose message calls *call* (``finish_reason: "tool_calls"``)."""
    base = {"id": completion_id, "created": int(time.time()), "model": model}
    arguments = json.dumps(call.arguments)
    full = {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
    if not stream:
        return Reply.json({**base, "object": "chat.completion", "usage": usage, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [full]}, "finish_reason": "tool_calls"}]})

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', 'choices': choices, **extra})}\n\n".encode()

    half = len(arguments) // 2
    payload = chunk([{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": call_id, "type": "function", "function": {"name": call.name, "arguments": arguments[:half]}}]},
        "finish_reason": None}])
    payload += chunk([{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}, "finish_reason": None}])
    payload += chunk([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], usage=usage)
    return Reply(200, "text/event-stream", payload + b"data: [DONE]\n\n")


def usage_of(request: StandinRequest, text: str) -> dict[str, int]:
    """Return the ``usage`` the stand-in reports for answering *request* with *text*."""
    prompt = max(1, len(request.raw_body) // 4)
    completion = max(1, len(text.split()))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


class ChatStandin(StandinServer[ChatRequest]):
    """Serve a scripted stand-in of the OpenAI Chat Completions API on ``127.0.0.1``.

    Configure the agent with ``api_base`` (``<base_url>/v1``). See the module docstring.

    Args:
        answer: choose the text of a conversation answer from the request.
        side_answer: choose the text of an answer to a request without tools.
        model: the model name in answers when the request names none.
    """

    request_type = ChatRequest
    name = "chat-standin"

    def __init__(
        self,
        answer: Callable[[ChatRequest], str] | None = None,
        side_answer: Callable[[ChatRequest], str] | None = None,
        model: str = DEFAULT_MODEL,
    ) -> None:
        super().__init__(answer)
        self._side_answer = side_answer
        self.model = model
        self._answers: dict[int, str] = {}
        self.tool_calls: CallQueue[ToolCall] = CallQueue()

    def script_tool_calls(self, calls: list[ToolCall]) -> None:
        """Queue tool calls for the next conversation answers, one each, before any text answer."""
        self.tool_calls.extend(calls)

    @property
    def api_base(self) -> str:
        """Return ``http://127.0.0.1:<port>/v1`` (a provider's base URL)."""
        return f"{self.base_url}/v1"

    def default_answer(self, n: int, request: ChatRequest) -> str:
        """Return ``Echo: <last prompt>``."""
        return f"Echo: {request.last_user_text()}"

    def conversation_requests(self) -> list[ChatRequest]:
        """Return the main-loop chat requests received so far."""
        return [r for r in self.requests() if r.is_conversation]

    def answer_to(self, request: ChatRequest) -> str:
        """Return the text this stand-in answered *request* with ('' when it did not)."""
        with self._cond:
            return self._answers.get(request.seq, "")

    def handle(self, request: ChatRequest) -> Reply:
        """Answer HEAD/GET, models and chat requests (see the module docstring)."""
        if request.method in ("HEAD", "GET"):
            if request.path.rstrip("/").endswith("/models"):
                return Reply.json(
                    {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "standin"}]}
                )
            return Reply.json({})
        if not request.is_chat:
            return Reply.json(
                {"error": {"message": f"no {request.path} here", "type": "invalid_request_error", "code": "not_found"}},
                status=404,
            )
        call = self.tool_calls.pop() if request.is_conversation else None
        if call is not None:
            body = request.body_dict()
            return tool_call_reply(self.new_id("chatcmpl"), self.new_id("call"), str(body.get("model") or self.model), call,
                                   usage_of(request, call.name), stream=bool(body.get("stream")))
        if request.is_conversation:
            text = self.next_answer(request)
        elif self._side_answer is not None:
            text = self._side_answer(request)
        else:
            text = SIDE_ANSWER_TEXT
        with self._cond:
            self._answers[request.seq] = text
        body = request.body_dict()
        return chat_reply(
            self.new_id("chatcmpl"), str(body.get("model") or self.model), text, usage_of(request, text),
            stream=bool(body.get("stream")),
        )


def chat_reply(completion_id: str, model: str, text: str, usage: dict[str, int], *, stream: bool,
               usage_apart: bool = True) -> Reply:
    """Return a chat completion answering *text*: one ``chat.completion`` object, or when
    *stream* ``data:`` lines of ``chat.completion.chunk`` objects (a role chunk, the text in
    pieces, a ``finish_reason: "stop"`` chunk) and ``data: [DONE]``. *usage* comes in a last
    chunk with no choices (OpenAI's ``stream_options.include_usage``) when *usage_apart*, else
    in the stop chunk (the shape Qwen Code was tested with)."""
    base = {"id": completion_id, "created": int(time.time()), "model": model}
    if not stream:
        return Reply.json({**base, "object": "chat.completion", "usage": usage, "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', 'choices': choices, **extra})}\n\n".encode()

    payload = chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    for piece in split_pieces(text):
        payload += chunk([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
    stop = [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    payload += chunk(stop) + chunk([], usage=usage) if usage_apart else chunk(stop, usage=usage)
    return Reply(200, "text/event-stream", payload + b"data: [DONE]\n\n")
