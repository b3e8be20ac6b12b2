"""Build the ASGI application of ``shellkeep serve`` from a ``ServeSetup``.

Routes are listed in ``web.pages``; ``/static`` serves the page script, the stylesheet and
asciinema-player's release files (``static/asciinema-player``, Apache-2.0, its LICENSE
beside it; ``scripts/update-player VERSION`` replaces them). The whole application sits
behind ``web.auth.TokenGuard``.
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from shellkeep.app.serve import WILDCARD_HOSTS, ServeSetup, is_loopback
from shellkeep.web.auth import FailureLimiter, TokenGuard
from shellkeep.web.pages import Pages

__all__ = ["STATIC", "TEMPLATES", "build_app", "served_origins"]

_HERE = Path(__file__).resolve().parent
STATIC = _HERE / "static"
"""The folder served under ``/static``."""
TEMPLATES = _HERE / "templates"
"""The Jinja2 templates of the pages."""

def served_origins(setup: ServeSetup) -> frozenset[str]:
    """Return the origins a browser shows for this server (``http://host:port``).

    A loopback server is also reached as ``localhost`` and ``127.0.0.1``; one bound to every
    address (0.0.0.0, ::) returns an empty set: the request's own ``Host`` then decides
    (``web.auth.allowed_origin``).
    """
    if setup.host in WILDCARD_HOSTS:
        return frozenset()
    origins = {setup.origin}
    if is_loopback(setup.host):
        origins |= {f"http://localhost:{setup.port}", f"http://127.0.0.1:{setup.port}", f"http://[::1]:{setup.port}"}
    return frozenset(origins)


def build_app(setup: ServeSetup, *, limiter: FailureLimiter | None = None) -> Starlette:
    """Return the application, every route behind the token guard."""
    origins = served_origins(setup)
    pages = Pages(setup, TEMPLATES, origins)

    async def session_input(request: Request) -> Response:
        try:
            payload = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON; send {\"text\": ...}"}, status_code=400)
        return await run_in_threadpool(pages.session_input, request, payload)

    routes = [
        Route("/", pages.session_list),
        Route("/s/{session_id}", pages.session_page),
        Route("/stats", pages.stats_page),
        Route("/api/sessions", pages.sessions_json),
        Route("/api/sessions/{session_id}/cast", pages.session_cast),
        Route("/api/sessions/{session_id}/input", session_input, methods=["POST"]),
        Route("/api/stats", pages.stats_json),
        WebSocketRoute("/ws/s/{session_id}", pages.live_socket),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]
    guard = Middleware(TokenGuard, token=setup.token, port=setup.port, served_origins=origins, limiter=limiter)
    return Starlette(routes=routes, middleware=[guard])
