"""Follow a live session read-only in this terminal (``shellkeep watch``).

It connects to the session's live socket (``capture.live``), rebuilds the session's current
screen from the header and backlog with the terminal emulator (``terminal.emulator``), draws
it at once, then keeps the emulator fed with the live events and redraws the rows that
changed (at most ``_FRAME_S`` apart). Drawing from the emulator rather than passing the
session's bytes on means the viewer's terminal never takes the session's modes (mouse,
bracketed paste, keyboard protocols): the viewer works on its own alternate screen, which
is left on the way out, with raw mode undone, on every exit path.

A session bigger than this terminal is cropped: the columns on the left, and the rows around
the cursor, with a status line at the bottom saying so. It never sends input. Should the
recorder drop this viewer for being slow (a slow ssh link), it reconnects and redraws.
"""

from __future__ import annotations

import dataclasses
import os
import select
import signal
import socket
import time
from dataclasses import dataclass

from shellkeep.asciicast.model import Event
from shellkeep.capture.live import LiveEnd, LiveHeader, LiveRefused, connect_live, parse_line
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.pty.relay import DEFAULT_SIZE, RawMode, terminal_size
from shellkeep.store.audit import record_read
from shellkeep.store.paths import Paths
from shellkeep.store.session import LIVE_SOCKET, SessionMeta, Status, host_name, read_meta
from shellkeep.termsize import TermSize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.terminal.snapshot import ScreenSnapshot

__all__ = ["QUIT_KEYS", "SessionBusy", "SessionEnded", "WatchResult", "watch_session"]

QUIT_KEYS = frozenset(b"qQ\x03")
"""Keys that leave: q, Q and Ctrl-C (a byte in raw mode)."""

_FRAME_S = 1 / 30  # redraws at most this often while output flows (a 200x60 frame takes ~7 ms)
_CONNECT_TIMEOUT_S = 10.0  # for the header and the backlog
_READ_BYTES = 1 << 16
_MAX_READS_PER_FRAME = 8  # then the screen is redrawn and keys are looked at
_MAX_RECONNECTS = 5  # in a row without a frame drawn in between


class SessionEnded(ShellkeepError):
    """The session is not live any more (exit status 1); the message offers replay."""


class SessionBusy(ShellkeepError):
    """The recorder refused this viewer: it serves as many as it can (exit status 1)."""


@dataclass(frozen=True, slots=True)
class WatchResult:
    """How watching ended: ``end`` is how the session ended, None when the viewer left.

    stopped: the live socket closed without an end line (the recorder died: a kill -9, a
    crash); ``end.status`` is then the stored status, ``interrupted`` while it still says
    ``running``.
    """

    session: str
    end: LiveEnd | None
    stopped: bool = False


def _ended(meta: SessionMeta) -> SessionEnded:
    return SessionEnded(f"session {meta.id} has ended; replay it with: shellkeep replay {meta.id}")


def _open(meta: SessionMeta) -> socket.socket:
    """Connect to ``meta``'s live socket; raise SessionEnded or ShellkeepError when there is none."""
    if meta.status != Status.RUNNING.value:
        raise _ended(meta)
    if meta.host and meta.host != host_name():
        raise ShellkeepError(f"session {meta.id} is recording on {meta.host}; watch it there (ssh {meta.host} shellkeep watch {meta.id})")
    try:
        return connect_live(meta.folder, _CONNECT_TIMEOUT_S)
    except FileNotFoundError:
        if not (meta.folder / LIVE_SOCKET).exists() and _still_running(meta):
            raise ShellkeepError(
                f"session {meta.id} publishes no live events (its recorder could not open {LIVE_SOCKET}, "
                f"or is older); replay what it recorded so far with: shellkeep replay {meta.id}"
            ) from None
        raise _ended(meta) from None
    except OSError:  # refused: a socket left by a recorder that died
        raise _ended(meta) from None


def _still_running(meta: SessionMeta) -> bool:
    try:
        return read_meta(meta.folder).status == Status.RUNNING.value
    except Exception:  # noqa: BLE001 - unreadable now: take it as gone
        return False


