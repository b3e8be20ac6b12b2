"""What follows the relay's end: the session stored safe from Ctrl-C, then its upkeep.

The conversation of an agent with a transcript of its own, the ``ended``/``hangup``
notifiers, and the upkeep in the background (compression, indexing, automatic gc).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from pathlib import Path

from shellkeep.app.background import SPAWN_ERRORS, spawn_detached
from shellkeep.app.session_meta import note_ended
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.app.run_request import RecordSettings
    from shellkeep.capture.activity import RecentOutput

__all__ = ["after_stored", "collect_conversation", "notify_end", "restore_signals", "shield_from_interrupts", "start_housekeeping"]

log = get_logger(__name__)

_SHIELDED = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def shield_from_interrupts() -> dict[int, object]:
    """Hold off Ctrl-C, Ctrl-\\, hangup and SIGTERM while a session that has ended is stored.

    Returns the old handlers for ``restore_signals``. Storing takes well under a second (a
    big transcript is left to the upkeep in the background); a second Ctrl-C meanwhile would
    otherwise lose the session's metadata and exchanges. INT, QUIT and HUP are ignored (the
    upkeep, spawned in this window, keeps them ignored; it is detached from the terminal
    anyway). SIGTERM is deferred, not ignored, so that the upkeep can still be stopped: a
    handler notes it, and ``restore_signals`` delivers it again once the session is stored.
    """
    old: dict[int, object] = {}
    for sig in _SHIELDED:
        try:
            old[sig] = signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread: nothing to shield
            pass
    try:
        old[signal.SIGTERM] = signal.signal(signal.SIGTERM, _defer_term)
    except (ValueError, OSError):
        pass
    return old


_deferred_term: list[int] = []


def _defer_term(signum: int, frame: object) -> None:
    _deferred_term.append(signum)


def restore_signals(old: dict[int, object]) -> None:
    """Put back the handlers ``shield_from_interrupts`` replaced; deliver a deferred SIGTERM."""
    for sig, handler in old.items():
        try:
            signal.signal(sig, handler)  # type: ignore[arg-type]
        except (ValueError, OSError, TypeError):
            pass
    if _deferred_term:
        _deferred_term.clear()
        os.kill(os.getpid(), signal.SIGTERM)


def _is_known_agent(name: str) -> bool:
    from shellkeep.agents.registry import adapter_named, builtin_names

    return name in builtin_names() and adapter_named(name).has_native_transcript


def collect_conversation(paths: Paths, meta: SessionMeta, settings: RecordSettings, env: Mapping[str, str]) -> SessionMeta:
    """Store the session's exchanges; a failure is logged and leaves the session as it is.

    Only agents with a transcript of their own are read here, at exit: building exchanges
    from a long recording with a terminal emulator takes time, so for other programs it
    happens in the upkeep after the session (``app.housekeeping``) or on resume. So does
    reading and copying a transcript bigger than ``INLINE_COLLECT_MAX_BYTES``: here only
    the agent session and the transcript's length are noted, and the terminal is given back.
    """
    if not _is_known_agent(meta.agent):
        return meta
    try:
        # deferred: after the child, never at start-up
        from shellkeep.app.conversation import INLINE_COLLECT_MAX_BYTES, collect
        from shellkeep.vault.access import Vault

        vault = Vault(paths, settings.key_file, settings.encrypt)
        return collect(
            meta,
            vault,
            settings.redact_config,
            env,
            from_recording=False,
            defer_above=INLINE_COLLECT_MAX_BYTES,
            snapshot_last=True,
        )
    except Exception as exc:  # noqa: BLE001 - the recording is safe; exchanges can be rebuilt
        log.warning("could not collect the conversation of %s: %s", meta.id, exc)
        return meta


def notify_end(paths: Paths, meta: SessionMeta, settings: RecordSettings, recent: RecentOutput | None) -> None:
    """Start the notifiers for the stored end of the session, when configured (detached; never waits)."""
    if settings.notify is None or meta.status not in settings.notify.events:
        return
    from shellkeep.app.notify import notify_ended

    last_line = recent.judge()[1] if recent is not None else ""
    notify_ended(paths, meta, settings.notify.events, last_line)


def after_stored(
    paths: Paths, meta: SessionMeta, settings: RecordSettings, recent: RecentOutput | None, env: Mapping[str, str]
) -> SessionMeta:
    """Once the final ``meta.json`` is stored: the shell's notices, the notifiers for the
    end, the conversation (``record.detail`` allowing) and the upkeep; return the meta."""
    note_ended(paths, meta)
    notify_end(paths, meta, settings, recent)
    if settings.detail != "metadata":
        meta = collect_conversation(paths, meta, settings, env)
    after_session(paths, meta, settings)
    return meta


def after_session(paths: Paths, meta: SessionMeta, settings: RecordSettings) -> None:
    """Start the upkeep of the stored session (compress, index, automatic gc) in the background."""
    start_housekeeping(paths, meta.folder, compress=settings.compress, auto_gc=settings.auto_gc)


def start_housekeeping(paths: Paths, folder: Path, *, compress: bool, auto_gc: bool) -> None:
    """Start the upkeep of the session in ``folder`` as a detached process; never raises.

    One ``posix_spawn`` (no copy of this process); the environment is passed on with
    ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG`` naming ``paths``. When it cannot be started
    the work is done here and now.
    """
    args = [str(folder)]
    args += ["--compress"] if compress else []
    args += ["--auto-gc"] if auto_gc else []
    try:
        spawn_detached(paths, "shellkeep.app.housekeeping", args)
    except SPAWN_ERRORS as exc:
        log.warning("could not start housekeeping in the background (%s); doing it now", exc)
        from shellkeep.app import housekeeping  # deferred: the whole archive stack, only on this rare path

        housekeeping.run(paths, folder, compress=compress, auto_gc=auto_gc)

