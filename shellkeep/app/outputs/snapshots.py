"""Snapshot the files of a running agent's git work tree at each exchange boundary.

A session output (``capture.output``): its ``event`` only notes, from the recorder's
activity reports, whether the agent waits for its user's input (the adapter's ``input``
hint, else the pty's modes, ``store.live.waits_for_user``); the git work happens on a
thread of its own (``app.live_snapshots``), so neither the relay nor the agent waits on it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from shellkeep.app.outputs.status_file import PtyModes
from shellkeep.capture.waiting_state import WaitingState
from shellkeep.capture.output import Batch, SessionEnd, SessionStart
from shellkeep.store.live import waits_for_user
from shellkeep.store.session import SessionMeta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.app.run_request import RecordSettings

__all__ = ["SnapshotOutput", "snapshot_output"]

_JOIN_S = 30.0
"""How long ``close`` waits for a snapshot under way (the checkpoints after the run must not
race it); the agent has ended by then."""


class SnapshotOutput:
    """Checkpoint the files at each exchange boundary from ``start`` to ``close``."""

    name = "file snapshots"

    def __init__(self, meta: SessionMeta, env: Mapping[str, str]) -> None:
        self._meta = meta
        self._env = dict(env)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._modes: PtyModes | None = None
        self._waiting: WaitingState | None = None

    def start(self, session: SessionStart) -> None:
        """Start the watcher thread; the checkpoints take the relay's clock. Never blocks: the
        watcher's modules are imported on its thread (another thread may hold the import lock
        while it compiles the redaction rules, and the outputs after this one wait on ``start``)."""
        self._modes = PtyModes(session.pty_fd, session.shell_pid)
        self._waiting = waiting = WaitingState()
        meta, env, stop = self._meta, self._env, self._stop

        def watch() -> None:
            from shellkeep.app.live_snapshots import watch_snapshots  # deferred: after the child runs

            watch_snapshots(meta, env, session.elapsed_s, waiting, stop)

        self._thread = threading.Thread(
            target=watch,
            name="shellkeep-snapshots",
            daemon=True,
        )
        self._thread.start()

    def event(self, batch: Batch) -> None:
        """Note whether the agent waits for input, from the batch's activity report; never blocks."""
        if batch.activity is None or self._modes is None or self._waiting is None:
            return
        status = self._modes.status(batch.activity)
        self._waiting.report(status.hint == "input" or (status.hint is None and waits_for_user(status)))

    def close(self, end: SessionEnd | None) -> None:
        """Stop the watcher, after the snapshot under way if any (up to ``_JOIN_S``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(_JOIN_S)
        if self._modes is not None:
            self._modes.close()


def snapshot_output(meta: SessionMeta, settings: RecordSettings, env: Mapping[str, str]) -> SnapshotOutput | None:
    """Return the session's snapshot output, or None when ``record.snapshots`` is off or
    ``record.detail`` is ``metadata`` (no exchange is collected then), or the command cannot
    be an agent's (``agents.registry.builtin_may_match``). The watcher itself
    gives up at once for a program with no transcript of its own or outside a git work tree."""
    from shellkeep.agents.registry import builtin_may_match  # dependency-free first look

    if not settings.snapshots or settings.detail == "metadata" or not builtin_may_match(meta.command):
        return None  # a plain program loads nothing more (no thread, no logging)
    return SnapshotOutput(meta, env)
