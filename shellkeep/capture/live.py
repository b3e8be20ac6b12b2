"""Publish a recording session's events to local viewers through its live socket.

The protocol (issue 12): ``<session folder>/live.sock``, an AF_UNIX
stream socket, mode 0600, removed when the session ends. The server sends UTF-8 lines, each
one JSON value and ``\\n``: an asciicast v2 header whose width/height are the terminal's size
now and whose ``shellkeep`` object holds ``{"session": ID, "backlog": N}``; N backlog events
(``[t, "o"|"r"|"m", data]``, t float seconds since the session started, data redacted as in
the recording; a leading ``r`` gives the size the backlog starts at when it differs); then
live events as they are written; at the end ``{"end": {"status": ..., "exit_code": N}}``,
and the server closes. A client past ``MAX_CLIENTS`` gets one line instead of the header,
``{"refused": "16 viewers already"}`` (the reason, for people), and is closed. A client may send ``{"input": TEXT, "viewer": NAME}`` lines; anything
else that is a JSON value is ignored, a line that is not ends that client's connection.

``LivePublisher`` is the server: the recorder's writer thread hands it the event lines it has
just encoded (after redaction; never input), and a publisher thread of its own keeps the
backlog ring and serves up to ``MAX_CLIENTS`` clients with ``selectors``. A client whose
unsent data would pass ``CLIENT_BUFFER_BYTES`` is dropped: neither the relay nor the writer
ever waits for a viewer. ``connect_live`` is the client's side, used by ``watch`` and ``serve``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.asciicast.encoder import encode_event
from shellkeep.asciicast.model import Event
from shellkeep.logs import get_logger
from shellkeep.termsize import TermSize

log = get_logger(__name__)

LIVE_SOCKET = "live.sock"
"""The socket's name in the session folder (``store.session.LIVE_SOCKET`` is the same; a test
keeps them in step: this layer sits below ``store``)."""

MAX_CLIENTS = 16
"""Clients served at once; one more is sent a ``refused`` line and closed as soon as it connects."""

REFUSED_FULL = f"{MAX_CLIENTS} viewers already"
"""The reason of the ``refused`` line a client past ``MAX_CLIENTS`` gets."""

CLIENT_BUFFER_BYTES = 4 << 20
"""Bytes queued for one client beyond what its socket takes; past this it is dropped."""

BACKLOG_BYTES = 1 << 20
"""About this many bytes of event lines are kept for a new client to rebuild the screen from."""

MAX_INPUT_LINE_BYTES = 64 << 10
"""A client line longer than this (input pasted by a viewer) ends its connection."""

MAX_VIEWER_NAME = 64
"""Characters of a viewer's name kept in the input marker."""

INPUT_MARKER_PREFIX = "input from viewer "
"""The marker recorded before input a viewer types: this prefix and the viewer's name."""

_BINDING = ".live.sock.tmp"  # the socket's name until it listens
_SUN_PATH_MAX = 107  # sockaddr_un.sun_path is 108 bytes on Linux, NUL included
_ALT_ON = ("\x1b[?1049h",)  # the sequence a viewer is put on the alternate screen with
_TAIL_CHARS = 24  # longer than any sequence ``_screen_marks`` matches
_HOME = r"\[1?;?1?H"  # after ESC: ESC[H, ESC[1;1H, ESC[;H, ESC[1H
_MARK_NEEDLES = ("\x1bc", "\x1b[?1049", "\x1b[?1047", "\x1b[?47", "\x1b[J", "\x1b[0J", "\x1b[2J", "r\x1b[")
"""Every match of ``_screen_marks`` holds one of these."""
_SCROLLBACK = r"(?:\x1b\[3J)?"  # erase scrollback (xterm's E3): alone it leaves the screen as it is


