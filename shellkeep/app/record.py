"""Run one program in a recorded pty: the run context, then relay and recording side by side.

``shellkeep``, ``shellkeep PROGRAM`` and ``shellkeep run -- PROGRAM`` all build a
``RunRequest`` and call ``run_session``. This module resolves the run's settings and the
launch; ``app.recording`` holds the recording and its outputs, ``app.session_meta`` the
metadata at start and end, ``app.after_run`` what follows the relay's end. Nothing here
imports pyte, rich, sqlite3 or cryptography: the child must be running before any of them loads.

Start-up is part of the job (``tests/unit/test_contract.py`` pins what loads before the
child runs), so the modules of this package and below that only some runs need (capture,
the adapters, the config, the outputs, the conversation and vault at exit) are imported
inside the functions that use them. They are the only late imports of shellkeep's own
modules besides the console script's (``cli/entry.py``, ``cli/record.py``); the import
contract counts them, so they stay acyclic and downward.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.after_run import after_stored, restore_signals, shield_from_interrupts
from shellkeep.app.exit_keys import ExitKeyWatch, NullSink
from shellkeep.app.recording import open_recording
from shellkeep.app.run_request import RunRequest
from shellkeep.errors import AgentNotFound, ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.pty.relay import DEFAULT_SIZE, RawMode, Relay, RelayResult, SpawnError, find_program, spawn, terminal_size
from shellkeep.store.paths import Paths, project_root_of
from shellkeep.store.session import SessionMeta

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2.5 ms at start-up)
if TYPE_CHECKING:
    from shellkeep.pty.inject import SettledInjection

log = get_logger(__name__)

Warn = Callable[[str], None]


_SWITCH_INTERVAL_S = 0.0005


class ProgramNotExecutable(ShellkeepError):
    """The program exists but cannot be executed (exit status 126, like a shell)."""

    exit_code = 126


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended: the exit status to return and the session (None if unrecorded).

    result: how the child ended (the relay's report). exit_key_at: float seconds since the
    spawn of the user's last exit key (Ctrl-C, Ctrl-D or an exit line, ``ExitKeyWatch``),
    None when there was none.
    """

    exit_code: int
    session: SessionMeta | None
    result: RelayResult | None = None
    exit_key_at: float | None = None


def default_argv(env: Mapping[str, str]) -> tuple[str, ...]:
    """Return the argv of ``shellkeep`` alone: ``$SHELL``, else ``/bin/sh``."""
    shell = env.get("SHELL") or ""
    if shell and find_program(shell, env):
        return (shell,)
    return ("/bin/sh",)


def run_session(paths: Paths, request: RunRequest, *, warn: Warn, env: Mapping[str, str] | None = None) -> RunOutcome:
    """Run ``request.argv`` in a recorded pty and return its exit status and session.

    Blocks until the child has exited. Inside a recorded session (``SHELLKEEP_SESSION``
    set) the program replaces this process without a second recording.
    Raises AgentNotFound (exit 127) or ProgramNotExecutable (126) before anything is stored.
    """
    env = dict(os.environ if env is None else env)
    # The relay thread must get the GIL back quickly when a read or the child's exit wakes
    # it while the writer thread computes (5 ms by default: a stall the user would see).
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    _check_program(request.argv, env, request.cwd, warn)
    argv, agent, agent_session_id = request.argv, os.path.basename(request.argv[0]), None
    if request.use_adapter:
        argv, agent, agent_session_id, env = _prepare_launch(request, env)
    project_root = project_root_of(request.cwd)
    size = terminal_size() or DEFAULT_SIZE
    recording = open_recording(paths, request, (argv, agent, agent_session_id), project_root, size, env, warn)
    child_env = {**env, "SHELLKEEP_PROJECT": str(project_root), "SHELLKEEP_SESSION": "unrecorded"}
    if recording is not None:
        child_env = recording.child_env(child_env)
    with RawMode(0) as raw:
        try:
            child = spawn(argv, cwd=request.cwd, env=child_env, size=size, termios_attrs=raw.attrs)
        except SpawnError as exc:
            raw.restore()
            if recording is not None:
                recording.discard()
            raise (AgentNotFound if exc.errno == 2 else ProgramNotExecutable)(str(exc)) from exc
        recorder = recording.start(child, size) if recording is not None else None
        watch = ExitKeyWatch(recorder if recorder is not None else NullSink())
        relay = Relay(child, watch, injection=_injection(request))
        if recording is not None:
            recording.follow(relay, child)
        # Ignored from here (the child has its own dispositions already): the relay handles
        # these signals while it runs and puts back "ignored" when the child is gone, so no
        # Ctrl-C between its end and the session being stored can lose the session.
        shielded = shield_from_interrupts()
        try:
            result = relay.run(on_signal=lambda sig: raw.restore() if sig == signal.SIGHUP else None)
        except BaseException:
            if recording is not None:
                recording.abort()
            raise
        finally:
            if recording is not None:
                recording.relay_ended()
            raw.restore()
    try:
        meta = None
        if recording is not None and recording.finish(result):
            meta = after_stored(paths, recording.meta, request.settings, recording.recent, child_env)
        elif recording is not None:
            meta = recording.meta  # its final meta.json could not be stored (said already)
        return RunOutcome(result.exit_code, meta, result, watch.exit_key_at)
    finally:
        restore_signals(shielded)


