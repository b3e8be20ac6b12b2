"""``shellkeep sync push|pull|status``: copy finished sessions to object storage and back.

Bucket layout (``URL`` = ``sync.url`` or ``--remote``; every path below is under its prefix)::

    machines/<machine-id>/index.json                              the machine's sessions: id -> manifest sha256, bytes
    machines/<machine-id>/sessions/<session-id>/manifest.json     one per session
    objects/<aa>/<sha256>                                          immutable parts of files, content-addressed

A file is cut into parts of ``sync.part_mib`` MiB, each its own object named by the sha256
of its bytes as stored (after sealing). A push lists ``objects/`` once and sends only the
parts not there, so a push cut short resumes without sending again what arrived. What this
machine already pushed is kept in ``<data>/sync/<url hash>.json`` (each session's file sizes
and times): a push or status with nothing new makes no request per session. With
``encryption.encrypt`` on, every object, the machine index and each manifest's session
metadata are sealed (``vault.objects``) and manifests carry a MAC; the bucket then holds no
plaintext and no key. Beside a session's files a push sends ``screen.jsonl.zst``, made for it
(``archive.screen_compact``): the searchable text of what its screen showed, which a pull
fetches with the exchanges so that ``search --remote`` needs no recording. The local copy of
pulled sessions is ``app.remote``'s.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.app.context import Context
from shellkeep.app import remote
from shellkeep.archive.index import index_ended_session
from shellkeep.archive.screen_compact import screen_text
from shellkeep.app.remote import MANIFEST_FILE, MANIFEST_VERSION, canonical, manifest_path, object_path, open_blob, read_manifest
from shellkeep.errors import DataError, ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_bytes_atomic, write_json_atomic
from shellkeep.store.audit import record_many, remote_detail
from shellkeep.store.bucket import Bucket, open_bucket
from shellkeep.store.paths import Paths, ensure_dir
from shellkeep.store.session import (
    AGENT_FOLDER,
    CAST_FILE,
    CAST_FILES,
    EXCHANGES_FILE,
    PLAN_FILE,
    META_FILE,
    SCREEN_FILE,
    SessionMeta,
    Status,
    host_name,
    is_interrupted,
    iso,
    iter_session_folders,
    parse_iso,
    read_meta,
    session_lock,
    utc_now,
)
from shellkeep.vault.compress import compress_held
from shellkeep.vault.copies import copy_names, copy_ref, open_copy
from shellkeep.vault.objects import SEAL_OVERHEAD, is_sealed_object, manifest_mac, seal_object

if TYPE_CHECKING:
    from shellkeep.vault.crypto import Key

log = get_logger(__name__)

INDEX_FILE = "index.json"
_UPLOADS_IN_FLIGHT = 4
_STATE_SAVE_INTERVAL_S = 1.0
Progress = Callable[[str], None]


# -- this machine ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Machine:
    """This machine as the bucket knows it: a stable random ``id`` and its ``host`` name (display only)."""

    id: str
    host: str


def this_machine(paths: Paths) -> Machine:
    """Return this machine's identity, made (random uuid) and kept in ``machine.json`` on first use."""
    try:
        obj = json.loads(paths.machine_file.read_bytes())
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            return Machine(str(obj["id"]), str(obj.get("host") or host_name()))
    except FileNotFoundError:
        pass
    except ValueError:
        raise DataError(f"{paths.machine_file} is not JSON; restore it or delete it (this machine then pushes under a new id)")
    machine = Machine(uuid.uuid4().hex, host_name())
    ensure_dir(paths.home)
    write_json_atomic(paths.machine_file, {"id": machine.id, "host": machine.host})
    return machine


