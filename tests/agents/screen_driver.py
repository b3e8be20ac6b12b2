"""Drive a program in a real pty at a fixed size and read its rendered screen.

``ScreenDriver`` spawns a program under pexpect and feeds every byte it prints to
shellkeep's one terminal emulator (``shellkeep.terminal.emulator.Terminal``, the one that
renders recordings), and lets a test wait for text on the *rendered* screen. TUIs such as
Claude Code and Codex draw with cursor movement, so text that shows as one line on screen
is rarely contiguous in the byte stream: tests compare what a terminal would show, never
the raw bytes. Like a real terminal it keeps xterm's alternate screen (``ESC[?1049h``).

The emulated terminal answers the queries TUIs send before they draw (cursor position report
``ESC[6n``, primary device attributes ``ESC[c``) like a real terminal does; a TUI that waits
for those answers would otherwise stall or give up.

Nothing here sleeps blindly: every wait reads output while it polls its condition, so a child
never blocks on a full pty buffer while a test is waiting.
"""

from __future__ import annotations

import codecs
import os
import re
import signal
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import pexpect

from shellkeep.asciicast.model import Event, TermSize
from shellkeep.terminal.emulator import Terminal
from shellkeep.terminal.snapshot import ScreenSnapshot
from tests.helpers import default_signals

DEFAULT_SIZE = TermSize(cols=120, rows=40)

_T = TypeVar("_T")

_CONTROL_KEYS = {
    "enter": b"\r",
    "tab": b"\t",
    "escape": b"\x1b",
    "backspace": b"\x7f",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
    "right": b"\x1b[C",
    "left": b"\x1b[D",
}


