"""Compress a finished session's recording with zstd into ``session.cast.zst``, atomically.

A compressed recording at rest is named ``session.cast.zst``, so no tool takes it for plain
asciicast; every plain ``session.cast`` is asciicast v2 that ``asciinema play`` plays. Readers
still tell a zstd frame (magic ``28 b5 2f fd``, RFC 8878) by its first bytes
(``vault.recording.open_stream``), so every command reads either, and ``export --format cast``
writes plain asciicast. The steps, each leaving a readable session when cut by a crash: write
``session.cast.zst`` (temporary file, fsync, rename), point ``meta.json``'s ``cast`` at it
(atomic), remove ``session.cast``. ``settle_recording`` finishes or undoes a cut run, and
renames a folder an earlier version compressed in place (``session.cast`` holding zstd).
An encrypted recording is decrypted, compressed and encrypted again (with the current key),
so the compression is not lost to ciphertext; a sealed recording that is not compressed stays
``session.cast``. The frames are zstd's seekable format (``vault.seekable``): about 1 MiB
each with a seek table, so the end of a plain (not sealed) recording is read without the
rest. ``zstandard`` is imported inside functions.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

from shellkeep.logs import get_logger
from shellkeep.store.atomic import file_identity, write_bytes_atomic
from shellkeep.store.session import (
    CAST_FILE,
    COMPRESSED_CAST_FILE,
    META_FILE,
    SessionMeta,
    Status,
    read_meta,
    recording_path,
    session_lock,
    write_meta,
)
from shellkeep.vault.access import Vault
from shellkeep.vault.crypto import is_encrypted, key_id_of_file, write_records_atomic
from shellkeep.vault.recording import ZSTD_MAGIC, is_compressed
from shellkeep.vault.seekable import compressed_frames

log = get_logger(__name__)

LEVEL = 9
"""zstd level: a real Claude Code recording shrinks 7.5x, a long agent TUI session 30x, at
about 120 MB/s on one core (bench/RESULTS-compress.md has the figures per level)."""


@dataclass(frozen=True, slots=True)
class CompressResult:
    """What ``compress_recording`` did: sizes in bytes before and after (equal when skipped).

    path: the recording afterwards (``session.cast.zst`` once compressed); meta: the
    session's metadata as stored afterwards (its ``cast`` names that path).
    """

    path: str
    before_bytes: int
    after_bytes: int
    compressed: bool
    reason: str = ""
    meta: SessionMeta | None = None


def compress_recording(meta: SessionMeta, vault: Vault, *, level: int = LEVEL) -> CompressResult:
    """Compress ``meta``'s recording with zstd into ``session.cast.zst`` (see the module doc).

    Holds the session's lock (``store.session.session_lock``) throughout, after settling
    what a cut earlier run left (``settle_recording``). Skipped (``compressed`` False, with
    a reason) for a running session, a missing or empty recording, one already compressed,
    or one another process rewrote meanwhile (theirs is kept). ``session.cast`` is removed
    only once the compressed copy is complete and synced and ``meta.json`` names it.
    Raises OSError (disk full: the original stays), DataError for a damaged encrypted file,
    KeyUnavailable when its key is missing.
    """
    if meta.status == Status.RUNNING.value:
        return CompressResult(meta.cast, 0, 0, False, "the session is still running", meta)
    with session_lock(meta.folder):
        meta = settle_recording(meta, vault)
        return _compress_locked(meta, vault, level)


def compress_held(meta: SessionMeta, vault: Vault, *, level: int = LEVEL) -> CompressResult:
    """Do what ``compress_recording`` does, for a caller that holds the session's lock already.

    ``sync push`` compresses a session the upkeep has not reached yet, under the lock it reads
    the files with, so that it pushes the recording as it will stay. Raises as ``compress_recording``.
    """
    return _compress_locked(settle_recording(meta, vault), vault, level)


def _compress_locked(meta: SessionMeta, vault: Vault, level: int) -> CompressResult:
    path = Path(meta.cast)
    if meta.status == Status.RUNNING.value:  # as meta.json says now
        return CompressResult(str(path), 0, 0, False, "the session is still running", meta)
    try:
        before = path.stat().st_size
    except FileNotFoundError:
        return CompressResult(str(path), 0, 0, False, "no recording", meta)
    if before == 0:
        return CompressResult(str(path), 0, 0, False, "empty recording", meta)
    if path.name == COMPRESSED_CAST_FILE:
        return CompressResult(str(path), before, before, False, "already compressed", meta)
    encrypted = is_encrypted(path)
    with vault.open_plain(path) as head:
        if head.read(4) == ZSTD_MAGIC:  # compressed in place by an earlier version, not renamed
            return CompressResult(str(path), before, before, False, "already compressed", meta)
    import zstandard

    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
    target = path.with_name(COMPRESSED_CAST_FILE)
    before_id = file_identity(path)
    if encrypted:
        key = vault.key_for_rewrite(key_id_of_file(path) or "")
        with vault.open_plain(path) as src:
            write_records_atomic(target, compressed_frames(compressor, src), key)
    else:
        with open(path, "rb") as src:
            write_bytes_atomic(target, compressed_frames(compressor, src))
    if file_identity(path) != before_id:  # rewritten by something that does not take the lock
        target.unlink(missing_ok=True)
        return CompressResult(str(path), before, before, False, "changed while being compressed", meta)
    meta = _adopt(path, target)
    return CompressResult(str(target), before, target.stat().st_size, True, meta=meta)


def _adopt(old: Path, new: Path) -> SessionMeta:
    """Point ``meta.json`` at ``new`` (complete and synced), then remove ``old``; return the
    metadata stored. meta.json is read again first, so what others wrote to it is kept."""
    folder = new.parent
    _sync_folder(folder)  # the new name is on disk before meta.json names it
    stored = read_meta(folder)
    stored = dataclasses.replace(stored, cast=str(new))
    write_meta(stored)
    _sync_folder(folder)
    old.unlink(missing_ok=True)
    _sync_folder(folder)
    return stored


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def settle_recording(meta: SessionMeta, vault: Vault) -> SessionMeta:
    """Leave one recording in ``meta``'s folder, named for what it holds; return the metadata.

    Call with the session's lock held (``compress_recording`` does; ``settle_session``
    takes it). What a cut compression left: both ``session.cast`` and ``session.cast.zst``;
    the one ``meta.json`` names is kept, the other removed (before meta.json named the
    ``.zst`` it may be older than ``session.cast``; after, ``session.cast`` is a copy of what
    it holds). A folder an earlier version compressed in place (``session.cast`` holding
    zstd, sealed or not) is renamed: ``session.cast.zst`` linked, meta.json pointed at it,
    ``session.cast`` removed. A meta.json naming a file that is gone (written from metadata
    read before a rename) is made to name the one there is. A running session, or a sealed
    one whose key is missing, is left as it is. ``meta`` gives the folder; meta.json is read
    again. Raises OSError when a file cannot be removed or meta.json written, DataError when
    meta.json is unreadable.
    """
    folder = meta.folder
    # What meta.json names now, where that exists (SessionMeta.from_json): ``meta`` may have
    # been read before another run renamed the recording.
    meta = read_meta(folder)
    if meta.status == Status.RUNNING.value:
        return meta
    plain, packed = folder / CAST_FILE, folder / COMPRESSED_CAST_FILE
    named = Path(meta.cast).name
    if plain.exists() and packed.exists():
        (plain if named == COMPRESSED_CAST_FILE else packed).unlink()
        _sync_folder(folder)
        log.info("settled the recording of %s: kept %s", meta.id, named)
        return dataclasses.replace(meta, cast=str(recording_path(folder, named)))
    if plain.exists() and is_compressed(plain, vault):
        try:
            os.link(plain, packed)
        except OSError as exc:  # a file system without hard links: it stays readable as it is
            log.info("could not rename the compressed recording of %s (%s)", meta.id, exc)
            return meta
        meta = _adopt(plain, packed)
        log.info("renamed the compressed recording of %s to %s", meta.id, COMPRESSED_CAST_FILE)
    elif Path(meta.cast).exists() and _name_in_meta_json(folder) != named:
        write_meta(meta)  # written from metadata read before the rename: name the file there is
    return meta


def _name_in_meta_json(folder: Path) -> str:
    """Return the file name ``meta.json``'s ``cast`` holds as written ("" when it holds none)."""
    try:
        cast = json.loads((folder / META_FILE).read_text(encoding="utf-8")).get("cast")
    except (OSError, ValueError, AttributeError):
        return ""
    return Path(cast).name if isinstance(cast, str) else ""


def settle_session(meta: SessionMeta, vault: Vault) -> SessionMeta:
    """Run ``settle_recording`` under the session's lock; never raises (logs a warning)."""
    if meta.status == Status.RUNNING.value:
        return meta
    try:
        with session_lock(meta.folder):
            return settle_recording(meta, vault)
    except Exception as exc:  # noqa: BLE001 - upkeep: the recording reads as it is
        log.warning("could not settle the recording of %s: %s", meta.id, exc)
        return meta


def compress_after_session(meta: SessionMeta, vault: Vault) -> SessionMeta:
    """Compress a session's recording at its end; never raises (logs a warning).

    The hook ``run_session`` calls once the session's metadata and exchanges are stored.
    Returns the metadata as stored afterwards (``cast`` renamed when compressed).
    """
    try:
        result = compress_recording(meta, vault)
    except Exception as exc:  # noqa: BLE001 - the plain recording is kept as it is
        log.warning("could not compress the recording of %s (%s); it stays uncompressed", meta.id, exc)
        return meta
    if result.compressed:
        log.info("compressed %s: %d -> %d bytes", result.path, result.before_bytes, result.after_bytes)
    return result.meta or meta
