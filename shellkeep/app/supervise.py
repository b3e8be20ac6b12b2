"""Supervise a recorded program: resume it in place when it crashes (``run --restart``).

``shellkeep run --restart on-failure[:N]`` (or ``record.restart``) runs the program as
``run_session`` does; when it crashes, shellkeep says so, waits a growing pause (1 s, 2 s,
4 s, ... at most 30 s; Ctrl-C during it stops supervising) and resumes the session as
``shellkeep resume`` would (the agent's own resume, else the last exchanges re-injected), up
to N times. Each restart is a new session whose ``parent`` is the one that crashed, so the
chain shows in ``show``.

What counts as a crash (``is_crash``): the program was killed by a signal other than SIGINT
and SIGHUP (SIGSEGV, SIGABRT, SIGKILL, a SIGTERM not sent to shellkeep...), or it exited
with a non-zero status more than ``EXIT_KEY_WINDOW_S`` seconds after the user's own last
exit key (Ctrl-C, Ctrl-D or an exit line such as ``/exit``: ``exit_keys.ExitKeyWatch``). A
terminal that went away, or a signal sent to shellkeep itself, is never a crash.

Only the first run is on the start-up path: the resume machinery (the config, the terminal
emulator, the adapters) is imported once a crash asks for it.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable, Mapping

from shellkeep.app.exit_keys import EXIT_KEY_WINDOW_S
from shellkeep.app.record import RunOutcome, run_session
from shellkeep.app.run_request import RecordSettings, RunRequest
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths

log = get_logger(__name__)

Warn = Callable[[str], None]

DEFAULT_RESTARTS = 3
"""How many restarts ``on-failure`` without ``:N`` allows."""

FIRST_PAUSE_S = 1.0
"""The pause before the first restart, float seconds; it doubles before each next one."""

MAX_PAUSE_S = 30.0

_POLICY = re.compile(r"no|on-failure(?::([0-9]{1,3}))?")


def restart_limit(policy: str) -> int:
    """Return how many restarts ``policy`` allows: ``no`` 0, ``on-failure`` 3, ``on-failure:N`` N.

    Raises UserInputError (exit 2) for anything else.
    """
    found = _POLICY.fullmatch(policy.strip())
    if found is None:
        raise UserInputError(
            f"--restart must be 'no', 'on-failure' or 'on-failure:N' (not {policy!r}); "
            "e.g. shellkeep run --restart on-failure:3 -- claude"
        )
    if policy.strip() == "no":
        return 0
    return int(found.group(1)) if found.group(1) is not None else DEFAULT_RESTARTS


def is_crash(outcome: RunOutcome) -> str | None:
    """Return how the run crashed (``"signal 11 (SIGSEGV)"``, ``"exit status 3"``), or None.

    The rule is the module's docstring's; a run the relay has no report of is not a crash.
    """
    result = outcome.result
    if result is None or result.hangup or result.received_signal is not None:
        return None
    if result.signal is not None:
        if result.signal in (signal.SIGINT, signal.SIGHUP):
            return None
        return f"signal {result.signal} ({_signal_name(result.signal)})"
    if result.exit_code == 0:
        return None
    key_at = outcome.exit_key_at
    if key_at is not None and result.duration - key_at <= EXIT_KEY_WINDOW_S:
        return None  # the user asked the program to quit
    return f"exit status {result.exit_code}"


def supervise(
    paths: Paths, request: RunRequest, *, restarts: int, warn: Warn, env: Mapping[str, str] | None = None
) -> RunOutcome:
    """Run ``request`` and resume it in place after each crash, at most ``restarts`` times.

    Blocks until the program ends without crashing, the restarts are used up, or the user
    presses Ctrl-C during a pause; returns the last run's outcome (its exit status is the
    program's last). Every restart is reported through ``warn`` (one line each). A run
    that was not recorded cannot be resumed: supervision then ends with it.
    Raises AgentNotFound (127) or ProgramNotExecutable (126) as ``run_session`` does.
    """
    outcome = run_session(paths, request, warn=warn, env=env)
    program = request.argv[0]
    for number in range(1, restarts + 1):
        reason = is_crash(outcome)
        if reason is None:
            return outcome
        if outcome.session is None:
            warn(f"{program} crashed ({reason}); it was not recorded, so it cannot be resumed")
            return outcome
        session_id = outcome.session.id
        pause_s = min(FIRST_PAUSE_S * 2 ** (number - 1), MAX_PAUSE_S)
        try:  # the terminal is cooked again: Ctrl-C raises KeyboardInterrupt, from here on
            warn(
                f"{program} crashed ({reason}); resuming session {session_id} in {pause_s:g} s "
                f"(restart {number} of {restarts}; Ctrl-C stops)"
            )
            time.sleep(pause_s)
        except KeyboardInterrupt:
            warn(f"not restarting {program}; resume it later with 'shellkeep resume {session_id}'")
            return outcome
        try:
            outcome = _resume(paths, outcome, request.settings, number, warn=warn, env=env)
        except (ShellkeepError, OSError) as exc:  # e.g. its folder removed meanwhile: stop, keep what is stored
            warn(f"could not resume {program}: {exc}; resume it later with 'shellkeep resume {session_id}'")
            return outcome
    reason = is_crash(outcome)
    if reason is not None and restarts:
        warn(f"{program} crashed again ({reason}); gave up after {restarts} restart{'s' if restarts != 1 else ''}")
    return outcome


def _resume(
    paths: Paths, crashed: RunOutcome, settings: RecordSettings, number: int, *, warn: Warn, env: Mapping[str, str] | None
) -> RunOutcome:
    """Resume the crashed run's session as restart ``number``, with the first run's settings."""
    # deferred: the resume machinery loads only once a crash needs it (start-up, module docstring)
    from pathlib import Path

    from shellkeep.app.context import open_context
    from shellkeep.app.resume import plan_resume, run_resume
    from shellkeep.store.session import read_meta

    assert crashed.session is not None
    meta = read_meta(crashed.session.folder)  # as stored, with the conversation collected at exit
    ctx = open_context(paths=paths, cwd=Path(meta.project_root), env=env)
    plan = plan_resume(ctx, meta, env=env)
    if plan.note:
        warn(plan.note)
    log.info("restart %d of %s: %s", number, meta.id, plan.mode.value)
    return run_resume(ctx, plan, warn=warn, env=env, settings=settings, restart=number)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"
