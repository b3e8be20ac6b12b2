"""Build the session's ``meta.json``: at the start, once the child runs, and at the end.

The first one is written on a thread of its own once the child runs (the git state, the
redacted argv), the final one once the relay has ended (status, exit code, sizes).
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from shellkeep import __version__
from shellkeep.app.place import latest_place, place_from_env, probe_place, refresh_place
from shellkeep.git.info import origin_remote
from shellkeep.logs import get_logger
from shellkeep.pty.relay import RelayResult
from shellkeep.store.paths import Paths, git_state, project_key
from shellkeep.store.session import (
    CAST_FILE,
    RAW_KEY,
    SessionMeta,
    Status,
    boot_id,
    host_name,
    iso,
    process_start_ticks,
    raw_values,
    readable_text,
    write_meta,
)
from shellkeep.termsize import TermSize

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from datetime import datetime

    from shellkeep.app.run_request import RecordSettings, RunRequest
    from shellkeep.capture.recorder import RecordingStats

__all__ = ["final_meta", "initial_meta", "note_ended", "readable_meta", "started_meta", "status_of", "write_started_meta"]

log = get_logger(__name__)


def initial_meta(
    request: RunRequest,
    env: Mapping[str, str],
    session_id: str,
    project_root: Path,
    folder: Path,
    started: datetime,
    size: TermSize,
) -> SessionMeta:
    """Return the session's metadata as known before the child starts (``started``: aware UTC)."""
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
        started_at=iso(started),
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
        place=place_from_env(env, size),
        cast=str(folder / CAST_FILE),
        record_input=request.settings.record_input,
        parent=request.parent,
        shellkeep_version=__version__,
        extra=dict(request.extra),
    )


def readable_meta(meta: SessionMeta) -> SessionMeta:
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


def write_started_meta(
    paths: Paths,
    meta: SessionMeta,
    child_pid: int,
    cwd: Path,
    settings: RecordSettings,
    found: dict[str, SessionMeta],
    ended: threading.Event,
    env: Mapping[str, str] | None = None,
) -> None:
    """Write the first ``meta.json`` once the child runs: its pid, the git state, redacted argv,
    the environment ``env`` it was started in (``app.environment``: secrets never in clear).

    Runs on its own thread so the relay starts at once; ``found["meta"]`` gets the metadata.
    It is written twice: at once without the environment (so the session is found by name
    while the environment is read), then with it. Once ``ended`` is set (a program that has
    already exited) the writes are left to the final ``meta.json``, which follows at once.
    """
    found["meta"] = started = started_meta(meta, child_pid, cwd, settings)
    if not ended.is_set():
        try:
            write_meta(started)  # at once: the session is found by its name while the environment is read
        except OSError as exc:
            log.warning("could not write meta.json: %s", exc)
            return
    from shellkeep.app.environment import record_environment  # after the child runs (the redaction rules compile)

    recorded = record_environment(paths, started, env, settings)
    found["meta"] = recorded  # the final meta.json starts from it (``Recording.finish`` joins this thread first)
    if ended.is_set():
        return
    if recorded is not started:
        started = recorded
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


def note_ended(paths: Paths, meta: SessionMeta) -> None:
    """Keep the session in the shell's notice file if it was cut short (hangup), else drop it."""
    from shellkeep.store import notices

    try:
        notices.note_ended(paths, meta)
        if meta.parent:  # a run too short for the start's note (write_started_meta) still resumed its parent
            notices.forget(paths, meta.parent)
    except OSError as exc:
        log.warning("could not update %s: %s", paths.notices, exc)


def started_meta(meta: SessionMeta, child_pid: int, cwd: Path, settings: RecordSettings) -> SessionMeta:
    """Return ``meta`` once the child runs: its pid, the git state and identity, its tmux place, argv, name
    and title redacted (an argument redaction changed keeps no exact bytes)."""
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
        place=probe_place(meta.place),  # the tmux window and its layout (app.place)
        extra=extra,
        command=command,
        name=redact(meta.name) if meta.name else None,
        title=redact(meta.title) if meta.title else None,
    )


def _git_identity(project_root: Path) -> dict[str, object]:
    """Return the project's git identity: its origin remote and root commit.

    Called once the child runs (``started_meta``), so the git process for the root commit
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


def status_of(result: RelayResult) -> Status:
    """Return how a session ended by its relay's report: hangup, killed (by a signal it or
    shellkeep got: TERM, INT, QUIT) or finished."""
    if result.hangup:
        return Status.HANGUP
    if result.signal is not None or result.received_signal in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        return Status.KILLED
    return Status.FINISHED


def final_meta(meta: SessionMeta, result: RelayResult, stats: RecordingStats, cwd: Path) -> SessionMeta:
    """Return ``meta`` at the session's end: status, exit, duration, sizes, the git state and
    the tmux layout at the end."""
    from datetime import timedelta

    from shellkeep.store.session import parse_iso

    status = status_of(result)
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
        place=refresh_place(latest_place(meta), timeout_s=1.0),  # the window may have been split since
    )

