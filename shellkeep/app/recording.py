"""Record one session: its folder and recording file, the recorder and the session's outputs.

``run_session`` (``app.record``) opens a ``Recording`` before the child starts, starts its
recorder and outputs once the child runs, and finishes it once the relay has ended. The
recorder is the relay's sink (its hot path: one deque append per read); the other outputs
(``app.outputs``) get what its writer thread hands on through an ``OutputPipeline``.
Nothing here imports pyte, rich, sqlite3 or cryptography before the child runs.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import threading
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from shellkeep.agents.launchers import SHELLS
from shellkeep.app.session_meta import final_meta, initial_meta, readable_meta, started_meta, status_of, write_started_meta
from shellkeep.asciicast.model import Header
from shellkeep.logs import get_logger
from shellkeep.pty.relay import Child, Relay, RelayResult
from shellkeep.store.paths import FILE_MODE, Paths
from shellkeep.store.session import CAST_FILE, SessionMeta, create_session_folder, new_session_id, utc_now, write_meta
from shellkeep.termsize import TermSize

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import BinaryIO

    from shellkeep.app.run_request import RecordSettings, RunRequest
    from shellkeep.capture.activity import RecentOutput
    from shellkeep.capture.output import Batch, OutputPipeline, SessionEnd, SessionOutput, SessionStart
    from shellkeep.capture.recorder import Recorder, RecordingStats
    from shellkeep.capture.redaction import StreamRedactor
    from shellkeep.config import RedactConfig

__all__ = ["Recording", "open_recording"]

log = get_logger(__name__)

Warn = Callable[[str], None]


def open_recording(
    paths: Paths,
    request: RunRequest,
    launch: tuple[tuple[str, ...], str, str | None],
    project_root: Path,
    size: TermSize,
    env: Mapping[str, str],
    warn: Warn,
) -> Recording | None:
    """Make the session's folder, open its recording and return it, before the child starts.

    launch: (argv, agent, the agent's session id) as the adapter prepared them. Returns None,
    having said why through ``warn``, when the session cannot be recorded (the program then
    runs unrecorded). Blocks only on the file system.
    """
    argv, agent, agent_session_id = launch
    settings = request.settings
    started = utc_now()
    session_id = new_session_id(started)
    out: BinaryIO | None = None
    try:
        for _ in range(20):  # two shellkeeps may draw the same id in the same millisecond
            try:
                folder = create_session_folder(paths, project_root, session_id)
                break
            except FileExistsError:
                session_id = new_session_id(utc_now())
        else:
            raise FileExistsError(17, "no free session id", str(paths.projects))
        meta = initial_meta(request, env, session_id, project_root, folder, started, size)
        meta = dataclasses.replace(meta, command=list(argv), agent=agent, agent_session_id=agent_session_id, redacted=settings.redact)
        meta = readable_meta(meta)
        # meta.json and the header are written once the child runs, by threads that can
        # afford to compile the redaction rules first (secrets in argv never reach the disk).
        out = _open_cast(folder / CAST_FILE, paths, settings)
        meta = dataclasses.replace(meta, detail=settings.detail, restart=request.restart)
        _check_free_space(folder, settings, warn)
        if request.banner and settings.banner:
            warn(f"recording {session_id} ('shellkeep show {session_id}' later)")
    except OSError as exc:
        warn(f"cannot record ({exc.strerror or exc}: {exc.filename or paths.home}); running {argv[0]} unrecorded")
        if out is not None:
            out.close()
        return None
    return Recording(paths, request, meta, out, started, env, warn, argv[0])


class Recording:
    """The recorded side of one run, from its open folder to its stored metadata.

    Call in order: ``start`` once the child runs (returns the relay's sink), ``follow`` once
    the relay exists, ``relay_ended`` when it returns, then ``finish`` (or ``abort`` if it
    raised). ``discard`` instead, when the child could not be started.
    """

    def __init__(
        self,
        paths: Paths,
        request: RunRequest,
        meta: SessionMeta,
        out: BinaryIO,
        started: datetime,
        env: Mapping[str, str],
        warn: Warn,
        program: str,
    ) -> None:
        self.paths = paths
        self._program = program
        self.meta = meta
        self._request = request
        self._settings = request.settings
        self._out = out
        self._started = started
        self._env = env
        self._warn = warn
        self._child_pid = 0
        self._found: dict[str, SessionMeta] = {}
        self._ended = threading.Event()  # the relay is done: the final meta.json follows at once
        self._starter: threading.Thread | None = None
        self._header: Header | None = None
        self._pipeline: OutputPipeline | None = None
        self._recorder: Recorder | None = None
        self._recorder_output: _RecorderOutput | None = None
        self.recent: RecentOutput | None = None

    @property
    def folder(self) -> Path:
        """Return the session's folder."""
        return self.meta.folder

    def child_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """Return ``env`` with the variables that tell the child its session."""
        return {**env, "SHELLKEEP_SESSION": self.meta.id, "SHELLKEEP_SESSION_DIR": str(self.folder)}

    def discard(self) -> None:
        """Close the recording and remove the folder: the program did not start."""
        import shutil

        self._out.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def start(self, child: Child, size: TermSize) -> Recorder:
        """Start the recorder and the first ``meta.json`` once the child runs; return the recorder.

        The writer thread starts once the child runs: compiling the redaction rules first
        would hold the GIL while the child is being started.
        """
        # typing, whole, on this thread before the session's threads start (about 5 ms, the
        # child runs already): a dataclass defined on a thread reads sys.modules["typing"], and
        # one that finds it half imported by another thread fails (the live socket never opened).
        import typing  # noqa: F401

        from shellkeep.capture.output import OutputPipeline

        self._child_pid = child.pid
        self._header = header = _header(self.meta, size, self._started.timestamp(), self._env, self._settings)
        self._pipeline = pipeline = OutputPipeline(self._warn)
        self.recent, with_relay, after_recording = _side_outputs(self.paths, self.meta, self._settings, self._env)
        recorder = _make_recorder(self._out, header, self._settings, self._warn, pipeline, self.recent)
        self._recorder = recorder
        self._recorder_output = _RecorderOutput(recorder)
        # Closed in this order: what stops with the relay, the recording, then what must
        # see the recording's last events (the live socket says how the session ended).
        for output in (*with_relay, self._recorder_output, *after_recording):
            pipeline.add(output)
        self._starter = threading.Thread(
            target=write_started_meta,
            args=(self.paths, self.meta, child.pid, self._request.cwd, self._settings, self._found, self._ended, self._env),
            daemon=True,
        )
        self._starter.start()
        return recorder

    def follow(self, relay: Relay, child: Child) -> None:
        """Start the session's outputs, now that the relay exists."""
        from shellkeep.capture.output import SessionStart

        assert self._pipeline is not None and self._header is not None and self._recorder is not None
        recorder = self._recorder
        shell = os.path.basename(self._program) in SHELLS
        self._pipeline.start(
            SessionStart(
                folder=self.folder,
                session_id=self.meta.id,
                header=self._header,
                pty_fd=child.fd,
                shell_pid=child.pid if shell else None,
                add_marker=recorder.add_marker,
                type_input=relay.type_input,
                elapsed_s=relay.elapsed_s,
            )
        )

    def relay_ended(self) -> None:
        """Note that the relay has returned: the first ``meta.json`` is left to the final one."""
        self._ended.set()

    def abort(self) -> None:
        """Close every output (the relay raised); never raises."""
        self._ended.set()
        if self._pipeline is not None:
            self._pipeline.close(None)

    def finish(self, result: RelayResult) -> bool:
        """Close the outputs and the recording, and store the final ``meta.json`` (``self.meta``).

        Returns whether it was stored (why not is said through ``warn``); blocks while the
        recorder writes what it still holds.
        """
        from shellkeep.capture.output import SessionEnd

        assert self._pipeline is not None and self._recorder_output is not None
        self._ended.set()
        self._pipeline.close(SessionEnd(status_of(result).value, result.exit_code))
        stats = self._recorder_output.stats or self._recorder_output.close_now()
        if self._starter is not None:
            self._starter.join(10)
        meta = self._found.get("meta") or started_meta(self.meta, self._child_pid, self._request.cwd, self._settings)
        self.meta = meta = final_meta(meta, result, stats, self._request.cwd)
        _release_space(meta.folder)
        try:
            write_meta(meta)
        except OSError as exc:
            self._warn(f"could not store the session's metadata: {exc.strerror or exc}")
            return False
        return True


class _RecorderOutput:
    """The recorder in the pipeline's close order; it takes its events from the relay."""

    name = "recording"

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self.stats: RecordingStats | None = None

    def start(self, session: SessionStart) -> None:
        """Nothing to start: the recorder's writer thread runs already."""

    def event(self, batch: Batch) -> None:
        """Take nothing: the recorder hands batches on, it does not take them."""

    def close(self, end: SessionEnd | None) -> None:
        """Write what is queued, flush, fsync and close the recording."""
        self.close_now()

    def close_now(self) -> RecordingStats:
        """Close the recorder (again: safe to repeat) and return its stats."""
        self.stats = self._recorder.close()
        return self.stats


def _side_outputs(
    paths: Paths, meta: SessionMeta, settings: RecordSettings, env: Mapping[str, str]
) -> tuple[RecentOutput | None, list[SessionOutput], list[SessionOutput]]:
    """Return what keeps the latest output for judging, the outputs that stop with the relay
    and those that close after the recording (``app.outputs``)."""
    from shellkeep.app.outputs.checkpoints import CheckpointOutput
    from shellkeep.app.outputs.live_socket import LiveSocketOutput
    from shellkeep.app.outputs.snapshots import snapshot_output
    from shellkeep.app.outputs.place_watch import PlaceOutput
    from shellkeep.app.outputs.status_file import StatusFileOutput
    from shellkeep.app.outputs.waiting import recent_output, waiting_output

    recent = recent_output(meta.agent, settings.notify)
    waiting = waiting_output(paths, meta, settings.notify)
    with_relay: list[SessionOutput] = [waiting] if waiting is not None else []
    with_relay += [StatusFileOutput(), CheckpointOutput()]
    snapshots = snapshot_output(meta, settings, env)  # before the checkpoints after the run (close order)
    with_relay += [snapshots] if snapshots is not None else []
    with_relay.append(PlaceOutput(meta.place))  # the tmux layout while it runs
    return recent, with_relay, [LiveSocketOutput()]


def _make_recorder(
    out: BinaryIO,
    header: Header,
    settings: RecordSettings,
    warn: Warn,
    pipeline: OutputPipeline,
    recent: RecentOutput | None = None,
) -> Recorder:
    from shellkeep.capture.recorder import Recorder

    return Recorder(
        out,
        header=header,
        record_input=settings.record_input,
        flush_interval_s=settings.flush_interval_s,
        coalesce_s=settings.coalesce_s,
        make_filter=partial(_stream_redactor, settings.redact_config, {}) if settings.redact else None,
        on_error=warn,
        on_activity=pipeline.on_activity,
        recent=recent,
        on_events=pipeline.on_events,
    )


def _stream_redactor(config: RedactConfig | None, known: dict[str, str], screen: bool = False) -> StreamRedactor:
    """Build the redaction filter of one stream (called on the writer thread); ``screen``:
    the output stream, whose markers keep the secrets' columns; ``known``: the secrets the
    session's streams redacted, shared so the same secret gets the same name in each."""
    from shellkeep.capture.redaction import StreamRedactor, redactor_for

    return StreamRedactor(redactor_for(config), keep_columns=screen, known=known)


def _header(meta: SessionMeta, size: TermSize, timestamp: float, env: Mapping[str, str], settings: RecordSettings) -> Header:
    return Header(
        size=size,
        timestamp=int(timestamp),
        idle_time_limit=settings.idle_time_limit,
        command=shlex.join(meta.command),
        title=meta.title or meta.name or settings.title,
        env={"SHELL": env.get("SHELL"), "TERM": env.get("TERM")},
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

