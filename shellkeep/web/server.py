"""Run the web application with uvicorn on the socket ``app.serve`` bound; draw the URL's QR code.

uvicorn's access log is off: the first request of a browser carries the token in its URL.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

import segno
import uvicorn

from shellkeep.app.serve import ServeSetup
from shellkeep.web.app import build_app

__all__ = ["qr_text", "run_server"]


def qr_text(url: str) -> str:
    """Return ``url`` as a QR code drawn with Unicode half blocks (for a phone to scan)."""
    out = io.StringIO()
    segno.make(url, error="l").terminal(out=out, compact=True, border=2)
    return out.getvalue()


def run_server(setup: ServeSetup, on_ready: Callable[[], None] | None = None) -> None:
    """Serve until interrupted (Ctrl-C, SIGTERM); blocks. ``on_ready`` runs once it listens.

    The socket in ``setup`` is used as it is and closed on the way out.
    """
    config = uvicorn.Config(
        build_app(setup),
        log_level=logging.WARNING,
        access_log=False,
        lifespan="off",
        ws="websockets-sansio",
        ws_max_size=1024 * 1024,
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=3,
    )
    server = _Server(config, on_ready)
    try:
        server.run(sockets=[setup.sock])
    finally:
        setup.sock.close()


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[object] | None = None) -> None:  # type: ignore[override]
        await super().startup(sockets=sockets)  # type: ignore[arg-type]
        if self._on_ready is not None and self.started:
            self._on_ready()
