"""Own the audit log: an append-only, hash-chained record of every read of a recording.

``audit.jsonl`` holds one JSON object a line (keys sorted, no spaces): ``seq`` (1-based),
``time`` (ISO 8601 UTC), ``user``, ``host``, ``command`` (the shellkeep command that read),
``session`` (id, or a file path for a recording outside the store), ``project``, ``detail``
(what was read, e.g. ``format=html``), ``prev`` (the ``hash`` of the entry before, 64 zeros
for the first) and ``hash`` (SHA-256 of the entry's canonical JSON without ``hash``).
Editing or removing a line breaks the chain at the next line; removing lines from the end is
caught by ``audit.jsonl.head``, which holds the last ``seq`` and ``hash`` written.

Appends take an exclusive ``flock`` on the log, so concurrent readers chain correctly.
The chain detects changes made without recomputing it; it is not a signature.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shellkeep.errors import DataError
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import SessionMeta, host_name, iso, utc_now
from shellkeep.store.atomic import write_json_atomic
from shellkeep.logs import get_logger

__all__ = [
    "GENESIS", "AuditEntry", "VerifyResult", "pulled_from", "read_entries", "record", "record_file_read", "record_many", "record_read",
    "remote_detail", "verify",
]

log = get_logger(__name__)

GENESIS = "0" * 64
"""The ``prev`` of the first entry."""

_FIELDS = ("seq", "time", "user", "host", "command", "session", "project", "detail", "prev", "hash")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log (field names are the ``audit --json`` contract)."""

    seq: int
    time: str
    user: str
    host: str
    command: str
    session: str | None
    project: str | None
    detail: str | None
    prev: str
    hash: str


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """An intact log: ``entries`` lines, the last one's ``head`` hash (None when empty)."""

    entries: int
    head: str | None


def _head_path(paths: Paths) -> Path:
    return paths.audit_log.with_name(paths.audit_log.name + ".head")


