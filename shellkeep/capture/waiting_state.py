"""Whether the agent waits for its user's input, as the latest activity report said: a flag the
snapshot output (``app.outputs.snapshots``) sets and its watcher (``app.live_snapshots``) reads."""

from __future__ import annotations

import threading

__all__ = ["WaitingState"]


class WaitingState:
    """Whether the agent waits for its user's input, as the latest activity report said.

    Written by the recorder's writer thread (``report``), read by the watcher; thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting = False

    def report(self, waiting: bool) -> None:
        """Note what the latest activity report says."""
        with self._lock:
            self._waiting = waiting

    @property
    def waiting(self) -> bool:
        """Return whether the latest report said the agent waits for input."""
        with self._lock:
            return self._waiting