class _Stream:
    """One connection: the emulator rebuilt from header and backlog, then fed live events."""

    def __init__(self, sock: socket.socket, session_id: str) -> None:
        from shellkeep.terminal.emulator import Terminal  # pyte: only once connected

        self.sock = sock
        self.end: LiveEnd | None = None
        self.closed = False
        self._buf = bytearray()
        header = self._first_line()
        if isinstance(header, LiveRefused):
            raise SessionBusy(f"session {session_id} has {header.reason}; try again later")
        if not isinstance(header, LiveHeader):
            raise ShellkeepError("the live socket sent no header; is the recorder a newer shellkeep?")
        self.session = header.session
        self.terminal: Terminal = Terminal(header.size)
        remaining = header.backlog
        while remaining > 0:  # the backlog: applied before anything is drawn
            item = self._next_line(blocking=True)
            if item is None:
                break
            if isinstance(item, Event):
                remaining -= 1
                self.terminal.apply(item)
        sock.setblocking(False)
        # Live events read with the backlog (one recv may take both) are applied now: the
        # socket may stay quiet for good, and ``pump`` only runs once it is readable.
        self._apply_buffered()

    def _first_line(self) -> object:
        try:
            return self._next_line(blocking=True)
        except ValueError as exc:
            raise ShellkeepError(f"the live socket sent something else than its protocol: {exc}") from exc

    def _next_line(self, *, blocking: bool) -> object:
        """Return the next parsed line (an Event, LiveHeader, LiveEnd or None at close)."""
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                item = parse_line(line)
                if isinstance(item, LiveEnd):
                    self.end = item
                return item
            if not blocking:
                return None
            try:
                data = self.sock.recv(_READ_BYTES)
            except (TimeoutError, socket.timeout):
                raise ShellkeepError("the live socket stopped answering; try again") from None
            except OSError:
                data = b""
            if not data:
                self.closed = True
                return None
            self._buf += data

    def pump(self) -> bool:
        """Read what has come (a few reads at most), apply it; return whether anything changed."""
        changed = False
        for _ in range(_MAX_READS_PER_FRAME):
            try:
                data = self.sock.recv(_READ_BYTES)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            self._buf += data
            changed = self._apply_buffered() or changed
            if self.closed or self.end is not None:
                break
        return changed

    def _apply_buffered(self) -> bool:
        """Apply the whole lines read so far (up to the end line); return whether any drew."""
        changed = False
        while self.end is None:
            try:
                item = self._next_line(blocking=False)
            except ValueError:
                self.closed = True  # not the protocol any more: start again
                return changed
            if item is None:
                break
            if isinstance(item, Event) and item.code in "or":
                self.terminal.apply(item)
                changed = True
        return changed


class _View:
    """This terminal: the frame drawn last, and how to draw the next one with few bytes."""

    def __init__(self, fd: int, session: str) -> None:
        self.fd = fd
        self.session = session
        self.size = self._measure()
        self._drawn: list[str] = []
        self._full = True

    def _measure(self) -> TermSize:
        return terminal_size((self.fd, 0)) or DEFAULT_SIZE

    def resized(self) -> bool:
        """Measure this terminal again; return whether its size changed (then all is redrawn)."""
        size = self._measure()
        if size == self.size:
            return False
        self.size = size
        self._full = True
        return True

    def invalidate(self) -> None:
        """Redraw everything next time (a new connection, the session's size changed)."""
        self._full = True

    def enter(self) -> None:
        """Switch to this terminal's alternate screen, cleared."""
        self._write("\x1b[?1049h\x1b[H\x1b[2J")

    def leave(self) -> None:
        """Put this terminal back: attributes, cursor, its main screen."""
        self._write("\x1b[0m\x1b[?25h\x1b[?1049l")

    def draw(self, snap: ScreenSnapshot) -> None:
        """Draw ``snap``, cropped to this terminal; only rows that changed unless invalidated."""
        view, size = self.size, snap.size
        cropped = size.cols > view.cols or size.rows > view.rows
        rows_shown = min(size.rows, view.rows - 1 if cropped else view.rows)
        rows_shown = max(rows_shown, 1)
        top = 0
        if size.rows > rows_shown:
            top = max(0, min(snap.cursor.y - rows_shown + 1, size.rows - rows_shown))
        cols_shown = min(size.cols, view.cols)
        lines = tuple(row[:cols_shown] for row in snap.lines[top : top + rows_shown])
        part = dataclasses.replace(snap, size=TermSize(cols_shown, rows_shown), lines=lines)
        text_rows = part.to_ansi().split("\n")
        rows = [text_rows[i] if i < len(text_rows) else "" for i in range(rows_shown)]
        status = self._status(size, cropped)
        if status is not None:
            rows.append(status)
        out = ["\x1b[?2026h\x1b[?25l"]  # synchronized output where supported; the cursor hidden meanwhile
        if self._full:
            out.append("\x1b[0m\x1b[H\x1b[2J")
            self._drawn = []
        for y, row in enumerate(rows):
            if self._full or y >= len(self._drawn) or self._drawn[y] != row:
                out.append(f"\x1b[{y + 1};1H\x1b[0m{row}\x1b[0m\x1b[K")
        self._drawn = rows
        self._full = False
        cursor_y = snap.cursor.y - top
        if snap.cursor_visible and 0 <= cursor_y < rows_shown and snap.cursor.x < cols_shown + 1:
            out.append(f"\x1b[{cursor_y + 1};{min(snap.cursor.x, cols_shown - 1) + 1}H\x1b[?25h")
        out.append("\x1b[?2026l")
        self._write("".join(out))

    def _status(self, size: TermSize, cropped: bool) -> str | None:
        view = self.size
        if cropped:
            text = f" cropped: session {size}, terminal {view} · q leaves "
            return "\x1b[7m" + text[: view.cols] + "\x1b[0m"
        if view.rows > size.rows:
            text = f"watching {self.session} ({size}, read-only) · q leaves"
            return "\x1b[2m" + text[: view.cols] + "\x1b[0m"
        return None

    def _write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8", "replace"))
        while data:
            try:
                n = os.write(self.fd, data)
            except InterruptedError:
                continue
            except BlockingIOError:
                select.select([], [self.fd], [], 1.0)
                continue
            data = data[n:]


