"""Own a session's folder and ``meta.json``: ids, atomic writes, listing, lookup, recovery.

A session is ``projects/<project>/<session-id>/`` with ``session.cast`` (asciicast v2) and
``meta.json``; a finished recording compressed at rest is ``session.cast.zst`` instead (its
``cast`` field names it; ``recording_path`` finds either). Ids sort by time: ``YYYYmmdd-HHMMSS-mmmxx`` (UTC, milliseconds, 2 random hex digits).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import enum
import fcntl
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.errors import AmbiguousSession, DataError, SessionNotFound
from shellkeep.store.atomic import write_json_atomic
from shellkeep.store.paths import Paths, ensure_dir, project_key
from shellkeep.logs import get_logger

log = get_logger(__name__)

META_FILE = "meta.json"
CAST_FILE = "session.cast"
"""The recording while it is written, and at rest when it is not compressed (plain asciicast v2,
or sealed plain asciicast)."""
COMPRESSED_CAST_FILE = "session.cast.zst"
"""A recording compressed at rest (zstd, sealed or not): never mistaken for plain asciicast."""
CAST_FILES = (CAST_FILE, COMPRESSED_CAST_FILE)
EXCHANGES_FILE = "exchanges.jsonl"
PLAN_FILE = "plan.json"
"""The agent's task list, sealed, when encryption is on (``app.plan``); else it is in ``meta.json``."""
AGENT_FOLDER = "agent"
ABOUT_FILE = "about.txt"
"""What an encrypted session was about (``SessionMeta.about``), sealed (``vault.about``):
``meta.json`` is never sealed, so ``about`` stays out of it when encryption is on."""
ABOUT_CHARS = 120
"""Longest ``SessionMeta.about`` kept, in characters (cut with an ellipsis)."""
SCREEN_FILE = "screen.jsonl.zst"
"""What a pushed session's screen showed, as searchable text (``archive.screen_text``): made
by ``sync push``, fetched by ``sync pull``; never in a folder of this machine's own sessions."""
LIVE_SOCKET = "live.sock"
"""The running session's live socket (``capture.live``: the protocol and its server)."""


