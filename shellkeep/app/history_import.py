"""Bring the conversations agents keep of their own into the archive (``shellkeep import --agent``).

Each conversation an agent CLI stored (``agents.history``) that shellkeep did not record
becomes a session of the project its cwd belongs to, as a recorded one would: its exchanges
(read by the agent's adapter), token usage, times, cwd, agent and ``agent_session_id``, and a
copy of the transcript (``vault.copies``; redacted, and sealed when encryption is on), but no
terminal recording (``detail = "conversation"``). ``meta.json`` marks it
``imported_from_agent``, with ``imported_at`` and ``imported_state`` (how far the transcript
had been written).

Incremental: a conversation imported before is read again only when its state changed (it
grew), and then updates the same session. One a shellkeep-recorded session already holds
(the same agent and ``agent_session_id``) is left alone, until its transcript grows past what
the recording read (``agent_transcript_bytes``: the agent was run again without shellkeep):
the exchanges past that become a session of their own, ``continues`` the recording
(``imported_after_bytes`` in ``meta.json``), updated as it grows; no exchange is held twice. A new session is written in a
hidden folder renamed into place at the end (the files of up to ``_INDEX_BATCH`` new sessions
made durable first by one ``os.sync``, not one fsync a file), so it is all there or not at all; an update
rewrites the exchanges and the copy first and ``meta.json`` (with the new state) last, so an
update cut short is done again by the next run. One run at a time (a lock in the data folder).

``maybe_auto_import`` is the daily run the upkeep after a session starts (``app.housekeeping``)
when ``history.auto_import`` asks for it.
"""

from __future__ import annotations

import dataclasses
import fcntl
import getpass
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep import __version__
from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, Exchange
from shellkeep.agents.history import HISTORY_AGENTS, NativeSession, native_sessions, regular_files
from shellkeep.agents.jsonl import TranscriptDamage, open_transcript
from shellkeep.agents.locations import home_dir, same_dir
from shellkeep.agents.records import parse_time
from shellkeep.agents.registry import adapter_named
from shellkeep.app.about import with_about
from shellkeep.app.context import Context
from shellkeep.app.conversation import copy_name
from shellkeep.archive.index import index_ended_sessions
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.git.identity import root_commit
from shellkeep.git.info import origin_remote
from shellkeep.logs import get_logger
from shellkeep.store.atomic import deferred_sync, write_json_atomic
from shellkeep.store.paths import Paths, ensure_dir, git_state, project_root_of
from shellkeep.store.session import (
    CAST_FILE,
    META_FILE,
    SessionMeta,
    Status,
    host_name,
    iso,
    list_sessions,
    new_session_id,
    parse_iso,
    readable_text,
    utc_now,
    write_meta,
)
from shellkeep.vault.copies import copy_lines, store_copy
from shellkeep.vault.exchanges import write_exchanges
from shellkeep.vault.scrubber import redact_jsonl_line, redact_meta

if TYPE_CHECKING:
    from shellkeep.capture.redaction import Redactor

__all__ = [
    "AUTO_IMPORT_EVERY",
    "IMPORTED_FROM_AGENT",
    "HistoryImport",
    "HistoryReport",
    "HistoryRequest",
    "agent_title",
    "auto_import_wanted",
    "import_histories",
    "imported_from_agent",
    "maybe_auto_import",
    "shell_integration_installed",
]

log = get_logger(__name__)

IMPORTED_FROM_AGENT = "imported_from_agent"
"""The ``meta.json`` key naming the agent whose own history a session was imported from."""

AFTER_BYTES = "imported_after_bytes"
"""The ``meta.json`` key of a continuation: the transcript's size its recording read up to."""

_WORKERS = 4
"""Sessions read and stored at once (their fsyncs overlap)."""

_INDEX_BATCH = 100
"""Sessions indexed in one transaction."""

