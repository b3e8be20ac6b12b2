"""Serve a scripted stand-in model API on loopback: recording, answers and life cycle.

``StandinServer`` is the part the API stand-ins share (``standin_anthropic``,
``standin_openai``): a ``ThreadingHTTPServer`` bound to ``127.0.0.1`` on a free port, a
thread-safe record of every request (method, path, headers, parsed JSON body), a way to wait
for a request, and the choice of the next answer text (a script queue, a callable, or the
subclass's deterministic default). Subclasses turn a request into a ``Reply``.
"""

from __future__ import annotations

import collections
import dataclasses
import gzip
import itertools
import json
import logging
import re
import threading
import time
import urllib.parse
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Generic, Iterable, Mapping, TypeVar

_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StandinRequest:
    """One HTTP request a stand-in received.

    ``body`` is the parsed JSON body (``None`` when there was none or it was not JSON);
    ``raw_body`` keeps the bytes after undoing a gzip or deflate ``Content-Encoding``. ``seq`` numbers requests from 0 in arrival order; header names
    are lowercase.
    """

    seq: int
    method: str
    path: str
    query: str
    headers: Mapping[str, str]
    raw_body: bytes
    body: Any

    def body_dict(self) -> dict[str, Any]:
        """Return the body when it is a JSON object, else an empty dict."""
        return self.body if isinstance(self.body, dict) else {}


@dataclasses.dataclass(frozen=True)
class Reply:
    """What to send back: an HTTP status, a content type and the whole payload."""

    status: int
    content_type: str
    payload: bytes

    @classmethod
    def json(cls, data: Any, status: int = 200) -> Reply:
        """Build a JSON reply."""
        return cls(status, "application/json", json.dumps(data).encode())

    @classmethod
    def sse(cls, events: Iterable[tuple[str, Mapping[str, Any]]]) -> Reply:
        """Build a server-sent-event reply, one ``event:``/``data:`` pair per event."""
        payload = b"".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
        )
        return cls(200, "text/event-stream", payload)


RequestT = TypeVar("RequestT", bound=StandinRequest)
CallT = TypeVar("CallT")


