"""Write the checkpoints added while a session runs into its recording, as ``m`` markers.

``shellkeep mark`` appends to the session's ``checkpoints.jsonl`` from another process; the
recording process watches that file's size on a thread of its own (one ``stat`` every
``POLL_S``, never on the relay's path) and hands each new checkpoint to the recorder's
``add_marker`` as ``checkpoint N: LABEL``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from shellkeep.logs import get_logger
from shellkeep.store.checkpoints import CHECKPOINTS_FILE, read_checkpoints

__all__ = ["POLL_S", "watch_checkpoints"]

log = get_logger(__name__)

POLL_S = 0.25


def watch_checkpoints(
    folder: Path, add_marker: Callable[[str, float], None], clock: Callable[[], float], stop: threading.Event
) -> None:
    """Until ``stop`` is set (and once more then), pass each checkpoint new in ``folder`` to
    ``add_marker(label, at)``.

    clock: the recording's time (float seconds since its start). Blocks; run it on a daemon
    thread. Never raises: a failure is logged and ends the watch.
    """
    path = folder / CHECKPOINTS_FILE
    seen: set[int] = set()
    size = -1
    try:
        stopped = False
        while not stopped:
            stopped = stop.wait(POLL_S)  # once set, one last look: a mark just before the end
            try:
                now_size = os.stat(path).st_size
            except FileNotFoundError:
                continue
            if now_size == size:
                continue
            size = now_size
            at = clock()
            for checkpoint in read_checkpoints(folder):
                if checkpoint.n in seen:
                    continue
                seen.add(checkpoint.n)
                add_marker(checkpoint.marker_label, at)
    except Exception as exc:  # noqa: BLE001 - the recording goes on without live markers
        log.warning("stopped writing checkpoints into the recording: %s", exc)
