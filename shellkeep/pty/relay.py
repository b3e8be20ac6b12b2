"""Relay bytes between the user's terminal and a child program in a pty.

The loop serves the user's screen first: every read from the child is written to stdout
before it is handed to the sink, and the sink never blocks the loop. Nor does stdout: what
a slow terminal does not take waits in a bounded backlog, and while that is full the
child is not read, so it blocks as on a slow terminal (``pty.stdout``); a SIGTERM or SIGHUP
is acted on even while the terminal has stopped reading. The user's terminal is put in raw
mode while the child runs and restored on every exit path; the modes the child switched on
and left on (alternate screen, mouse, bracketed paste, hidden cursor, keyboard protocols:
``pty.modes``) are switched off on it when the relay ends.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import struct
import termios
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellkeep.pty.inject import SettledInjection
from shellkeep.pty.lines import LineWriter
from shellkeep.pty.modes import ModeTracker
from shellkeep.pty.sink import Sink
from shellkeep.pty.stdout import MAX_BACKLOG_BYTES, StdoutWriter
from shellkeep.termsize import TermSize

TermModes = list[int | list[bytes | int]]
"""A terminal's modes as ``termios.tcgetattr`` gives them: iflag, oflag, cflag, lflag, speeds, cc."""

READ_SIZE = 65536
_BURST_BYTES = 1 << 20  # output read back to back before stdin and signals are looked at
_SHORT_READ = 1024  # a read shorter than this took all there was: no second read to find that out
_MAX_PENDING_INPUT = 1 << 20
_DRAIN_IDLE_S = 0.05  # after the child exits: stop once the pty is quiet this long
_DRAIN_MAX_S = 2.0  # ...or after this long, if a background process keeps writing
_INJECT_POLL_S = 0.05
_EOF_QUIET_S = 0.5  # after end of piped input: quiet this long and the EOF is sent again
_EOF_RESENDS = 3
_STALL_GRACE_S = 0.5  # after SIGTERM: a stdout that takes nothing this long is given up
_MAX_TYPED_CHUNKS = 256  # input queued by ``type_input`` and not yet taken by the loop
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
DEFAULT_SIZE = TermSize(80, 24)


class SpawnError(Exception):
    """The program could not be started; ``errno`` tells why (ENOENT, EACCES)."""

    def __init__(self, program: str, err: int, message: str) -> None:
        super().__init__(message)
        self.program = program
        self.errno = err


@dataclass(frozen=True, slots=True)
class RelayResult:
    """How a relayed child ended.

    exit_code: the child's status as a shell reports it (128+N when killed by signal N).
    signal: the signal that killed the child, or None.
    received_signal: a SIGTERM, SIGHUP, SIGINT or SIGQUIT sent to shellkeep and passed on.
    hangup: the user's terminal went away (SIGHUP or EIO on it).
    duration: float seconds from spawn to the child's exit.
    """

    exit_code: int
    signal: int | None
    received_signal: int | None
    hangup: bool
    duration: float


def terminal_size(fds: Sequence[int] = (1, 0, 2)) -> TermSize | None:
    """Return the size of the first of ``fds`` that is a terminal, or None."""
    for fd in fds:
        try:
            rows, cols, _, _ = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8))
        except OSError:
            continue
        if rows > 0 and cols > 0:
            return TermSize(cols=cols, rows=rows)
    return None


def _set_size(fd: int, size: TermSize) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", size.rows, size.cols, 0, 0))


def find_program(program: str, env: Mapping[str, str]) -> str | None:
    """Return the path ``program`` runs as under ``env``'s PATH, or None (like ``command -v``)."""
    if "/" in program:
        return program if os.access(program, os.X_OK) and not os.path.isdir(program) else None
    for folder in env.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


