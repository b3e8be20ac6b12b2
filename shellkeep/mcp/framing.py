"""The JSON-RPC framing shellkeep adds around the MCP SDK's stdio streams: every line answered.

The SDK's stdio transport hands the server a stream of parsed messages, and an ``Exception``
for a line it could not parse, which its dispatcher drops without a word. When stdin closes,
the dispatcher cancels the requests still running, so a client that writes its requests and
closes its end loses the replies not yet written. ``answer_every_line`` wraps the two streams:

- a line that is not JSON gets JSON-RPC's parse error (-32700), JSON that is not a JSON-RPC
  message its invalid request (-32600), both with ``"id": null`` as JSON-RPC 2.0 says; a blank
  line is skipped; the next lines are served as before;
- the end of stdin reaches the server only once every request read has its reply written
  (a request the client cancels with ``notifications/cancelled`` is owed none).
"""

from __future__ import annotations

import contextvars
from collections import Counter
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse, RequestId
from pydantic import ValidationError
from typing_extensions import Self

if TYPE_CHECKING:  # the protocols the SDK's serving loop takes its streams as
    from mcp.shared._stream_protocols import ReadStream, WriteStream

__all__ = ["PARSE_ERROR", "INVALID_REQUEST", "answer_every_line"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

_Item = SessionMessage | Exception


def refusal(exc: Exception) -> SessionMessage | None:
    """Return the JSON-RPC error answering a line the SDK could not read, or None for a blank line."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    invalid_json = [e for e in errors if e["type"] == "json_invalid"]
    if invalid_json and not str(invalid_json[0].get("input", "x")).strip():
        return None
    if invalid_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 request, notification or response")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


class _Owed:
    """The requests read whose replies are not yet written; ``settled`` is set when there are none."""

    def __init__(self) -> None:
        self._ids: Counter[RequestId] = Counter()
        self.settled = anyio.Event()
        self.settled.set()

    def add(self, request_id: RequestId) -> None:
        self._ids[request_id] += 1
        if self.settled.is_set():
            self.settled = anyio.Event()

    def discard(self, request_id: RequestId | None) -> None:
        if request_id is None or self._ids[request_id] <= 0:
            return
        self._ids[request_id] -= 1
        if self._ids[request_id] == 0:
            del self._ids[request_id]
        if not self._ids:
            self.settled.set()


def _cancelled_id(message: JSONRPCNotification) -> RequestId | None:
    if message.method != "notifications/cancelled" or not isinstance(message.params, dict):
        return None
    request_id = message.params.get("requestId")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


class _Replies:
    """The write side: the SDK's stream to stdout, each reply written settling what it answers."""

    def __init__(self, inner: WriteStream[SessionMessage], owed: _Owed) -> None:
        self._inner, self._owed = inner, owed

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._owed.discard(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


class _Requests:
    """The read side: messages as the SDK parsed them, unreadable lines answered here, the end held back."""

    def __init__(self, inner: ReadStream[_Item], replies: WriteStream[SessionMessage], owed: _Owed) -> None:
        self._inner, self._replies, self._owed = inner, replies, owed
        self.last_context: contextvars.Context | None = None  # the SDK's context-aware stream's attribute, passed on

    async def receive(self) -> _Item:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                await self._owed.settled.wait()
                raise
            self.last_context = getattr(self._inner, "last_context", None)
            if isinstance(item, Exception):
                answer = refusal(item)
                if answer is not None:
                    await self._replies.send(answer)
                continue
            if isinstance(item.message, JSONRPCRequest):
                self._owed.add(item.message.id)
            elif isinstance(item.message, JSONRPCNotification):
                self._owed.discard(_cancelled_id(item.message))
            return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> _Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


def answer_every_line(
    read_stream: ReadStream[_Item], write_stream: WriteStream[SessionMessage]
) -> tuple[ReadStream[_Item], WriteStream[SessionMessage]]:
    """Return the SDK's stdio stream pair wrapped so that every line gets its answer (module docstring)."""
    owed = _Owed()
    replies = _Replies(write_stream, owed)
    return _Requests(read_stream, replies, owed), replies