AUTO_IMPORT_EVERY = timedelta(days=1)
"""The automatic import runs at most this often (``Paths.history_stamp``'s mtime)."""


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """Which histories to import: ``agents`` (names of ``agents.history.HISTORY_AGENTS``) and
    only conversations written at or after ``since`` (aware datetime; None: all)."""

    agents: tuple[str, ...]
    since: datetime | None = None


@dataclass(frozen=True, slots=True)
class HistoryImport:
    """What became of one conversation of an agent.

    action: ``imported`` (a new session), ``updated`` (it grew; the same session rewritten),
    ``unchanged`` (imported before, not grown), ``recorded`` (a shellkeep-recorded session
    holds it), ``empty`` (no exchange), ``failed`` (``error`` says why; nothing of it stored).
    session_id: the shellkeep session (None when there is none). exchanges: how many it holds.
    """

    agent: str
    agent_session_id: str
    action: str
    session_id: str | None = None
    project: str | None = None
    exchanges: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """The outcome of one import run, a ``HistoryImport`` per conversation found, in order."""

    results: tuple[HistoryImport, ...]

    def count(self, action: str) -> int:
        """Return how many conversations ended with ``action``."""
        return sum(1 for r in self.results if r.action == action)


def agent_title(agent: str) -> str:
    """Return the agent's name as its makers write it (``Claude Code`` for ``claude``); the
    stored name itself for an agent no adapter gives a title."""
    try:
        adapter = adapter_named(agent)
    except UserInputError:
        return agent
    return str(getattr(adapter, "title", "") or agent)  # a plug-in adapter may have none


def imported_from_agent(meta: SessionMeta) -> str | None:
    """Return the agent whose own history ``meta`` was imported from, or None (recorded, or a file import)."""
    value = meta.extra.get(IMPORTED_FROM_AGENT)
    return value if isinstance(value, str) else None


def import_histories(ctx: Context, request: HistoryRequest, env: Mapping[str, str] | None = None) -> HistoryReport:
    """Import the agents' own conversations not yet in the archive, or grown since; index them.

    env: where the agents keep them (HOME, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...; default:
    the context's). Blocks while another import runs. One conversation that cannot be read
    or stored is reported ``failed`` and the others go on. Raises UserInputError for an
    unknown agent, OSError when the data folder cannot be written, KeyUnavailable when
    encryption is on and no key can be had.
    """
    unknown = [a for a in request.agents if a not in HISTORY_AGENTS]
    if unknown:
        raise UserInputError(f"cannot import the history of '{unknown[0]}'; give one of {', '.join(HISTORY_AGENTS)} or all")
    env = dict(ctx.env if env is None else env)
    with _import_lock(ctx.paths, wait=True):
        return _import_all(ctx, request, env)


