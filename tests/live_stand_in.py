"""A stand-in for the recorder's live socket (the protocol of shellkeep.capture.live), for the ``serve`` tests.

The real publisher is built on another branch (helper "live"); until it is merged these tests
need a peer that speaks its protocol on a real Unix socket in a real session folder, as the
agent tests use a loopback stand-in for a model. ``LivePublisher`` binds
``<folder>/live.sock`` (0600, through ``/proc/self/fd`` of the folder, so long paths work),
sends each client the header and the backlog, then every event ``publish`` is given, and
keeps the input lines clients send. ``end`` sends the end line and closes every client.

An existing ``live.sock`` (a real recorder that publishes, once that branch is merged) is
replaced, so a test using this stand-in keeps running the same way after the merge.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import threading
from pathlib import Path

LIVE_SOCKET = "live.sock"

_STOP = b"stop"


class LivePublisher:
    """Serve the live protocol for one session folder on a thread of its own."""

    def __init__(self, folder: Path, *, session_id: str, cols: int = 80, rows: int = 24, backlog: list[list[object]] | None = None) -> None:
        self.folder = folder
        self.header = {"version": 2, "width": cols, "height": rows, "timestamp": 0, "shellkeep": {"session": session_id, "backlog": 0}}
        self.backlog: list[list[object]] = list(backlog or [])
        self.inputs: list[dict[str, object]] = []
        self.malformed = 0
        self._clients: dict[socket.socket, bytearray] = {}
        self._lock = threading.Lock()
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._listener = self._bind()
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._serve, name="live-stand-in", daemon=True)
        self._thread.start()

    def _bind(self) -> socket.socket:
        path = self.folder / LIVE_SOCKET
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        dirfd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        old = os.umask(0o177)
        try:
            listener.bind(f"/proc/self/fd/{dirfd}/{LIVE_SOCKET}")
        finally:
            os.umask(old)
            os.close(dirfd)
        os.chmod(path, 0o600)
        listener.listen(16)
        listener.setblocking(False)
        return listener

    def clients(self) -> int:
        """Return how many clients are connected now."""
        with self._lock:
            return len(self._clients)

    def publish(self, event: list[object]) -> None:
        """Send one event ``[t, code, data]`` to every client (and keep it in the backlog)."""
        line = json.dumps(event).encode("utf-8") + b"\n"
        with self._lock:
            self.backlog.append(event)
            for client in list(self._clients):
                self._send(client, line)

    def end(self, status: str = "finished", exit_code: int = 0) -> None:
        """Send the end line to every client and close them; stop accepting."""
        line = json.dumps({"end": {"status": status, "exit_code": exit_code}}).encode("utf-8") + b"\n"
        with self._lock:
            for client in list(self._clients):
                self._send(client, line)
                self._drop(client)
        self.close()

    def close(self) -> None:
        """Stop the thread and remove the socket file."""
        with contextlib.suppress(OSError):
            self._wake_w.send(_STOP)
        self._thread.join(10)
        with contextlib.suppress(FileNotFoundError):
            (self.folder / LIVE_SOCKET).unlink()

    def _send(self, client: socket.socket, line: bytes) -> None:
        try:
            client.setblocking(True)
            client.sendall(line)
        except OSError:
            self._drop(client)

    def _drop(self, client: socket.socket) -> None:
        self._clients.pop(client, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(client)
        client.close()

    def _serve(self) -> None:
        try:
            while True:
                for key, _ in self._selector.select():
                    if key.data == "wake":
                        return
                    if key.data == "accept":
                        self._accept()
                    else:
                        self._read(key.fileobj)  # type: ignore[arg-type]
        finally:
            with self._lock:
                for client in list(self._clients):
                    self._drop(client)
            self._selector.close()
            self._listener.close()
            self._wake_r.close()
            self._wake_w.close()

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except BlockingIOError:
            return
        with self._lock:
            header = dict(self.header, shellkeep={**self.header["shellkeep"], "backlog": len(self.backlog)})  # type: ignore[dict-item]
            lines = [json.dumps(header).encode("utf-8") + b"\n"] + [json.dumps(e).encode("utf-8") + b"\n" for e in self.backlog]
            client.sendall(b"".join(lines))
            self._clients[client] = bytearray()
            client.setblocking(False)
            self._selector.register(client, selectors.EVENT_READ, "client")

    def _read(self, client: socket.socket) -> None:
        with self._lock:
            try:
                data = client.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._drop(client)
                return
            pending = self._clients.get(client)
            if pending is None:
                return
            pending += data
            while b"\n" in pending:
                line, _, rest = bytes(pending).partition(b"\n")
                pending[:] = rest
                try:
                    value = json.loads(line)
                except ValueError:
                    self.malformed += 1
                    self._drop(client)
                    return
                if isinstance(value, dict) and isinstance(value.get("input"), str):
                    self.inputs.append(value)
