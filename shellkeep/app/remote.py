"""Own the local copy of other machines' sessions: manifests, pulled folders, fetching on demand.

After ``shellkeep sync pull`` a session of machine M is the folder
``<data>/remotes/<M>/projects/<project>/<session-id>/`` holding ``meta.json`` (the pushed
metadata plus ``"remote": {"url", "machine", "host"}``) and ``manifest.json`` (as read from the
bucket). Its exchanges and screen text (``archive.screen_text``, kept sealed at rest when
encryption is on) are fetched by the pull; its recording and agent copies into that folder on first use
(``fetch_session_files``), each object checked against its sha256 and, when sealed, opened
with the user's key; the manifest's MAC is checked before any of it is trusted. The bucket
layout and the manifest format are described in docs/sync.md and SYNC_LAYOUT.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from shellkeep.errors import DataError, SessionNotFound, ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.audit import record_read
from shellkeep.store.bucket import Bucket, open_bucket
from shellkeep.store.paths import Paths, ensure_dir
from shellkeep.store.session import AGENT_FOLDER, EXCHANGES_FILE, META_FILE, PLAN_FILE, SCREEN_FILE, SessionMeta, read_meta, readable_text
from shellkeep.vault.access import Vault
from shellkeep.vault.objects import check_manifest_mac, is_sealed_object, open_object

log = get_logger(__name__)

MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1


def object_path(sha: str) -> str:
    """Return the bucket path of the object with sha256 ``sha`` (hex): ``objects/<aa>/<sha>``."""
    return f"objects/{sha[:2]}/{sha}"


def manifest_path(machine: str, session_id: str) -> str:
    """Return the bucket path of one session's manifest."""
    return f"machines/{machine}/sessions/{session_id}/{MANIFEST_FILE}"


