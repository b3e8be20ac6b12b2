"""Write the checkpoints ``shellkeep mark`` adds while the session runs into its recording.

A thread of its own watches the session's ``checkpoints.jsonl`` (``app.live_marks``) and
hands each new one to the recorder as a marker; it takes one last look when the session ends.
"""

from __future__ import annotations

import threading

from shellkeep.capture.output import Batch, SessionEnd, SessionStart

__all__ = ["CheckpointOutput"]

_LAST_LOOK_S = 2.0
"""How long ``close`` waits for the watcher's last look, before the recording closes."""


class CheckpointOutput:
    """Watch for checkpoints from ``start`` to ``close``; takes no events."""

    name = "checkpoint watcher"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, session: SessionStart) -> None:
        """Start the watcher thread; markers take the relay's clock, so never run ahead of it."""
        from shellkeep.app.live_marks import watch_checkpoints  # deferred: after the child runs

        self._thread = threading.Thread(
            target=watch_checkpoints,
            args=(session.folder, session.add_marker, session.elapsed_s, self._stop),
            name="shellkeep-checkpoints",
            daemon=True,
        )
        self._thread.start()

    def event(self, batch: Batch) -> None:
        """Take nothing: checkpoints come from their file."""

    def close(self, end: SessionEnd | None) -> None:
        """Stop the watcher after its last look (up to ``_LAST_LOOK_S``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(_LAST_LOOK_S)
