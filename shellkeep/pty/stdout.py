"""Write the relay's output to the user's stdout without ever blocking the relay on it.

A terminal that stops reading (XOFF, a stalled ssh, ``shellkeep ... | cat`` with ``cat``
stopped) must not freeze the relay: it still has to act on SIGTERM and SIGHUP, and to
record. So when stdout is a terminal or a pipe, the relay writes to a private open file
description of it (``/proc/self/fd/N`` opened again) with O_NONBLOCK set on that one only:
the user's shell shares the original description, which keeps its flags, also after a
``kill -9``. What stdout does not take at once waits in a bounded backlog; the relay
flushes it when stdout turns writable and stops reading the child while it is full, so the
child blocks as it would on a slow terminal. Elsewhere (a regular file, whose offset is
shared with the shell; a socket; /dev/null; a terminal that cannot be opened again, as
another user's under ``su``) writes block, as they always did.
"""

from __future__ import annotations

import os
import select
import stat
import time

MAX_BACKLOG_BYTES = 1 << 18
"""Output held for a slow stdout before the relay stops reading the child (bytes)."""


class StdoutWriter:
    """The relay's way to the user's stdout: non-blocking writes and a bounded backlog.

    fd: where the writes go (the private description, or stdout itself).
    backlog: bytes the child wrote that stdout has not taken yet, oldest first; the
    object is never replaced, so a caller may keep a reference to it.
    is_open: False once stdout failed (EIO, EPIPE) or was given up; writes are dropped.
    """

    def __init__(self, fd: int, *, private: bool = False) -> None:
        self.fd = fd
        self.backlog = bytearray()
        self.is_open = True
        self._private = private
        self._grace_s: float | None = None
        self._stalled_since = 0.0  # the backlog's start, its last progress, or the give-up order

    @classmethod
    def open(cls, fd: int) -> StdoutWriter:
        """Return a writer for the user's stdout ``fd`` (private and non-blocking where it can)."""
        try:
            found = os.fstat(fd)
        except OSError:
            writer = cls(fd)
            writer.is_open = False  # closed: there is no screen to serve
            return writer
        if not (stat.S_ISFIFO(found.st_mode) or os.isatty(fd)):
            return cls(fd)
        try:
            private = os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:  # no /proc, a tty of another user (sudo), a pipe whose reader is gone
            return cls(fd)
        opened = os.fstat(private)
        if (opened.st_dev, opened.st_ino, opened.st_rdev) != (found.st_dev, found.st_ino, found.st_rdev):
            os.close(private)
            return cls(fd)
        return cls(private, private=True)

    def write(self, data: bytes) -> None:
        """Write ``data`` after the backlog; queue what stdout does not take now.

        Never blocks on a private description; on stdout itself it blocks as ``write(2)`` does.
        """
        if not self.is_open:
            return
        backlog = self.backlog
        if backlog:
            backlog += data
            self.flush()
            return
        try:
            n = os.write(self.fd, data)
        except BlockingIOError:
            n = 0
        except OSError:
            self._close_broken()
            return
        if n != len(data):
            backlog += memoryview(data)[n:]
            self._stalled_since = time.monotonic()

    def flush(self) -> None:
        """Write as much of the backlog as stdout takes now."""
        backlog = self.backlog
        if not backlog or not self.is_open:
            return
        try:
            n = os.write(self.fd, backlog)
        except BlockingIOError:
            return
        except OSError:
            self._close_broken()
            return
        if n:
            del backlog[:n]
            self._stalled_since = time.monotonic()

    def give_up_when_stalled(self, grace_s: float) -> None:
        """From now on, give stdout up once it has taken nothing for ``grace_s`` seconds.

        For a relay asked to end (SIGTERM): the child's last output is still shown on a
        terminal that reads, but a stalled one cannot keep shellkeep from finishing.
        """
        self._grace_s = grace_s
        self._stalled_since = time.monotonic()

    def grace_left(self) -> float | None:
        """Return seconds until a stalled stdout is given up (0.0: now), or None when none is due."""
        if self._grace_s is None or not self.backlog or not self.is_open:
            return None
        return max(0.0, self._stalled_since + self._grace_s - time.monotonic())

    def give_up(self) -> None:
        """Stop writing to stdout and drop the backlog (the terminal is gone or stalled)."""
        self.is_open = False
        self.backlog.clear()

    def drain(self, grace_s: float) -> None:
        """Wait until the backlog is written; give stdout up once it takes nothing for ``grace_s``.

        Blocks up to ``grace_s`` seconds per stall. For the relay's last bytes (mode reset).
        """
        while self.backlog and self.is_open:
            _, writable, _ = select.select([], [self.fd], [], grace_s)
            if not writable:
                self.give_up()
                return
            self.flush()

    def close(self) -> None:
        """Close the private description, if one was opened; stdout itself stays open."""
        self.is_open = False
        if self._private:
            self._private = False
            try:
                os.close(self.fd)
            except OSError:
                pass

    def _close_broken(self) -> None:
        # The user's terminal or pipe is gone; the relay goes on recording what the child writes.
        self.give_up()