@functools.cache
def _screen_marks() -> re.Pattern[str]:
    """The sequences the backlog ring restarts at (ECMA-48, xterm's ctlseqs): ``reset``
    (RIS, ESC c), ``on``/``off`` (the alternate screen, DEC modes 1049, 1047, 47) and
    ``clear``: the cursor home and an erase of the display below it or all of it, in either
    order, with an erase of the scrollback between or around (``clear`` as xterm's, tmux's
    and screen's terminfo entries send it: ESC[H ESC[2J ESC[3J, ESC[H ESC[J, ...), and
    ``scroll``: a scroll region scrolled up by its height (tmux clearing a pane above its
    status line; ``_scrolls_screen_away`` tells whether it spans the screen). After a restart
    there, the status line comes back with tmux's next redraw of it.

    Every match starts with ESC and branches on the next characters, so a scan costs little
    more than finding the ESCs.
    """
    clear = (
        rf"\[(?:3J\x1b\[)?(?:1?;?1?H{_SCROLLBACK}\x1b\[[02]?J{_SCROLLBACK}|2J{_SCROLLBACK}\x1b{_HOME})"
    )
    modes = r"\[\?(?:1049|1047|47)"
    # tmux clears a pane above its status line by scrolling it away: a scroll region
    # (DECSTBM), maybe a cursor move, then a scroll up (SU) by the region's height.
    scroll = r"\[(?P<top>\d+);(?P<bottom>\d+)r(?:\x1b\[\d*;?\d*H)?\x1b\[(?P<count>\d+)S"
    return re.compile(rf"\x1b(?:(?P<reset>c)|{modes}(?:(?P<on>h)|(?P<off>l))|(?P<clear>{clear})|(?P<scroll>{scroll}))")


def _scrolls_screen_away(match: re.Match[str], rows: int) -> bool:
    """Return whether a ``scroll`` match of ``_screen_marks`` empties the whole screen but at
    most two rows (tmux's status line, and the row it erases on its own after): a clear."""
    top, bottom, count = int(match["top"]), int(match["bottom"]), int(match["count"])
    height = bottom - top + 1
    return count >= height >= rows - 2


InputHandler = Callable[[str, str], None]
"""Called on the publisher thread with (text, viewer name) for each ``input`` line."""


def _address(folder: Path, name: str = LIVE_SOCKET) -> tuple[bytes, int | None]:
    """Return the address to bind or connect for ``folder/name``, and a dir fd to close.

    A path longer than ``sun_path`` goes through ``/proc/self/fd/<dirfd>`` (Linux); where
    that is missing the plain path is returned and the call fails with its own error.
    """
    path = os.fsencode(folder / name)
    if len(path) <= _SUN_PATH_MAX or not os.path.isdir("/proc/self/fd"):
        return path, None
    dirfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{dirfd}/{name}".encode(), dirfd


def connect_live(folder: Path, timeout_s: float | None = 5.0) -> socket.socket:
    """Connect to the live socket of the session in ``folder`` and return the socket.

    The socket is blocking with ``timeout_s`` (None: none). Paths longer than ``sun_path``
    work on Linux. Raises OSError: FileNotFoundError when the session publishes nothing (it
    has ended, or its recorder made no socket), ConnectionRefusedError when the socket is
    left over from a recorder that died.
    """
    address, dirfd = _address(folder)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    finally:
        if dirfd is not None:
            os.close(dirfd)
    return sock


@dataclass(frozen=True, slots=True)
class LiveHeader:
    """The first line a client reads.

    size: the session's terminal size when the client connected. timestamp: int epoch
    seconds of the session's start. session: its id. backlog: how many event lines follow
    before the live ones.
    """

    size: TermSize
    timestamp: int | None
    session: str
    backlog: int


@dataclass(frozen=True, slots=True)
class LiveEnd:
    """The last line: how the session ended (status a ``store.session.Status`` value)."""

    status: str | None
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class LiveRefused:
    """The only line a client past ``MAX_CLIENTS`` gets: why it is not served (for people)."""

    reason: str


def parse_line(line: bytes) -> LiveHeader | Event | LiveEnd | LiveRefused | None:
    """Parse one line a live socket sent; None for a line of no known shape (ignore it).

    Raises ValueError when the line is not JSON.
    """
    obj = json.loads(line)
    if isinstance(obj, list) and len(obj) == 3 and isinstance(obj[1], str) and isinstance(obj[2], str):
        return Event(float(obj[0]), obj[1], obj[2])
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("refused"), str):
        return LiveRefused(obj["refused"])
    if "end" in obj:
        end = obj["end"] if isinstance(obj["end"], dict) else {}
        code = end.get("exit_code")
        return LiveEnd(end.get("status"), code if isinstance(code, int) else None)
    ours = obj.get("shellkeep")
    if obj.get("version") == 2 and isinstance(ours, dict):
        return LiveHeader(
            TermSize(int(obj["width"]), int(obj["height"])),
            obj.get("timestamp"),
            str(ours.get("session")),
            int(ours.get("backlog") or 0),
        )
    return None


