"""Write the session's ``live.json`` (``store.live``) from the recorder's activity reports.

``shellkeep ps`` and the shell's notices read it: when output last came, whether the child
reads its terminal line by line with echo (its pty's modes, read at each report) and whether
it waits for its user. The file goes when the session ends.
"""

from __future__ import annotations

import os
import termios
import threading
import time
from pathlib import Path

from shellkeep.capture.activity import OutputActivity
from shellkeep.capture.output import Batch, SessionEnd, SessionStart
from shellkeep.store.live import LiveStatus, remove_live_status, write_live_status

__all__ = ["PtyModes", "StatusFileOutput"]


class PtyModes:
    """A copy of the pty's master fd that reads the child's input modes; ``close`` when done.

    ``shell_pid``: the child's pid when it is a shell; it leads its own session, so its
    group holds the terminal exactly when no job of its runs there. The first prompt such a
    shell shows while it holds the terminal is taken as its own: its last
    visible character (``$``, ``#``, ``%``, ``>``) marks the shell's prompt from then on,
    whatever the folder in it (``LiveStatus.shell_prompt``). Only known where the last line
    is kept (``OutputActivity.last_line``: a notifier is on, or the agent has hints).
    """

    def __init__(self, pty_fd: int, shell_pid: int | None) -> None:
        self._shell_pid = shell_pid
        self._prompt_end: str | None = None  # the last visible character of the shell's own prompt
        try:
            self._fd = os.dup(pty_fd)  # not inherited by the child (PEP 446)
        except OSError:
            self._fd = -1

    def status(self, activity: OutputActivity) -> LiveStatus:
        """Return the live status of ``activity`` with the pty's current modes (None: unreadable)."""
        canonical = echo = None
        shell = shell_prompt = False
        if self._fd >= 0:
            try:
                lflag = termios.tcgetattr(self._fd)[3]
                canonical, echo = bool(lflag & termios.ICANON), bool(lflag & termios.ECHO)
                shell = self._shell_pid is not None and os.tcgetpgrp(self._fd) == self._shell_pid
            except (termios.error, OSError):
                pass
        end = activity.last_line.rstrip()[-1:]  # "" when the last line is not kept (no notifier, no hints)
        if shell and activity.prompt and end:
            if self._prompt_end is None:
                self._prompt_end = end  # in raw mode too: bash's line editor shows it so
            shell_prompt = end == self._prompt_end
        return LiveStatus(
            activity.output_at,
            activity.output_bytes,
            canonical,
            echo,
            activity.prompt,
            time.time(),
            activity.hint,
            shell=shell,
            shell_prompt=shell_prompt,
        )

    def close(self) -> None:
        """Close the fd copy; never raises; safe to repeat."""
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1


class StatusFileOutput:
    """The session's ``live.json``, written at each activity report (writer thread; raises OSError)."""

    name = "live status"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._modes: PtyModes | None = None

    def start(self, session: SessionStart) -> None:
        """Take the session's folder and a copy of its pty's fd."""
        with self._lock:
            self._folder = session.folder
            self._modes = PtyModes(session.pty_fd, session.shell_pid)

    def event(self, batch: Batch) -> None:
        """Write ``live.json`` for the batch's activity report, if it has one."""
        if batch.activity is None:
            return
        with self._lock:
            if self._folder is None or self._modes is None:
                return
            write_live_status(self._folder, self._modes.status(batch.activity))

    def close(self, end: SessionEnd | None) -> None:
        """Stop writing: close the fd copy and remove ``live.json``; never raises."""
        with self._lock:
            folder, self._folder = self._folder, None
            if self._modes is not None:
                self._modes.close()
        if folder is not None:
            remove_live_status(folder)