def _remove_dead_stagings(paths: Paths) -> None:
    """Remove the ``.import-PID-*`` folders an import killed midway left (its pid gone); they were never in place."""
    try:
        projects = [p for p in paths.projects.iterdir() if p.is_dir()]
    except OSError:
        return
    for project in projects:
        try:
            entries = [e for e in project.iterdir() if e.name.startswith(".import-")]
        except OSError:
            continue
        for entry in entries:
            try:
                pid = int(entry.name.split("-")[1])
            except (IndexError, ValueError):
                continue
            if pid == os.getpid() or _alive(pid):
                continue
            log.info("removing %s, left by an import that did not finish", entry)
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _import_all(ctx: Context, request: HistoryRequest, env: Mapping[str, str]) -> HistoryReport:
    _remove_dead_stagings(ctx.paths)
    recorded: dict[tuple[str, str], SessionMeta] = {}  # the recording that read the most of each
    imported: dict[tuple[str, str], SessionMeta] = {}
    continued: dict[tuple[str, str, int], SessionMeta] = {}  # (agent, id, bytes the recording read) -> continuation
    unnoted: list[SessionMeta] = []  # recordings whose agent session is not known yet
    for known in list_sessions(ctx.paths, None):
        if not known.agent_session_id:
            if known.status in (Status.RUNNING.value, Status.INTERRUPTED.value):
                unnoted.append(known)
            continue
        key = (known.agent, known.agent_session_id)
        after = known.extra.get(AFTER_BYTES)
        if imported_from_agent(known) is not None and isinstance(after, int):
            continued[key + (after,)] = known
        elif imported_from_agent(known) is not None:
            imported[key] = known
        elif key not in recorded or (known.agent_transcript_bytes or 0) > (recorded[key].agent_transcript_bytes or 0):
            recorded[key] = known
    roots: dict[str, Path] = {}
    gits: dict[str, _Git] = {}
    warned = _read_warned(ctx.paths)
    noted = dict(warned)
    results: list[HistoryImport | None] = []
    work: list[tuple[int, NativeSession, SessionMeta | None, SessionMeta | None]] = []
    for agent in request.agents:
        for native in native_sessions(agent, env):
            if request.since is not None and native.updated_at < request.since:
                continue
            key = (agent, native.session_id)
            earlier = imported.get(key)
            recording = recorded.get(key)
            if recording is not None and _grew_after(recording, native):
                earlier = continued.get((*key, recording.agent_transcript_bytes or 0))
            elif key in recorded or _being_recorded(native, unnoted):
                results.append(HistoryImport(agent, native.session_id, "recorded"))
                continue
            else:
                recording = None
            if earlier is not None and earlier.extra.get("imported_state") == native.state:
                results.append(HistoryImport(agent, native.session_id, "unchanged", earlier.id, earlier.project, earlier.exchange_count))
            else:
                work.append((len(results), native, earlier, recording))
                results.append(None)
    if work:
        ctx.vault.writing_key()  # made here once if it must be, not by several workers at once
    # Sessions are read and stored a few at a time (an update waits on its fsyncs, which the
    # file system commits together); a batch of new ones, each staged in its hidden folder,
    # is made durable by one sync before the folders are renamed into place; the index
    # takes a batch in one transaction.
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        for start in range(0, len(work), _INDEX_BATCH):
            batch = work[start : start + _INDEX_BATCH]
            done = list(pool.map(lambda item: _import_one(ctx, item[1], item[2], roots, env, gits, noted, item[3]), batch))
            if any(staged is not None for _, _, staged in done):
                os.sync()
            stored: list[SessionMeta] = []
            for (position, native, _, _), (result, meta, staged) in zip(batch, done):
                if staged is not None and meta is not None:
                    try:
                        meta = _put_in_place(staged, meta, native)
                    except OSError as exc:
                        shutil.rmtree(staged, ignore_errors=True)
                        log.warning("could not import %s session %s: %s", native.agent, native.session_id, exc)
                        results[position] = HistoryImport(native.agent, native.session_id, "failed", error=str(exc))
                        continue
                    result = dataclasses.replace(result, session_id=meta.id)
                if meta is not None:
                    stored.append(meta)
                results[position] = result
            index_ended_sessions(ctx.paths, stored, vault=ctx.vault)
    if noted != warned:
        try:
            write_json_atomic(ctx.paths.history_warned, noted)
        except OSError as exc:
            log.debug("could not note the damaged transcripts warned about: %s", exc)
    return HistoryReport(tuple(r for r in results if r is not None))


def _read_warned(paths: Paths) -> dict[str, str]:
    """Return ``agent:session id`` -> the state of its transcript a damage warning was given for."""
    try:
        data = json.loads(paths.history_warned.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}


def _put_in_place(staged: Path, meta: SessionMeta, native: NativeSession) -> SessionMeta:
    """Rename a staged session folder to its id (another id when that one is taken); return its metadata."""
    for _ in range(20):
        final = Path(meta.cast).parent
        try:
            os.rename(staged, final)
            return meta
        except OSError:
            if not final.exists():
                raise
        folder = final.parent / new_session_id(parse_iso(meta.started_at))
        meta = dataclasses.replace(meta, id=folder.name, cast=str(folder / CAST_FILE))
        write_json_atomic(staged / META_FILE, meta.to_json())
    raise FileExistsError(17, "no free session id", str(staged.parent))


_START_SLACK = timedelta(seconds=5)
"""An agent session started this little before a recording of it still counts as its own."""


