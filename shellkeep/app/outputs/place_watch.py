"""Keep the session's tmux layout in ``meta.json`` current while it runs (``app.place``).

A pane is resized when its window is split, a neighbour closed or a border dragged: the relay
records a resize event. Once resizes have stopped for ``_QUIET_S``, a thread of its own asks
tmux for the window's layout again and, when it changed, writes it into ``meta.json``, so the
layout a kill -9 or a reboot leaves behind is the last one seen, not the one at start. Sessions
outside tmux get no thread. Nothing here can fail the recording: errors are logged.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from shellkeep.app.place import refresh_place
from shellkeep.capture.output import Batch, SessionEnd, SessionStart
from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.session import Status, read_meta, write_meta

__all__ = ["PlaceOutput"]

log = get_logger(__name__)

_QUIET_S = 0.5
"""How long after the last resize the layout is read (a dragged border resizes many times)."""
_LAST_LOOK_S = 3.0
"""How long ``close`` waits for a refresh under way (tmux's own timeout is 2 s)."""


class PlaceOutput:
    """Refresh the stored tmux layout after resizes, from ``start`` to ``close``.

    place: the session's place as known before the child ran (``place_from_env``); only a
    tmux place is watched.
    """

    name = "tmux layout watcher"

    def __init__(self, place: dict[str, object] | None) -> None:
        self._watched = bool(place) and (place or {}).get("kind") == "tmux"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, session: SessionStart) -> None:
        """Start the watcher thread (inside tmux only)."""
        if not self._watched:
            return
        self._thread = threading.Thread(target=self._run, args=(session.folder,), name="shellkeep-place", daemon=True)
        self._thread.start()

    def event(self, batch: Batch) -> None:
        """Wake the watcher on a resize event; never blocks."""
        if self._thread is not None and any(code == "r" for code, _, _ in batch.events):
            self._wake.set()

    def close(self, end: SessionEnd | None) -> None:
        """Stop the watcher, waiting up to ``_LAST_LOOK_S`` for a refresh under way (the final
        ``meta.json`` reads the layout once more: ``app.session_meta.final_meta``)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(_LAST_LOOK_S)

    def _run(self, folder: Path) -> None:
        while True:
            self._wake.wait()
            while self._wake.is_set():  # until resizes have stopped for _QUIET_S
                self._wake.clear()
                if self._stop.wait(_QUIET_S):
                    return
            try:
                _store_layout(folder)
            except Exception as exc:  # noqa: BLE001 - a thread of the recording: log, never raise
                log.warning("could not store the tmux layout: %s", exc)


def _store_layout(folder: Path) -> None:
    """Write the window's current layout into ``folder/meta.json`` when it changed; blocks on tmux.

    tmux is asked first and ``meta.json`` read again just before it is written, so what
    others wrote meanwhile is kept.
    """
    stored = _stored_place(folder)
    if stored is None:
        return
    place = refresh_place(stored)
    if place is stored:
        return
    meta = read_meta(folder)
    if meta.status == Status.RUNNING.value:
        write_meta(dataclasses.replace(meta, place=place))


def _stored_place(folder: Path) -> dict[str, object] | None:
    """Return the tmux place in ``folder/meta.json`` of a running session, or None."""
    try:
        meta = read_meta(folder)
    except (OSError, DataError) as exc:  # not written yet (the first meta.json), or unreadable
        log.debug("no meta.json to update in %s: %s", folder, exc)
        return None
    if meta.status != Status.RUNNING.value or not meta.place or "window_layout" not in meta.place:
        return None
    return meta.place
