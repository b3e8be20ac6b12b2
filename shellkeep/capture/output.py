"""Define the session's outputs and the pipeline that feeds them, dropping a failing one.

A recording session has one sink on the relay's hot path, the ``Recorder``: it decodes,
redacts and writes the asciicast. Everything else that follows the session (the live
socket, the status file, the waiting watch, the checkpoint watcher) is a ``SessionOutput``:
started once the child runs, given what the recorder's writer thread hands on (redacted
events and activity reports, never raw bytes), closed when the session ends. The
``OutputPipeline`` fans out to them on the writer thread, one call per writer batch and
none per relay read, so the relay pays nothing for them (asciinema 3's session and its
list of outputs are the model).

An output that raises is logged, reported once through ``warn`` and dropped; the others,
the recording and the relay go on (a recording failure never harms the wrapped program).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shellkeep.asciicast.model import Header
from shellkeep.capture.activity import OutputActivity
from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # at run time the protocol is documentation only

log = get_logger(__name__)

Event = tuple[str, str, bytes]
"""One recorded event as the outputs get it: (code, text, asciicast v2 line).

code: ``o`` output, ``r`` resize (text ``COLSxROWS``), ``m`` marker; input stays in the
recording. text: after redaction. line: the encoded line, as written to the recording.
"""


@dataclass(frozen=True, slots=True)
class SessionStart:
    """What an output learns once the child runs.

    add_marker(label, at): write a marker into the recording (``at``: float seconds since
    the spawn). type_input(raw): type bytes into the child, as the user would.
    elapsed_s(): float seconds since the spawn, on the relay's clock.
    shell_pid: the child's pid when it is a shell (``agents.launchers.SHELLS``), else None.
    """

    folder: Path
    session_id: str
    header: Header
    pty_fd: int
    shell_pid: int | None
    add_marker: Callable[[str, float], None]
    type_input: Callable[[bytes], object]
    elapsed_s: Callable[[], float]


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """How the session ended: its ``Status`` value and exit code (None: killed by a signal)."""

    status: str
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class Batch:
    """What one pass of the recorder's writer thread hands on.

    events: the output, resize and marker events just encoded, in order (may be empty).
    activity: the output activity report, at most one a second (``capture.activity``), or None.
    """

    events: list[Event]
    activity: OutputActivity | None


class SessionOutput(Protocol):
    """One consumer of a recording session: started, fed batches, closed.

    ``event`` is called on the recorder's writer thread and must not block; ``start`` and
    ``close`` on the session's thread. Any of them may raise: the pipeline drops the output.
    """

    name: str
    """What the one-line warning calls it when it fails ("live socket")."""

    def start(self, session: SessionStart) -> None:
        """Begin following the session (open a socket, start a thread); return at once."""

    def event(self, batch: Batch) -> None:
        """Take what the writer thread hands on, never before ``start`` (the pipeline holds
        batches until every output has started)."""

    def close(self, end: SessionEnd | None) -> None:
        """Stop: the session ended as ``end`` says (None: it did not end normally)."""


class OutputPipeline:
    """Feed a list of ``SessionOutput``; a failing one is logged, reported once, dropped.

    ``on_events`` and ``on_activity`` are the recorder's callbacks (``capture.recorder``).
    Batches that come before ``start`` are held (in memory, in order) and handed on once
    every output has started, so the first viewer's backlog starts at the session's start.
    ``close`` closes the outputs in list order: put first what must stop first.
    """

    def __init__(self, warn: Callable[[str], None]) -> None:
        self._outputs: list[SessionOutput] = []
        self._warn = warn
        self._lock = threading.Lock()  # guards _held
        self._list_lock = threading.Lock()  # guards taking an output off the list
        self._held: list[Batch] | None = []  # None once started

    @property
    def outputs(self) -> tuple[SessionOutput, ...]:
        """Return the outputs still fed (a failing one is gone)."""
        return tuple(self._outputs)

    def add(self, output: SessionOutput) -> None:
        """Append ``output`` to the list (before ``start``; batches held meanwhile reach it)."""
        with self._list_lock:
            self._outputs = [*self._outputs, output]

    def start(self, session: SessionStart) -> None:
        """Start every output in order, then hand on the batches held meanwhile; never raises."""
        for output in list(self._outputs):
            try:
                output.start(session)
            except Exception as exc:  # noqa: BLE001 - an output never stops the session
                self._drop(output, exc)
        with self._lock:
            held, self._held = self._held or [], None
            for batch in held:
                self._feed(batch)

    def on_events(self, events: list[Event]) -> None:
        """Hand a writer batch's events to every output (the recorder's ``on_events``)."""
        self.feed(Batch(events, None))

    def on_activity(self, activity: OutputActivity) -> None:
        """Hand an activity report to every output (the recorder's ``on_activity``)."""
        self.feed(Batch([], activity))

    def feed(self, batch: Batch) -> None:
        """Hand ``batch`` to every output in order; held until ``start``; never raises."""
        if self._held is not None:
            with self._lock:
                if self._held is not None:
                    self._held.append(batch)
                    return
        self._feed(batch)

    def _feed(self, batch: Batch) -> None:
        for output in self._outputs:
            try:
                output.event(batch)
            except Exception as exc:  # noqa: BLE001 - an output never stops the recording
                self._drop(output, exc)

    def close(self, end: SessionEnd | None) -> None:
        """Close every output in list order, each once; later batches go nowhere; never raises."""
        for output in list(self._outputs):
            if not self._take(output):
                continue  # dropped meanwhile (and closed) by the writer thread
            try:
                output.close(end)
            except Exception as exc:  # noqa: BLE001
                self._report(output, exc)

    def _take(self, output: SessionOutput) -> bool:
        """Take ``output`` off the list; return False if it was gone already (closed by another)."""
        with self._list_lock:
            if not any(o is output for o in self._outputs):
                return False
            # A new list, swapped in whole: the writer thread iterates the old one undisturbed.
            self._outputs = [o for o in self._outputs if o is not output]
            return True

    def _drop(self, output: SessionOutput, exc: Exception) -> None:
        if not self._take(output):
            return
        self._report(output, exc)
        try:
            output.close(None)
        except Exception:  # noqa: BLE001 - already reported once
            log.debug("closing the failed %s failed too", output.name, exc_info=True)

    def _report(self, output: SessionOutput, exc: Exception) -> None:
        log.debug("session output %s failed", output.name, exc_info=exc)  # the traceback to the log file; the user gets one line
        try:
            self._warn(f"{output.name} stopped ({type(exc).__name__}: {exc}); the recording goes on")
        except Exception:  # noqa: BLE001
            pass