class Status(str, enum.Enum):
    """The life of a session: running, then finished, hangup or killed; or interrupted."""

    RUNNING = "running"
    FINISHED = "finished"
    HANGUP = "hangup"
    KILLED = "killed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class SessionMeta:
    """The metadata of one session, as stored in ``meta.json`` (field names are the contract).

    Times ``*_at`` are ISO 8601 UTC strings; ``duration`` is float seconds;
    ``git_start``/``git_end`` are ``{"branch", "commit", "dirty"}`` or None.
    """

    id: str
    project: str
    project_root: str
    cwd: str
    command: list[str]
    agent: str
    started_at: str
    name: str | None = None
    title: str | None = None
    host: str = ""
    user: str = ""
    pid: int = 0
    pid_start_ticks: int | None = None
    """When shellkeep's process ``pid`` started, in clock ticks since boot (``/proc/PID/stat``
    field 22): a live process with the same pid but another start time is not the recorder."""
    child_pid: int | None = None
    boot_id: str | None = None
    term: str | None = None
    colorterm: str | None = None
    shell: str | None = None
    lang: str | None = None
    cols: int = 80
    rows: int = 24
    ended_at: str | None = None
    duration: float | None = None
    exit_code: int | None = None
    signal: int | None = None
    status: str = Status.RUNNING.value
    cast: str = ""
    output_bytes: int = 0
    input_bytes: int = 0
    record_input: bool = True
    redacted: bool = True
    hidden_input: bool = False
    recording_error: str | None = None
    git_start: dict[str, object] | None = None
    git_end: dict[str, object] | None = None
    git_identity: dict[str, object] | None = None
    """Which repository the project is, wherever it is on disk: ``{"remote", "root_commit"}``
    (``git.identity.GitIdentity``), or None outside git. The remote is read at start, the root
    commit in the upkeep after the session."""
    place: dict[str, object] | None = None
    """Where the session ran on screen: its tmux pane and window layout, or a plain terminal's
    size (``app.place`` documents the object); None for sessions recorded before it was kept."""
    parent: str | None = None
    agent_session_id: str | None = None
    agent_transcript: str | None = None
    agent_transcript_bytes: int | None = None
    """How long the agent's transcript was when this session's part of it ended (bytes): the
    part read and copied (a resumed conversation goes on in the same file)."""
    agent_transcript_damage: dict[str, object] | None = None
    """Where the agent's transcript was found damaged when it was read (``summary``, ``records``,
    ``spans``: see ``agents.jsonl.TranscriptDamage``); None when it was intact."""
    exchange_count: int = 0
    usage: dict[str, int] | None = None
    plan: dict[str, object] | None = None
    """The agent's task list where it stopped (``agents.plan.Plan.to_json``: ``items`` of
    ``{text, state, active, id}``, ``tool``, ``explanation``, ``done``, ``total``, ``summary``);
    None when it kept none. Written with the exchanges (``app.plan``)."""
    about: str | None = None
    """What the session was about, on one line of at most ``ABOUT_CHARS`` characters: the
    agent's own title for the conversation where it keeps one (Claude Code's ``ai-title`` or
    ``summary``, Codex's thread name, ...), else the first prompt; redacted as the exchanges
    are. Written with the exchanges (``app.about``); None before, for a program without
    exchanges, and when encryption is on (the text is content: it stays sealed)."""
    resume_failed: str | None = None
    """Why this run, a native resume of ``parent``, failed (None: it did not); such a run is
    never chosen by a bare ``resume``, and its parent stays the session to resume."""
    detail: str = "full"
    """How much was kept (``record.detail``): ``full`` (recording, exchanges, metadata),
    ``conversation`` (no terminal recording) or ``metadata`` (this file only)."""
    restart: int = 0
    """Which supervised restart of ``parent`` this run is (``run --restart``), 1-based; 0: none."""
    shellkeep_version: str = ""
    env: dict[str, object] | None = None
    """The environment recorded at start (``app.environment``): ``{"scope", "home", "values",
    "secrets", "sealed"}``, secret values never in clear; None when none was kept."""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """Return the session's folder (the parent of its recording)."""
        return Path(self.cast).parent

    def to_json(self) -> dict[str, object]:
        """Return the ``meta.json`` object; unknown keys read earlier are kept.

        A value holding bytes that were not UTF-8 (a name or path read with surrogateescape)
        comes out readable (``readable_text``): the object always encodes as UTF-8 JSON.
        """
        obj = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        readable = _readable({**self.extra, **obj})
        assert isinstance(readable, dict)
        return readable

    @classmethod
    def from_json(cls, obj: dict[str, object], folder: Path) -> SessionMeta:
        """Build from a parsed ``meta.json``; raises DataError when required keys are missing."""
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in obj.items() if k in names and k != "extra"}
        extra = {k: v for k, v in obj.items() if k not in names}
        # The recording is where the folder is now: a data folder that was moved or
        # restored from a backup still reads (meta.json keeps the path it was written with);
        # and under the name it has now (compression renames it; an index row may be older).
        path = folder / META_FILE
        for f in dataclasses.fields(cls):
            if f.name in known and f.name != "extra" and not _fits(str(f.type), known[f.name]):
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise DataError(f"{path} has a wrong {f.name!r} ({_kind(str(f.type))} expected); restore it or remove the session folder")
                if (path, f.name) not in _dropped:  # once per field and invocation, however often read
                    _dropped.add((path, f.name))
                    log.warning("%s: dropped its wrong %r (%s expected)", path, f.name, _kind(str(f.type)))
                del known[f.name]
        known["cast"] = str(recording_path(folder, Path(str(known.get("cast") or CAST_FILE)).name))
        try:
            return cls(**known, extra=extra)  # type: ignore[arg-type]
        except TypeError as exc:
            raise DataError(f"{folder / META_FILE} is missing fields ({exc}); run 'shellkeep reindex'") from exc


_dropped: set[tuple[Path, str]] = set()


def _fits(kind: str, value: object) -> bool:
    """Whether ``value`` read from JSON has the declared field type ``kind`` (a type string)."""
    if kind.endswith(" | None"):
        return value is None or _fits(kind.removesuffix(" | None"), value)
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == "dict[str, int]":
        return isinstance(value, dict) and all(_fits("int", item) for item in value.values())
    if kind.startswith("dict["):
        return isinstance(value, dict)
    return True


def _kind(kind: str) -> str:
    words = {"str": "a string", "int": "a whole number", "float": "a number", "bool": "true or false",
             "list[str]": "a list of strings", "dict[str, int]": "an object of numbers"}
    plain = kind.removesuffix(" | None")
    said = words.get(plain, "an object" if plain.startswith("dict[") else plain)
    return said + " or null" if plain != kind else said