def _check_program(argv: tuple[str, ...], env: dict[str, str], cwd: Path, warn: Warn) -> None:
    """Raise unless ``argv[0]`` can run; inside a recorded session, run it here without recording."""
    program = argv[0]
    if find_program(program, env) is None:
        if "/" in program and os.path.isdir(program):
            raise ProgramNotExecutable(f"{program}: is a directory")
        if "/" in program and os.path.exists(program):
            raise ProgramNotExecutable(f"{program}: permission denied; make it executable (chmod +x)")
        raise AgentNotFound(f"{program}: command not found")
    if env.get("SHELLKEEP_SESSION"):
        warn(f"already recording session {env['SHELLKEEP_SESSION']}; running {program} without a second recording")
        _exec_directly(argv, env, cwd)


def _injection(request: RunRequest) -> SettledInjection | None:
    """Return what types ``request.inject`` into the child once its screen has settled, or None."""
    if not request.inject:
        return None
    from shellkeep.pty.inject import MAX_WAIT_S, PROMPT_MAX_WAIT_S, UNSEEN_PROMPT_QUIET_S, SettledInjection

    return SettledInjection(
        request.inject, settle_s=request.inject_settle_s, wait_for_paste_mode=request.inject_paste_mode,
        ready_prompt=request.inject_ready_prompt, use_paste=request.inject_use_paste,
        max_wait_s=PROMPT_MAX_WAIT_S if request.inject_ready_prompt else MAX_WAIT_S,
        unseen_prompt_quiet_s=None if request.inject_prompt_required else UNSEEN_PROMPT_QUIET_S,
    )


def _prepare_launch(request: RunRequest, env: dict[str, str]) -> tuple[tuple[str, ...], str, str | None, dict[str, str]]:
    """Let the agent's adapter adjust the launch (a pre-assigned session id); never fails the run."""
    from shellkeep.agents.registry import adapter_for, builtin_may_match

    base = os.path.basename(request.argv[0])
    if not builtin_may_match(request.argv):
        return request.argv, base, None, env  # a plain program: the generic adapter changes nothing
    try:
        adapter = adapter_for(request.argv, plugins=False)
        launch = adapter.prepare(request.argv, request.cwd, env)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not stop the program
        log.warning("agent adapter failed to prepare %s: %s", base, exc)
        return request.argv, base, None, env
    name = adapter.agent_name(request.argv)
    return tuple(launch.argv), name, launch.agent_session_id, {**env, **launch.env_updates}


def _exec_directly(argv: tuple[str, ...], env: dict[str, str], cwd: Path) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(cwd)
    try:
        os.execvpe(argv[0], list(argv), env)
    except OSError as exc:
        raise ProgramNotExecutable(f"{argv[0]}: {exc.strerror or exc}") from exc
