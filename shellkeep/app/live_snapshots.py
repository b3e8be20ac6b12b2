"""Snapshot a running agent's files at each exchange boundary: each time it finishes an answer.

``watch_snapshots`` runs on a thread of its own (``app.outputs.snapshots``), never on the
relay's path. Inside a git work tree it snapshots the files once at the start (checkpoint
``session start``, exchange 0: the files before exchange 1), then polls the agent's own
transcript every ``POLL_S`` (one ``stat``). The transcript is read only when it has changed,
has been quiet for ``SETTLE_S`` and the agent waits for its user's input (the waiting state
the recorder's activity reports give, ``WaitingState``): never while it streams. Then
exchange K (1-based, as ``show`` numbers them) is complete when a later prompt is in the
transcript, or when its answer is written and none of its tool calls waits for a result. Its checkpoint is ``exchange K``, as
``app.checkpoints.add_exchange_checkpoints`` labels them after the run (it skips the
exchanges that have one already), so the numbers ``show``, ``diff`` and ``restore-files``
print are the same, and a checkpoint of exchange K holds the files before exchange K+1.

The snapshots of a session share one index (``git.snapshot.SnapshotSeries``): only the
files changed since the last snapshot are hashed, and when nothing changed no commit is
made: the checkpoint takes the previous one's snapshot and ref.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from shellkeep.agents.base import AgentAdapter, AgentSession, Exchange, Launch
from shellkeep.git.snapshot import Snapshot, SnapshotSeries, keep_ref, work_tree
from shellkeep.logs import get_logger
from shellkeep.store.checkpoints import Checkpoint, append_checkpoint
from shellkeep.store.session import SessionMeta, parse_iso

__all__ = ["POLL_S", "SETTLE_S", "START_LABEL", "WaitingState", "completed", "watch_snapshots"]

log = get_logger(__name__)

POLL_S = 0.5
"""How often the agent's transcript is looked at (one ``stat``), in seconds."""

from shellkeep.capture.waiting_state import WaitingState  # noqa: E402 - re-exported: the watcher reads it

SETTLE_S = 0.5
"""How long the transcript must have been quiet before its last answer counts as finished."""

START_LABEL = "session start"
"""The label of the checkpoint of the files as the session found them (exchange 0)."""


class _Series:
    """One session's snapshots and the checkpoints that keep them."""

    def __init__(self, meta: SessionMeta, root: Path, clock: Callable[[], float]) -> None:
        self._meta = meta
        self._root = root
        self._clock = clock
        self._series = SnapshotSeries(root)
        self._last_ref: str | None = None
        self.taken = 0  # commits made
        self.skipped = 0  # snapshots that found nothing changed

    def checkpoint(self, exchange: int, label: str) -> Checkpoint | None:
        """Snapshot the files and append the checkpoint of ``exchange``; raises GitFailed, OSError."""
        time_s = round(max(0.0, self._clock()), 3)
        snap, new = self._series.take(f"shellkeep checkpoint of session {self._meta.id}: {label}")
        self.taken += new
        self.skipped += not new

        def make(n: int) -> Checkpoint:
            ref = self._last_ref
            if new or ref is None:
                ref = f"refs/shellkeep/{self._meta.id}/{n}"
                keep_ref(self._root, ref, snap.commit)
            self._last_ref = ref
            return _checkpoint(n, time_s, label, exchange, snap, ref, self._root)

        return append_checkpoint(self._meta.folder, make)

    def close(self) -> None:
        self._series.close()


def _checkpoint(n: int, time_s: float, label: str, exchange: int, snap: Snapshot, ref: str, root: Path) -> Checkpoint:
    return Checkpoint(
        n=n,
        time_s=time_s,
        label=label,
        auto=True,
        exchange=exchange,
        head=snap.head,
        branch=snap.branch,
        snapshot=snap.commit,
        ref=ref,
        git_root=str(root),
    )


def watch_snapshots(
    meta: SessionMeta,
    env: Mapping[str, str],
    clock: Callable[[], float],
    waiting: WaitingState,
    stop: threading.Event,
) -> None:
    """Until ``stop`` is set, checkpoint the files of ``meta``'s work tree at each exchange boundary.

    meta: the running session (its cwd, agent, command, agent session id, start).
    env: the agent's environment (where its transcripts are). clock: float seconds since
    the session's start. Blocks; run it on a daemon thread. Never raises: a failure is
    logged once and ends the watch (the session and its recording go on).
    """
    series: _Series | None = None
    try:
        adapter = _adapter(meta)
        root = work_tree(Path(meta.cwd)) if adapter is not None else None
        if root is None or adapter is None or stop.is_set():
            return
        series = _Series(meta, root, clock)
        series.checkpoint(0, START_LABEL)
        _follow(meta, env, adapter, series, waiting, stop)
    except Exception as exc:  # noqa: BLE001 - snapshots are extra; the recording goes on
        log.warning("stopped snapshotting the files of %s: %s", meta.id, exc)
    finally:
        if series is not None:
            log.info("snapshots of %s: %d taken, %d skipped (nothing changed)", meta.id, series.taken, series.skipped)
            series.close()


def _follow(
    meta: SessionMeta, env: Mapping[str, str], adapter: AgentAdapter, series: _Series, waiting: WaitingState, stop: threading.Event
) -> None:
    session: AgentSession | None = None
    seen: tuple[int, float] | None = None
    done = 0
    while not stop.wait(POLL_S):
        if session is None:
            session = _find(meta, env, adapter)
            if session is None:
                continue
        assert session.transcript is not None
        try:
            stat = os.stat(session.transcript)
        except FileNotFoundError:
            continue
        now = (stat.st_size, stat.st_mtime)
        settled = waiting.waiting and time.time() - stat.st_mtime >= SETTLE_S
        if now == seen or not settled:
            continue  # the transcript is read once per settled change, never while it streams
        seen = now
        complete = completed(_own(meta, adapter.read_exchanges(session)))
        if complete > done:
            done = complete
            series.checkpoint(complete, f"exchange {complete}")


def completed(exchanges: list[Exchange]) -> int:
    """Return how many exchanges are complete, the agent waiting and its transcript quiet:
    all but the last, and the last too once it has an answer and no tool call waits for
    its result (a command still running)."""
    if not exchanges:
        return 0
    last = exchanges[-1]
    last_done = bool(last.answer.strip()) and len(last.tool_results) >= len(last.tool_calls)
    return len(exchanges) if last_done else len(exchanges) - 1


def _adapter(meta: SessionMeta) -> AgentAdapter | None:
    from shellkeep.agents.registry import adapter_named, builtin_names

    if meta.agent not in builtin_names():
        return None
    adapter = adapter_named(meta.agent)
    return adapter if adapter.has_native_transcript else None


def _find(meta: SessionMeta, env: Mapping[str, str], adapter: AgentAdapter) -> AgentSession | None:
    """Return the agent's session once its transcript exists, else None (look again later)."""
    launch = Launch(argv=tuple(meta.command), agent_session_id=meta.agent_session_id)
    found = adapter.find_session(launch, Path(meta.cwd), env, parse_iso(meta.started_at), "")
    if found is None or found.transcript is None or not found.transcript.is_file():
        return None
    return found


def _own(meta: SessionMeta, exchanges: list[Exchange]) -> list[Exchange]:
    from shellkeep.app.conversation import own_exchanges  # deferred: loaded on the watcher's thread

    return own_exchanges(exchanges, meta)
