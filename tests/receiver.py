"""A loopback HTTP receiver for notification tests, and the ``[notify]`` config they write.

``Receiver`` is a real ``http.server`` on 127.0.0.1 (a thread per request) that answers
every POST with 200 and keeps it; tests wait for its requests, never sleep.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shellkeep.store.paths import Paths
from tests.helpers import wait_until


@dataclass(frozen=True)
class Received:
    """One POST: its path, its headers (lower-case names) and its body."""

    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """A loopback HTTP server that keeps every POST it gets; ``url`` is ``http://127.0.0.1:PORT/topic``."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/topic"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_for(self, count: int = 1, timeout_s: float = 30.0) -> list[Received]:
        """Return the requests once there are at least ``count`` (TimeoutError after ``timeout_s``)."""
        wait_until(lambda: len(self.requests) >= count, timeout_s)
        with self._lock:
            return list(self.requests)

    def close(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()


def configure_notify(paths: Paths, **notify: object) -> None:
    """Write a user config file holding only a ``[notify]`` table with ``notify``'s keys."""
    lines = ["[notify]"] + [f"{key} = {json.dumps(value)}" for key, value in notify.items()]
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("\n".join(lines) + "\n")