def _grew_after(recording: SessionMeta, native: NativeSession) -> bool:
    """Return whether ``native``'s transcript grew past what ``recording`` read of it (the agent
    went on without shellkeep). Known only for a transcript file whose read size was noted."""
    read = recording.agent_transcript_bytes
    if read is None or not native.state.startswith("bytes:") or not same_dir(recording.agent_transcript, native.transcript):
        return False
    try:
        return int(native.state.split(":", 1)[1]) > read
    except ValueError:
        return False


def _being_recorded(native: NativeSession, unnoted: list[SessionMeta]) -> bool:
    """Return whether a recording still running (or cut short, not collected yet) may be ``native``.

    Such a recording (Codex and OpenCode take no id up front) learns its agent session only
    when it ends; a conversation of the same agent in its directory started since it began
    is left to it, so it is not imported twice.
    """
    for meta in unnoted:
        if meta.agent != native.agent or native.cwd is None or not same_dir(meta.cwd, Path(native.cwd)):
            continue
        try:
            began = parse_iso(meta.started_at)
        except ValueError:
            continue
        if native.started_at is None or native.started_at >= began - _START_SLACK:
            return True
    return False


def _import_one(
    ctx: Context,
    native: NativeSession,
    earlier: SessionMeta | None,
    roots: dict[str, Path],
    env: Mapping[str, str],
    gits: dict[str, _Git],
    warned: dict[str, str],
    recording: SessionMeta | None = None,
) -> tuple[HistoryImport, SessionMeta | None, Path | None]:
    """Import or update one conversation (not indexed yet); report a failure instead of raising it.

    recording: the recorded session whose transcript grew since (``_grew_after``): only the
    exchanges past what it read are stored, as its continuation. Returns what became of it,
    its metadata (None when nothing was stored) and, for a new session, the hidden folder it
    is staged in (its files not synced yet; the caller syncs and renames it into place).
    """
    try:
        adapter = adapter_named(native.agent)
        if not isinstance(adapter, CommandAdapter):
            raise UserInputError(f"the {native.agent} adapter cannot read its transcripts")
        reading = adapter.read_transcript(native.agent_session(), warn_damage=False)
        if reading.damage is not None:
            key = f"{native.agent}:{native.session_id}"
            if warned.get(key) != native.state:  # once a file state, not every run
                log.warning("the %s transcript %s is damaged: %s", native.agent, native.transcript, reading.damage.summary())
                warned[key] = native.state
        exchanges = _own(reading.exchanges)
        if recording is not None:
            held = len(_own(adapter.read_transcript(native.agent_session(), recording.agent_transcript_bytes, warn_damage=False).exchanges))
            exchanges = _own(tuple(exchanges[held:]))
            if not exchanges:  # grown by records that are no exchange
                return HistoryImport(native.agent, native.session_id, "recorded"), None, None
        if not exchanges:
            return HistoryImport(native.agent, native.session_id, "empty", earlier.id if earlier else None), None, None
        cwd = native.cwd or str(home_dir(env))
        root = roots.get(cwd)
        if root is None:
            root = roots[cwd] = project_root_of(Path(cwd))
        git = gits.get(cwd)
        if git is None:
            git = gits[cwd] = _git_of(Path(cwd), root)
        meta, staged = _store(ctx, adapter, native, exchanges, reading.damage, Path(cwd), root, earlier, git, recording)
    except (OSError, ShellkeepError) as exc:
        log.warning("could not import %s session %s: %s", native.agent, native.session_id, exc)
        return HistoryImport(native.agent, native.session_id, "failed", error=str(exc)), None, None
    action = "updated" if earlier is not None else "imported"
    return HistoryImport(native.agent, native.session_id, action, meta.id, meta.project, meta.exchange_count), meta, staged


_Git = tuple[dict[str, object] | None, dict[str, object] | None]
"""A conversation's ``git_start`` and ``git_identity`` (None, None outside a git work tree)."""