def input_line(text: str, viewer: str) -> bytes:
    """Return the client line that asks the recorder to type ``text`` as ``viewer``."""
    return (json.dumps({"input": text, "viewer": viewer}, ensure_ascii=False) + "\n").encode("utf-8")


def viewer_label(viewer: object) -> str:
    """Return the marker recorded before a viewer's input: control characters dropped, the
    name cut to ``MAX_VIEWER_NAME`` characters, "remote" when nothing is left."""
    name = "".join(ch for ch in str(viewer or "") if ch.isprintable()).strip()[:MAX_VIEWER_NAME]
    return INPUT_MARKER_PREFIX + (name or "remote")


class _Client:
    """One connected viewer: its socket, what is still to send, what it sent so far."""

    __slots__ = ("sock", "out", "inbuf", "writing")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out = bytearray()
        self.inbuf = bytearray()
        self.writing = False


class LivePublisher:
    """Serve a session's live socket on a thread of its own; see the module docstring.

    Args:
        folder: the session folder (mode 0700); the socket is bound there at once, mode 0600.
        session_id: the header's ``shellkeep.session``.
        size: the terminal's size at the start; later ``r`` events update it.
        timestamp: int epoch seconds of the session's start (the header's).
        env: the header's ``env`` (SHELL, TERM).
        on_input: called for viewers' ``input`` lines (see ``set_input_handler``).

    Raises OSError when the socket cannot be made (nothing is left behind then).
    """

    def __init__(
        self,
        folder: Path,
        *,
        session_id: str,
        size: TermSize,
        timestamp: int | None,
        env: Mapping[str, str | None],
        on_input: InputHandler | None = None,
    ) -> None:
        self._folder = folder
        self._session_id = session_id
        self._timestamp = timestamp
        self._env = dict(env)
        self._size = size  # now
        self._ring: deque[tuple[str, bytes]] = deque()  # (code, line), oldest first
        self._ring_bytes = 0
        self._ring_size = size  # in effect at the ring's first event
        # While the alternate screen is on: the main screen's (ring, bytes, size at its start,
        # size at its end), kept aside until the program leaves the alternate screen.
        self._main: tuple[deque[tuple[str, bytes]], int, TermSize, TermSize] | None = None
        self._tail = ""  # the end of the last output, when it may hold a sequence's start
        # While no client is connected the writer thread keeps the ring itself (no wake-up of
        # this thread per batch); once one is, batches go through the inbox to the publisher
        # thread. ``_lock`` guards the ring, the inbox and ``_watched`` across the two.
        self._lock = threading.Lock()
        self._watched = False
        self._inbox: deque[list[tuple[str, str, bytes]]] = deque()
        self._end_line = b""
        self._drain_s = 1.0
        self._clients: dict[int, _Client] = {}
        self._on_input = on_input
        self._closed = False  # close was called (the caller's thread)
        self._ending = False  # the end is in: clients are let go once their data is out (publisher thread)
        self._woken = False
        self._sock = self._bind(folder)
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._run, name="shellkeep-live", daemon=True)
        self._thread.start()

    @staticmethod
    def _bind(folder: Path) -> socket.socket:
        # Bound under a temporary name, made 0600 and listening, then renamed: a client never
        # finds the socket before it can connect. No umask change (it is the whole process's,
        # and other threads create files): the session folder is 0700, so no other user
        # reaches the socket before the chmod.
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, dirfd = _address(folder, _BINDING)
        try:
            sock.bind(address)
            os.chmod(folder / _BINDING, 0o600)
            sock.listen(MAX_CLIENTS)
            sock.setblocking(False)
            os.rename(folder / _BINDING, folder / LIVE_SOCKET)
        except BaseException:
            sock.close()
            _unlink(folder, _BINDING)
            raise
        finally:
            if dirfd is not None:
                os.close(dirfd)
        return sock

    @property
    def path(self) -> Path:
        """The socket's path."""
        return self._folder / LIVE_SOCKET

    def set_input_handler(self, handler: InputHandler | None) -> None:
        """Call ``handler(text, viewer)`` for each ``input`` line a client sends (None: ignore them)."""
        self._on_input = handler

    # -- the writer thread's side ------------------------------------------------------

    def publish(self, items: list[tuple[str, str, bytes]]) -> None:
        """Take events just written: (code, text, asciicast v2 line) each; never blocks for
        long (a lock held only for ring updates) or raises."""
        with self._lock:
            if not self._watched:
                for code, text, line in items:
                    self._keep(code, text, line)
                return
            self._inbox.append(items)
        self._wake()

    def close(self, end: LiveEnd | None = None, timeout_s: float = 1.0) -> None:
        """Send the end line (when given), give clients up to ``timeout_s`` to take what is
        queued, close them and remove the socket. Blocks up to ``timeout_s``; never raises;
        safe to call more than once."""
        if self._closed:
            return
        if end is not None:
            self._end_line = (json.dumps({"end": {"status": end.status, "exit_code": end.exit_code}}) + "\n").encode()
        self._drain_s = timeout_s
        self._closed = True
        self._wake(force=True)
        self._thread.join(timeout_s + 0.5)
        _unlink(self._folder)  # also when the thread is stuck: the socket never outlives the session

    def _wake(self, force: bool = False) -> None:
        if self._woken and not force:
            return
        self._woken = True
        try:
            os.write(self._wake_w, b"\0")
        except OSError:  # full: the publisher thread has a wake-up pending anyway
            pass

    # -- the publisher thread ----------------------------------------------------------

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._sock, selectors.EVENT_READ, "listen")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        drain_until: float | None = None
        try:
            while True:
                timeout = None if drain_until is None else max(0.0, drain_until - time.monotonic())
                ready = sel.select(timeout)
                if any(key.data == "wake" for key, _ in ready):
                    self._drain_wake()
                # Events first: what was published before a client connected is its backlog.
                self._take_inbox(sel)
                if drain_until is None and self._closed:
                    self._end(sel)
                    drain_until = time.monotonic() + self._drain_s
                    sel.unregister(self._sock)
                for key, mask in ready:
                    if key.data == "listen":
                        if drain_until is None:
                            self._accept(sel)
                    elif key.data != "wake":
                        client = self._clients.get(key.fd)
                        if client is None:
                            continue
                        if mask & selectors.EVENT_READ:
                            self._read(sel, client)
                        if mask & selectors.EVENT_WRITE and key.fd in self._clients:
                            self._send(sel, client)
                if drain_until is not None and (not self._clients or time.monotonic() >= drain_until):
                    break
        except Exception:  # noqa: BLE001 - viewers are extras: the session goes on without them
            log.exception("live socket stopped")
        finally:
            for client in list(self._clients.values()):
                self._drop(sel, client)
            sel.close()
            self._sock.close()
            _unlink(self._folder)
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _drain_wake(self) -> None:
        self._woken = False  # before reading the inbox: a publish from now on wakes us again
        try:
            while os.read(self._wake_r, 4096):
                pass
        except OSError:
            pass

    def _take_inbox(self, sel: selectors.BaseSelector) -> None:
        """Move published events into the ring and the clients' buffers."""
        while True:
            with self._lock:
                if not self._inbox:
                    return
                items = self._inbox.popleft()
                lines = [line for code, text, line in items if self._keep(code, text, line)]
            if lines and self._clients:
                data = b"".join(lines)
                for client in list(self._clients.values()):
                    self._queue(sel, client, data)

    def _end(self, sel: selectors.BaseSelector) -> None:
        """The session has ended: queue the end line; let go of clients with nothing left to take."""
        self._ending = True
        for client in list(self._clients.values()):
            if self._end_line:
                self._queue(sel, client, self._end_line)
            if client.sock.fileno() in self._clients and not client.out:
                self._drop(sel, client)

    def _keep(self, code: str, text: str, line: bytes) -> bool:
        """Add one event to the ring, restarting it where the screen was redrawn from nothing.

        A restart is a full clear (``_screen_marks``), a reset (``ESC c``, which also leaves
        the alternate screen) or the switch to the alternate screen; the event is kept from
        there on (re-encoded). A sequence split across two events counts at the second, kept
        with the whole sequence in front. Live clients get the events as they were. What
        was on the main screen is kept aside while the alternate one is on (a full-screen
        program such as tmux or vim runs there) and comes back in front when it is left.
        """
        if code == "i":
            return False  # never published (the recorder does not hand them on either)
        if code == "r":
            try:
                self._size = TermSize.parse(text)
            except ValueError:
                pass
        elif code == "o" and ("\x1b" in text or self._tail):
            line = self._mark_restarts(text, line)
        self._append(code, line)
        return True

    def _mark_restarts(self, text: str, line: bytes) -> bytes:
        """Apply the restarts ``text`` (after the end of the previous output) holds, in order;
        return the event line to keep: ``line``, or its text from the last restart on."""
        scanned = self._tail + text
        lead = len(self._tail)
        self._tail = scanned[-_TAIL_CHARS:] if "\x1b" in scanned[-_TAIL_CHARS:] else ""
        if not any(needle in scanned for needle in _MARK_NEEDLES):
            return line  # the common case, found at memchr speed: no regex over the text
        cut: int | None = None  # where in ``scanned`` the kept text starts; None: ``line`` as it is
        for match in _screen_marks().finditer(scanned):
            if match.end() <= lead:
                continue  # seen with the previous event
            kind = match.lastgroup
            if kind == "scroll" and not _scrolls_screen_away(match, self._size.rows):
                continue
            if kind == "off":
                if self._main is not None:
                    ring, ring_bytes, ring_size, _ = self._main
                    alt = self._alt_prefix(_event_time(line), self._size)
                    self._main = None
                    self._ring, self._ring_bytes, self._ring_size = ring, ring_bytes, ring_size
                    for item in alt:
                        self._append("o", item)
                    if cut is None and match.start() < lead:
                        cut = match.start()  # the switch began in the previous event: keep it whole
                continue
            if kind == "on":
                if self._main is not None:
                    continue
                start = lead if cut is None else cut
                if match.start() > start:  # what the event drew on the main screen first
                    self._append("o", encode_event(_event_time(line), "o", scanned[start : match.start()]))
                self._main = (self._ring, self._ring_bytes, self._ring_size, self._size)
            elif kind == "reset":
                self._main = None
            self._restart()
            cut = match.start()  # also inside the previous event's end: the sequence is kept whole
        if cut is None:
            return line
        return encode_event(_event_time(line), "o", scanned[cut:])

    def _restart(self) -> None:
        self._ring = deque()
        self._ring_bytes = 0
        self._ring_size = self._size

    def _alt_prefix(self, at: float, size: TermSize) -> list[bytes]:
        """The event lines that take a viewer from the end of the kept main screen to the
        alternate screen at ``at``, in ``size`` (only while ``_main`` is set)."""
        lines = []
        if self._main is not None and self._main[3] != size:
            lines.append(encode_event(at, "r", str(size)))
        lines.append(encode_event(at, "o", _ALT_ON[0]))
        return lines

    def _append(self, code: str, line: bytes) -> None:
        self._ring.append((code, line))
        self._ring_bytes += len(line)
        while self._ring_bytes > BACKLOG_BYTES and len(self._ring) > 1:
            old_code, old_line = self._ring.popleft()
            self._ring_bytes -= len(old_line)
            if old_code == "r":
                try:
                    self._ring_size = TermSize.parse(json.loads(old_line)[2])
                except (ValueError, IndexError, TypeError):
                    pass

    def _backlog(self) -> list[bytes]:
        ring = [line for _, line in self._ring]
        first = float(json.loads(ring[0])[0]) if ring else 0.0
        if self._main is None:
            lines, start_size = ring, self._ring_size
        else:  # on the alternate screen: the main screen's ring, then the switch, then the ring
            main, _, start_size, _ = self._main
            lines = [line for _, line in main]
            lines += self._alt_prefix(first, self._ring_size)
            lines += ring
            first = float(json.loads(lines[0])[0])
        if start_size != self._size:
            lines.insert(0, encode_event(first, "r", str(start_size)))
        return lines

    @property
    def _backlog_bytes(self) -> int:
        return self._ring_bytes + (self._main[1] if self._main is not None else 0)

    def _accept(self, sel: selectors.BaseSelector) -> None:
        try:
            sock, _ = self._sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # EMFILE and the like: leave it in the queue for later
            log.info("live socket: cannot accept: %s", exc)
            return
        if len(self._clients) >= MAX_CLIENTS:
            try:  # a fresh socket's buffer takes one short line; never wait for it
                sock.setblocking(False)
                sock.send(json.dumps({"refused": REFUSED_FULL}).encode() + b"\n")
            except OSError:
                pass
            sock.close()
            return
        sock.setblocking(False)
        client = _Client(sock)
        self._clients[sock.fileno()] = client
        sel.register(sock, selectors.EVENT_READ, "client")
        with self._lock:  # from here on, what the writer publishes comes through the inbox
            self._watched = True
            backlog = self._backlog()
        header: dict[str, object] = {"version": 2, "width": self._size.cols, "height": self._size.rows}
        if self._timestamp is not None:
            header["timestamp"] = self._timestamp
        if self._env:
            header["env"] = self._env
        header["shellkeep"] = {"session": self._session_id, "backlog": len(backlog)}
        first = (json.dumps(header, ensure_ascii=False) + "\n").encode("utf-8")
        self._queue(sel, client, b"".join([first, *backlog]), limit=len(first) + self._backlog_bytes + CLIENT_BUFFER_BYTES)

    def _queue(self, sel: selectors.BaseSelector, client: _Client, data: bytes, limit: int = CLIENT_BUFFER_BYTES) -> None:
        if not client.out:
            try:
                sent = client.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._drop(sel, client)
                return
            if sent == len(data):
                return
            data = data[sent:]
        if len(client.out) + len(data) > limit:
            log.info("live socket: dropped a viewer that does not keep up")
            self._drop(sel, client)
            return
        client.out += data
        if not client.writing:
            client.writing = True
            sel.modify(client.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, "client")

    def _send(self, sel: selectors.BaseSelector, client: _Client) -> None:
        try:
            sent = client.sock.send(client.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(sel, client)
            return
        del client.out[:sent]
        if not client.out:
            client.writing = False
            if self._ending:
                self._drop(sel, client)  # the end line is out
                return
            sel.modify(client.sock, selectors.EVENT_READ, "client")

    def _read(self, sel: selectors.BaseSelector, client: _Client) -> None:
        try:
            data = client.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(sel, client)
            return
        client.inbuf += data
        while True:
            end = client.inbuf.find(b"\n")
            if end < 0:
                if len(client.inbuf) > MAX_INPUT_LINE_BYTES:
                    self._drop(sel, client)
                return
            line = bytes(client.inbuf[:end])
            del client.inbuf[: end + 1]
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                self._drop(sel, client)  # not the protocol: this client is done
                return
            if isinstance(obj, dict) and isinstance(obj.get("input"), str) and obj["input"]:
                self._type(obj["input"], obj.get("viewer"))

    def _type(self, text: str, viewer: object) -> None:
        handler = self._on_input
        if handler is None:
            return
        try:
            handler(text, viewer_label(viewer)[len(INPUT_MARKER_PREFIX) :])
        except Exception as exc:  # noqa: BLE001 - a viewer's input must not stop the socket
            log.info("live socket: input from a viewer failed: %s", exc)

    def _drop(self, sel: selectors.BaseSelector, client: _Client) -> None:
        fd = client.sock.fileno()
        self._clients.pop(fd, None)
        if not self._clients:
            with self._lock:  # what is in the inbox goes into the ring first: events stay in order
                while self._inbox:
                    for code, text, line in self._inbox.popleft():
                        self._keep(code, text, line)
                self._watched = False
        try:
            sel.unregister(client.sock)
        except (KeyError, ValueError):
            pass
        client.sock.close()


def _event_time(line: bytes) -> float:
    return float(json.loads(line)[0])


def _unlink(folder: Path, name: str = LIVE_SOCKET) -> None:
    try:
        os.unlink(folder / name)
    except OSError:
        pass
