"""Bridge a session's live socket to a browser: events out over a WebSocket, typed text in.

The live socket (``<session folder>/live.sock``; the protocol is ``capture.live``'s) sends UTF-8 lines, each one JSON value: an asciicast v2 header, the backlog events,
the live events (``[t, "o"|"r"|"m", data]``), and at the end ``{"end": {...}}``. The browser
side is asciinema-player's ``websocket`` driver speaking its ``v2.asciicast`` subprotocol:
one JSON value a message, header first, then event arrays. So the header and every event
line are forwarded as they are, one message each; the end line closes the WebSocket with
code 1000 (the player shows the stream as ended). With ``bufferTime: 0`` the player draws
each event on arrival, so the old times of the backlog do not matter.

Input (``--allow-input``) is one ``{"input": TEXT, "viewer": NAME}`` line on a connection of
its own (``send_input``).

The socket's name and the connection (long paths included) are ``capture.live``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

from shellkeep.capture.live import LIVE_SOCKET, LiveRefused, connect_live, parse_line
from shellkeep.logs import get_logger

__all__ = ["LIVE_SOCKET", "MAX_LINE_BYTES", "LiveRefusedError", "connect_live", "forward_live", "has_live_socket", "send_input"]

log = get_logger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest line read from the live socket (one event of a huge paste, JSON-escaped)."""

INPUT_DRAIN_TIMEOUT_S = 5.0
"""How long ``send_input`` waits for the recorder to close after the input line is sent."""

SendText = Callable[[str], Awaitable[None]]


class LiveRefusedError(Exception):
    """The recorder refused the connection; ``str()`` is its reason (``16 viewers already``)."""


def has_live_socket(folder: Path) -> bool:
    """Return whether ``folder`` holds a live socket (its recorder publishes events)."""
    try:
        return stat.S_ISSOCK(os.stat(folder / LIVE_SOCKET).st_mode)
    except OSError:
        return False


async def forward_live(folder: Path, send_text: SendText) -> str | None:
    """Send the header and every event line of ``folder``'s live socket to ``send_text``.

    Returns when the session ends (the end line, whose ``status`` is returned, or the socket
    closing: None). Lines that are neither an event nor the header are skipped. Raises
    OSError when the socket cannot be reached, LiveRefusedError (its reason: the recorder serves
    as many viewers as it can) before anything is sent, ValueError when its first line is
    not an asciicast v2 header. Cancelling it closes the connection (the viewer left).
    """
    sock = connect_live(folder)
    sock.setblocking(False)
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=MAX_LINE_BYTES)
    try:
        first = await reader.readline()
        if first.strip() and isinstance(refused := parse_line(first), LiveRefused):
            raise LiveRefusedError(refused.reason)
        header = json.loads(first) if first.strip() else None
        if not isinstance(header, dict) or header.get("version") != 2:
            raise ValueError("the live socket did not start with an asciicast v2 header")
        await send_text(first.decode("utf-8").rstrip("\n"))
        while True:
            line = await reader.readline()
            if not line:
                return None
            if line.startswith(b"["):
                await send_text(line.decode("utf-8").rstrip("\n"))
                continue
            with contextlib.suppress(ValueError):
                value = json.loads(line)
                if isinstance(value, dict) and isinstance(value.get("end"), dict):
                    status = value["end"].get("status")
                    return status if isinstance(status, str) else None
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def send_input(folder: Path, text: str, viewer: str) -> None:
    """Type ``text`` into the live session of ``folder``, as the viewer named ``viewer``.

    Blocks until the recorder has read the line: the header and backlog are read first, the
    line is sent, the write side shut, and the connection read until the recorder closes it
    (at most ``INPUT_DRAIN_TIMEOUT_S``). Raises OSError when the session publishes nothing.
    """
    line = json.dumps({"input": text, "viewer": viewer}, ensure_ascii=False).encode("utf-8") + b"\n"
    with connect_live(folder) as sock:
        sock.settimeout(INPUT_DRAIN_TIMEOUT_S)
        stream = sock.makefile("rb")
        try:
            header = json.loads(stream.readline() or b"null")
            backlog = header.get("shellkeep", {}).get("backlog", 0) if isinstance(header, dict) else 0
            for _ in range(int(backlog) if isinstance(backlog, int) else 0):
                stream.readline()
            sock.sendall(line)
            sock.shutdown(socket.SHUT_WR)
            with contextlib.suppress(TimeoutError, OSError):
                while stream.read(65536):
                    pass
        finally:
            stream.close()