class ScreenDriver:
    """Run one program in a pty of a fixed ``TermSize`` and expose its rendered screen.

    Args:
        argv: the program and its arguments; ``argv[0]`` is looked up on ``env["PATH"]``.
        env: the child's whole environment (nothing is inherited).
        cwd: the child's working directory.
        size: the terminal size, fixed for the child's life.
        log_path: if given, every byte the child prints is appended there (for post-mortems).
        echo: leave the terminal's echo on, as a user's terminal has it (programs that copy
            the terminal's modes, such as shellkeep or script(1), pass it on to their child).
        answer_queries: answer the terminal queries (False: a terminal that answers none, as
            CI ptys and script(1) do; a TUI then waits out its own timeout before it draws).

    Use as a context manager, or call ``close()``: the child is killed if it is still running.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | os.PathLike[str],
        size: TermSize = DEFAULT_SIZE,
        log_path: Path | None = None,
        echo: bool = False,
        answer_queries: bool = True,
    ) -> None:
        self.argv = list(argv)
        self.size = size
        self.raw = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._log = open(log_path, "ab") if log_path is not None else None  # noqa: SIM115
        self.terminal = Terminal(size, on_reply=self._send_reply if answer_queries else None)
        self.child = pexpect.spawn(
            self.argv[0],
            self.argv[1:],
            env=dict(env),
            cwd=os.fspath(cwd),
            dimensions=(size.rows, size.cols),
            encoding=None,
            echo=echo,
            preexec_fn=default_signals,
        )
        self.eof = False

    # -- life cycle -------------------------------------------------------------------------

    def __enter__(self) -> ScreenDriver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        """Return the child's process id."""
        return int(self.child.pid)

    def is_alive(self) -> bool:
        """Tell whether the child is still running."""
        return bool(self.child.isalive())

    def close(self) -> None:
        """Kill the child if it still runs (SIGTERM, then SIGKILL) and release the pty."""
        if self.child.isalive():
            try:
                self.child.terminate(force=True)
            except OSError:
                pass
        try:
            self.child.close(force=True)
        except OSError:
            pass
        if self._log is not None:
            self._log.close()
            self._log = None

    def wait_exit(self, timeout_s: float = 30.0) -> int:
        """Read output until the child exits; return its exit status (128+N when killed by N).

        Raises:
            TimeoutError: the child still runs after *timeout_s*; the message shows the screen.
        """
        self.wait_until(lambda: self.eof and not self.child.isalive(), timeout_s, "child exit")
        self.child.close()
        if self.child.signalstatus is not None:
            return 128 + int(self.child.signalstatus)
        return int(self.child.exitstatus or 0)

    # -- reading ----------------------------------------------------------------------------

    def pump(self, timeout_s: float = 0.1) -> bool:
        """Read what the child printed (waiting up to *timeout_s* for the first byte).

        Returns True when something was read. Never raises on end of file: ``eof`` turns True.
        """
        if self.eof:
            return False
        got = False
        wait = timeout_s
        while True:
            try:
                raw = self.child.read_nonblocking(size=65536, timeout=wait)
            except pexpect.TIMEOUT:
                break
            except pexpect.EOF:
                self.eof = True
                break
            if not raw:
                break
            got = True
            self._feed(raw)
            wait = 0  # drain what is already there, then return
        return got

    def _feed(self, raw: bytes) -> None:
        self.raw += raw
        if self._log is not None:
            self._log.write(raw)
            self._log.flush()
        self.terminal.feed(self._decoder.decode(raw))

    def _send_reply(self, data: str) -> None:
        if self.child.isalive():
            try:
                self.child.write(data.encode())
            except OSError:
                pass

    def lines(self) -> list[str]:
        """Return the rendered screen rows, trailing spaces removed (reads pending output)."""
        self.pump(0)
        return self.terminal.text_lines()

    def snapshot(self) -> ScreenSnapshot:
        """Return the rendered screen with its cells' colours and attributes (reads pending output)."""
        self.pump(0)
        return self.terminal.snapshot()

    def text(self) -> str:
        """Return the rendered screen as one string, rows joined by newlines."""
        return "\n".join(self.lines())

    def dump(self) -> str:
        """Return the screen framed for an assertion message."""
        bar = "-" * self.size.cols
        return f"{bar}\n{self.text()}\n{bar}"

    # -- waiting ----------------------------------------------------------------------------

    def wait_until(
        self, condition: Callable[[], _T], timeout_s: float = 30.0, what: str = "condition"
    ) -> _T:
        """Read output until *condition()* returns a truthy value; return that value.

        The condition is polled after every read (and at least every 0.1 s).

        Raises:
            TimeoutError: not met within *timeout_s*; the message shows the screen.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            result = condition()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(
                    f"{what} not met within {timeout_s}s; screen:\n{self.dump()}"
                )
            if not self.pump(min(0.1, remaining)) and self.eof:
                # Nothing more will arrive; check once more, then keep polling for
                # conditions that depend on the outside world (a file, a process).
                time.sleep(min(0.05, max(remaining, 0)))

    def wait_for_screen(self, text: str | re.Pattern[str], timeout_s: float = 30.0) -> str:
        """Wait until *text* (a substring, or a compiled regex) shows on the rendered screen.

        Rows are matched one at a time for a substring, across the whole screen (rows joined
        by newlines) for a regex. Returns the screen text at that moment.

        Raises:
            TimeoutError: it did not show within *timeout_s*; the message shows the screen.
        """

        def shown() -> str:
            screen = self.text()
            if isinstance(text, re.Pattern):
                return screen if text.search(screen) else ""
            return screen if any(text in line for line in screen.splitlines()) else ""

        return self.wait_until(shown, timeout_s, f"screen shows {text!r}")

    def wait_for_output(self, text: str, timeout_s: float = 30.0) -> None:
        """Wait until *text* is in what the child printed, whatever the screen shows now: for a
        line printed before a TUI clears the screen (shellkeep's notices before the agent starts;
        under load the line and the clear can come in one read, and no poll of the screen sees it).

        Raises:
            TimeoutError: it was not printed within *timeout_s*; the message shows the screen.
        """
        wanted = text.encode()
        self.wait_until(lambda: wanted in self.raw, timeout_s, f"output holds {text!r}")

    def wait_for_quiet(self, quiet_s: float = 0.5, timeout_s: float = 30.0) -> str:
        """Wait until the screen has not changed for *quiet_s*; return its text.

        Useful before typing into a TUI that is still redrawing. Raises TimeoutError.
        """
        last_text = self.text()
        since = time.monotonic()

        def settled() -> bool:
            nonlocal last_text, since
            now_text = self.text()
            if now_text != last_text:
                last_text, since = now_text, time.monotonic()
                return False
            return time.monotonic() - since >= quiet_s

        self.wait_until(settled, timeout_s, f"screen quiet for {quiet_s}s")
        return last_text

    # -- typing -----------------------------------------------------------------------------

    def type(self, text: str) -> None:
        """Send *text* as typed keys (no Enter)."""
        self.child.write(text.encode())

    def press(self, key: str) -> None:
        """Send one named key: enter, tab, escape, backspace, up, down, left, right, or ctrl-X."""
        if key.startswith("ctrl-") and len(key) == 6:
            self.child.write(bytes([ord(key[-1].lower()) & 0x1F]))
            return
        self.child.write(_CONTROL_KEYS[key])

    def signal(self, signum: int = signal.SIGTERM) -> None:
        """Send a signal to the child."""
        self.child.kill(signum)

    def resize(self, size: TermSize) -> None:
        """Resize the terminal: the child gets SIGWINCH, the rendered screen takes *size*.

        Output read before the call is drawn at the old size, everything after at the new one.
        """
        self.pump(0)
        self.size = size
        self.terminal.resize(size)
        self.child.setwinsize(size.rows, size.cols)


def replay_screens(size: TermSize, events: Iterable[Event]) -> Iterator[tuple[Event, Terminal]]:
    """Play a recording's events into a ``Terminal``; yield each event with the terminal after it.

    Starts at *size* (the header's). Output events (``o``) are drawn as ``ScreenDriver``
    draws a live program; resize events (``r``, ``"COLSxROWS"``) resize the screen; other
    events change nothing. The same terminal is yielded every time: copy what you keep
    (``screen_text(terminal)``).
    """
    terminal = Terminal(size)
    for event in events:
        terminal.apply(event)
        yield event, terminal


def screen_text(terminal: Terminal) -> str:
    """Return a terminal's rows joined by newlines, trailing spaces removed."""
    return "\n".join(terminal.text_lines())
