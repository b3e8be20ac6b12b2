"""Run one program inside an outer pseudo-terminal, the way a user's terminal would.

The benchmark process holds the pty's master end and reads it as fast as it can,
discarding what it reads; the program (a recorder, or the workload itself for the
``direct`` baseline) gets the slave end as its controlling terminal, stdin, stdout and
stderr, in cooked mode with echo on, like a fresh terminal window.
"""

from __future__ import annotations

import errno
import fcntl
import os
import pty
import select
import signal
import struct
import termios
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

COLS, ROWS = 120, 40
_READ_SIZE = 1 << 16


class OuterPtyError(RuntimeError):
    """The program in the outer pty misbehaved (did not start, timed out, failed)."""


class Timeout(OuterPtyError):
    """The program was still running (or still holding the pty) when its time ran out."""


@dataclass
class Outer:
    """A program running in an outer pty: its pid, the master fd and the start time."""

    pid: int
    fd: int
    started_ns: int
    tail: bytearray = field(default_factory=bytearray)
    status: int | None = None
    bytes_read: int = 0  # set by drain, also when it times out
    last_output_ns: int = 0

    def close(self) -> None:
        """Close the master and make sure the process is gone; never raises."""
        try:
            os.close(self.fd)
        except OSError:
            pass
        if self.status is not None:
            return
        for sig, wait_s in ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.pid, sig)  # its own session and group: pty.fork called setsid
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.status = status
                    return
                time.sleep(0.01)


def spawn(argv: Sequence[str], *, env: Mapping[str, str], cwd: str) -> Outer:
    """Fork ``argv`` onto the slave of a new pty of COLS x ROWS and return it at once."""
    started = time.perf_counter_ns()
    pid, fd = pty.fork()
    if pid == 0:  # the child: set the size, then become the program
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
            os.chdir(cwd)
            os.execvpe(argv[0], list(argv), dict(env))
        except BaseException:  # noqa: BLE001 - nothing may return into the parent's code
            os._exit(127)
    return Outer(pid=pid, fd=fd, started_ns=started)


@dataclass(frozen=True)
class Drained:
    """How a program's run in the outer pty went.

    elapsed_s: spawn to both end of output (EIO on the master) and process exit.
    last_output_s: spawn to the last byte read.
    """

    elapsed_s: float
    last_output_s: float
    bytes_read: int
    exit_code: int
    maxrss_kb: int  # wait4's ru_maxrss: the largest of the program and its waited-for children
    cpu_s: float  # user + system CPU of the program and its waited-for children (cat included)


def drain(
    outer: Outer,
    *,
    timeout_s: float,
    tick: Callable[[], None] | None = None,
    tick_s: float = 0.01,
) -> Drained:
    """Read the master until the program has exited and closed the pty; discard the bytes.

    tick: called about every ``tick_s`` while output flows or the pty is quiet
    (used to poll the program's memory). Raises OuterPtyError on timeout.
    """
    # Reads and the final wait block; a SIGALRM watchdog bounds them (no select per read).
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        total, last_ns = _read_all(outer, tick, tick_s)
        _, status, rusage = os.wait4(outer.pid, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    end_ns = time.perf_counter_ns()
    outer.status = status
    return Drained(
        elapsed_s=(end_ns - outer.started_ns) / 1e9,
        last_output_s=(last_ns - outer.started_ns) / 1e9,
        bytes_read=total,
        exit_code=os.waitstatus_to_exitcode(status),
        maxrss_kb=rusage.ru_maxrss,
        cpu_s=rusage.ru_utime + rusage.ru_stime,
    )


def _on_alarm(_signum: int, _frame: object) -> None:
    raise Timeout("timed out waiting for the program to end")


def _read_all(outer: Outer, tick: Callable[[], None] | None, tick_s: float) -> tuple[int, int]:
    fd = outer.fd
    total = 0
    last_ns = outer.started_ns
    next_tick = time.monotonic()
    tail = outer.tail
    try:
        while True:
            if tick is not None:
                now = time.monotonic()
                if now >= next_tick:
                    tick()
                    next_tick = now + tick_s
                ready, _, _ = select.select([fd], [], [], tick_s)
                if not ready:
                    continue
            try:
                data = os.read(fd, _READ_SIZE)
            except OSError as exc:
                if exc.errno != errno.EIO:
                    raise
                break  # every holder of the slave has closed it
            if not data:
                break
            total += len(data)
            last_ns = time.perf_counter_ns()
            if len(data) >= 4096:
                tail[:] = data[-4096:]
            else:
                tail += data
                del tail[:-4096]
    finally:
        outer.bytes_read = total
        outer.last_output_ns = last_ns
    if tick is not None:
        tick()
    return total, last_ns


def wait_for(outer: Outer, marker: bytes, timeout_s: float) -> None:
    """Read the master until ``marker`` has appeared; raise OuterPtyError otherwise."""
    seen = bytearray()
    deadline = time.monotonic() + timeout_s
    while marker not in seen:
        left = deadline - time.monotonic()
        if left <= 0:
            raise OuterPtyError(f"no {marker!r} within {timeout_s:.0f} s; last output {bytes(seen[-300:])!r}")
        ready, _, _ = select.select([outer.fd], [], [], left)
        if ready:
            try:
                data = os.read(outer.fd, _READ_SIZE)
            except OSError:
                data = b""
            if not data:
                raise OuterPtyError(f"the program ended before printing {marker!r}: {bytes(seen[-300:])!r}")
            seen += data


def read_exactly(outer: Outer, count: int, timeout_s: float) -> int:
    """Read until ``count`` bytes arrived or the pty stays quiet for ``timeout_s``; return the count read."""
    got = 0
    while got < count:
        ready, _, _ = select.select([outer.fd], [], [], timeout_s)
        if not ready:
            return got
        got += len(os.read(outer.fd, _READ_SIZE))
    return got
