"""Compress a finished session's recording with zstd, in place and atomically.

``session.cast`` keeps its name: readers tell a zstd frame (magic ``28 b5 2f fd``,
RFC 8878) from plain asciicast by its first bytes (``vault.recording.open_stream``), so
every command reads it transparently, and ``export --format cast`` writes plain asciicast.
An encrypted recording is decrypted, compressed and encrypted again (with the current key),
so the compression is not lost to ciphertext. The frames are zstd's seekable format
(``vault.seekable``): about 1 MiB each with a seek table, so the end of a plain (not sealed)
recording is read without the rest. ``zstandard`` is imported inside functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shellkeep.logs import get_logger
from shellkeep.store.atomic import FileChanged, file_identity, write_bytes_atomic
from shellkeep.store.session import SessionMeta, Status
from shellkeep.vault.access import Vault
from shellkeep.vault.crypto import is_encrypted, key_id_of_file, write_records_atomic
from shellkeep.vault.recording import ZSTD_MAGIC
from shellkeep.vault.seekable import compressed_frames

log = get_logger(__name__)

LEVEL = 9
"""zstd level: a real Claude Code recording shrinks 7.5x, a long agent TUI session 30x, at
about 120 MB/s on one core (bench/RESULTS-compress.md has the figures per level)."""


@dataclass(frozen=True, slots=True)
class CompressResult:
    """What ``compress_recording`` did: sizes in bytes before and after (equal when skipped)."""

    path: str
    before_bytes: int
    after_bytes: int
    compressed: bool
    reason: str = ""


def compress_recording(meta: SessionMeta, vault: Vault, *, level: int = LEVEL) -> CompressResult:
    """Compress ``meta``'s recording with zstd in place (same file name), atomically.

    Skipped (``compressed`` False, with a reason) for a running session, a missing or
    empty recording, one already compressed, or one another process rewrote meanwhile
    (``redact``, ``key rotate``: theirs is kept). The plain file is replaced only once the
    compressed copy is complete and synced. Raises OSError (disk full: the original stays),
    DataError for a damaged encrypted file, KeyUnavailable when its key is missing.
    """
    path = Path(meta.cast)
    if meta.status == Status.RUNNING.value:
        return CompressResult(str(path), 0, 0, False, "the session is still running")
    try:
        before = path.stat().st_size
    except FileNotFoundError:
        return CompressResult(str(path), 0, 0, False, "no recording")
    if before == 0:
        return CompressResult(str(path), 0, 0, False, "empty recording")
    encrypted = is_encrypted(path)
    with vault.open_plain(path) as head:
        if head.read(4) == ZSTD_MAGIC:
            return CompressResult(str(path), before, before, False, "already compressed")
    import zstandard

    compressor = zstandard.ZstdCompressor(level=level, write_checksum=True)
    before_id = file_identity(path)
    try:
        if encrypted:
            key = vault.key_for_rewrite(key_id_of_file(path) or "")
            with vault.open_plain(path) as src:
                write_records_atomic(path, compressed_frames(compressor, src), key, expect=before_id)
        else:
            with open(path, "rb") as src:
                write_bytes_atomic(path, compressed_frames(compressor, src), expect=before_id)
    except FileChanged:
        return CompressResult(str(path), before, before, False, "changed while being compressed")
    after = path.stat().st_size
    return CompressResult(str(path), before, after, True)


def compress_after_session(meta: SessionMeta, vault: Vault) -> None:
    """Compress a session's recording at its end; never raises (logs a warning).

    The hook ``run_session`` calls once the session's metadata and exchanges are stored.
    """
    try:
        result = compress_recording(meta, vault)
    except Exception as exc:  # noqa: BLE001 - the plain recording is kept as it is
        log.warning("could not compress the recording of %s (%s); it stays uncompressed", meta.id, exc)
        return
    if result.compressed:
        log.info("compressed %s: %d -> %d bytes", result.path, result.before_bytes, result.after_bytes)
