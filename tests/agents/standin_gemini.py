"""Stand in for the Gemini API (``generativelanguage``, v1beta) on loopback, for Gemini CLI tests.

``GeminiStandin`` answers what Gemini CLI 0.57–0.61 asks of ``GOOGLE_GEMINI_BASE_URL``:

- ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse``: the main turn (a request
  that offers ``tools``), answered as server-sent events, each ``data: <GenerateContentResponse>``
  with no ``event:`` line: the text in three pieces, the last chunk with
  ``finishReason: "STOP"`` and ``usageMetadata``.
- ``POST /v1beta/models/<model>:generateContent``: side calls, answered in one JSON
  ``GenerateContentResponse``. The "utility router" that classifies each prompt asks for JSON
  (``generationConfig.responseMimeType = "application/json"``) and gets the text ``{}``, after
  which the CLI carries on with its default model; other side calls (the session summary of
  ``--list-sessions``) get ``side_answer``'s text, else a fixed text. Side calls never consume
  the script nor the count.
- ``HEAD``/``GET`` anything: 200 ``{}``; any other ``POST``: 404 with a Google-shaped error.

Function calls (``script_function_calls``): queued ``FunctionCall`` answers are given first, one
per main-turn request, as one chunk whose part is ``{functionCall: {name, args}}`` (``STOP``);
Gemini CLI runs the tool and sends a ``functionResponse`` part in the next request, which takes
the next queued call or else a text answer. A function-call answer does not consume the text
script nor the count.

Answers: the next scripted answer (``script()``), else the ``answer`` callable's text, else
``STANDIN-ANSWER-<n>: <last word of the prompt>``. Usage: ``promptTokenCount`` is the request
body's length / 4, ``candidatesTokenCount`` the answer's word count (``usage_of``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable

from .standin_server import CallQueue, Reply, StandinRequest, StandinServer, last_word, split_pieces

DEFAULT_MODEL = "gemini-standin"
SIDE_ANSWER_TEXT = "Standin side answer"


@dataclasses.dataclass(frozen=True)
class GeminiRequest(StandinRequest):
    """A request to the Gemini stand-in, with readers for the ``generateContent`` body."""

    @property
    def method_name(self) -> str:
        """Return the RPC after the colon of ``/v1beta/models/<model>:<rpc>`` ('' when none)."""
        tail = self.path.rsplit("/", 1)[-1]
        return tail.split(":", 1)[1] if ":" in tail else ""

    @property
    def model(self) -> str:
        """Return the model the path names ('' when none)."""
        return self.path.rsplit("/", 1)[-1].split(":", 1)[0]

    @property
    def is_stream(self) -> bool:
        """Tell whether this is a ``streamGenerateContent`` call."""
        return self.method == "POST" and self.method_name == "streamGenerateContent"

    @property
    def is_conversation(self) -> bool:
        """Tell whether this is a main-turn request (a stream that offers tools)."""
        return self.is_stream and bool(self.body_dict().get("tools"))

    @property
    def wants_json(self) -> bool:
        """Tell whether the request asks for a JSON answer (the router classifier)."""
        config = self.body_dict().get("generationConfig")
        return isinstance(config, dict) and config.get("responseMimeType") == "application/json"

    def texts(self) -> list[tuple[str, str]]:
        """Return ``(role, text)`` for every text part of every ``contents`` entry, in order."""
        contents = self.body_dict().get("contents")
        found: list[tuple[str, str]] = []
        for content in contents if isinstance(contents, list) else []:
            if not isinstance(content, dict):
                continue
            for part in content.get("parts") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought"):
                    found.append((str(content.get("role", "")), part["text"]))
        return found

    def turns(self) -> list[tuple[str, str]]:
        """Return ``(role, text)`` of the typed prompts and the answers (injected context left out).

        Gemini CLI puts a ``<session_context>…`` part before the first prompt; parts that start
        with ``<`` are skipped.
        """
        return [(role, text.strip()) for role, text in self.texts() if text.strip() and not text.lstrip().startswith("<")]

    def last_user_text(self) -> str:
        """Return what the user typed last ('' when there is no user text)."""
        for role, text in reversed(self.turns()):
            if role == "user":
                return text
        return ""


@dataclasses.dataclass(frozen=True)
class FunctionCall:
    """A scripted answer that calls a tool: ``name`` (``write_todos``...) with ``args``."""

    name: str
    args: dict[str, Any]


def function_responses(request: GeminiRequest) -> list[dict[str, Any]]:
    """Return every ``functionResponse`` part of the request's contents, in order."""
    contents = request.body_dict().get("contents")
    return [
        part["functionResponse"]
        for content in (contents if isinstance(contents, list) else [])
        if isinstance(content, dict)
        for part in content.get("parts") or []
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict)
    ]


