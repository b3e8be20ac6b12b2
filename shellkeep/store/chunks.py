"""Own the content-addressed chunk store: where chunks live, the references to them, sweeping.

Copies of agent transcripts are kept once per content: a transcript is cut into chunks
(``vault.copies`` cuts and seals them), each stored under its address in
``<home>/copies/<first two characters>/<address>``, and a session folder holds one
reference per copy, ``agent/<transcript name>.ref``: a JSON object naming the chunks in
order (``CopyRef``). Two sessions of one resume chain share every chunk of the part of the
transcript they have in common, so a 1 GB conversation resumed costs 1 GB, not 2.

A chunk no reference names is garbage: ``sweep`` removes it. Writers hold the store's
lock shared from their first chunk to their reference (``store_lock``), sweeping holds it
exclusive, so a chunk written (or found and reused) for a reference not yet written is
never swept.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_json_atomic
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import AGENT_FOLDER, META_FILE

__all__ = [
    "REF_SUFFIX",
    "CopyRef",
    "SweepResult",
    "chunk_path",
    "read_ref",
    "ref_files",
    "ref_name",
    "ref_path",
    "store_lock",
    "sweep",
    "write_ref",
]

log = get_logger(__name__)

REF_SUFFIX = ".ref"
"""A session's reference to a stored copy: ``agent/<transcript name>.ref``."""
REF_FORMAT = "shellkeep-copy"
REF_VERSION = 1
_LOCK_NAME = ".lock"


@dataclass(frozen=True, slots=True)
class CopyRef:
    """One stored copy: the transcript's file ``name``, its ``size`` in plaintext bytes, and
    its ``chunks`` in order as ``(address, plaintext bytes)``; ``sealed``: the chunks are
    encrypted (their addresses are keyed, see ``vault.copies``)."""

    name: str
    size: int
    chunks: tuple[tuple[str, int], ...]
    sealed: bool = False

    def to_json(self) -> dict[str, object]:
        """Return the reference file's JSON object."""
        return {
            "format": REF_FORMAT,
            "version": REF_VERSION,
            "name": self.name,
            "size": self.size,
            "sealed": self.sealed,
            "chunks": [[address, size] for address, size in self.chunks],
        }

    @classmethod
    def from_json(cls, obj: object, where: Path) -> CopyRef:
        """Build a reference from its JSON object; raises DataError naming ``where`` when malformed."""
        try:
            if not isinstance(obj, dict) or obj.get("format") != REF_FORMAT:
                raise ValueError("not a shellkeep copy reference")
            if obj.get("version") != REF_VERSION:
                raise ValueError(f"version {obj.get('version')!r} is unknown to this shellkeep")
            chunks = tuple((str(a), int(n)) for a, n in obj["chunks"])
            if any(not a.isalnum() or len(a) < 16 for a, _ in chunks):
                raise ValueError("a chunk address is malformed")
            return cls(str(obj["name"]), int(obj["size"]), chunks, bool(obj.get("sealed", False)))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where} is damaged ({exc}); run 'shellkeep resume' on the session to copy it again") from exc

    @property
    def addresses(self) -> set[str]:
        """Return the addresses of the chunks."""
        return {address for address, _ in self.chunks}


def chunk_path(paths: Paths, address: str) -> Path:
    """Return where the chunk ``address`` is kept (it may not exist)."""
    return paths.copies / address[:2] / address


def ref_path(folder: Path, name: str) -> Path:
    """Return the path of a session folder's reference to its copy of the transcript ``name``."""
    return folder / AGENT_FOLDER / f"{name}{REF_SUFFIX}"


def ref_files(folder: Path) -> list[Path]:
    """Return a session folder's copy references, sorted, those in subfolders too (``ref_name``)."""
    try:
        return sorted(p for p in (folder / AGENT_FOLDER).rglob(f"*{REF_SUFFIX}") if p.is_file())
    except OSError:
        return []


def ref_name(folder: Path, path: Path) -> str:
    """Return the name of the copy the reference ``path`` of ``folder`` stands for: its path
    under ``agent/`` without ``.ref`` (``<id>/subagents/agent-1.jsonl`` for a side folder's file)."""
    return path.relative_to(folder / AGENT_FOLDER).as_posix()[: -len(REF_SUFFIX)]


def read_ref(path: Path) -> CopyRef:
    """Read one reference; raises FileNotFoundError, DataError (malformed)."""
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path} is damaged ({exc}); run 'shellkeep resume' on the session to copy it again") from exc
    return CopyRef.from_json(obj, path)


def write_ref(path: Path, ref: CopyRef) -> None:
    """Write a reference atomically (0600); raises OSError."""
    ensure_dir(path.parent)
    write_json_atomic(path, ref.to_json())


@contextlib.contextmanager
def store_lock(paths: Paths, *, exclusive: bool, wait: bool = True) -> Iterator[bool]:
    """Hold the chunk store's lock (``flock`` on ``copies/.lock``); yield whether it is held.

    Shared for writers, exclusive for ``sweep``. With ``wait`` False, yields False at once
    when another process holds it the other way. Blocks otherwise. Raises OSError when the
    store cannot be made.
    """
    ensure_dir(paths.copies)
    fd = os.open(paths.copies / _LOCK_NAME, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


@dataclass(frozen=True, slots=True)
class SweepResult:
    """What ``sweep`` did: chunks ``removed`` and bytes ``freed``; ``skipped`` when the store
    was busy (a copy being written) and nothing was looked at."""

    removed: int = 0
    freed_bytes: int = 0
    skipped: bool = False


def referenced(paths: Paths) -> set[str]:
    """Return every chunk address a session's reference names (unreadable references are
    taken to name nothing, with a warning; their sessions keep nothing else either)."""
    found: set[str] = set()
    try:
        projects = [p for p in paths.projects.iterdir() if p.is_dir()]
    except FileNotFoundError:
        return found
    for project in projects:
        try:
            folders = [f for f in project.iterdir() if (f / META_FILE).is_file()]
        except OSError:
            continue
        for folder in folders:
            for path in ref_files(folder):
                try:
                    found |= read_ref(path).addresses
                except (OSError, DataError) as exc:
                    log.warning("a copy reference cannot be read: %s", exc)
    return found


def sweep(paths: Paths, *, wait: bool = True) -> SweepResult:
    """Remove every chunk no session's reference names; never one still referenced.

    wait: wait for copies being written to finish (else skip when the store is busy).
    Raises OSError only when the store's lock cannot be made; a chunk that cannot be
    removed is logged and left.
    """
    if not paths.copies.is_dir():
        return SweepResult()
    with store_lock(paths, exclusive=True, wait=wait) as held:
        if not held:
            return SweepResult(skipped=True)
        keep = referenced(paths)
        removed = freed = 0
        for shard in sorted(paths.copies.iterdir()):
            if not shard.is_dir():
                continue
            for chunk in shard.iterdir():
                if chunk.name in keep:
                    continue
                try:
                    size = chunk.stat().st_size
                    chunk.unlink()
                except OSError as exc:
                    log.warning("could not remove the unused chunk %s: %s", chunk, exc)
                    continue
                removed += 1
                freed += size
            with contextlib.suppress(OSError):
                shard.rmdir()  # only when empty
    return SweepResult(removed, freed)