def _git_of(cwd: Path, project_root: Path) -> _Git:
    """Return the git state and identity of ``cwd`` as recording takes them, when it still exists."""
    if not cwd.is_dir():
        return None, None
    state = git_state(cwd)
    if state is None:
        return None, None
    return state, {"remote": origin_remote(project_root), "root_commit": root_commit(project_root, timeout_s=5.0)}


def _own(exchanges: tuple[Exchange, ...]) -> list[Exchange]:
    """Drop the context block shellkeep typed in on a resume (not an exchange); renumber from 0."""
    kept = [e for e in exchanges if not e.prompt.lstrip().startswith(INJECTED_CONTEXT_PREFIX)]
    return [e if e.index == i else dataclasses.replace(e, index=i) for i, e in enumerate(kept)]


def _store(
    ctx: Context,
    adapter: CommandAdapter,
    native: NativeSession,
    exchanges: list[Exchange],
    damage: TranscriptDamage | None,
    cwd: Path,
    project_root: Path,
    earlier: SessionMeta | None,
    git: _Git,
    recording: SessionMeta | None = None,
) -> tuple[SessionMeta, Path | None]:
    """Write the session: an update in its folder, meta.json last; a new one in a hidden folder,
    unsynced (``deferred_sync``), returned with it for the caller to sync and rename.
    recording: the session this one continues (it starts at its first exchange then)."""
    redactor = redactor_for(ctx.config.redact) if ctx.config.redact.enabled else None
    first = parse_time(exchanges[0].time)
    started = (first if recording is not None else None) or native.started_at or first or native.updated_at
    if earlier is not None:
        folder = earlier.folder
        _write_content(ctx, adapter, native, folder, exchanges, redactor)
        meta = _meta_for(ctx, native, exchanges, damage, cwd, project_root, folder, started, earlier, redactor, git, recording)
        write_meta(meta)
        return meta, None
    project_dir = ensure_dir(_project_dir(ctx.paths, project_root))
    staging = project_dir / f".import-{os.getpid()}-{os.urandom(4).hex()}"
    staging.mkdir(mode=0o700)
    try:
        with deferred_sync():
            _write_content(ctx, adapter, native, staging, exchanges, redactor)
            final = project_dir / new_session_id(started)
            meta = _meta_for(ctx, native, exchanges, damage, cwd, project_root, final, started, None, redactor, git, recording)
            write_json_atomic(staging / META_FILE, meta.to_json())
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return meta, staging


def _project_dir(paths: Paths, project_root: Path) -> Path:
    """Return ``paths.project_dir(project_root)`` (a hash of the path: once per project and run)."""
    return paths.project_dir(project_root)


def _write_content(
    ctx: Context, adapter: CommandAdapter, native: NativeSession, folder: Path, exchanges: list[Exchange], redactor: Redactor | None
) -> None:
    """Store the exchanges and the copy of the agent's transcript files in ``folder`` (as recording does)."""
    write_exchanges(folder, exchanges, ctx.vault, redactor=redactor)
    redact = None if redactor is None else partial(redact_jsonl_line, redactor=redactor)
    session = native.agent_session()
    for src in regular_files(adapter.transcript_files(session)):
        fh = open_transcript(src)
        if fh is None:
            continue
        with fh:
            store_copy(ctx.vault, folder, copy_name(session, src), copy_lines(fh, redact))


