"""Serve the session on its live socket (``capture.live``) to ``shellkeep watch`` and ``serve``.

Viewers get the recorded events as they are written, redacted as stored; what a viewer
types goes to the child after a marker naming the viewer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from shellkeep.capture.output import Batch, Event, SessionEnd, SessionStart
from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.capture.live import LivePublisher

__all__ = ["LiveSocketOutput"]

log = get_logger(__name__)

_CLOSE_WAIT_S = 2.0


class LiveSocketOutput:
    """The session's live socket, opened on a thread of its own.

    Opening it (importing socket and selectors, binding) is kept off the path to the relay's
    start. Until it is open, the events handed on are held here (up to ``_HELD_MAX_BYTES``),
    then given to the publisher first, so the first viewer's backlog starts at the session's
    start. A failure to open it is logged and leaves the session unwatchable, never unrecorded.
    """

    name = "live socket"
    _HELD_MAX_BYTES = 1 << 20

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[Event] = []
        self._held_bytes = 0
        self._publisher: LivePublisher | None = None
        self._closed = False
        self._thread: threading.Thread | None = None

    def start(self, session: SessionStart) -> None:
        """Open the socket on a thread; viewers' input goes to the child after a marker."""
        self._thread = threading.Thread(target=self._open, args=(session,), name="shellkeep-live-open", daemon=True)
        self._thread.start()

    def event(self, batch: Batch) -> None:
        """Publish the batch's events (writer thread); never blocks for long."""
        if not batch.events:
            return
        publisher = self._publisher
        if publisher is None:
            with self._lock:
                publisher = self._publisher
                if publisher is None:
                    if not self._closed and self._held_bytes < self._HELD_MAX_BYTES:
                        self._held.extend(batch.events)
                        self._held_bytes += sum(len(line) for _, _, line in batch.events)
                    return
        publisher.publish(batch.events)

    def _open(self, session: SessionStart) -> None:
        try:
            from shellkeep.capture.live import LivePublisher  # off the start-up path: socket, selectors

            header = session.header
            publisher = LivePublisher(
                session.folder,
                session_id=session.session_id,
                size=header.size,
                timestamp=header.timestamp,
                env=header.env,
                on_input=_typing_from_viewer(session),
            )
        except Exception as exc:  # noqa: BLE001 - viewers are extras: the program runs on
            log.info("no live socket for this session: %s", exc)
            with self._lock:
                self._closed = True
                self._held = []
            return
        with self._lock:
            if self._closed:
                publisher.close()
                return
            if self._held:
                publisher.publish(self._held)
            self._held = []
            self._publisher = publisher

    def close(self, end: SessionEnd | None) -> None:
        """Say how the session ended (when ``end`` is given), close the socket, remove it.

        Blocks up to about 2 s (viewers taking their last events); never raises; safe to repeat.
        """
        if self._thread is not None:
            self._thread.join(_CLOSE_WAIT_S)
        with self._lock:
            publisher, self._publisher = self._publisher, None
            self._closed = True
            self._held = []
        if publisher is None:
            return
        from shellkeep.capture.live import LiveEnd  # loaded already, with the publisher

        publisher.close(LiveEnd(end.status, end.exit_code) if end is not None else None)


def _typing_from_viewer(session: SessionStart) -> Callable[[str, str], None]:
    """Return what types a viewer's text into the child, after a marker naming the viewer."""
    from shellkeep.capture.live import INPUT_MARKER_PREFIX

    def type_from_viewer(text: str, viewer: str) -> None:
        session.add_marker(INPUT_MARKER_PREFIX + viewer, session.elapsed_s())
        session.type_input(text.encode("utf-8", "replace"))

    return type_from_viewer
