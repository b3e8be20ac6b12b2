"""Run one program in a recorded pty: the glue of relay, capture and store.

``shellkeep``, ``shellkeep PROGRAM`` and ``shellkeep run -- PROGRAM`` all build a
``RunRequest`` and call ``run_session``. Nothing here imports pyte, rich, sqlite3 or
cryptography: the child must be running before any of them loads.

Start-up is part of the job (``tests/unit/test_contract.py`` pins what loads before the
child runs), so the modules of this package and below that only some runs need (capture,
the adapters, the config, the conversation and vault at exit) are imported inside the
functions that use them. They are the only late imports of shellkeep's own modules besides
the console script's (``cli/entry.py``, ``cli/record.py``); the import contract counts them,
so they stay acyclic and downward.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import shlex
import signal
import sys
import termios
import threading
import time
from functools import partial
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep import __version__
from shellkeep.agents.launchers import SHELLS
from shellkeep.asciicast.model import Header
from shellkeep.errors import AgentNotFound, ShellkeepError
from shellkeep.git.info import origin_remote
from shellkeep.pty.relay import DEFAULT_SIZE, RawMode, Relay, RelayResult, SpawnError, find_program, spawn, terminal_size
from shellkeep.store.live import LiveStatus, remove_live_status, write_live_status
from shellkeep.store.paths import FILE_MODE, PROJECT_FILE_NAME, Paths, git_state, project_key, project_root_of
from shellkeep.store.session import (
    CAST_FILE,
    RAW_KEY,
    SessionMeta,
    Status,
    boot_id,
    create_session_folder,
    host_name,
    iso,
    new_session_id,
    process_start_ticks,
    raw_values,
    readable_text,
    utc_now,
    write_meta,
)
from shellkeep.termsize import TermSize
from shellkeep.app.background import SPAWN_ERRORS, spawn_detached
from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2.5 ms at start-up)
if TYPE_CHECKING:
    from typing import BinaryIO

    from shellkeep.app.notify import WaitingWatch
    from shellkeep.config import Config, NotifyConfig, RedactConfig
    from shellkeep.capture.activity import OutputActivity, RecentOutput
    from shellkeep.capture.live import LivePublisher
    from shellkeep.capture.recorder import Recorder, RecordingStats
    from shellkeep.capture.redaction import StreamRedactor

log = get_logger(__name__)

Warn = Callable[[str], None]


_SWITCH_INTERVAL_S = 0.0005


class ProgramNotExecutable(ShellkeepError):
    """The program exists but cannot be executed (exit status 126, like a shell)."""

    exit_code = 126


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """How to record one session, resolved from config and flags.

    flush_interval_s / coalesce_s: float seconds (see ``capture.recorder.Recorder``).
    """

    record_input: bool = True
    flush_interval_s: float = 0.25
    coalesce_s: float = 0.005
    redact: bool = True
    redact_config: RedactConfig | None = None  # user patterns and allowlist; None = built-in rules
    title: str | None = None  # the header's title when --title is not given
    idle_time_limit: float | None = None  # float seconds, written to the header for players
    encrypt: bool = False  # encryption.encrypt: seal the recording (store/crypto.py)
    key_file: str = ""  # encryption.key_file ("" = the keyring, else the default key file)
    compress: bool = True  # record.compress: zstd the recording once the session ends
    banner: bool = True  # record.banner: the start line, when the request asks for it
    min_free_mb: int = 500  # record.min_free_mb: warn at start below this much free space
    auto_gc: bool = False  # retention.auto_gc: apply the retention limits at most once a day
    restart: str = "no"  # record.restart: 'no', 'on-failure' or 'on-failure:N' (app.supervise)
    detail: str = "full"  # record.detail: 'full', 'conversation' or 'metadata'
    notify: NotifyConfig | None = None  # [notify] when a notifier is on for some event (None: none is)


def settings_from_config(config: Config, *, no_input: bool = False, no_redact: bool = False) -> RecordSettings:
    """Return the ``RecordSettings`` of a loaded config, with ``--no-input``/``--no-redact`` applied."""
    return RecordSettings(
        record_input=config.record.input and not no_input,
        flush_interval_s=config.record.flush_interval_ms / 1000,
        coalesce_s=config.record.coalesce_ms / 1000,
        redact=config.redact.enabled and not no_redact,
        redact_config=config.redact,
        title=config.record.title,
        idle_time_limit=config.record.idle_time_limit,
        encrypt=config.encryption.encrypt,
        key_file=config.encryption.key_file,
        compress=config.record.compress,
        banner=config.record.banner,
        min_free_mb=config.record.min_free_mb,
        auto_gc=config.retention.auto_gc,
        restart=config.record.restart,
        detail=config.record.detail,
        notify=config.notify if config.notify.enabled else None,
    )


_CONFIG_ENV_PREFIXES = tuple(
    f"SHELLKEEP_{table}_" for table in ("RECORD", "REDACT", "RESUME", "RETENTION", "ENCRYPTION", "SYNC")
)
"""The prefixes of every variable in ``config.ENV_VARS`` (a test keeps them in step)."""


def load_settings(
    paths: Paths, cwd: Path, *, warn: Warn, env: Mapping[str, str] | None = None, no_input: bool = False, no_redact: bool = False
) -> RecordSettings:
    """Load the config for ``cwd``'s project and return the settings of a recording.

    With no config file, no project file and no ``SHELLKEEP_*`` setting in the environment
    the defaults apply and the config module is not even loaded (start-up time). A broken
    config never stops a recording: it is reported through ``warn`` (one line) and its last
    good copy is used, else the strictest privacy settings; each config file that loads is
    kept as the last good copy (``config.save_last_good``).
    """
    env = os.environ if env is None else env
    project_root = project_root_of(cwd)
    if not _config_may_apply(paths, project_root, env):
        return RecordSettings(record_input=not no_input, redact=not no_redact)
    from shellkeep.config import load_config_with_fallback, save_last_good

    loaded = load_config_with_fallback(paths, project_root, dict(env), {})
    for problem in loaded.problems:  # a broken file never lowers privacy (config.fallback)
        warn(problem.line("recording with"))
    try:
        save_last_good(loaded.good)  # what applies while a file is broken later
    except OSError as exc:
        log.info("could not keep the last good copy of the config: %s", exc)  # the recording says what fails
    config = loaded.config
    return settings_from_config(config, no_input=no_input, no_redact=no_redact)


def _config_may_apply(paths: Paths, project_root: Path, env: Mapping[str, str]) -> bool:
    """Return whether any config layer exists: the user's file, the project's, or a variable."""
    if any(name.startswith(_CONFIG_ENV_PREFIXES) for name in env):
        return True
    return os.path.exists(paths.config_file) or os.path.exists(project_root / PROJECT_FILE_NAME)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What to run and how: argv (argv[0] looked up on PATH), cwd, and session options."""

    argv: tuple[str, ...]
    cwd: Path
    name: str | None = None
    title: str | None = None
    settings: RecordSettings = RecordSettings()
    parent: str | None = None
    inject: bytes | None = None
    inject_settle_s: float = 0.8
    inject_paste_mode: bool = False  # type the block only once the child switched bracketed paste on
    use_adapter: bool = True
    banner: bool = False  # say the session id on stderr before the child starts (unless record.banner = false)
    restart: int = 0  # the how-manieth supervised restart this run is (0: not one; app.supervise)
    extra: tuple[tuple[str, object], ...] = ()  # more meta.json fields (``resumed_from`` of a session from another machine)


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
    program = request.argv[0]
    if find_program(program, env) is None:
        if "/" in program and os.path.isdir(program):
            raise ProgramNotExecutable(f"{program}: is a directory")
        if "/" in program and os.path.exists(program):
            raise ProgramNotExecutable(f"{program}: permission denied; make it executable (chmod +x)")
        raise AgentNotFound(f"{program}: command not found")
    if env.get("SHELLKEEP_SESSION"):
        warn(f"already recording session {env['SHELLKEEP_SESSION']}; running {program} without a second recording")
        _exec_directly(request.argv, env, request.cwd)

    argv, agent, agent_session_id = request.argv, os.path.basename(program), None
    if request.use_adapter:
        argv, agent, agent_session_id, env = _prepare_launch(request, env)
    started = utc_now()
    project_root = project_root_of(request.cwd)
    session_id = new_session_id(started)
    folder: Path | None = None
    out: BinaryIO | None = None
    meta: SessionMeta | None = None
    size = terminal_size() or DEFAULT_SIZE
    try:
        for _ in range(20):  # two shellkeeps may draw the same id in the same millisecond
            try:
                folder = create_session_folder(paths, project_root, session_id)
                break
            except FileExistsError:
                session_id = new_session_id(utc_now())
        else:
            raise FileExistsError(17, "no free session id", str(paths.projects))
        meta = _initial_meta(request, env, session_id, project_root, folder, started, size)
        meta = dataclasses.replace(
            meta, command=list(argv), agent=agent, agent_session_id=agent_session_id, redacted=request.settings.redact
        )
        meta = _readable_meta(meta)
        # meta.json and the header are written once the child runs, by threads that can
        # afford to compile the redaction rules first (secrets in argv never reach the disk).
        out = _open_cast(folder / CAST_FILE, paths, request.settings)
        meta = dataclasses.replace(meta, detail=request.settings.detail, restart=request.restart)
        _check_free_space(folder, request.settings, warn)
        if request.banner and request.settings.banner:
            warn(f"recording {session_id} ('shellkeep show {session_id}' later)")
    except OSError as exc:
        warn(f"cannot record ({exc.strerror or exc}: {exc.filename or paths.home}); running {program} unrecorded")
        if out is not None:
            out.close()
        out, meta = None, None

    child_env = dict(env)
    child_env["SHELLKEEP_PROJECT"] = str(project_root)
    if meta is not None:
        child_env["SHELLKEEP_SESSION"] = session_id
        child_env["SHELLKEEP_SESSION_DIR"] = str(folder)
    else:
        child_env["SHELLKEEP_SESSION"] = "unrecorded"

    recorder = None
    live: _LiveStatusFile | None = None
    recent: RecentOutput | None = None
    waiting: WaitingWatch | None = None
    live_socket: _LiveSocket | None = None
    with RawMode(0) as raw:
        try:
            child = spawn(argv, cwd=request.cwd, env=child_env, size=size, termios_attrs=raw.attrs)
        except SpawnError as exc:
            raw.restore()
            if out is not None:
                out.close()
            _discard(folder)
            if exc.errno == 2:
                raise AgentNotFound(str(exc)) from exc
            raise ProgramNotExecutable(str(exc)) from exc
        # The writer thread starts once the child runs: compiling the redaction rules
        # first would hold the GIL while the child is being started.
        if out is not None and meta is not None:
            header = _header(meta, size, started.timestamp(), env, request.settings)
            recent, waiting = _waiting_watch(paths, meta, request.settings)
            live = _LiveStatusFile(
                meta.folder,
                child.fd,
                waiting.report if waiting is not None else None,
                shell_pid=child.pid if os.path.basename(argv[0]) in SHELLS else None,
            )
            live_socket = _LiveSocket(meta, header)
            recorder = _make_recorder(out, header, request.settings, warn, live, recent, live_socket)
        watch = ExitKeyWatch(recorder if recorder is not None else _NullSink())
        found: dict[str, SessionMeta] = {}
        ended = threading.Event()  # the relay is done: the final meta.json follows at once
        starter = threading.Thread(
            target=_after_spawn, args=(paths, meta, child.pid, request.cwd, request.settings, found, ended), daemon=True
        )
        if meta is not None:
            starter.start()
        injection = None
        if request.inject:
            from shellkeep.pty.inject import SettledInjection

            injection = SettledInjection(
                request.inject, settle_s=request.inject_settle_s, wait_for_paste_mode=request.inject_paste_mode
            )
        relay = Relay(child, watch, injection=injection)
        if live_socket is not None and recorder is not None:
            live_socket.start(relay, recorder)
        watcher = _watch_checkpoints(folder, recorder, ended) if recorder is not None and folder is not None else None
        # Ignored from here (the child has its own dispositions already): the relay handles
        # these signals while it runs and puts back "ignored" when the child is gone, so no
        # Ctrl-C between its end and the session being stored can lose the session.
        shielded = _shield_from_interrupts()
        try:
            result = relay.run(on_signal=lambda sig: raw.restore() if sig == signal.SIGHUP else None)
        except BaseException:
            if live_socket is not None:
                live_socket.close()
            raise
        finally:
            ended.set()
            raw.restore()
            if waiting is not None:
                waiting.close()
            if live is not None:
                live.close()
    try:
        if meta is None or recorder is None:
            return RunOutcome(result.exit_code, None, result, watch.exit_key_at)
        if watcher is not None:
            watcher.join(2)  # its last look at the checkpoints, before the recording closes
        stats = recorder.close()
        starter.join(10)
        meta = found.get("meta") or _started_meta(meta, child.pid, request.cwd, request.settings)
        meta = _final_meta(meta, result, stats, request.cwd)
        if live_socket is not None:
            live_socket.close(meta.status, meta.exit_code)
        _release_space(meta.folder)
        try:
            write_meta(meta)
        except OSError as exc:
            warn(f"could not store the session's metadata: {exc.strerror or exc}")
            return RunOutcome(result.exit_code, meta, result, watch.exit_key_at)
        _note_ended(paths, meta)
        _notify_ended(paths, meta, request.settings, recent)
        if request.settings.detail != "metadata":
            meta = _collect_conversation(paths, meta, request.settings, child_env)
        _after_session(paths, meta, request.settings)
        return RunOutcome(result.exit_code, meta, result, watch.exit_key_at)
    finally:
        if live_socket is not None:
            live_socket.close()  # every other way out: the socket never outlives the session
        _restore_signals(shielded)