def remote_url(ctx: Context, override: str | None) -> str:
    """Return ``--remote`` when given, else ``sync.url``; raises UserInputError when neither is set
    or ``--remote`` is given empty (it never falls back to ``sync.url`` then)."""
    if override is not None and not override.strip():
        raise UserInputError("--remote is empty; give a storage URL (--remote s3://bucket/prefix) or leave it out to use sync.url")
    url = override or ctx.config.sync.url
    if not url:
        raise UserInputError("no remote is set; set sync.url (shellkeep config set sync.url s3://bucket/prefix) or pass --remote URL")
    return url


# -- what this machine pushed ---------------------------------------------------------


def _state_file(paths: Paths, url: str) -> Path:
    return paths.sync_state / (hashlib.sha256(url.encode("utf-8")).hexdigest()[:16] + ".json")


def _load_state(paths: Paths, url: str) -> dict[str, dict[str, object]]:
    try:
        obj = json.loads(_state_file(paths, url).read_bytes())
    except (FileNotFoundError, ValueError):
        return {}
    sessions = obj.get("sessions") if isinstance(obj, dict) else None
    return sessions if isinstance(sessions, dict) else {}


def _save_state(paths: Paths, url: str, sessions: dict[str, dict[str, object]]) -> None:
    ensure_dir(paths.sync_state)
    write_json_atomic(_state_file(paths, url), {"url": url, "sessions": sessions})


@dataclass(frozen=True, slots=True)
class _LocalFile:
    name: str  # the name in the manifest (and in a session folder)
    path: Path
    size: int
    mtime_ns: int
    is_copy: bool = False
    data: bytes | None = None  # made for the push, not a file here (``archive.screen_text``)

    @property
    def copy(self) -> tuple[Path, str]:
        """Return (session folder, copy name) of an agent copy (``agent/<name>``, the name may hold folders)."""
        parts = self.name.split("/")
        return self.path.parents[len(parts) - 1], "/".join(parts[1:])


def _local_files(folder: Path) -> list[_LocalFile]:
    found: list[_LocalFile] = []
    for name in (META_FILE, *CAST_FILES, EXCHANGES_FILE, PLAN_FILE):  # plan.json: the plan, sealed with encryption on
        try:
            st = os.stat(folder / name)
        except FileNotFoundError:
            continue
        found.append(_LocalFile(name, folder / name, st.st_size, st.st_mtime_ns))
    for name in copy_names(folder):
        for candidate in (folder / AGENT_FOLDER / f"{name}.ref", folder / AGENT_FOLDER / name):
            try:
                st = os.stat(candidate)
            except FileNotFoundError:
                continue
            found.append(_LocalFile(f"{AGENT_FOLDER}/{name}", candidate, st.st_size, st.st_mtime_ns, is_copy=True))
            break
    return found


def _screen_file(ctx: Context, meta: SessionMeta) -> list[_LocalFile]:
    """Return the searchable text of what ``meta``'s screen showed, as a file to push ([] when none)."""
    data = screen_text(ctx.paths, meta, ctx.vault)
    if data is None:
        return []
    return [_LocalFile(SCREEN_FILE, meta.folder / SCREEN_FILE, len(data), 0, data=data)]


def _with_screen_file(ctx: Context, item: _Pending) -> Iterator[_LocalFile]:
    """Yield ``item``'s files to push (``_kept``), then its screen text (made once the others
    are read; none for a session keeping less than its full detail)."""
    yield from _kept(item)
    if item.meta.detail == "full":
        yield from _screen_file(ctx, item.meta)


def _fingerprint(files: list[_LocalFile]) -> str:
    return ";".join(f"{f.name}:{f.size}:{f.mtime_ns}" for f in files)


def _is_pushable(meta: SessionMeta) -> bool:
    """Finished and interrupted sessions go; a running one (its files still written) never does."""
    return meta.status != Status.RUNNING.value


@dataclass(frozen=True, slots=True)
class _Pending:
    meta: SessionMeta
    files: list[_LocalFile]
    fingerprint: str

    @property
    def size_bytes(self) -> int:
        return sum(f.size for f in self.files)