def _meta_for(
    ctx: Context,
    native: NativeSession,
    exchanges: list[Exchange],
    damage: TranscriptDamage | None,
    cwd: Path,
    project_root: Path,
    folder: Path,
    started: datetime,
    earlier: SessionMeta | None,
    redactor: Redactor | None,
    git: _Git,
    recording: SessionMeta | None = None,
) -> SessionMeta:
    ended = max(native.updated_at, started)
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    adapter = adapter_named(native.agent)
    program = adapter.executables[0] if isinstance(adapter, CommandAdapter) and adapter.executables else native.agent
    size = native.transcript.stat().st_size if native.state.startswith("bytes:") else None
    usages = [e.usage for e in exchanges if e.usage is not None]
    usage = None
    if usages:
        total = sum(usages[1:], usages[0])
        usage = {"input": total.input, "output": total.output, "cache_read": total.cache_read, "cache_write": total.cache_write}
    meta = SessionMeta(
        id=folder.name,
        project=folder.parent.name,
        project_root=readable_text(str(project_root)),
        cwd=readable_text(str(cwd)),
        command=[program],
        agent=native.agent,
        started_at=iso(started),
        name=earlier.name if earlier is not None else None,
        host=host_name(),
        user=user,
        ended_at=iso(ended),
        duration=round((ended - started).total_seconds(), 3),
        status=Status.FINISHED.value,
        cast=str(folder / CAST_FILE),
        redacted=redactor is not None,
        agent_session_id=native.session_id,
        agent_transcript=str(native.transcript),
        agent_transcript_bytes=size,
        agent_transcript_damage=dict(damage.to_json()) if damage is not None else None,
        exchange_count=len(exchanges),
        usage=usage,
        detail="conversation",
        git_start=(earlier.git_start if earlier is not None and earlier.git_start else git[0]),
        git_identity=(earlier.git_identity if earlier is not None and earlier.git_identity else git[1]),
        shellkeep_version=__version__,
        extra={
            **(earlier.extra if earlier is not None else {}),
            IMPORTED_FROM_AGENT: native.agent,
            "imported_at": (earlier.extra.get("imported_at") if earlier is not None else None) or iso(utc_now()),
            "imported_state": native.state,
            **({AFTER_BYTES: recording.agent_transcript_bytes, "continues": recording.id} if recording is not None else {}),
        },
    )
    if redactor is not None:
        meta = redact_meta(meta, redactor)
    return with_about(meta, adapter, native.agent_session(), exchanges, redactor.redact if redactor else None, ctx.vault)


@contextmanager
def _import_lock(paths: Paths, *, wait: bool) -> Iterator[bool]:
    """Hold the import lock of the data folder; yield whether it was had (always, with ``wait``)."""
    ensure_dir(paths.home)
    fd = os.open(paths.history_lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def shell_integration_installed(paths: Paths) -> bool:
    """Return whether ``shellkeep init SHELL --install`` wrote its snippet into the data folder."""
    return any(paths.shell_dir.glob("init.*"))


def auto_import_wanted(ctx: Context) -> bool:
    """Return whether ``history.auto_import`` asks for the daily import (``shell``: when the
    shell integration is installed; ``on``; ``off``)."""
    setting = ctx.config.history.auto_import
    return setting == "on" or (setting == "shell" and shell_integration_installed(ctx.paths))


def maybe_auto_import(ctx: Context, env: Mapping[str, str] | None = None, *, now: datetime | None = None) -> HistoryReport | None:
    """Run the automatic import of every agent's history when it is wanted and due; never raises.

    Due: ``Paths.history_stamp`` is missing or older than ``AUTO_IMPORT_EVERY``; it is touched
    before the import starts, so a run that fails is not retried within the day. Skipped
    (None) when not wanted, not due, or another import holds the lock.
    """
    try:
        if not auto_import_wanted(ctx):
            return None
        stamp = ctx.paths.history_stamp
        moment = now or utc_now()
        try:
            last = datetime.fromtimestamp(stamp.stat().st_mtime, moment.tzinfo)
            if moment - last < AUTO_IMPORT_EVERY:
                return None
        except FileNotFoundError:
            pass
        with _import_lock(ctx.paths, wait=False) as held:
            if not held:
                return None
            stamp.touch(mode=0o600)
            os.utime(stamp, (moment.timestamp(), moment.timestamp()))
            report = _import_all(ctx, HistoryRequest(HISTORY_AGENTS), dict(ctx.env if env is None else env))
        log.info("imported %d new and %d grown agent sessions", report.count("imported"), report.count("updated"))
        return report
    except Exception as exc:  # noqa: BLE001 - the upkeep goes on; the next day retries
        log.warning("the automatic import of the agents' histories failed: %s", exc)
        return None