_SHIELDED = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP)


def _shield_from_interrupts() -> dict[int, object]:
    """Hold off Ctrl-C, Ctrl-\\, hangup and SIGTERM while a session that has ended is stored.

    Returns the old handlers for ``_restore_signals``. Storing takes well under a second (a
    big transcript is left to the upkeep in the background); a second Ctrl-C meanwhile would
    otherwise lose the session's metadata and exchanges. INT, QUIT and HUP are ignored (the
    upkeep, spawned in this window, keeps them ignored; it is detached from the terminal
    anyway). SIGTERM is deferred, not ignored, so that the upkeep can still be stopped: a
    handler notes it, and ``_restore_signals`` delivers it again once the session is stored.
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


def _restore_signals(old: dict[int, object]) -> None:
    """Put back the handlers ``_shield_from_interrupts`` replaced; deliver a deferred SIGTERM."""
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


def _watch_checkpoints(folder: Path, recorder: Recorder, ended: threading.Event) -> threading.Thread:
    """Write the checkpoints ``shellkeep mark`` adds while the session runs into the recording
    (``app.live_marks``); return the thread, which ends soon after ``ended`` is set."""
    from shellkeep.app.live_marks import watch_checkpoints  # deferred: after the child runs

    start = time.monotonic()  # taken just after the relay's own start: markers never run ahead of it
    watcher = threading.Thread(
        target=watch_checkpoints,
        args=(folder, recorder.add_marker, lambda: time.monotonic() - start, ended),
        name="shellkeep-checkpoints",
        daemon=True,
    )
    watcher.start()
    return watcher


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


def _collect_conversation(paths: Paths, meta: SessionMeta, settings: RecordSettings, env: Mapping[str, str]) -> SessionMeta:
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


EXIT_KEY_WINDOW_S = 5.0
"""A non-zero exit within this many seconds of the user's own exit key is the user's doing."""

_EXIT_LINES = frozenset({b"/exit", b"/quit", b"exit", b"quit", b":q", b":quit"})


class ExitKeyWatch:
    """A sink in front of the recorder that notes when the user last typed an exit key.

    Exit keys: Ctrl-C, Ctrl-D, or Enter ending a line that reads ``/exit``, ``/quit``,
    ``exit``, ``quit``, ``:q`` or ``:quit``. ``exit_key_at`` is float seconds since the spawn
    (the relay's clock), None until one is typed. Output and resizes go straight to the
    inner sink (no extra call on the hot path).
    """

    def __init__(self, inner: Recorder | _NullSink) -> None:
        self._inner = inner
        self.on_output = inner.on_output
        self.on_resize = inner.on_resize
        self.exit_key_at: float | None = None
        self._line = b""

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        """Note an exit key in ``raw``, then pass it on."""
        if b"\x03" in raw or b"\x04" in raw:
            self.exit_key_at = at
        elif b"\r" in raw or b"\n" in raw:
            line = (self._line + raw).replace(b"\n", b"\r").split(b"\r")
            if any(part.strip() in _EXIT_LINES for part in line[:-1]):
                self.exit_key_at = at
            self._line = line[-1][-16:]
        else:
            self._line = (self._line + raw)[-16:]
        self._inner.on_input(raw, at, hidden)


class _NullSink:
    """A sink for an unrecorded run: drops everything."""

    def on_output(self, raw: bytes, at: float) -> None:
        pass

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        pass

    def on_resize(self, size: TermSize, at: float) -> None:
        pass


def _exec_directly(argv: tuple[str, ...], env: dict[str, str], cwd: Path) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(cwd)
    try:
        os.execvpe(argv[0], list(argv), env)
    except OSError as exc:
        raise ProgramNotExecutable(f"{argv[0]}: {exc.strerror or exc}") from exc


def _discard(folder: Path | None) -> None:
    """Remove a session folder that never recorded anything (the program did not start)."""
    if folder is None:
        return
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def _initial_meta(
    request: RunRequest,
    env: Mapping[str, str],
    session_id: str,
    project_root: Path,
    folder: Path,
    started: object,
    size: TermSize,
) -> SessionMeta:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return SessionMeta(
        id=session_id,
        name=request.name,
        title=request.title,
        project=project_key(project_root),
        project_root=str(project_root),
        cwd=str(request.cwd),
        command=list(request.argv),
        agent=os.path.basename(request.argv[0]),
        started_at=iso(started),  # type: ignore[arg-type]
        host=host_name(),
        user=user,
        pid=os.getpid(),
        pid_start_ticks=process_start_ticks(os.getpid()),
        boot_id=boot_id(),
        term=env.get("TERM"),
        colorterm=env.get("COLORTERM"),
        shell=env.get("SHELL"),
        lang=env.get("LANG") or env.get("LC_ALL"),
        cols=size.cols,
        rows=size.rows,
        cast=str(folder / CAST_FILE),
        record_input=request.settings.record_input,
        parent=request.parent,
        shellkeep_version=__version__,
        extra=dict(request.extra),
    )


def _open_cast(path: Path, paths: Paths, settings: RecordSettings) -> BinaryIO:
    """Open the recording for appending; sealed record by record when ``settings.encrypt``.

    The key is loaded by the writer thread on its first write, so neither cryptography
    nor keyring is imported before the child runs.
    """
    if settings.detail == "metadata":  # record.detail: the recorder runs (sizes, redaction), nothing is kept
        return open(os.devnull, "ab")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    out = os.fdopen(fd, "ab", buffering=1 << 16)
    if not settings.encrypt:
        return out
    from shellkeep.vault.crypto import EncryptedWriter
    from shellkeep.vault.keys import current_key

    return EncryptedWriter(out, partial(current_key, paths, settings.key_file, create=True))  # type: ignore[return-value]


def _check_free_space(folder: Path, settings: RecordSettings, warn: Warn) -> None:
    """Warn once when the recording's disk is below ``record.min_free_mb`` (one statvfs),
    and hold 64 KiB so the final meta.json fits even if the disk fills up meanwhile."""
    from shellkeep.store.space import low_disk_warning, reserve_space

    reserve_space(folder)
    message = low_disk_warning(folder, settings.min_free_mb)
    if message:
        warn(message)


def _release_space(folder: Path) -> None:
    """Give back the space held at start, just before the final meta.json is written."""
    from shellkeep.store.space import release_space

    release_space(folder)


def _after_session(paths: Paths, meta: SessionMeta, settings: RecordSettings) -> None:
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


def _header(meta: SessionMeta, size: TermSize, timestamp: float, env: Mapping[str, str], settings: RecordSettings) -> Header:
    return Header(
        size=size,
        timestamp=int(timestamp),
        idle_time_limit=settings.idle_time_limit,
        command=shlex.join(meta.command),
        title=meta.title or meta.name or settings.title,
        env={"SHELL": env.get("SHELL"), "TERM": env.get("TERM")},
    )


class _LiveSocket:
    """The session's live socket (``capture.live``), opened on a thread of its own.

    Opening it (importing socket and selectors, binding) is kept off the path to the relay's
    start. Until it is open, the events the recorder's writer thread hands on are held here
    (up to ``_HELD_MAX_BYTES``), then given to the publisher first, so the first viewer's
    backlog starts at the session's start. A failure to open it is logged and leaves the
    session unwatchable, never unrecorded.
    """

    _HELD_MAX_BYTES = 1 << 20

    def __init__(self, meta: SessionMeta, header: Header) -> None:
        self._meta = meta
        self._header = header
        self._lock = threading.Lock()
        self._held: list[tuple[str, str, bytes]] = []
        self._held_bytes = 0
        self._publisher: LivePublisher | None = None
        self._closed = False
        self._thread: threading.Thread | None = None

    def __call__(self, items: list[tuple[str, str, bytes]]) -> None:
        """Take a batch of events from the writer thread (``Recorder``'s ``on_events``); never blocks for long."""
        publisher = self._publisher
        if publisher is None:
            with self._lock:
                publisher = self._publisher
                if publisher is None:
                    if not self._closed and self._held_bytes < self._HELD_MAX_BYTES:
                        self._held.extend(items)
                        self._held_bytes += sum(len(line) for _, _, line in items)
                    return
        publisher.publish(items)

    def start(self, relay: Relay, recorder: Recorder) -> None:
        """Open the socket on a thread; viewers' input goes to ``relay`` after a marker in ``recorder``."""
        self._thread = threading.Thread(target=self._open, args=(relay, recorder), name="shellkeep-live-open", daemon=True)
        self._thread.start()

    def _open(self, relay: Relay, recorder: Recorder) -> None:
        try:
            from shellkeep.capture.live import LivePublisher  # off the start-up path: socket, selectors

            header = self._header
            publisher = LivePublisher(
                self._meta.folder,
                session_id=self._meta.id,
                size=header.size,
                timestamp=header.timestamp,
                env=header.env,
                on_input=partial(_type_from_viewer, relay, recorder),
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

    def close(self, status: str | None = None, exit_code: int | None = None) -> None:
        """Say how the session ended (when ``status`` is given), close the socket, remove it.

        Blocks up to about 2 s (viewers taking their last events); never raises; safe to repeat.
        """
        if self._thread is not None:
            self._thread.join(2.0)
        with self._lock:
            publisher, self._publisher = self._publisher, None
            self._closed = True
            self._held = []
        if publisher is None:
            return
        from shellkeep.capture.live import LiveEnd  # loaded already, with the publisher

        publisher.close(LiveEnd(status, exit_code) if status is not None else None)


def _type_from_viewer(relay: Relay, recorder: Recorder, text: str, viewer: str) -> None:
    """Type what a viewer sent on the live socket into the child, after a marker naming it."""
    from shellkeep.capture.live import INPUT_MARKER_PREFIX

    recorder.add_marker(INPUT_MARKER_PREFIX + viewer, relay.elapsed_s())
    relay.type_input(text.encode("utf-8", "replace"))


def _make_recorder(
    out: BinaryIO,
    header: Header,
    settings: RecordSettings,
    warn: Warn,
    live: _LiveStatusFile | None = None,
    recent: RecentOutput | None = None,
    live_socket: _LiveSocket | None = None,
) -> Recorder:
    from shellkeep.capture.recorder import Recorder

    return Recorder(
        out,
        header=header,
        record_input=settings.record_input,
        flush_interval_s=settings.flush_interval_s,
        coalesce_s=settings.coalesce_s,
        make_filter=partial(_stream_redactor, settings.redact_config) if settings.redact else None,
        on_error=warn,
        on_activity=live,
        recent=recent,
        on_events=live_socket,
    )


def _waiting_watch(paths: Paths, meta: SessionMeta, settings: RecordSettings) -> tuple[RecentOutput | None, WaitingWatch | None]:
    """Return what judges the latest output (the agent's waiting hints, the last line) and
    the waiting notifier, each None when not needed; called once the child runs."""
    hints = _waiting_hints(meta.agent)
    notify = settings.notify
    wants_waiting = notify is not None and "waiting" in notify.events
    if not hints and notify is None:
        return None, None
    from shellkeep.capture.activity import RecentOutput

    recent = RecentOutput(hints)
    if not wants_waiting:
        return recent, None
    assert notify is not None
    from shellkeep.app.notify import WaitingWatch, notification_for, start_notifiers

    def notify_waiting(hint: str | None, line: str) -> None:
        start_notifiers(paths, notification_for(meta, "waiting", hint, line))

    return recent, WaitingWatch(notify_waiting, notify.waiting_delay_s)


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


def _notify_ended(paths: Paths, meta: SessionMeta, settings: RecordSettings, recent: RecentOutput | None) -> None:
    """Start the notifiers for the stored end of the session, when configured (detached; never waits)."""
    if settings.notify is None or meta.status not in settings.notify.events:
        return
    from shellkeep.app.notify import notify_ended

    last_line = recent.judge()[1] if recent is not None else ""
    notify_ended(paths, meta, settings.notify.events, last_line)


class _LiveStatusFile:
    """The session's ``live.json`` (``store.live``), written by the recorder's writer thread.

    Holds its own copy of the pty's master fd to read the child's input modes (ICANON, ECHO)
    at each write; ``close`` (once the relay has ended) closes it and removes the file.
    ``listener`` (the waiting notifier, ``app.notify.WaitingWatch.report``) gets each status
    with the last line on screen, before the file is written; it must not block.
    ``shell_pid``: the child's pid when it is a shell (``agents.launchers.SHELLS``); it leads
    its own session, so its group holds the terminal exactly when no job of its runs there.
    """

    def __init__(
        self,
        folder: Path,
        pty_fd: int,
        listener: Callable[[LiveStatus, str], None] | None = None,
        shell_pid: int | None = None,
    ) -> None:
        self._folder: Path | None = folder
        self._listener = listener
        self._shell_pid = shell_pid
        self._lock = threading.Lock()
        try:
            self._fd = os.dup(pty_fd)  # not inherited by the child (PEP 446)
        except OSError:
            self._fd = -1

    def __call__(self, activity: OutputActivity) -> None:
        """Write ``live.json`` for ``activity`` with the pty's current modes; raises OSError."""
        with self._lock:
            if self._folder is None:
                return
            canonical = echo = None
            shell = False
            if self._fd >= 0:
                try:
                    lflag = termios.tcgetattr(self._fd)[3]
                    canonical, echo = bool(lflag & termios.ICANON), bool(lflag & termios.ECHO)
                    shell = self._shell_pid is not None and os.tcgetpgrp(self._fd) == self._shell_pid
                except (termios.error, OSError):
                    pass
            status = LiveStatus(
                activity.output_at,
                activity.output_bytes,
                canonical,
                echo,
                activity.prompt,
                time.time(),
                activity.hint,
                shell=shell,
            )
            if self._listener is not None:
                try:
                    self._listener(status, activity.last_line)
                except Exception as exc:  # noqa: BLE001 - a notifier never stops the live status
                    log.info("waiting notifications stopped for this session: %s", exc)
                    self._listener = None
            write_live_status(self._folder, status)

    def close(self) -> None:
        """Stop writing: close the fd copy and remove ``live.json``; never raises."""
        with self._lock:
            folder, self._folder = self._folder, None
            if self._fd >= 0:
                try:
                    os.close(self._fd)
                except OSError:
                    pass
                self._fd = -1
        if folder is not None:
            remove_live_status(folder)


def _stream_redactor(config: RedactConfig | None, screen: bool = False) -> StreamRedactor:
    """Build the redaction filter of one stream (called on the writer thread); ``screen``:
    the output stream, whose markers keep the secrets' columns."""
    from shellkeep.capture.redaction import StreamRedactor, redactor_for

    return StreamRedactor(redactor_for(config), keep_columns=screen)


def _after_spawn(
    paths: Paths,
    meta: SessionMeta | None,
    child_pid: int,
    cwd: Path,
    settings: RecordSettings,
    found: dict[str, SessionMeta],
    ended: threading.Event,
) -> None:
    """Write the first ``meta.json`` once the child runs: its pid, the git state, redacted argv.

    Runs on its own thread so the relay starts at once; ``found["meta"]`` gets the metadata.
    Once ``ended`` is set (a program that has already exited) the write is left to the final
    ``meta.json``, which follows at once.
    """
    if meta is None:
        return
    found["meta"] = started = _started_meta(meta, child_pid, cwd, settings)
    if ended.is_set():
        return
    try:
        write_meta(started)
    except OSError as exc:
        log.warning("could not write meta.json: %s", exc)
        return
    from shellkeep.store import notices  # the shell's notice file: after the child runs

    try:
        notices.note_running(paths, started)
        if started.parent:  # resumed: its parent is no longer waiting
            notices.forget(paths, started.parent)
    except OSError as exc:
        log.warning("could not update %s: %s", paths.notices, exc)


def _note_ended(paths: Paths, meta: SessionMeta) -> None:
    """Keep the session in the shell's notice file if it was cut short (hangup), else drop it."""
    from shellkeep.store import notices

    try:
        notices.note_ended(paths, meta)
        if meta.parent:  # a run too short for the start's note (_after_spawn) still resumed its parent
            notices.forget(paths, meta.parent)
    except OSError as exc:
        log.warning("could not update %s: %s", paths.notices, exc)


def _readable_meta(meta: SessionMeta) -> SessionMeta:
    """Return ``meta`` with text that is not UTF-8 made readable, and its exact bytes in ``raw``.

    argv, the directory and the name come from the OS as surrogateescape strings when they
    hold bytes that are not UTF-8; ``meta.json`` keeps ``\\xNN`` for them and, for argv and
    the directories, the bytes themselves (``store.session.raw_values``) so resume re-runs them exactly.
    """
    raw = raw_values(meta.cwd, meta.project_root, meta.command)
    return dataclasses.replace(
        meta,
        cwd=readable_text(meta.cwd),
        project_root=readable_text(meta.project_root),
        command=[readable_text(arg) for arg in meta.command],
        agent=readable_text(meta.agent),
        name=readable_text(meta.name) if meta.name else meta.name,
        title=readable_text(meta.title) if meta.title else meta.title,
        extra={**meta.extra, RAW_KEY: raw} if raw else meta.extra,
    )


def _started_meta(meta: SessionMeta, child_pid: int, cwd: Path, settings: RecordSettings) -> SessionMeta:
    redact = _text_redactor(settings)
    git_start = git_state(cwd)
    command = [redact(arg) for arg in meta.command]
    extra = meta.extra
    raw = extra.get(RAW_KEY)
    if isinstance(raw, dict) and isinstance(raw.get("command"), list):
        # An argument redaction changed keeps no exact bytes: they would hold the secret.
        kept = [code if new == old else None for code, new, old in zip(raw["command"], command, meta.command)]
        extra = {**extra, RAW_KEY: {**raw, "command": kept}}
    return dataclasses.replace(
        meta,
        child_pid=child_pid,
        git_start=git_start,
        git_identity=_git_identity(Path(meta.project_root)) if git_start is not None else None,
        extra=extra,
        command=command,
        name=redact(meta.name) if meta.name else None,
        title=redact(meta.title) if meta.title else None,
    )


def _git_identity(project_root: Path) -> dict[str, object]:
    """Return the project's git identity: its origin remote and root commit.

    Called once the child runs (``_started_meta``), so the git process for the root commit
    is not on the start-up path. Should git be slow or fail, the root commit is None here
    and the upkeep after the session adds it (``app.moves.complete_git_identity``).
    """
    from shellkeep.git.identity import root_commit  # after the child runs, as git_state

    commit = root_commit(project_root, timeout_s=5.0)
    return {"remote": origin_remote(project_root), "root_commit": commit}  # git.identity.GitIdentity's JSON


def _text_redactor(settings: RecordSettings) -> Callable[[str], str]:
    """Return a whole-text redaction function for metadata (identity when redaction is off)."""
    if not settings.redact:
        return lambda text: text
    from shellkeep.capture.redaction import redactor_for

    return redactor_for(settings.redact_config).redact


def _final_meta(meta: SessionMeta, result: RelayResult, stats: RecordingStats, cwd: Path) -> SessionMeta:
    from datetime import timedelta

    from shellkeep.store.session import parse_iso

    if result.hangup:
        status = Status.HANGUP
    elif result.signal is not None or result.received_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        status = Status.KILLED
    else:
        status = Status.FINISHED
    ended = parse_iso(meta.started_at) + timedelta(seconds=result.duration)
    return dataclasses.replace(
        meta,
        ended_at=iso(ended),
        duration=round(result.duration, 3),
        exit_code=result.exit_code,
        signal=result.signal,
        status=status.value,
        output_bytes=stats.output_bytes,
        input_bytes=stats.input_bytes,
        hidden_input=stats.hidden_input,
        recording_error=stats.error,
        git_end=git_state(cwd) if meta.git_start is not None else None,
    )
