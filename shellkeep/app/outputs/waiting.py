"""Start the ``waiting`` notifiers (``app.notify``) when the program has waited for its user a while.

Judged from the recorder's activity reports: the adapter's waiting hints matched, or the
pty's modes say the program reads its user (``store.live.waits_for_user``). The hints
themselves are the agent adapter's (``agents`` ``WaitingHints``).
"""

from __future__ import annotations

from shellkeep.app.outputs.status_file import PtyModes
from shellkeep.capture.activity import RecentOutput
from shellkeep.capture.output import Batch, SessionEnd, SessionStart
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.app.notify import WaitingWatch
    from shellkeep.config import NotifyConfig

__all__ = ["WaitingOutput", "recent_output", "waiting_output"]

log = get_logger(__name__)


class WaitingOutput:
    """Feed a ``WaitingWatch`` each live status and the last line on screen; it notifies."""

    name = "waiting notifications"

    def __init__(self, watch: WaitingWatch) -> None:
        self._watch = watch
        self._modes: PtyModes | None = None

    def start(self, session: SessionStart) -> None:
        """Take a copy of the pty's fd, to read the child's input modes at each report."""
        self._modes = PtyModes(session.pty_fd, session.shell_pid)

    def event(self, batch: Batch) -> None:
        """Report the batch's activity, if it has one, to the watch; never blocks."""
        if batch.activity is None or self._modes is None:
            return
        self._watch.report(self._modes.status(batch.activity), batch.activity.last_line)

    def close(self, end: SessionEnd | None) -> None:
        """Stop watching: nothing is notified after this."""
        self._watch.close()
        if self._modes is not None:
            self._modes.close()


def recent_output(agent: str, notify: NotifyConfig | None) -> RecentOutput | None:
    """Return what keeps the latest output for judging (the agent's waiting hints, the last
    line), or None when neither the adapter's hints nor a notifier need it."""
    hints = _waiting_hints(agent)
    if not hints and notify is None:
        return None
    return RecentOutput(hints)


def waiting_output(paths: Paths, meta: SessionMeta, notify: NotifyConfig | None) -> WaitingOutput | None:
    """Return the waiting notifier of the session, or None when no notifier wants ``waiting``."""
    if notify is None or "waiting" not in notify.events:
        return None
    from shellkeep.app.notify import WaitingWatch, notification_for, start_notifiers  # only when a notifier is on

    def notify_waiting(hint: str | None, line: str) -> None:
        start_notifiers(paths, notification_for(meta, "waiting", hint, line))

    return WaitingOutput(WaitingWatch(notify_waiting, notify.waiting_delay_s))


def _waiting_hints(agent: str) -> dict[str, tuple[str, ...]]:
    """Return the waiting hints of a built-in agent's adapter (reason -> patterns), or {}."""
    from shellkeep.agents.registry import adapter_named, builtin_names

    if agent not in builtin_names():
        return {}
    try:
        hints = getattr(adapter_named(agent), "waiting_hints", None)
        return {reason: tuple(p) for reason, p in hints.patterns().items() if p} if hints is not None else {}
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not stop the recording
        log.info("no waiting hints for %s: %s", agent, exc)
        return {}
