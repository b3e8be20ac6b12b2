"""Decide when to tell the user about a session, and hand the telling to a detached process.

The recording process decides; ``app.notifiers`` tells. ``WaitingWatch`` runs in the
recording process once the child runs: a thread fed with each live status the recorder's
writer reports (``store.live``, at most once a second), plus a timer, that starts one
notification per waiting spell once the session has waited ``notify.waiting_delay_s``
without a break. ``notify_ended`` does the same once the session is stored as finished,
killed or hung up. Either way ``start_notifiers`` makes one ``posix_spawn`` of
``python -m shellkeep.app.notifiers`` (new session, no terminal, stdio on /dev/null, like the
upkeep after a session), so a slow URL never holds the relay or the user's prompt.

The facts travel in the environment variable ``SHELLKEEP_NOTIFICATION`` (JSON), not in argv,
which every user of the machine can read. This module imports nothing heavy: it is loaded in
the recording process, after the child runs and only when a notifier is configured.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shellkeep.app.background import SPAWN_ERRORS, spawn_detached
from shellkeep.logs import get_logger
from shellkeep.store.live import WORKING_WINDOW_S, LiveStatus, waits_for_user
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the waiting watch runs beside a recording)
if TYPE_CHECKING:
    from typing import Any

log = get_logger(__name__)

FACTS_ENV = "SHELLKEEP_NOTIFICATION"
"""The variable that carries a ``Notification`` (JSON) to ``app.notifiers``."""


@dataclass(frozen=True, slots=True)
class Notification:
    """What one notification says (field names are the JSON format's contract).

    session: the session id; name: its ``--name`` or None. project: the project's key
    (``web-3f9c``), project_root: its folder. state: ``waiting``, ``finished``, ``killed``
    or ``hangup``. hint: for ``waiting``, the adapter's reason (``approval``, ``input``) or
    None. last_line: the last line on screen as recorded (redacted again before it is sent).
    exit_code: for a session that ended, its exit status as ``shellkeep run`` exits with it
    (128+N when signal N killed it), else None. signal: the signal that killed it, or None.
    """

    session: str
    name: str | None
    project: str
    project_root: str
    agent: str
    state: str
    hint: str | None
    last_line: str
    exit_code: int | None = None
    signal: int | None = None

    def to_json(self) -> str:
        """Return this notification as one JSON object."""
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Notification:
        """Parse ``to_json``'s output; raises ValueError (or TypeError) when it is not one."""
        obj = json.loads(text)
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {key: obj.get(key) for key in fields}  # checked below, key by key
        for key in ("session", "project", "project_root", "agent", "state", "last_line"):
            if not isinstance(values[key], str):
                raise ValueError(f"{key} is not a string")
        for key in ("exit_code", "signal"):
            if values[key] is not None and (not isinstance(values[key], int) or isinstance(values[key], bool)):
                raise ValueError(f"{key} is not an integer")
        return cls(**values)


def notification_for(meta: SessionMeta, state: str, hint: str | None = None, last_line: str = "") -> Notification:
    """Return the notification of ``meta`` in ``state``; an ended one carries its exit status."""
    ended = state != "waiting"
    return Notification(
        session=meta.id,
        name=meta.name,
        project=meta.project,
        project_root=meta.project_root,
        agent=meta.agent,
        state=state,
        hint=hint,
        last_line=last_line,
        exit_code=meta.exit_code if ended else None,
        signal=meta.signal if ended else None,
    )


def start_notifiers(paths: Paths, notification: Notification, env: Mapping[str, str] | None = None) -> bool:
    """Start ``app.notifiers`` for ``notification`` as a detached process; never raises.

    One ``posix_spawn`` (no copy of this process, no wait); the environment is ``env``
    (default: this process's) with ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG`` naming ``paths``.
    Returns whether it started (a failure is logged).
    """
    try:
        spawn_detached(paths, "shellkeep.app.notifiers", env={**(os.environ if env is None else env), FACTS_ENV: notification.to_json()})
    except SPAWN_ERRORS as exc:
        log.info("could not start the notifiers: %s", exc)
        return False
    return True


def notify_ended(paths: Paths, meta: SessionMeta, events: tuple[str, ...], last_line: str) -> bool:
    """Start the notifiers for a stored session that has ended, if its status is in ``events``.

    Returns whether they were started. Never raises.
    """
    if meta.status not in events:
        return False
    return start_notifiers(paths, notification_for(meta, meta.status, last_line=last_line))


def waiting_due_at(status: LiveStatus, delay_s: float) -> float | None:
    """Return when the waiting spell ``status`` shows is to be notified (epoch seconds), or
    None when it shows none: no output yet, or the program does not wait for its user.

    The spell counts as waiting from ``WORKING_WINDOW_S`` after the last output, as in
    ``shellkeep ps``; it is due ``delay_s`` later. Its identity is ``status.output_at``.
    """
    if status.output_at is None or not waits_for_user(status):
        return None
    return status.output_at + WORKING_WINDOW_S + delay_s


class WaitingWatch:
    """Start one notification per waiting spell, once the session has waited ``delay_s``.

    A spell is the time between two outputs (``LiveStatus.output_at``) while the statuses
    say the program waits for its user; it is notified at ``waiting_due_at`` unless output
    came meanwhile. Times are wall clock (epoch seconds), like ``output_at``.

    Args:
        notify: called on the watch's thread with (hint, last line) when a spell is due
            (``start_notifiers`` of a ``waiting`` notification); it must not raise.
        delay_s: seconds of waiting before the notification.
        clock: epoch seconds now (tests pass their own).
    """

    def __init__(
        self,
        notify: Callable[[str | None, str], object],
        delay_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._notify = notify
        self._delay_s = delay_s
        self._clock = clock
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._status: LiveStatus | None = None
        self._line = ""
        self._closed = False
        self.notified = 0  # how many spells were notified (for tests and logs)
        self._thread = threading.Thread(target=self._run, name="shellkeep-waiting", daemon=True)
        self._thread.start()

    def report(self, status: LiveStatus, last_line: str) -> None:
        """Take the newest live status and last line on screen; never blocks."""
        with self._lock:
            self._status, self._line = status, last_line
        self._wake.set()

    def close(self) -> None:
        """Stop watching (the session has ended): nothing is notified after this."""
        with self._lock:
            self._closed = True
        self._wake.set()

    def _run(self) -> None:
        notified_for: float | None = None  # output_at of the spell already notified
        while True:
            self._wake.clear()
            with self._lock:
                status, line, closed = self._status, self._line, self._closed
            if closed:
                return
            timeout_s = None
            due = None if status is None or status.output_at == notified_for else waiting_due_at(status, self._delay_s)
            if status is not None and due is not None:
                timeout_s = due - self._clock()
                if timeout_s <= 0:
                    notified_for = status.output_at
                    self.notified += 1
                    try:
                        self._notify(status.hint, line)
                    except Exception as exc:  # noqa: BLE001 - a notifier never reaches the recording
                        log.info("waiting notification failed: %s", exc)
                    continue
            self._wake.wait(timeout_s)