@dataclass(frozen=True, slots=True)
class _Stopped(LiveEnd):
    """How a session ended when its socket closed without an end line (its recorder died)."""


def _stopped(meta: SessionMeta) -> _Stopped:
    status = _status_now(meta)
    return _Stopped(Status.INTERRUPTED.value if status in (None, Status.RUNNING.value) else status, None)


class _Leave(Exception):
    """A SIGTERM or SIGHUP: leave, putting the terminal back."""


def watch_session(
    meta: SessionMeta, *, paths: Paths | None = None, inside: str | None = None, stdin_fd: int = 0, stdout_fd: int = 1
) -> WatchResult:
    """Follow the live session ``meta`` on ``stdout_fd`` until q, Ctrl-C or its end.

    paths: the data folder whose audit log gets the entry ``watch`` (detail ``live``) once
    the stream is open, as ``serve``'s live view leaves one (None: none is written).
    inside: the session this terminal is recorded in (``SHELLKEEP_SESSION``), if any.
    Blocks. Raw mode (on ``stdin_fd``) and the alternate screen are undone on every exit
    path. Raises SessionEnded (exit 1) when the session is not live, UserInputError (exit 2)
    for the session this terminal is in (each frame would be recorded and drawn again),
    SessionBusy (exit 1) when the recorder serves ``capture.live.MAX_CLIENTS`` viewers already,
    ShellkeepError when it publishes no live events.
    """
    if inside == meta.id and meta.status == Status.RUNNING.value:
        raise UserInputError(f"this terminal is session {meta.id} itself; watch it from another terminal")
    sock = _open(meta)
    try:
        stream = _Stream(sock, meta.id)
    except BaseException:
        sock.close()
        raise
    if paths is not None:
        record_read(paths, "watch", meta, detail="live")  # a failure is logged, never raised
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    winch = [False]

    def on_winch(_sig: int, _frame: object) -> None:
        winch[0] = True

    def on_leave(_sig: int, _frame: object) -> None:
        raise _Leave

    previous = {
        signal.SIGWINCH: signal.signal(signal.SIGWINCH, on_winch),
        signal.SIGTERM: signal.signal(signal.SIGTERM, on_leave),
        signal.SIGHUP: signal.signal(signal.SIGHUP, on_leave),
    }
    old_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    view = _View(stdout_fd, stream.session)
    try:
        with RawMode(stdin_fd):
            view.enter()
            try:
                end = _follow(meta, stream, view, stdin_fd, wake_r, winch)
            except _Leave:
                end = None
            finally:
                view.leave()
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(wake_r)
        os.close(wake_w)
        stream.sock.close()
    return WatchResult(meta.id, end, stopped=isinstance(end, _Stopped))


def _follow(
    meta: SessionMeta, stream: _Stream, view: _View, stdin_fd: int, wake_r: int, winch: list[bool]
) -> LiveEnd | None:
    """The loop: keys, the viewer's resizes, live events, frames. Returns how the session ended."""
    last_frame = 0.0
    dirty = True
    reconnects = 0
    size = stream.terminal.size
    while True:
        if winch[0]:
            winch[0] = False
            if view.resized():
                dirty = True
        if stream.end is not None:
            view.draw(stream.terminal.snapshot())
            return stream.end
        if stream.closed:
            reconnects += 1
            stream.sock.close()
            if reconnects > _MAX_RECONNECTS or not _still_running(meta):
                return _stopped(meta)
            try:
                stream = _Stream(_open(meta), meta.id)
            except SessionBusy:  # dropped for being slow, and the seats taken meanwhile: say so
                raise
            except ShellkeepError:  # refused: nobody listens any more
                return _stopped(meta)
            view.invalidate()
            dirty = True
        now = time.monotonic()
        if dirty and now - last_frame >= _FRAME_S:
            snap = stream.terminal.snapshot()
            if snap.size != size:
                size = snap.size
                view.invalidate()
            view.draw(snap)
            last_frame, dirty, reconnects = now, False, 0
        timeout = max(0.0, last_frame + _FRAME_S - now) if dirty else None
        try:
            sock_fd = stream.sock.fileno()
            readable, _, _ = select.select([sock_fd, stdin_fd, wake_r], [], [], timeout)
        except InterruptedError:
            continue
        if wake_r in readable:
            try:
                while os.read(wake_r, 512):
                    pass
            except OSError:
                pass
        if stdin_fd in readable:
            try:
                keys = os.read(stdin_fd, 1024)
            except OSError:
                keys = b""
            if not keys or any(key in QUIT_KEYS for key in keys):
                return None  # q, Ctrl-C, or this terminal went away
        if sock_fd in readable and stream.pump():
            dirty = True


def _status_now(meta: SessionMeta) -> str | None:
    try:
        return read_meta(meta.folder).status
    except Exception:  # noqa: BLE001
        return None