class CallQueue(Generic[CallT]):
    """Scripted tool calls, first in first out, safe across the server's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: collections.deque[CallT] = collections.deque()

    def extend(self, calls: list[CallT]) -> None:
        """Queue *calls*."""
        with self._lock:
            self._calls.extend(calls)

    def pop(self) -> CallT | None:
        """Return the next queued call, or None."""
        with self._lock:
            return self._calls.popleft() if self._calls else None
AnswerFn = Callable[[Any], str]


def last_word(text: str) -> str:
    """Return the last word of *text* made of letters, digits, '-' and '_' (or 'nothing')."""
    words = re.findall(r"[A-Za-z0-9_\-]+", text)
    return words[-1] if words else "nothing"


def split_pieces(text: str, count: int = 3) -> list[str]:
    """Split *text* at spaces into at most *count* pieces that join back to *text*."""
    words = text.split(" ")
    if len(words) < 2:
        return [text]
    size = max(1, -(-len(words) // count))
    return [
        " ".join(words[i : i + size]) + (" " if i + size < len(words) else "")
        for i in range(0, len(words), size)
    ]


def schema_answer(fmt: Any) -> str | None:
    """Answer a structured-output request: a JSON object fitting a ``json_schema`` format.

    *fmt* is the request's format object (``{"type": "json_schema", "schema": {...}}``, as in
    Anthropic's ``output_config.format`` and OpenAI's ``text.format``). Every string property
    gets ``"Standin <name>"``, other types an empty value. Returns ``None`` when *fmt* is not
    a JSON-schema format with properties.
    """
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    schema = fmt.get("schema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    empty: dict[str, Any] = {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}
    return json.dumps(
        {
            name: empty.get(str(spec.get("type") if isinstance(spec, dict) else ""),
                            f"Standin {name}")
            for name, spec in properties.items()
        }
    )


class StandinServer(Generic[RequestT]):
    """Record requests and serve ``Reply`` values built by ``handle()`` on loopback.

    Use as a context manager (or ``start()``/``stop()``); ``base_url`` is
    ``http://127.0.0.1:<port>``. Handlers run on the server's threads; every public method
    is safe to call from the test's thread.

    Args:
        answer: choose the text of a conversation answer from the request, when no scripted
            answer is queued; default ``default_answer()`` of the subclass.
    """

    request_type: type[RequestT]
    name = "standin"

    def __init__(self, answer: Callable[[RequestT], str] | None = None) -> None:
        self._answer = answer
        self._cond = threading.Condition()
        self._requests: list[RequestT] = []
        self._script: collections.deque[str] = collections.deque()
        self._answered = 0
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._hold: Callable[[RequestT], bool] | None = None
        self._released = threading.Event()

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> StandinServer[RequestT]:
        """Bind to a free loopback port and serve on a daemon thread (idempotent)."""
        if self._server is not None:
            return self
        server = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
            name=self.name,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release held requests, stop serving and close the socket (idempotent)."""
        self.release()
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self: _S) -> _S:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """Return the bound TCP port (after ``start()``)."""
        if self._server is None:
            raise RuntimeError(f"{self.name} is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """Return ``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    # -- answers ----------------------------------------------------------------------------

    def script(self, answers: Iterable[str]) -> None:
        """Queue texts for the next conversation answers, first in first out."""
        with self._cond:
            self._script.extend(answers)

    @property
    def answered(self) -> int:
        """Return how many conversation answers were given so far."""
        with self._cond:
            return self._answered

    def next_answer(self, request: RequestT) -> str:
        """Count one conversation answer and return its text (script, callable, default)."""
        with self._cond:
            self._answered += 1
            n = self._answered
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return scripted
        if self._answer is not None:
            return self._answer(request)
        return self.default_answer(n, request)

    def default_answer(self, n: int, request: RequestT) -> str:
        """Return the *n*-th (1-based) default answer; subclasses echo the prompt's last word."""
        return f"STANDIN-ANSWER-{n}"

    def new_id(self, prefix: str) -> str:
        """Return a fresh id like ``msg_standin000001``."""
        return f"{prefix}_standin{next(self._ids):06d}"

    # -- held requests --------------------------------------------------------------------

    def hold(self, predicate: Callable[[RequestT], bool]) -> None:
        """Keep requests matching *predicate* unanswered until ``release()`` (see ``wait_if_held``).

        A held request is recorded on arrival, so a test can wait for it and kill the agent
        while its turn is unanswered. Requests arriving after ``release()`` are not held.
        """
        self._released.clear()
        self._hold = predicate

    def release(self) -> None:
        """Let held requests go (each gets the subclass's error reply); hold no more."""
        self._hold = None
        self._released.set()

    def wait_if_held(self, request: RequestT) -> bool:
        """Block while *request* is held (it matches ``hold``); return whether it was.

        Subclasses call it from ``handle`` for the requests that may be held, and answer a
        held one with an error once it returns, never with an answer.
        """
        hold = self._hold
        if hold is None or not hold(request):
            return False
        self._released.wait()
        return True

    # -- recorded requests ------------------------------------------------------------------

    def requests(self) -> list[RequestT]:
        """Return a snapshot of every request received so far, in arrival order."""
        with self._cond:
            return list(self._requests)

    def wait_for_request(
        self,
        predicate: Callable[[RequestT], bool],
        timeout_s: float = 30.0,
        pump: Callable[[float], object] | None = None,
    ) -> RequestT:
        """Block until a request matching *predicate* has arrived; return the first match.

        pump: reads the agent's terminal for up to the seconds given (``ScreenDriver.pump``),
        called between looks. Pass it while the agent draws: a terminal nobody reads fills,
        the relay stops reading the agent, and the agent, blocked writing its spinner, never
        sends the request (Qwen Code did, on a loaded machine).

        Raises:
            TimeoutError: none arrived within *timeout_s*; the message lists what did.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            with self._cond:
                for request in self._requests:
                    if predicate(request):
                        return request
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [f"{r.method} {r.path}" for r in self._requests]
                    raise TimeoutError(f"no matching request within {timeout_s}s; got {seen}")
                if pump is None:
                    self._cond.wait(remaining)
                    continue
            pump(min(0.1, remaining))

    def _record(self, **fields: Any) -> RequestT:
        with self._cond:
            request = self.request_type(seq=len(self._requests), **fields)
            self._requests.append(request)
            self._cond.notify_all()
        return request

    # -- replies (subclasses) -----------------------------------------------------------------

    def handle(self, request: RequestT) -> Reply:
        """Build the reply to *request*: 200 ``{}`` for HEAD/GET, 404 otherwise."""
        if request.method in ("HEAD", "GET"):
            return Reply.json({})
        return Reply.json({"error": {"message": f"no {request.path} here"}}, status=404)


_S = TypeVar("_S", bound=StandinServer[Any])


def _decode_body(raw: bytes, encoding: str) -> bytes:
    """Undo a ``Content-Encoding`` of gzip or deflate; leave others as they are.

    Neither Claude Code 2.1.197 nor Codex 0.171.0 compresses request bodies to these
    stand-ins (both only offer ``accept-encoding`` for answers, which are sent plain).
    """
    encoding = encoding.lower().strip()
    try:
        if encoding == "gzip":
            return gzip.decompress(raw)
        if encoding == "deflate":
            return zlib.decompress(raw)
    except (OSError, zlib.error):
        return raw
    return raw


def _make_handler(standin: StandinServer[Any]) -> type[BaseHTTPRequestHandler]:
    """Build the request handler class bound to *standin*."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ShellkeepStandin/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            _log.debug(standin.name + ": " + format, *args)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            raw = _decode_body(raw, self.headers.get("Content-Encoding", ""))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            parts = urllib.parse.urlsplit(self.path)
            request = standin._record(
                method=self.command,
                path=parts.path,
                query=parts.query,
                headers={k.lower(): v for k, v in self.headers.items()},
                raw_body=raw,
                body=body,
            )
            try:
                reply = standin.handle(request)
            except Exception as exc:  # a stand-in bug must show, not hang the agent
                _log.exception("%s failed on %s %s", standin.name, self.command, self.path)
                reply = Reply.json({"error": {"message": repr(exc)}}, status=500)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.payload)))
            self.send_header("request-id", standin.new_id("req"))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.payload)
                self.wfile.flush()

        do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815

    return Handler