def _pending(ctx: Context, state: dict[str, dict[str, object]]) -> tuple[list[_Pending], int, int, set[str]]:
    """Return (sessions to push, running sessions skipped, sessions unchanged, every local session id).

    A session whose files have the sizes and times recorded at its last push is not even
    read (a few ``stat`` calls each): a push or status with nothing new stays fast at 10,000
    sessions. Others are read, and recovered when their recorder is gone.
    """
    todo: list[_Pending] = []
    running = unchanged = 0
    local: set[str] = set()
    for folder in iter_session_folders(ctx.paths, None):
        local.add(folder.name)
        files = _local_files(folder)
        fp = _fingerprint(files)
        known = state.get(folder.name)
        if known is not None and known.get("fingerprint") == fp:
            unchanged += 1
            continue
        try:
            meta = read_meta(folder)
        except (OSError, DataError) as exc:
            log.warning("not pushing %s: %s", folder, exc)
            continue
        if is_interrupted(meta):
            meta = ctx.recover(meta)
            files = _local_files(folder)
            fp = _fingerprint(files)
        if not _is_pushable(meta):
            running += 1
            continue
        todo.append(_Pending(meta, files, fp))
    return todo, running, unchanged, local


def _relisted(item: _Pending) -> _Pending:
    """Return ``item`` with its files and metadata as they are now (call under the session's lock)."""
    folder = item.meta.folder
    files = _local_files(folder)
    fp = _fingerprint(files)
    if fp == item.fingerprint:
        return item
    return _Pending(read_meta(folder), files, fp)


def _compress_first(ctx: Context, meta: SessionMeta) -> None:
    """Compress a recording the upkeep will compress but has not yet (call under the session's lock).

    A push right after a session ends would otherwise send ``session.cast``, and the next
    push, once the upkeep renamed it ``session.cast.zst``, all of it again. With
    ``record.compress`` on, the recording is compressed here as the upkeep would (the upkeep
    then finds it done); one that cannot be is pushed as it is.
    """
    if not ctx.config.record.compress or meta.detail != "full" or not (meta.folder / CAST_FILE).exists():
        return
    try:
        compress_held(meta, ctx.vault)
    except (OSError, ShellkeepError) as exc:
        log.warning("could not compress the recording of %s before pushing it (%s); pushing it as it is", meta.id, exc)


def _kept(item: _Pending) -> list[_LocalFile]:
    """Return the files of ``item`` to push: not the recording of a session that keeps less
    than its full detail (``record.detail``), which its upkeep is about to remove."""
    if item.meta.detail == "full":
        return item.files
    return [f for f in item.files if f.name not in CAST_FILES]


# -- push -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PushResult:
    """What one push did. bytes: as stored in the bucket; parts_skipped: already there."""

    url: str
    machine: str
    sessions_pushed: int
    sessions_unchanged: int
    running_skipped: int
    parts_sent: int
    parts_skipped: int
    bytes_sent: int
    pruned: int
    sealed: bool
    errors: list[str] = field(default_factory=list)


def _parts(f: _LocalFile, ctx: Context, part_bytes: int) -> Iterator[bytes]:
    if f.is_copy or f.data is not None:
        if f.data is not None:
            data = f.data
        else:
            with open_copy(ctx.vault, *f.copy) as fh:
                data = fh.read()
        for at in range(0, max(len(data), 1), part_bytes):
            yield data[at : at + part_bytes]
        return
    with open(f.path, "rb") as fh:
        first = True
        while True:
            piece = fh.read(part_bytes)
            if not piece and not first:
                return
            first = False
            yield piece
            if len(piece) < part_bytes:
                return