def _canonical(obj: dict[str, object]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _digest(obj: dict[str, object]) -> str:
    return hashlib.sha256(_canonical({k: v for k, v in obj.items() if k != "hash"})).hexdigest()


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _last_line(fd: int) -> bytes:
    """Return the last non-empty line of the file open at ``fd`` (b"" when empty)."""
    size = os.lseek(fd, 0, os.SEEK_END)
    end = size
    block = 4096
    tail = b""
    while end > 0:
        start = max(0, end - block)
        chunk = os.pread(fd, end - start, start)
        tail = chunk + tail
        stripped = tail.rstrip(b"\n")
        nl = stripped.rfind(b"\n")
        if nl >= 0:
            return stripped[nl + 1 :]
        end = start
    return tail.rstrip(b"\n")


def record(
    paths: Paths,
    command: str,
    session: str | None,
    *,
    project: str | None = None,
    detail: str | None = None,
) -> AuditEntry:
    """Append one entry and return it; blocks while another process appends.

    Raises OSError when the log cannot be written.
    """
    return record_many(paths, command, [(session, project, detail)])[0]


def record_many(paths: Paths, command: str, reads: Sequence[tuple[str | None, str | None, str | None]]) -> list[AuditEntry]:
    """Append one entry per read, ``(session, project, detail)``, in order; return them.

    One command's reads (``search`` over many sessions) go in one locked append: one
    write and one fsync of the log, one of the head, however many entries. Each entry is
    chained as ``record`` chains it; nothing is written for no reads. Blocks while another
    process appends. Raises OSError when the log cannot be written.
    """
    import fcntl

    if not reads:
        return []
    ensure_dir(paths.audit_log.parent)
    fd = os.open(paths.audit_log, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        last = _last_line(fd)
        prev, seq = GENESIS, 1
        if last:
            try:
                obj = json.loads(last)
                prev, seq = str(obj["hash"]), int(obj["seq"]) + 1
            except (ValueError, KeyError, TypeError):
                prev = hashlib.sha256(last).hexdigest()
                seq = sum(1 for _ in open(paths.audit_log, "rb")) + 1
        at, user, host = iso(utc_now()), _user(), host_name()
        entries: list[dict[str, object]] = []
        for session, project, detail in reads:
            entry: dict[str, object] = {
                "seq": seq,
                "time": at,
                "user": user,
                "host": host,
                "command": command,
                "session": session,
                "project": project,
                "detail": detail,
                "prev": prev,
            }
            entry["hash"] = prev = _digest(entry)
            entries.append(entry)
            seq += 1
        size = os.fstat(fd).st_size
        # A log cut inside a line (a crash mid-write) must not glue that line to this entry.
        lead = b"\n" if size and os.pread(fd, 1, size - 1) != b"\n" else b""
        os.write(fd, lead + b"".join(_canonical(entry) + b"\n" for entry in entries))
        os.fsync(fd)
        write_json_atomic(_head_path(paths), {"seq": entries[-1]["seq"], "hash": entries[-1]["hash"]})
    finally:
        os.close(fd)
    return [AuditEntry(**entry) for entry in entries]  # type: ignore[arg-type]


def pulled_from(meta: SessionMeta) -> str | None:
    """Return ``pulled from HOST (MACHINE-ID)`` for a session pulled from another machine
    (its ``meta.json`` holds ``"remote"``, written by ``sync pull``), None for a local one."""
    remote = meta.extra.get("remote")
    if not isinstance(remote, dict) or not isinstance(remote.get("machine"), str):
        return None
    return f"pulled from {remote.get('host') or '?'} ({str(remote['machine'])[:12]})"


def remote_detail(meta: SessionMeta, detail: str | None) -> str | None:
    """Return ``detail`` with where a pulled session came from appended (unchanged for a local one)."""
    where = pulled_from(meta)
    if where is None:
        return detail
    return f"{detail}; {where}" if detail else where


def record_read(paths: Paths, command: str, meta: SessionMeta, detail: str | None = None) -> None:
    """Record that ``command`` read ``meta``'s recording; a failure is logged, never raised.

    A session pulled from another machine is recorded with ``pulled from HOST (ID)`` in its detail.
    """
    try:
        record(paths, command, meta.id, project=meta.project, detail=remote_detail(meta, detail))
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", paths.audit_log, exc.strerror or exc)


def record_file_read(paths: Paths, command: str, path: Path, detail: str | None = None) -> None:
    """Record that ``command`` read a recording outside the store (its absolute path);
    a failure is logged, never raised."""
    try:
        record(paths, command, str(path), detail=detail)
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", paths.audit_log, exc.strerror or exc)


def read_entries(paths: Paths) -> list[AuditEntry]:
    """Return the entries of the audit log in order; lines that are not entries are skipped
    with a warning (``verify`` reports them)."""
    try:
        raw = paths.audit_log.read_bytes()
    except FileNotFoundError:
        return []
    entries = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            entries.append(AuditEntry(**{k: obj.get(k) for k in _FIELDS}))
        except (ValueError, TypeError, AttributeError):
            log.warning("audit log line %d is not an entry; run 'shellkeep audit verify'", number)
    return entries


def verify(paths: Paths) -> VerifyResult:
    """Check the whole chain and the head; return the count of intact entries.

    Raises DataError naming the first line that was edited, inserted or follows a removed
    one, or saying how many entries were cut from the end.
    """
    path = paths.audit_log
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = b""
    prev, seq = GENESIS, 0
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict) or set(obj) != set(_FIELDS):
                raise ValueError("not an audit entry")
        except ValueError:
            raise DataError(f"audit log line {number} is not a valid entry: the log was edited; restore {path} from a backup") from None
        if obj["hash"] != _digest(obj):
            raise DataError(f"audit log line {number} was edited (its hash does not match its content); restore {path} from a backup")
        if obj["prev"] != prev or obj["seq"] != seq + 1:
            what = "the first line was removed" if number == 1 else "a line before it was removed or edited"
            raise DataError(f"audit log line {number} does not follow the line before ({what}); restore {path} from a backup")
        prev, seq = str(obj["hash"]), int(obj["seq"])
    head = _read_head(paths)
    if head is not None:
        head_seq, head_hash = head
        if head_seq > seq:
            raise DataError(
                f"audit log ends at entry {seq} but {head_seq} were written: entries were removed from its end; "
                f"restore {path} from a backup"
            )
        if head_seq == seq and head_hash != prev:
            raise DataError(f"audit log line {len(lines)} is not the last entry written; restore {path} from a backup")
    elif seq:
        raise DataError(f"{_head_path(paths).name} is missing, so removals from the end cannot be checked; restore it from a backup")
    return VerifyResult(seq, prev if seq else None)


def _read_head(paths: Paths) -> tuple[int, str] | None:
    try:
        obj = json.loads(_head_path(paths).read_text(encoding="utf-8"))
        return int(obj["seq"]), str(obj["hash"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        raise DataError(f"{_head_path(paths)} is damaged; restore it from a backup") from None