class Child:
    """A program running in a new pty: its pid and the pty's master fd."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    size: TermSize,
    termios_attrs: TermModes | None = None,
) -> Child:
    """Start ``argv`` in a new pty of ``size``, in its own session, and return it.

    termios_attrs: the user's terminal modes, copied onto the child's pty (as script(1)
    does) so erase keys and UTF-8 input behave the same. Raises SpawnError when the
    program cannot be executed.
    """
    import ptyprocess

    def _preexec() -> None:
        # Python ignores SIGPIPE and SIGXFSZ; a child must get the default back.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        if termios_attrs is not None:
            try:
                termios.tcsetattr(0, termios.TCSANOW, termios_attrs)
            except termios.error:
                pass

    try:
        proc = ptyprocess.PtyProcess.spawn(
            list(argv),
            cwd=str(cwd),
            env=dict(env),
            dimensions=(size.rows, size.cols),
            preexec_fn=_preexec,
        )
    except OSError as exc:  # ptyprocess passes on the child's exec error, not always as a subclass
        if exc.errno == errno.ENOENT:
            if find_program(argv[0], env) is not None:  # the file is there: its #! interpreter is not
                message = f"{argv[0]}: cannot execute: required file not found (check the interpreter on its #! line)"
            else:
                message = f"{argv[0]}: command not found"
            raise SpawnError(argv[0], errno.ENOENT, message) from exc
        if exc.errno == errno.EACCES:
            raise SpawnError(argv[0], errno.EACCES, f"{argv[0]}: permission denied") from exc
        raise SpawnError(argv[0], exc.errno or 0, f"{argv[0]}: {exc.strerror or exc}") from exc
    # We own the pty and the child's status from here on: keep our own copy of the fd and
    # close ptyprocess's, so collecting its object neither closes ours nor kills the child.
    fd = os.dup(proc.fd)
    fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
    proc.fileobj.close()
    proc.closed = True
    proc.terminated = True
    return Child(proc.pid, fd)


class Relay:
    """Run the relay loop for one child; see ``run``.

    stdin_fd and stdout_fd are the user's side (terminals, pipes or /dev/null). The relay
    writes to stdout through a ``StdoutWriter`` of its own and never changes the flags of
    the user's descriptions.
    """

    def __init__(
        self,
        child: Child,
        sink: Sink,
        *,
        stdin_fd: int = 0,
        stdout_fd: int = 1,
        injection: SettledInjection | None = None,
    ) -> None:
        self.child = child
        self.sink = sink
        self.injection = injection
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self._start = time.monotonic()
        self._signals: list[int] = []
        self._received: int | None = None
        self._hangup = False
        self._out = StdoutWriter(stdout_fd)  # replaced by a private one while ``run`` runs
        self._modes_reset = False
        self._status: int | None = None
        self._exit_at: float | None = None
        self._size: TermSize | None = None
        self.modes = ModeTracker()
        self._typed: deque[bytes] = deque()  # from ``type_input``, any thread
        self._wake_w: int | None = None  # the loop's wake pipe while ``run`` runs
        self._wake_lock = threading.Lock()  # a closed pipe's fd number is never written to

    # -- public ---------------------------------------------------------------------

    def run(self, on_signal: Callable[[int], None] | None = None) -> RelayResult:
        """Relay until the child exits and its output is drained; return how it ended.

        Blocks. Installs handlers for SIGWINCH, SIGCHLD, SIGTERM, SIGHUP, SIGINT and
        SIGQUIT for its duration and puts them back afterwards. SIGTERM, SIGINT and SIGQUIT
        are passed on to the child; SIGHUP and then SIGCONT go to the child's process group
        and the pty's foreground group, as a terminal's hangup would, and stdout is dropped;
        once the child has exited, what is left of its process group gets SIGKILL.
        After a SIGTERM, a stdout that takes nothing for ``_STALL_GRACE_S`` is given up. At
        the end, when stdout is a terminal, the modes the child left on are switched off on
        it (``pty.modes``; these bytes are the relay's, not the child's: the sink does not
        get them).
        """
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
            fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
        handled = (signal.SIGWINCH, signal.SIGCHLD, *_FORWARDED)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in handled}
        old_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        self._size = terminal_size((self.stdout_fd, self.stdin_fd))
        self._out = StdoutWriter.open(self.stdout_fd)
        self._wake_w = wake_w
        try:
            self._loop(wake_r, on_signal)
            if self._hangup:
                self._end_child_group()
        finally:
            with self._wake_lock:
                self._wake_w = None
            if self._reset_modes():  # the loop did not get to it (an error)
                self._out.drain(_STALL_GRACE_S)
            self._out.close()
            signal.set_wakeup_fd(old_wakeup)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.close(wake_r)
            os.close(wake_w)
            try:
                os.close(self.child.fd)
            except OSError:
                pass
        status = self._status if self._status is not None else 0
        code = os.waitstatus_to_exitcode(status)
        killed_by = -code if code < 0 else None
        end = self._exit_at if self._exit_at is not None else time.monotonic()
        return RelayResult(
            exit_code=128 + killed_by if killed_by else code,
            signal=killed_by,
            received_signal=self._received,
            hangup=self._hangup,
            duration=end - self._start,
        )

    def type_input(self, raw: bytes) -> bool:
        """Type ``raw`` into the child as if the user had, from any thread; never blocks.

        The loop takes it at its next turn, hands it to the sink's ``on_input`` (so it is
        recorded as typed input, hidden at a password prompt) and writes it after what is
        already pending. Returns False when it was dropped: the relay is not running, the
        child has exited, or ``_MAX_TYPED_CHUNKS`` chunks are still waiting.
        """
        with self._wake_lock:
            wake = self._wake_w
            if wake is None or self._status is not None or len(self._typed) >= _MAX_TYPED_CHUNKS:
                return False
            self._typed.append(bytes(raw))
            try:
                os.write(wake, b"\0")
            except OSError:  # full: the loop has a wake-up pending anyway
                pass
            return True

    def elapsed_s(self) -> float:
        """Return float seconds since the child was spawned: the clock of the sink's events."""
        return self._now()

    # -- internals ------------------------------------------------------------------

    def _reset_modes(self) -> bool:
        """Write to the user's terminal what switches off the modes the child left on, once.

        Returns whether there were such bytes; what the terminal did not take at once is
        in the backlog.
        """
        if self._modes_reset:
            return False
        self._modes_reset = True
        reset = self.modes.reset_bytes()
        if not reset or not self._out.is_open or not os.isatty(self.stdout_fd):
            return False
        self._out.write(reset)
        return True

    def _on_signal(self, signum: int, _frame: object) -> None:
        self._signals.append(signum)

    def _now(self) -> float:
        return time.monotonic() - self._start

    def _reap(self) -> bool:
        """Collect the child's status if it has exited; return whether it has."""
        if self._status is not None:
            return True
        try:
            pid, status = os.waitpid(self.child.pid, os.WNOHANG)
        except ChildProcessError:
            self._status = 0
            self._exit_at = time.monotonic()
            return True
        if pid == 0:
            return False
        self._status = status
        self._exit_at = time.monotonic()
        return True

    def _handle_signals(self, on_signal: Callable[[int], None] | None) -> None:
        while self._signals:
            sig = self._signals.pop(0)
            if sig == signal.SIGCHLD:
                self._reap()
            elif sig == signal.SIGWINCH:
                self._resize()
            else:
                self._received = sig
                if sig == signal.SIGHUP:
                    self._hangup = True
                    self._out.give_up()
                    self._hang_up_child()
                else:
                    if sig == signal.SIGTERM:
                        self._out.give_up_when_stalled(_STALL_GRACE_S)
                    try:
                        os.kill(self.child.pid, sig)
                    except ProcessLookupError:
                        pass
                if on_signal is not None:
                    on_signal(sig)

    def _hang_up_child(self) -> None:
        """Send SIGHUP, then SIGCONT, to the child's process group and the pty's foreground one.

        As the kernel does when a terminal closes: a stopped job gets its hangup too.
        """
        # The child leads its own session (setsid), so its group's id is its pid; once it is
        # reaped that pid may be another process's.
        groups = [] if self._status is not None else [self.child.pid]
        try:
            groups.append(os.tcgetpgrp(self.child.fd))
        except OSError:
            pass
        ours = os.getpgrp()
        for group in dict.fromkeys(groups):  # in order, once each
            if group <= 1 or group == ours:
                continue
            for sig in (signal.SIGHUP, signal.SIGCONT):
                try:
                    os.killpg(group, sig)
                except OSError:  # gone already, or not ours to signal
                    break

    def _end_child_group(self) -> None:
        """SIGKILL what is left of the child's process group once the child is gone after a hangup.

        An agent's helpers may ignore the hangup (Gemini CLI and Qwen Code run relaunched node
        processes under the one started) and would stay on the pty, re-parented to PID 1.
        The group's id is the reaped child's pid; Linux does not give that number to a new
        process while a member of the group lives, so only the child's own group is hit.
        """
        if self._status is None or self.child.pid <= 1 or self.child.pid == os.getpgrp():
            return
        try:
            os.killpg(self.child.pid, signal.SIGKILL)
        except OSError:  # nothing left of it: the usual case
            pass

    def _resize(self) -> None:
        size = terminal_size((self.stdout_fd, self.stdin_fd))
        if size is None or size == self._size:
            return
        self._size = size
        try:
            _set_size(self.child.fd, size)
        except OSError:
            return
        self.sink.on_resize(size, self._now())

    def _eof_bytes(self, last: int | None) -> bytes:
        eof: bytes | int
        try:
            eof = termios.tcgetattr(self.child.fd)[6][termios.VEOF]
        except termios.error:
            eof = b"\x04"
        if isinstance(eof, int):
            eof = bytes([eof])
        # In canonical mode an EOF after a partial line only ends that line; a second one
        # then reads as end-of-file.
        return eof if last in (None, 10, 13) else eof + eof

    def _is_hidden_input(self) -> bool:
        try:
            lflag = termios.tcgetattr(self.child.fd)[3]
        except termios.error:
            return False
        return bool(lflag & termios.ICANON) and not lflag & termios.ECHO

    def _loop(self, wake_r: int, on_signal: Callable[[int], None] | None) -> None:
        # The relay's inner loop, one pass per select(): kept in one function on purpose
        # (mccabe complexity over 25, allowed by tests/unit/test_quality.py). Its state lives
        # in locals, which CPython reads far faster than attributes, and a pass calls no
        # helper it can avoid: each call on this path costs keystroke latency and throughput
        # (bench/RESULTS.md, sections 1 and 2).
        master = self.child.fd
        os.set_blocking(master, False)
        out = self._out
        backlog = out.backlog  # what a slow stdout has not taken yet
        stdin_open = self.stdin_fd >= 0
        # Piped input may hold lines longer than the pty's line discipline keeps: written
        # by a LineWriter, and never by the fast path, which writes what it reads as it is.
        lines = None if not stdin_open or os.isatty(self.stdin_fd) else LineWriter(master)
        pending = bytearray()
        last_in: int | None = None
        eof_due = False
        # End of input sent before the child read it can be lost when the child switches
        # its terminal out of canonical mode (bash's readline, python's REPL do at start):
        # while the child stays quiet after it, end-of-file is sent again, a few times.
        eof_sent_at: float | None = None
        eof_resends = 0
        last_output = time.monotonic()
        master_open = True
        drained = False  # after the child's exit: the pty stayed quiet, or kept writing too long
        drain_deadline: float | None = None
        while True:
            if self._signals:
                self._handle_signals(on_signal)
            if self._hangup:
                stdin_open = False
            exited = self._status is not None
            if exited and drain_deadline is None:
                drain_deadline = time.monotonic() + _DRAIN_MAX_S
            if backlog and out.grace_left() == 0.0:
                out.give_up()  # asked to end, and the terminal has stopped reading
            done_reading = drained or not master_open
            if exited and done_reading and not backlog:
                if not self._reset_modes() or not backlog:
                    return
                # The terminal is slow to take the reset: wait for it as for output, signals included.
            if not master_open and not backlog:
                # The child closed its terminal but runs on: wait for it.
                select.select([wake_r], [], [], 1.0)
                self._clear_wakeup(wake_r)
                self._reap()
                continue
            if (
                not self._signals
                and not exited
                and master_open
                and stdin_open
                and lines is None
                and not drained
                and not pending
                and not backlog
                and not eof_due
                and eof_sent_at is None
                and not self._typed
                and (self.injection is None or not self.injection.pending)
            ):
                master_open, stdin_open, eof_due, last_in, got_output, woken = self._steady(master, wake_r, pending, last_in)
                if got_output:
                    last_output = time.monotonic()
                # On to the general turn: after a wake-up its select clears the wake pipe and the
                # signals are handled; else what ended the fast path is there to act on at once.
                wait = woken
            else:
                wait = True
            # While the backlog is full the child is not read: it blocks, as on a slow terminal.
            reading = master_open and not drained and len(backlog) < MAX_BACKLOG_BYTES
            rlist = [master, wake_r] if reading else [wake_r]
            if master_open and stdin_open and len(pending) < _MAX_PENDING_INPUT and not exited:
                rlist.append(self.stdin_fd)
            wlist = [master] if pending and master_open and not exited else []
            polls_master = bool(wlist)
            if backlog:
                wlist.append(out.fd)
            injecting = self.injection is not None and self.injection.pending
            if exited:
                timeout = None if done_reading else _DRAIN_IDLE_S  # done reading: only the backlog is left
            else:
                timeout = _INJECT_POLL_S if injecting else None
            if eof_sent_at is not None and eof_resends < _EOF_RESENDS and not exited:
                timeout = _EOF_QUIET_S / 2 if timeout is None else min(timeout, _EOF_QUIET_S / 2)
            if not master_open and not exited:
                timeout = 1.0 if timeout is None else min(timeout, 1.0)
            grace_s = out.grace_left() if backlog else None
            if grace_s is not None:
                timeout = grace_s if timeout is None else min(timeout, grace_s)
            try:
                readable, writable, _ = select.select(rlist, wlist, [], timeout) if wait else ((), (), ())
            except InterruptedError:  # pragma: no cover - PEP 475 retries
                continue
            if wake_r in readable:
                self._clear_wakeup(wake_r)
            if self._signals:
                # Before reading input: a resize the user made comes before what they typed next.
                self._handle_signals(on_signal)
                if self._hangup:
                    stdin_open = False
            if backlog and out.fd in writable:
                out.flush()
            if not master_open:
                self._reap()
                continue
            if exited and reading and timeout == _DRAIN_IDLE_S and not readable and not writable:
                drained = True  # the pty stayed quiet after the child exited (not a shorter grace wait)
                continue
            if exited and drain_deadline is not None and time.monotonic() > drain_deadline:
                drained = True
                continue
            if master in readable:
                got = self._pump_output(master, injecting)
                if got is None:
                    master_open = False
                    if not self._reap():
                        # A quick exit's SIGCHLD may still be on its way.
                        self._wait_briefly()
                    continue
                if got:
                    last_output = time.monotonic()
            if self.stdin_fd in readable:
                try:
                    data = os.read(self.stdin_fd, READ_SIZE)
                except OSError:
                    data = b""
                    self._hangup = self._hangup or os.isatty(self.stdin_fd)
                if data:
                    self.sink.on_input(data, self._now(), self._is_hidden_input())
                    pending += data
                    last_in = data[-1]
                else:
                    stdin_open = False
                    if not self._hangup:
                        eof_due = True
            if self._typed and not exited and len(pending) < _MAX_PENDING_INPUT:
                self._take_typed(pending)
            if injecting and not exited and not pending:  # after what went before is written
                typed = self.injection.poll(self._now())  # type: ignore[union-attr]
                if typed:
                    self.sink.on_input(typed, self._now(), False)
                    pending += typed
            if eof_due and not pending:
                pending += self._eof_bytes(last_in)
                eof_due = False
                eof_sent_at = time.monotonic()
            elif eof_sent_at is not None and eof_resends < _EOF_RESENDS and not pending and not exited:
                quiet_since = max(eof_sent_at, last_output)
                if time.monotonic() - quiet_since >= _EOF_QUIET_S:
                    pending += self._eof_bytes(None)
                    eof_sent_at = time.monotonic()
                    eof_resends += 1
            if pending and (master in writable or not polls_master):
                try:
                    if lines is None:
                        n = os.write(master, pending)
                        del pending[:n]
                    else:
                        lines.write(pending)
                except BlockingIOError:
                    pass
                except OSError:
                    pending.clear()

    def _steady(
        self, master: int, wake_r: int, pending: bytearray, last_in: int | None
    ) -> tuple[bool, bool, bool, int | None, bool, bool]:
        """The loop's fast path: keys to the child, its output to the screen, nothing else.

        Runs while nothing but typed input and output moves (no signal, no backlog, no input
        waiting to be written, no injection) with one ``select`` per turn and no other work
        between a key and its write to the child: a key is written first and handed to the
        sink after (whether it is hidden is read before). Returns to the general loop, which
        handles the rest, as soon as anything else happens: a wake-up (a signal, typed input
        from another thread), the child's end of the pty closing, end of input, stdout falling
        behind or a key the child did not take at once (what is left goes into ``pending``).
        Returns (master_open, stdin_open, eof_due, last_in, got_output, woken): woken when it
        ended for a wake-up (the wake pipe is left for the general loop to clear).
        """
        stdin = self.stdin_fd
        fds = [master, wake_r, stdin]
        wait, read, write = select.select, os.read, os.write
        on_input, now, hidden_input = self.sink.on_input, self._now, self._is_hidden_input
        backlog = self._out.backlog
        got_output = False
        while True:
            try:
                readable = wait(fds, (), ())[0]
            except InterruptedError:  # pragma: no cover - PEP 475 retries
                continue
            # A signal that came with the input (its handler ran as select returned) comes first:
            # a resize the user made is passed on before what they typed next.
            if wake_r in readable or self._signals:
                return True, True, False, last_in, got_output, True
            if master in readable:
                got = self._pump_output(master, False)
                if got is None:
                    if not self._reap():
                        self._wait_briefly()  # a quick exit's SIGCHLD may still be on its way
                    return False, True, False, last_in, got_output, False
                got_output = got_output or bool(got)
                if backlog:
                    return True, True, False, last_in, got_output, False
            if stdin in readable:
                try:
                    data = read(stdin, READ_SIZE)
                except OSError:
                    data = b""
                    self._hangup = self._hangup or os.isatty(stdin)
                if not data:
                    return True, False, not self._hangup, last_in, got_output, False
                hidden = hidden_input()
                try:
                    n = write(master, data)
                except BlockingIOError:
                    n = 0
                except OSError:
                    n = len(data)  # as the general loop does: what the child cannot take is dropped
                on_input(data, now(), hidden)
                last_in = data[-1]
                if n < len(data):
                    pending += data[n:]
                    return True, True, False, last_in, got_output, False
            if self._signals or self._typed or self._status is not None:
                return True, True, False, last_in, got_output, False  # acted on at once

    def _pump_output(self, master: int, injecting: bool) -> int | None:
        """Copy what the child wrote to the screen and the sink; return the bytes, None at EOF.

        While output keeps coming it is read again at once, without a select per read (up
        to ``_BURST_BYTES``, so typed keys and signals still get their turn), until stdout's
        backlog is full.
        """
        total = 0
        read, write_out, on_output, now = os.read, self._out.write, self.sink.on_output, self._now
        track, backlog, backlog_max = self.modes.feed, self._out.backlog, MAX_BACKLOG_BYTES
        while total < _BURST_BYTES and len(backlog) < backlog_max:
            try:
                data = read(master, READ_SIZE)
            except BlockingIOError:
                return total
            except OSError:
                data = b""  # EIO on Linux: every holder of the pty's other end closed it
            if not data:
                return None if total == 0 else total
            total += len(data)
            write_out(data)
            track(data)
            at = now()
            on_output(data, at)
            if injecting:
                self.injection.on_output(data, at)  # type: ignore[union-attr]
            if len(data) < _SHORT_READ:
                return total  # all there was (an echo, a prompt): the next select sees more
        return total

    def _take_typed(self, pending: bytearray) -> None:
        """Move what ``type_input`` queued into ``pending``, through the sink as typed input."""
        hidden = self._is_hidden_input()
        while self._typed:
            data = self._typed.popleft()
            self.sink.on_input(data, self._now(), hidden)
            pending += data

    def _wait_briefly(self) -> None:
        for _ in range(100):
            if self._reap():
                return
            time.sleep(0.01)

    @staticmethod
    def _clear_wakeup(wake_r: int) -> None:
        try:
            while os.read(wake_r, 512):
                pass
        except OSError:
            pass


class RawMode:
    """Put a terminal in raw mode for the duration of a ``with`` block; restore it exactly.

    Does nothing when ``fd`` is not a terminal. ``attrs`` holds the modes as found.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.attrs: TermModes | None = None

    def __enter__(self) -> RawMode:
        try:
            self.attrs = termios.tcgetattr(self.fd)
        except termios.error:
            return self
        tty.setraw(self.fd, termios.TCSANOW)
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()

    def restore(self) -> None:
        """Put the modes back as found; safe to call more than once, never raises."""
        if self.attrs is None:
            return
        try:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.attrs)
        except termios.error:
            pass