def _bytes_to_send(f: _LocalFile, ctx: Context, part_bytes: int) -> int:
    """Return the bytes of the objects ``push`` makes of ``f`` (its parts, sealed when encryption
    is on), before skipping the parts the bucket holds already; manifests and the index not counted.

    A copy is sent as its plaintext: the size its reference records (the ``.ref`` file is
    tiny), or, for a whole-file copy from before the chunk store, the bytes read from it.
    """
    size = f.size
    if f.is_copy:
        folder, name = f.copy
        ref = copy_ref(folder, name)
        if ref is not None:
            size = ref.size
        else:
            with open_copy(ctx.vault, folder, name) as fh:
                size = sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))
    parts = max(1, -(-size // part_bytes))
    return size + (parts * SEAL_OVERHEAD if ctx.vault.encrypt else 0)


def push(
    ctx: Context, url: str, *, progress: Progress | None = None, on_plaintext: Callable[[], None] | None = None, again: bool = False
) -> PushResult:
    """Push this machine's finished and interrupted sessions that the remote lacks.

    again: push every session, the ones pushed before too (still sending only the parts the
    bucket's listing lacks): repairs a remote that lost objects.

    on_plaintext: called once, before anything is sent, when sessions are about to be sent
    with encryption off (never when there is nothing to push or the bucket cannot be listed). Blocks while uploading. Raises ShellkeepError when the bucket cannot be reached,
    KeyUnavailable when encryption is on and no key is at hand.
    """
    paths = ctx.paths
    machine = this_machine(paths)
    key = ctx.vault.writing_key()
    state = _load_state(paths, url)
    todo, running, unchanged, local = _pending(ctx, {} if again else state)
    bucket = open_bucket(url, create=True)
    part_bytes = ctx.config.sync.part_mib << 20
    sent = skipped = bytes_sent = pushed = 0
    errors: list[str] = []
    if todo:
        there = set(bucket.list("objects/"))  # one listing for the whole push
        if key is None and on_plaintext is not None:
            on_plaintext()  # once the bucket answered: a push that cannot reach it sends nothing
        # Uploads run on a few threads while the next part is read, sealed and hashed (the
        # hashing, sealing and obstore's requests release the GIL); a session's manifest goes
        # only once all its parts are stored.
        saved_at = time.monotonic()
        uploads = ThreadPoolExecutor(max_workers=_UPLOADS_IN_FLIGHT, thread_name_prefix="sync-put")
        try:
            for item in todo:
                in_flight: list[Future[None]] = []
                try:
                    # Under the session's rewrite lock: compression (which renames session.cast to
                    # session.cast.zst), redact and key rotate wait, so no file goes from under the
                    # read; its files are listed again under it.
                    lock = ExitStack()
                    lock.enter_context(session_lock(item.meta.folder))
                    _compress_first(ctx, item.meta)
                    item = _relisted(item)
                    files_entry: dict[str, object] = {}
                    for f in _with_screen_file(ctx, item):  # the recording's parts go while its text is made
                        shas: list[str] = []
                        for piece in _parts(f, ctx, part_bytes):
                            blob = seal_object(piece, key) if key is not None else piece
                            sha = hashlib.sha256(blob).hexdigest()
                            where = object_path(sha)
                            if where in there:
                                skipped += 1
                            else:
                                while len(in_flight) >= _UPLOADS_IN_FLIGHT:
                                    in_flight.pop(0).result()
                                in_flight.append(uploads.submit(bucket.put, where, blob))
                                there.add(where)
                                sent += 1
                                bytes_sent += len(blob)
                            shas.append(sha)
                        files_entry[f.name] = {"size": f.size if not f.is_copy else None, "parts": shas}
                    for future in in_flight:
                        future.result()
                    lock.close()
                    data = _manifest_bytes(machine, item.meta, files_entry, key)
                    bucket.put(manifest_path(machine.id, item.meta.id), data)
                except (OSError, DataError) as exc:
                    for future in in_flight:
                        future.cancel()
                    lock.close()
                    errors.append(f"{item.meta.id}: {exc}")
                    continue
                pushed += 1
                state[item.meta.id] = {
                    "fingerprint": item.fingerprint,
                    "manifest": hashlib.sha256(data).hexdigest(),
                    "bytes": item.size_bytes,
                    "started_at": item.meta.started_at,
                }
                if time.monotonic() - saved_at >= _STATE_SAVE_INTERVAL_S:  # not per session: O(n²) at 10,000
                    _save_state(paths, url, state)  # a push cut short keeps what it finished
                    saved_at = time.monotonic()
                if progress is not None:
                    progress(f"pushed {item.meta.id}")
        finally:
            uploads.shutdown(wait=True, cancel_futures=True)
            if pushed:
                _save_state(paths, url, state)
    pruned = 0
    if ctx.config.sync.prune:
        for session_id in [s for s in state if s not in local]:
            bucket.delete(manifest_path(machine.id, session_id))
            del state[session_id]
            pruned += 1
        if pruned:
            _save_state(paths, url, state)
    if pushed or pruned:
        _put_index(bucket, machine, state, key)
    return PushResult(
        url, machine.id, pushed, unchanged, running, sent, skipped, bytes_sent, pruned, key is not None, errors
    )


def _manifest_bytes(machine: Machine, meta: SessionMeta, files: dict[str, object], key: Key | None) -> bytes:
    session: object = meta.to_json()
    if key is not None:
        session = base64.b64encode(seal_object(json.dumps(session, ensure_ascii=False).encode("utf-8"), key)).decode("ascii")
    manifest: dict[str, object] = {
        "version": MANIFEST_VERSION,
        "machine": {"id": machine.id, "host": machine.host},
        "session_id": meta.id,
        "session": session,
        "files": files,
        "pushed_at": iso(utc_now()),
        "sealed": key is not None,
        "key_id": key.id if key is not None else None,
    }
    if key is not None:
        manifest["mac"] = manifest_mac(canonical(manifest), key)
    return json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")


def _put_index(bucket: Bucket, machine: Machine, state: dict[str, dict[str, object]], key: Key | None) -> None:
    index = {
        "version": 1,
        "machine": {"id": machine.id, "host": machine.host},
        "sessions": {
            sid: {"manifest": s.get("manifest"), "bytes": s.get("bytes"), "started_at": s.get("started_at")}
            for sid, s in state.items()
        },
    }
    data = json.dumps(index, ensure_ascii=False).encode("utf-8")
    bucket.put(f"machines/{machine.id}/{INDEX_FILE}", seal_object(data, key) if key is not None else data)


# -- pull -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteMachine:
    """One machine's index in the bucket: its id, host and sessions (id -> manifest sha, bytes)."""

    id: str
    host: str
    sessions: dict[str, dict[str, object]]


def _entry_bytes(entry: dict[str, object]) -> int:
    """Return the ``bytes`` of a machine index's session entry, 0 when absent; as ``int()`` raises."""
    value = entry.get("bytes") or 0
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"a session's bytes in a machine index is a {type(value).__name__}, not a number")
    return int(value)


def _read_index(bucket: Bucket, machine_id: str, ctx: Context, wanted: str | None = None) -> RemoteMachine | None:
    """Return a machine's index, or None when it has none or (``wanted`` given: a machine id
    prefix or host) it is another machine's that cannot be opened here (never an error then)."""
    where = f"the index of machine {machine_id}"
    try:
        blob = bucket.get(f"machines/{machine_id}/{INDEX_FILE}")
    except FileNotFoundError:
        return None
    if ctx.vault.encrypt and not is_sealed_object(blob):
        host = _host_in_plaintext(blob)
        if wanted is not None and not machine_id.startswith(wanted) and host != wanted:
            return None
        raise remote.unsealed_error(where, host or machine_id)
    try:
        obj = json.loads(open_blob(blob, ctx.vault, where))
    except ValueError as exc:
        raise DataError(f"{where} is not JSON; it was changed in the remote; it is refused") from exc
    machine = obj.get("machine") if isinstance(obj, dict) else None
    sessions = obj.get("sessions") if isinstance(obj, dict) else None
    if not isinstance(machine, dict) or not isinstance(sessions, dict):
        raise DataError(f"{where} is not a shellkeep index; it is refused")
    return RemoteMachine(machine_id, str(machine.get("host") or ""), sessions)


def _host_in_plaintext(blob: bytes) -> str | None:
    """Return the host an unsealed index names (display only: nothing else of it is trusted)."""
    try:
        host = json.loads(blob)["machine"]["host"]
    except (ValueError, KeyError, TypeError):
        return None
    return host if isinstance(host, str) and host else None


def _machines(
    bucket: Bucket, ctx: Context, me: str, machine: str | None, all_machines: bool, refused: list[str] | None = None
) -> list[RemoteMachine]:
    """Return the machines' indexes to read. refused: when given and no ``machine`` was asked
    for, a machine whose index is refused (unsealed with encryption on, changed) is left out
    and its one-line reason appended there instead of raised: one machine pushing without
    encryption does not stop the others being read."""
    if machine == "":
        raise UserInputError("--machine needs a machine id (a prefix) or host name; 'shellkeep sync status' lists them")
    found: list[RemoteMachine] = []
    for machine_id in bucket.list_folders("machines/"):
        if machine is None and not all_machines and machine_id == me:
            continue
        try:
            index = _read_index(bucket, machine_id, ctx, machine)
        except DataError as exc:
            if machine is not None or refused is None:
                raise
            refused.append(f"{exc}; its sessions are left out")
            continue
        if index is None:
            continue
        if machine is not None and not (machine_id.startswith(machine) or index.host == machine):
            continue
        found.append(index)
    if machine is not None and not found:
        raise UserInputError(f"no machine '{machine}' in the remote; run 'shellkeep sync status' to list them")
    if machine is not None and not all_machines and {m.id for m in found} == {me}:
        raise UserInputError(
            f"'{machine}' is this machine: its sessions are here already; name another machine "
            "('shellkeep sync status' lists them), or add --all-machines to read this one's pushed copies"
        )
    return found


def _pulled_file(paths: Paths, machine_id: str) -> Path:
    return paths.remotes / machine_id / "pulled.json"


def _load_pulled(paths: Paths, machine_id: str) -> dict[str, str]:
    try:
        obj = json.loads(_pulled_file(paths, machine_id).read_bytes())
    except (FileNotFoundError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}


@dataclass(frozen=True, slots=True)
class PullResult:
    """What one pull did: manifests read, per machine host; recordings are fetched on use."""

    url: str
    machines: list[str]
    sessions_pulled: int
    sessions_known: int
    refused: list[str] = field(default_factory=list)  # machines left out, a line each (``_machines``)


def pull(ctx: Context, url: str, *, machine: str | None = None, all_machines: bool = False) -> PullResult:
    """Read the manifests of other machines' sessions (or ``machine``'s; every one with
    ``all_machines``, this one's too) into ``remotes/``, with their exchanges and screen text
    (small: what ``search --remote`` finds); fetch no recording. The exchanges read are audited
    (``sync pull``, one entry per session, in one append).

    Raises DataError for a changed manifest or index, UserInputError for an unknown machine.
    """
    paths = ctx.paths
    me = this_machine(paths)
    bucket = open_bucket(url)
    pulled_count = known = 0
    hosts: list[str] = []
    reads: list[tuple[str | None, str | None, str | None]] = []
    refused: list[str] = []
    for index in _machines(bucket, ctx, me.id, machine, all_machines, refused):
        hosts.append(index.host or index.id)
        pulled = _load_pulled(paths, index.id)
        searched = paths.remote_paths(index.id)  # the machine's own index (app.remote_search)
        for session_id, entry in sorted(index.sessions.items()):
            sha = entry.get("manifest") if isinstance(entry, dict) else None
            if pulled.get(session_id) == sha:
                known += 1
                continue
            where = f"the manifest of session {session_id} of machine {index.host or index.id}"
            try:
                data = bucket.get(manifest_path(index.id, session_id))
            except FileNotFoundError as exc:
                raise DataError(f"{where} is missing from {url}; push it again from machine {index.host or index.id}") from exc
            if hashlib.sha256(data).hexdigest() != sha:
                raise DataError(f"{where} does not match the machine's index: it was changed in the remote; it is refused")
            manifest = read_manifest(data, ctx.vault, where)
            session = manifest["session"]
            assert isinstance(session, dict)
            project = str(session.get("project") or "unknown")
            if not remote.safe_name(project) or "/" in project or not remote.safe_name(session_id):
                raise DataError(f"{where} names an unsafe folder; it is refused")
            folder = ensure_dir(remote.remote_root(paths, index.id) / project / session_id)
            _drop_changed_files(folder, manifest)
            write_bytes_atomic(folder / MANIFEST_FILE, data)
            meta = {**session, "remote": {"url": url, "machine": index.id, "host": index.host}}
            write_json_atomic(folder / META_FILE, meta)
            pulled[session_id] = str(sha)
            pulled_count += 1
            files = manifest["files"]
            if isinstance(files, dict) and (EXCHANGES_FILE in files or SCREEN_FILE in files):
                # The exchanges (and the sealed plan) and the screen's text are small and what
                # ``search --remote``, ``show`` and the picker read: fetched now; recordings wait
                # until they are replayed.
                fetched = read_meta(folder)
                gone: list[str] = []  # an object missing from the bucket: the session is pulled without that file
                remote.fetch_session_files(
                    paths, ctx.vault, fetched, [EXCHANGES_FILE, PLAN_FILE, SCREEN_FILE], bucket=bucket, audit=False, missing=gone
                )
                for line in gone:
                    log.warning("%s", line)
                reads.append((fetched.id, fetched.project, remote_detail(fetched, f"exchanges from {url}")))
            if searched.index.exists():  # else it is built whole by the first search --remote
                # A session pulled again changed files inside its folder, which the index's scan
                # (by project folder) does not see: indexed now. Never raises.
                index_ended_session(searched, read_meta(folder), vault=ctx.vault)
        write_json_atomic(_pulled_file(paths, index.id), pulled)
    try:  # one entry per session whose exchanges were read, in one append
        record_many(paths, "sync pull", reads)
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", paths.audit_log, exc.strerror or exc)
    return PullResult(url, hosts, pulled_count, known, refused)


def _drop_changed_files(folder: Path, manifest: dict[str, object]) -> None:
    """Remove the files fetched earlier into ``folder`` whose parts the new ``manifest`` changed
    (the session was pushed again): they are fetched again, as the new manifest says, on use."""
    try:
        old = json.loads((folder / MANIFEST_FILE).read_bytes()).get("files", {})
    except (FileNotFoundError, ValueError, AttributeError):
        return
    new = manifest.get("files")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return
    for name, entry in old.items():
        if name == META_FILE or not remote.safe_name(str(name)) or new.get(name) == entry:
            continue
        try:
            (folder / str(name)).unlink()
        except FileNotFoundError:
            pass


# -- status ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MachineStatus:
    """One other machine in the remote: sessions not pulled here yet, and their bytes."""

    machine: str
    host: str
    sessions: int
    to_pull: int
    to_pull_bytes: int


@dataclass(frozen=True, slots=True)
class SyncStatus:
    """What a push would send and what a pull would read.

    to_push_bytes: the bytes of the objects a push would make of those sessions (the same
    count as ``PushResult.bytes_sent`` on a bucket that holds none of them yet); the
    manifests (about 1 KiB each) and the machine index are not counted, nor parts the
    bucket already holds subtracted. A recording push compresses first (``_compress_first``)
    is counted at its size now, more than push then sends.
    """

    url: str
    machine: str
    to_push: int
    to_push_bytes: int
    running_skipped: int
    pushed: int
    machines: list[MachineStatus]
    refused: list[str] = field(default_factory=list)  # machines left out, a line each (``_machines``)


def status(ctx: Context, url: str) -> SyncStatus:
    """Compare this machine with the remote: one listing of machines and one read per machine index."""
    paths = ctx.paths
    me = this_machine(paths)
    state = _load_state(paths, url)
    todo, running, _, _ = _pending(ctx, state)
    bucket = open_bucket(url)
    machines: list[MachineStatus] = []
    refused: list[str] = []
    for index in _machines(bucket, ctx, me.id, None, False, refused):
        pulled = _load_pulled(paths, index.id)
        new = {sid: e for sid, e in index.sessions.items() if isinstance(e, dict) and pulled.get(sid) != e.get("manifest")}
        machines.append(
            MachineStatus(index.id, index.host, len(index.sessions), len(new), sum(_entry_bytes(e) for e in new.values()))
        )
    part_bytes = ctx.config.sync.part_mib << 20
    to_send = sum(_bytes_to_send(f, ctx, part_bytes) for p in todo for f in _with_screen_file(ctx, p))
    return SyncStatus(url, me.id, len(todo), to_send, running, len(state), machines, refused)


# -- remote retention -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RemoteGcResult:
    """What ``gc --remote`` removed: this machine's sessions past ``sync.max_age_days``, and objects no manifest names."""

    url: str
    sessions_removed: int
    objects_removed: int
    dry_run: bool


def gc_remote(ctx: Context, url: str, *, dry_run: bool = False) -> RemoteGcResult:
    """Apply ``sync.max_age_days`` to this machine's sessions in the remote, then sweep objects no manifest names.

    Local sessions are never touched. Hazard: the parts of a push under way on another
    machine are named by no manifest until it ends; run this when no push is running. Raises UserInputError when ``sync.max_age_days`` is 0.
    """
    days = ctx.config.sync.max_age_days
    if days <= 0:
        raise UserInputError("sync.max_age_days is 0 (keep forever); set it, e.g. shellkeep config set sync.max_age_days 90")
    paths = ctx.paths
    me = this_machine(paths)
    bucket = open_bucket(url)
    key = ctx.vault.writing_key()
    state = _load_state(paths, url)
    cutoff = utc_now() - timedelta(days=days)
    old = [sid for sid, s in state.items() if parse_iso(str(s.get("started_at"))) < cutoff]
    if not dry_run:
        for sid in old:
            bucket.delete(manifest_path(me.id, sid))
            del state[sid]
        if old:
            _save_state(paths, url, state)
            _put_index(bucket, me, state, key)
    listed = bucket.list("")
    referenced: set[str] = set()
    for path in listed:
        if path.startswith("machines/") and path.endswith("/" + MANIFEST_FILE):
            if dry_run and any(path == manifest_path(me.id, sid) for sid in old):
                continue
            try:
                files = json.loads(bucket.get(path)).get("files", {})
            except (ValueError, FileNotFoundError, AttributeError):
                continue
            for entry in files.values():
                referenced.update(object_path(str(s)) for s in entry.get("parts", []))
    unreferenced = [p for p in listed if p.startswith("objects/") and p not in referenced]
    if not dry_run:
        for path in unreferenced:
            bucket.delete(path)
    return RemoteGcResult(url, len(old), len(unreferenced), dry_run)


# -- the local copy of remote sessions (the API other commands use) ---------------------


def remote_sessions(ctx: Context, machine: str | None = None) -> list[SessionMeta]:
    """Return the pulled sessions of ``machine`` (id prefix or host; None: every machine), newest first."""
    return remote.remote_sessions(ctx.paths, machine)


def fetch_session_files(ctx: Context, meta: SessionMeta, names: list[str] | None = None) -> Path:
    """Fetch what is missing of a pulled session (``names``: manifest file names; None: all); return its folder."""
    return remote.fetch_session_files(ctx.paths, ctx.vault, meta, names)
