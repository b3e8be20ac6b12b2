"""Guard every request of ``shellkeep serve``: the token, its cookie, the rate limit, the Origin.

``TokenGuard`` is a plain ASGI middleware in front of the whole application:

- a request carrying ``?token=`` with the right token gets the token as an HttpOnly,
  SameSite=Strict cookie (named after the port, so two servers do not mix) and a 303
  redirect to the same URL without it; with a wrong one, 401;
- any other request needs that cookie: none or a wrong one, 401;
- tokens are compared with ``hmac.compare_digest``; a wrong token (in the URL or the cookie)
  counts against the client address (the socket's peer: proxy headers are not trusted), and
  an address with ``MAX_FAILURES`` wrong tokens in the last ``FAILURE_WINDOW_S`` seconds gets
  429 until they age out, for every request but those that carry the right token, in the
  cookie or in the URL: the owner opening the printed URL, or a viewer already signed in, is
  never locked out by someone guessing from the same address (on loopback every local
  client shares 127.0.0.1). So a limited address still has its tokens compared; a wrong one
  gets 429 and is not counted again. Guessing stays no easier than the token's 256 random
  bits make it. Each wrong token is logged (the address and the count, never the value);
- a WebSocket upgrade also needs an ``Origin`` equal to the served ``http://host:port``
  (``allowed_origin``); any refused upgrade is closed before it is accepted (HTTP 403).
"""

from __future__ import annotations

import hmac
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from shellkeep.logs import get_logger

__all__ = ["FAILURE_WINDOW_S", "MAX_FAILURES", "FailureLimiter", "TokenGuard", "allowed_origin", "cookie_name"]

log = get_logger(__name__)

MAX_FAILURES = 10
"""Wrong tokens one client address may send per ``FAILURE_WINDOW_S`` before it gets 429."""

FAILURE_WINDOW_S = 60.0
"""The window of ``MAX_FAILURES``, in seconds."""

_MAX_ADDRESSES = 10_000

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def cookie_name(port: int) -> str:
    """Return the name of the token cookie of the server on ``port``."""
    return f"shellkeep_token_{port}"


class FailureLimiter:
    """Count wrong tokens per client address over a sliding window (monotonic clock)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = FAILURE_WINDOW_S) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, address: str, now: float) -> deque[float]:
        times = self._failures.setdefault(address, deque())
        while times and now - times[0] > self.window_s:
            times.popleft()
        if not times:
            del self._failures[address]
            return deque()
        return times

    def is_blocked(self, address: str, now: float | None = None) -> bool:
        """Return whether ``address`` has used up its wrong tokens for now."""
        now = time.monotonic() if now is None else now
        return len(self._recent(address, now)) >= self.max_failures

    def fail(self, address: str, now: float | None = None) -> int:
        """Count one wrong token from ``address``; return its count in the window.

        Addresses whose failures all aged out are forgotten once ``_MAX_ADDRESSES`` are held,
        so many addresses cannot grow the table without bound.
        """
        now = time.monotonic() if now is None else now
        if len(self._failures) >= _MAX_ADDRESSES:
            for known in list(self._failures):
                self._recent(known, now)
        self._recent(address, now)
        times = self._failures.setdefault(address, deque())
        times.append(now)
        return len(times)


def allowed_origin(origin: str | None, host_header: str | None, served_origins: frozenset[str]) -> bool:
    """Return whether a WebSocket's ``Origin`` is the server's own.

    served_origins: the ``http://host:port`` values the server is reached at; empty when it
    listens on every address (0.0.0.0, ::), where the origin must then be the one the
    request's ``Host`` header names.
    """
    if not origin:
        return False
    if served_origins:
        return origin in served_origins
    return host_header is not None and origin == f"http://{host_header}"


class TokenGuard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, *, token: str, port: int, served_origins: frozenset[str], limiter: FailureLimiter | None = None) -> None:
        self.app = app
        self._token = token.encode("ascii")
        self.cookie = cookie_name(port)
        self.served_origins = served_origins
        self.limiter = limiter or FailureLimiter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("unknown", 0))[0]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        cookie = _cookie(headers.get("cookie", ""), self.cookie)
        signed_in = cookie is not None and self._matches(cookie)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [value for key, value in query if key == "token"] if scope["type"] == "http" else []
        if given and self._matches(given[0]):
            await self._set_cookie_and_redirect(scope, send, [(k, v) for k, v in query if k != "token"])
            return
        if not signed_in and self.limiter.is_blocked(address):
            await self._refuse(scope, send, 429, "too many wrong tokens; wait a minute and open the URL 'shellkeep serve' printed")
            return
        if given:
            await self._wrong(scope, send, address, "in the URL")
            return
        if cookie is None:
            await self._refuse(scope, send, 401, "this page needs the token: open the URL 'shellkeep serve' printed")
            return
        if not signed_in:
            await self._wrong(scope, send, address, "in a cookie")
            return
        if scope["type"] == "websocket" and not allowed_origin(headers.get("origin"), headers.get("host"), self.served_origins):
            log.warning("refused a WebSocket from %s with origin %r", address, headers.get("origin"))
            await self._refuse(scope, send, 403, "cross-origin WebSocket refused")
            return
        await self.app(scope, receive, send)

    def _matches(self, candidate: str) -> bool:
        try:
            return hmac.compare_digest(candidate.encode("ascii"), self._token)
        except UnicodeEncodeError:
            return False

    async def _wrong(self, scope: Scope, send: Send, address: str, where: str) -> None:
        count = self.limiter.fail(address)
        log.warning("wrong token %s from %s (%d in the last %.0f s)", where, address, count, self.limiter.window_s)
        if count > self.limiter.max_failures:
            await self._refuse(scope, send, 429, "too many wrong tokens; wait a minute and open the URL 'shellkeep serve' printed")
        else:
            await self._refuse(scope, send, 401, "wrong token: open the URL 'shellkeep serve' printed")

    async def _set_cookie_and_redirect(self, scope: Scope, send: Send, rest: list[tuple[str, str]]) -> None:
        location = scope.get("root_path", "") + scope.get("path", "/")
        if rest:
            location += "?" + urlencode(rest)
        cookie = f"{self.cookie}={self._token.decode('ascii')}; Path=/; HttpOnly; SameSite=Strict"
        await send({
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode("latin-1")),
                (b"set-cookie", cookie.encode("latin-1")),
                (b"cache-control", b"no-store"),
                (b"referrer-policy", b"no-referrer"),
                (b"content-length", b"0"),
            ],
        })
        await send({"type": "http.response.body", "body": b""})

    async def _refuse(self, scope: Scope, send: Send, status: int, text: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": ""})  # before accept: HTTP 403
            return
        body = (
            "<!doctype html><meta charset=utf-8><meta name=viewport content='width=device-width, initial-scale=1'>"
            f"<title>shellkeep: {status}</title><p>shellkeep: {text}</p>\n"
        ).encode("utf-8")
        await send({
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"cache-control", b"no-store"),
            ],
        })
        await send({"type": "http.response.body", "body": body})


def _cookie(header: str, name: str) -> str | None:
    if not header:
        return None
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return None
    morsel = jar.get(name)
    return None if morsel is None else morsel.value