def recording_path(folder: Path, name: str = CAST_FILE) -> Path:
    """Return the recording of the session in ``folder``, named ``name`` or its sibling.

    ``folder/name`` when it exists; else the other of ``session.cast`` and
    ``session.cast.zst`` when that one exists (a compression renamed it, or was cut between
    its steps); else ``folder/name`` (no recording yet, or none kept). One ``stat`` when the
    named file is there, two otherwise; never raises.
    """
    named = folder / name
    if name not in CAST_FILES or os.path.exists(named):  # os.path: a third of pathlib's time, per listed session
        return named
    other = folder / (COMPRESSED_CAST_FILE if name == CAST_FILE else CAST_FILE)
    return other if os.path.exists(other) else named


@contextmanager
def session_lock(folder: Path) -> Iterator[None]:
    """Hold the exclusive rewrite lock of a session folder (``flock`` on the folder itself).

    Whoever renames or rewrites a stored recording holds it (compression, ``redact``,
    ``key rotate``), so one never deletes what another just wrote. Blocks until it is free;
    the kernel drops it when the holder dies. Raises OSError when the folder cannot be opened.
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


RAW_KEY = "raw"
"""The ``meta.json`` key holding the exact bytes of values that are not UTF-8 (``raw_values``)."""


def readable_text(text: str) -> str:
    """Return ``text`` fit to store as UTF-8: each byte that was not UTF-8 shows as ``\\xNN``.

    Python reads argv, paths and the environment with surrogateescape (byte 0xff is
    ``"\\udcff"``), which no UTF-8 writer takes; other lone surrogates show as ``\\udNNN``.
    Text that is valid UTF-8 comes back unchanged.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _b64(text: str) -> str | None:
    try:
        return base64.b64encode(os.fsencode(text)).decode("ascii")
    except UnicodeEncodeError:  # a surrogate no byte stands for: only the readable text is kept
        return None


def raw_values(cwd: str, project_root: str, command: list[str]) -> dict[str, object] | None:
    """Return the ``raw`` object of ``meta.json``: the exact bytes of these values, base64.

    Only when one of them is not UTF-8 (else None: nothing to add); a value that is UTF-8
    is null (its text is exact). ``exact_meta`` reads it back.
    """
    def coded(text: str) -> str | None:
        return _b64(text) if readable_text(text) != text else None

    if all(coded(text) is None for text in (cwd, project_root, *command)):
        return None
    return {"cwd": coded(cwd), "project_root": coded(project_root), "command": [coded(arg) for arg in command]}


def exact_meta(meta: SessionMeta) -> SessionMeta:
    """Return ``meta`` with ``cwd``, ``project_root`` and ``command`` as exactly given, from ``raw``.

    Bytes that are not UTF-8 come back as surrogateescape strings, which ``os`` calls and
    ``exec`` turn back into those bytes. A session without ``raw`` (all text, or written
    before it existed) is returned as it is; a damaged ``raw`` is ignored (the readable
    text is used).
    """
    raw = meta.extra.get(RAW_KEY)
    if not isinstance(raw, dict):
        return meta

    def exact(code: object, text: str) -> str:
        return os.fsdecode(base64.b64decode(code, validate=True)) if isinstance(code, str) else text

    try:
        command = list(meta.command)
        codes = raw.get("command")
        if isinstance(codes, list) and len(codes) == len(command):
            command = [exact(code, text) for code, text in zip(codes, command)]
        return dataclasses.replace(
            meta, cwd=exact(raw.get("cwd"), meta.cwd), project_root=exact(raw.get("project_root"), meta.project_root), command=command
        )
    except (binascii.Error, ValueError):
        return meta


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def iso(at: datetime) -> str:
    """Format an aware datetime as ISO 8601 UTC with a ``Z`` suffix, millisecond precision."""
    return at.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """Parse an ISO 8601 time as written by ``iso``; raises ValueError."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_session_id(at: datetime) -> str:
    """Return a new session id that sorts by ``at``: ``YYYYmmdd-HHMMSS-mmmxx``.

    mmm: milliseconds, so ids of one second still sort; xx: two random hex digits.
    """
    return at.strftime("%Y%m%d-%H%M%S-") + f"{at.microsecond // 1000:03d}" + os.urandom(1).hex()


def boot_id() -> str | None:
    """Return this boot's id (Linux ``/proc/sys/kernel/random/boot_id``), or None."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def boot_time() -> float | None:
    """Return when this machine booted, epoch seconds (Linux ``/proc/stat`` ``btime``), or None."""
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def process_start_ticks(pid: int) -> int | None:
    """Return when process ``pid`` started, in clock ticks since boot, or None where /proc does not tell.

    Source: ``/proc/PID/stat`` field 22 (``starttime``, proc(5)); the command name in field 2
    may hold spaces and parentheses, so the fields are counted after its last ``)``.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat.rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def host_name() -> str:
    """Return this machine's host name (``uname -n``, what ``socket.gethostname`` returns)."""
    return os.uname().nodename