def usage_of(request: GeminiRequest, answer: str) -> dict[str, int]:
    """Return the ``usageMetadata`` counts the stand-in reports for *answer* to *request*."""
    prompt = max(1, len(request.raw_body) // 4)
    output = max(1, len(answer.split()))
    return {"promptTokenCount": prompt, "candidatesTokenCount": output, "totalTokenCount": prompt + output}


class GeminiStandin(StandinServer[GeminiRequest]):
    """Serve a scripted stand-in of the Gemini API on ``127.0.0.1`` (see the module docstring).

    Point Gemini CLI at it with ``GOOGLE_GEMINI_BASE_URL=<base_url>`` and any ``GEMINI_API_KEY``.

    Args:
        answer: choose the text of a conversation answer from the request.
        side_answer: choose the text of a side call that does not ask for JSON.
    """

    request_type = GeminiRequest
    name = "gemini-standin"

    def __init__(
        self,
        answer: Callable[[GeminiRequest], str] | None = None,
        side_answer: Callable[[GeminiRequest], str] | None = None,
    ) -> None:
        super().__init__(answer)
        self._side_answer = side_answer
        self._calls: CallQueue[FunctionCall] = CallQueue()

    def script_function_calls(self, calls: list[FunctionCall]) -> None:
        """Queue tool calls for the next main-turn answers, one each, before any text answer."""
        self._calls.extend(calls)

    def default_answer(self, n: int, request: GeminiRequest) -> str:
        """Return ``STANDIN-ANSWER-<n>: <last word of the last prompt>``."""
        return f"STANDIN-ANSWER-{n}: {last_word(request.last_user_text())}"

    def conversation_requests(self) -> list[GeminiRequest]:
        """Return the main-turn requests received so far."""
        return [r for r in self.requests() if r.is_conversation]

    def handle(self, request: GeminiRequest) -> Reply:
        """Answer HEAD/GET, ``streamGenerateContent`` and ``generateContent`` (module docstring)."""
        if request.method in ("HEAD", "GET"):
            return Reply.json({})
        if request.method_name not in ("streamGenerateContent", "generateContent"):
            return Reply.json(
                {"error": {"code": 404, "message": f"no {request.path} here", "status": "NOT_FOUND"}}, status=404
            )
        call = self._calls.pop() if request.is_conversation else None
        if call is not None:
            chunk = _chunk("", request.model or DEFAULT_MODEL, finished=True, usage=usage_of(request, call.name))
            chunk["candidates"][0]["content"]["parts"] = [{"functionCall": {"name": call.name, "args": call.args}}]
            return Reply(200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        if request.is_conversation:
            text = self.next_answer(request)
        elif request.wants_json:
            text = "{}"
        elif self._side_answer is not None:
            text = self._side_answer(request)
        else:
            text = SIDE_ANSWER_TEXT
        model = request.model or DEFAULT_MODEL
        if not request.is_stream:
            return Reply.json(_chunk(text, model, finished=True, usage=usage_of(request, text)))
        pieces = split_pieces(text)
        chunks = [
            _chunk(piece, model, finished=i == len(pieces) - 1, usage=usage_of(request, text) if i == len(pieces) - 1 else None)
            for i, piece in enumerate(pieces)
        ]
        payload = b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode() for c in chunks)
        return Reply(200, "text/event-stream", payload)


def _chunk(text: str, model: str, *, finished: bool, usage: dict[str, int] | None) -> dict[str, Any]:
    """Return one ``GenerateContentResponse`` holding *text* (the last one says STOP and usage)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finished:
        candidate["finishReason"] = "STOP"
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
    if usage is not None:
        chunk["usageMetadata"] = usage
    return chunk