def canonical(manifest: dict[str, object]) -> bytes:
    """Return the canonical JSON a manifest's MAC covers: sorted keys, no spaces, no ``mac``."""
    body = {k: v for k, v in manifest.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def open_blob(blob: bytes, vault: Vault, where: str, pushed_by: str | None = None) -> bytes:
    """Return the plaintext of an object read from the bucket (opened when sealed).

    With encryption on, a blob that is not sealed is refused (DataError): pushed by a
    machine with encryption off (``pushed_by``, its host, when known) or changed in the remote.
    """
    if is_sealed_object(blob):
        return open_object(blob, vault.key, where)
    if vault.encrypt:
        raise unsealed_error(where, pushed_by)
    return blob


def unsealed_error(where: str, host: str | None) -> DataError:
    """The refusal of plaintext read with encryption on: most often a machine that pushes
    without encryption (named when known), rarely a change made in the remote."""
    by = f"machine {host}" if host else "a machine"
    return DataError(
        f"{where} is not sealed: {by} pushed it without encryption (or it was changed in the remote); "
        "with encryption on, unsealed data is refused"
    )


def read_manifest(data: bytes, vault: Vault, where: str) -> dict[str, object]:
    """Parse and authenticate a manifest; return it with ``session`` as the plain meta object.

    Raises DataError for a malformed manifest, a wrong MAC, or (encryption on) a manifest
    without one; KeyUnavailable when its key is in no store.
    """
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        raise DataError(f"{where} is not JSON; it was changed in the remote; it is refused") from exc
    if not isinstance(manifest, dict) or manifest.get("version") != MANIFEST_VERSION or not isinstance(manifest.get("files"), dict):
        raise DataError(f"{where} is not a shellkeep manifest (version {MANIFEST_VERSION}); it is refused")
    if manifest.get("sealed"):
        mac, key_id = manifest.get("mac"), manifest.get("key_id")
        if not isinstance(mac, str) or not isinstance(key_id, str):
            raise DataError(f"{where} is sealed but carries no MAC; it was changed in the remote; it is refused")
        check_manifest_mac(canonical(manifest), mac, vault.key(key_id), where)
        sealed = manifest.get("session")
        if not isinstance(sealed, str):
            raise DataError(f"{where} has no sealed session metadata; it is refused")
        session = json.loads(open_object(base64.b64decode(sealed), vault.key, where))
        manifest = {**manifest, "session": session}
    elif vault.encrypt:
        pushed = manifest.get("machine")
        raise unsealed_error(where, str(pushed.get("host") or pushed.get("id")) if isinstance(pushed, dict) else None)
    if not isinstance(manifest.get("session"), dict):
        raise DataError(f"{where} has no session metadata; it is refused")
    return manifest


def remote_root(paths: Paths, machine: str) -> Path:
    """Return the folder of the sessions pulled from ``machine``."""
    return paths.remote_paths(machine).projects


def pulled_machines(paths: Paths) -> list[str]:
    """Return the ids of the machines whose sessions were pulled here, sorted."""
    try:
        return sorted(p.name for p in paths.remotes.iterdir() if p.is_dir())
    except FileNotFoundError:
        return []


def remote_sessions(paths: Paths, machine: str | None = None) -> list[SessionMeta]:
    """Return the pulled sessions (of ``machine``, or of every machine), newest first.

    A machine is matched by its id, an id prefix, or its host name. Unreadable folders are
    skipped. Raises UserInputError when ``machine`` matches no machine pulled here (the
    message lists the ones that were).
    """
    if machine == "":
        raise UserInputError("--machine needs a machine id (a prefix) or host name; 'shellkeep ls --remote' lists them")
    found: list[SessionMeta] = []
    seen: dict[str, str] = {}  # machine id -> host, of every pulled machine
    for meta in _pulled(paths):
        remote = remote_of(meta) or {}
        seen.setdefault(remote.get("machine", "?"), remote.get("host", ""))
        if machine is None or _machine_matches(meta, machine):
            found.append(meta)
    if machine is not None and not found:
        known = ", ".join(f"{host or '?'} ({mid[:12]})" for mid, host in sorted(seen.items(), key=lambda kv: kv[1]))
        raise UserInputError(
            f"no machine '{machine}' among the pulled sessions"
            + (f" (pulled: {known}); give one of those, or run" if known else " (none pulled yet); run")
            + " 'shellkeep sync pull --all-machines' to read the remote's"
        )
    found.sort(key=lambda m: (m.started_at, m.id), reverse=True)
    return found


def _pulled(paths: Paths) -> Iterator[SessionMeta]:
    """Yield the metadata of every pulled session, machine by machine; unreadable folders are skipped."""
    try:
        machines = sorted(p for p in paths.remotes.iterdir() if p.is_dir())
    except FileNotFoundError:
        return
    for folder in machines:
        for meta_file in sorted((folder / "projects").glob(f"*/*/{META_FILE}")):
            try:
                yield read_meta(meta_file.parent)
            except (OSError, DataError) as exc:
                log.warning("skipping %s: %s", meta_file.parent, exc)


def remote_of(meta: SessionMeta) -> dict[str, str] | None:
    """Return a pulled session's ``{"url", "machine", "host"}``, or None for a local session."""
    remote = meta.extra.get("remote")
    if isinstance(remote, dict) and all(isinstance(remote.get(k), str) for k in ("url", "machine")):
        return {k: str(v) for k, v in remote.items()}
    return None


def _machine_matches(meta: SessionMeta, machine: str) -> bool:
    remote = remote_of(meta) or {}
    return remote.get("machine", "").startswith(machine) or remote.get("host") == machine


def find_remote_session(paths: Paths, ref: str) -> SessionMeta | None:
    """Return the pulled session whose id, unique id prefix or name is ``ref``, or None."""
    sessions = remote_sessions(paths)
    for test in (
        lambda m: m.id == ref,
        lambda m: m.name in (ref, readable_text(ref)),
    ):
        hits = [m for m in sessions if test(m)]
        if hits:
            return hits[0]
    prefixed = [m for m in sessions if m.id.startswith(ref)]
    return prefixed[0] if len(prefixed) == 1 else None


def fetch_session_files(
    paths: Paths,
    vault: Vault,
    meta: SessionMeta,
    names: list[str] | None = None,
    *,
    bucket: Bucket | None = None,
    audit: bool = True,
    missing: list[str] | None = None,
) -> Path:
    """Fetch the files of a pulled session that are not in its folder yet; return the folder.

    names: the manifest's file names to fetch (None: all). Each part is checked against its
    sha256 and opened when sealed; a file is written atomically once whole. The read is
    recorded in the audit log (``sync fetch``) unless ``audit`` is False (the caller records
    it). A fetched recording has the session's text indexed again at the next
    ``search --remote``. Raises SessionNotFound for a local session, DataError for a
    changed object or manifest or an object missing from the bucket, ShellkeepError when
    the bucket cannot be read.

    missing: when given, a file with an object missing from the bucket is left out and a
    line naming it appended here instead of raised (``show`` shows what there is); a
    changed object is still refused.
    """
    remote = remote_of(meta)
    if remote is None:
        raise SessionNotFound(f"session {meta.id} was not pulled from a remote; it is a local session")
    folder = meta.folder
    where = f"the manifest of session {meta.id}"
    manifest = read_manifest((folder / MANIFEST_FILE).read_bytes(), vault, where)
    files = manifest["files"]
    assert isinstance(files, dict)
    wanted = [n for n in files if names is None or n in names]
    absent = [n for n in wanted if n != META_FILE and not (folder / n).exists()]
    if not absent:
        return folder
    bucket = bucket or open_bucket(remote["url"])
    fetched: list[str] = []
    for name in absent:
        entry = files[name]
        parts = entry.get("parts") if isinstance(entry, dict) else None
        if not isinstance(parts, list) or not safe_name(name):
            raise DataError(f"{where} lists '{name}' without parts; it is refused")
        pieces = []
        for sha in parts:
            try:
                blob = bucket.get(object_path(str(sha)))
            except FileNotFoundError as exc:
                gone = (
                    f"object {str(sha)[:12]} of session {meta.id} is missing from {remote['url']}; "
                    f"push it again from machine {remote.get('host') or remote['machine']} (shellkeep sync push --again)"
                )
                if missing is None:
                    raise DataError(gone) from exc
                missing.append(f"{name} of session {meta.id} is not here: {gone}")
                break
            if hashlib.sha256(blob).hexdigest() != sha:
                raise DataError(
                    f"object {str(sha)[:12]} of session {meta.id} ({name}) does not match its checksum: "
                    "it was changed in the remote; it is refused"
                )
            pieces.append(open_blob(blob, vault, f"object {str(sha)[:12]} of session {meta.id}", remote.get("host")))
        if len(pieces) < len(parts):
            continue  # an object is missing: left out, ``missing`` says which
        fetched.append(name)
        data = b"".join(pieces)
        target = folder / name
        ensure_dir(target.parent)
        if name.startswith(AGENT_FOLDER + "/") or name == SCREEN_FILE:
            vault.write_private(target, data)  # these travel as plaintext inside sealed objects
        else:
            write_bytes_atomic(target, data)  # the bytes as the pushing machine stored them
    if any(n not in (EXCHANGES_FILE, PLAN_FILE, SCREEN_FILE) and not n.startswith(AGENT_FOLDER + "/") for n in fetched):
        # Loaded here, once a recording was fetched: the index is not on the start-up path of
        # the commands that build a context (``shellkeep run``).
        from shellkeep.archive.index import forget_content

        try:
            forget_content(paths.remote_paths(remote["machine"]), [meta.id])
        except ShellkeepError as exc:
            log.warning("could not mark %s for indexing again: %s", meta.id, exc)
    if audit:
        record_read(paths, "sync fetch", meta, detail=remote["url"])
    return folder


def safe_name(name: str) -> bool:
    """Return whether a name read from a remote is a relative path with no ``..``, ``.`` or empty part."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(p not in ("", ".", "..") for p in parts) and os.sep == "/"