def write_meta(meta: SessionMeta) -> None:
    """Write ``meta.json`` of ``meta``'s session atomically; raises OSError.

    The file is always valid UTF-8 JSON (``SessionMeta.to_json``).
    """
    write_json_atomic(meta.folder / META_FILE, meta.to_json())


def _readable(value: object) -> object:
    if isinstance(value, str):
        return readable_text(value)
    if isinstance(value, dict):
        return {readable_text(k) if isinstance(k, str) else k: _readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_readable(v) for v in value]
    return value


def read_meta(folder: Path) -> SessionMeta:
    """Read ``folder/meta.json``; raises DataError when it is not valid JSON."""
    path = folder / META_FILE
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path} is not valid JSON ({exc}); restore it or remove the session folder") from exc
    if not isinstance(obj, dict):
        raise DataError(f"{path} is not a JSON object; restore it or remove the session folder")
    return SessionMeta.from_json(obj, folder)


def create_session_folder(paths: Paths, project_root: Path, session_id: str) -> Path:
    """Create and return the folder of a new session (mode 0700); raises OSError."""
    folder = paths.session_dir(project_root, session_id)
    ensure_dir(folder.parent)
    folder.mkdir(mode=0o700)
    return folder


# -- liveness and recovery ------------------------------------------------------------


def _pid_is_shellkeep(pid: int, start_ticks: int | None = None) -> bool:
    """Return whether ``pid`` is alive and (where /proc tells) the shellkeep process recorded.

    start_ticks: the recorded start time of the process (``process_start_ticks``); when
    given and /proc tells, it decides: the same start time is the recorder, another one a
    reused pid. Otherwise the command line must name shellkeep.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    started = process_start_ticks(pid) if start_ticks is not None else None
    if started is not None:
        return started == start_ticks
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    return b"shellkeep" in cmdline


SHORT_SESSION_S = 1.0

CUT_SHORT_STATUSES = (Status.INTERRUPTED.value, Status.HANGUP.value)
"""The statuses of a session whose recorder died or whose terminal was closed: never "trivial"."""
"""Sessions ended in less than this many seconds with nothing typed are "trivial" (``is_trivial``)."""


def title_of(meta: SessionMeta) -> str:
    """Return what a session was about, on one line: the title given to it (``--title``), else
    ``about`` (the agent's own title, else the first prompt), else its command as the user
    typed it (``typed_command``: without the session id option shellkeep added)."""
    from shellkeep.agents.registry import typed_command  # here: a command's --help imports this module, no agent code

    text = meta.title or meta.about or " ".join(typed_command(meta.command, meta.agent, meta.agent_session_id))
    return " ".join(text.split())


def is_trivial(meta: SessionMeta) -> bool:
    """Return whether a session ended within ``SHORT_SESSION_S`` with no input recorded (for one
    that kept no recording: no exchange).

    Such sessions (a typo'd command, a program that failed at once) are hidden from ``ls``
    and the picker unless asked for. A running session is never trivial, nor one cut short
    (``CUT_SHORT_STATUSES``): its recorded duration is only what the recording shows.
    """
    return (
        meta.duration is not None
        and meta.duration < SHORT_SESSION_S
        and not meta.input_bytes
        and not (meta.detail != "full" and meta.exchange_count)  # no recording (an agent's own session imported): its exchanges are its input
        and meta.status not in CUT_SHORT_STATUSES
    )


def is_interrupted(meta: SessionMeta) -> bool:
    """Return whether a session marked running has lost its recorder on this host.

    True when its boot id differs from this boot's, or its shellkeep process is gone (its
    pid is free, or taken by a process that started at another time than the recorder).
    Sessions recorded on another host are never judged interrupted from here.
    """
    if meta.status != Status.RUNNING.value or meta.host != host_name():
        return False
    current_boot = boot_id()
    if meta.boot_id and current_boot and meta.boot_id != current_boot:
        return True
    return not _pid_is_shellkeep(meta.pid, meta.pid_start_ticks)


# -- listing and lookup ---------------------------------------------------------------


def iter_session_folders(paths: Paths, project_root: Path | None) -> Iterator[Path]:
    """Yield session folders of one project (or of all projects when None), any order.

    Hidden folders (a session an import is still staging) are not session folders.
    """
    if paths.home.exists() and not paths.home.is_dir():
        raise DataError(f"the data folder {paths.home} is not a folder; point SHELLKEEP_HOME at a folder")
    if project_root is not None:
        projects = [paths.project_dir(project_root)]
    else:
        try:
            projects = [p for p in paths.projects.iterdir() if p.is_dir()]
        except FileNotFoundError:
            return
    for project in projects:
        try:
            entries = list(project.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            # A hidden folder (``.import-*``) is a session still being staged: not one until renamed into place.
            if not entry.name.startswith(".") and (entry / META_FILE).is_file():
                yield entry


_warned: set[Path] = set()


Recover = Callable[[SessionMeta], SessionMeta]
"""Repairs an interrupted session and returns its stored metadata (``vault.recovery.recover``)."""


def list_sessions(paths: Paths, project_root: Path | None, *, recover: Recover | None = None) -> list[SessionMeta]:
    """Return the sessions of a project (all projects when None), newest first.

    Sessions whose recorder is gone are passed to ``recover`` on the way (None: they are
    only marked ``interrupted`` in what is returned; nothing is written); a folder with
    unreadable metadata is skipped with a logged warning.
    """
    found: list[SessionMeta] = []
    for folder in iter_session_folders(paths, project_root):
        try:
            meta = read_meta(folder)
        except (OSError, DataError) as exc:
            if folder not in _warned:  # once per folder and invocation, however often listed
                _warned.add(folder)
                log.warning("skipping %s: %s", folder, exc)
            continue
        if is_interrupted(meta):
            meta = recover(meta) if recover is not None else dataclasses.replace(meta, status=Status.INTERRUPTED.value)
        found.append(meta)
    found.sort(key=lambda m: (m.started_at, m.id), reverse=True)
    return found


def resolve_session(
    paths: Paths, project_root: Path, ref: str | None, *, last: bool = False, recover: Recover | None = None
) -> SessionMeta:
    """Find one session by id, unique id prefix, name, or the newest (``last``).

    The current project is searched first, then every project. A name shared by several
    sessions means the newest of them. recover: as for ``list_sessions``.
    Raises SessionNotFound or AmbiguousSession.
    """
    project = project_key(project_root)
    if last or not ref:
        sessions = list_sessions(paths, project_root, recover=recover)
        if not sessions:
            raise SessionNotFound(f"no sessions recorded in project {project} yet; run 'shellkeep' to record one")
        return sessions[0]
    for scope in (project_root, None):
        sessions = list_sessions(paths, scope, recover=recover)
        exact = [m for m in sessions if m.id == ref]
        if exact:
            return exact[0]
        named = [m for m in sessions if m.name in (ref, readable_text(ref))]
        if named:
            return named[0]
        prefixed = [m for m in sessions if m.id.startswith(ref)]
        if len(prefixed) == 1:
            return prefixed[0]
        if len(prefixed) > 1:
            shown = ", ".join(m.id for m in prefixed[:3]) + (", ..." if len(prefixed) > 3 else "")
            raise AmbiguousSession(f"'{ref}' matches {len(prefixed)} sessions ({shown}); give more of the id")
    for folder in iter_session_folders(paths, None):
        if folder.name.startswith(ref):
            try:
                read_meta(folder)
            except DataError as exc:
                raise DataError(
                    f"{exc}; its recording can still be played: shellkeep replay {recording_path(folder)}"
                ) from exc
    raise SessionNotFound(f"no session matches '{ref}' in project {project}; run 'shellkeep ls --all'")


def drop_recording(meta: SessionMeta) -> bool:
    """Remove the session's terminal recording (``record.detail`` below ``full``), under
    either name; return whether there was one. Raises OSError when it exists and cannot be
    removed."""
    found = False
    for name in CAST_FILES:
        try:
            os.unlink(meta.folder / name)
            found = True
        except FileNotFoundError:
            pass
    return found
