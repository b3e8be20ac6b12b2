"""Open a stored recording, whatever its container: plain, zstd-compressed, sealed, or both.

This is the one place a recording file is opened for reading: it undoes the sealing
(``vault.crypto``, shellkeep's encrypted-record format) and the compression (zstd, RFC 8878,
recognised by its magic number) and hands ``asciicast.reader`` a stream of plain asciicast
bytes. Audited reads (``app.reads``) call it too.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, TYPE_CHECKING

from shellkeep.asciicast.reader import Cast, read_cast
from shellkeep.errors import DataError, ShellkeepError
from shellkeep.vault.crypto import MAGIC, open_decrypting, open_plain

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
"""The first four bytes of a zstd frame (RFC 8878, section 3.1.1)."""


def is_compressed(path: Path, vault: Vault | None = None) -> bool:
    """Return whether the plaintext of ``path`` starts with a zstd frame.

    A sealed file's first record is decrypted with ``vault``'s keys; False when the file
    is unreadable or its key cannot be found.
    """
    try:
        with open_plain(path, vault.key if vault is not None else None) as fh:
            return fh.read(4) == ZSTD_MAGIC
    except (OSError, ValueError, ShellkeepError):
        return False


def open_stream(path: Path, vault: Vault | None = None) -> IO[bytes]:
    """Open a recording for binary reading, decrypting and decompressing zstd transparently.

    A sealed file is decrypted with its key from ``vault`` (None: no key is available); a
    cut last record ends the stream. What it holds, or the plain file, is then
    decompressed when it is zstd. The caller always reads plain asciicast bytes.
    Raises FileNotFoundError; DataError when an encrypted record is damaged (also while
    reading); ``KeyUnavailable`` (exit 1) when the file's key cannot be found.
    """
    fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = fh.read(len(MAGIC))
    fh.seek(0)
    if magic == MAGIC:
        fh = open_decrypting(fh, str(path), vault.key if vault is not None else None)
        try:
            magic = fh.peek(4)[:4]
        except BaseException:
            fh.close()
            raise
    if magic[:4] != ZSTD_MAGIC:
        return fh
    try:
        import zstandard
    except ImportError as exc:  # pragma: no cover - zstandard is a dependency
        fh.close()
        raise DataError(f"{path} is zstd-compressed and zstandard is not installed; pip install zstandard") from exc
    return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(fh, closefd=True))


def open_recording(path: Path, vault: Vault | None = None) -> Cast:
    """Open a recording file of any asciicast version and container and parse its header.

    vault: the keys for a sealed file (None: only plain and zstd files can be read).
    Raises DataError when the file is empty, not asciicast, or of an unknown version;
    FileNotFoundError when it does not exist; KeyUnavailable as ``open_stream``.
    """
    return read_cast(lambda: open_stream(path, vault), str(path))


def plain_file(path: Path) -> Path | None:
    """Return ``path`` when it holds plain asciicast (neither sealed nor compressed), else None.

    A plain file can be mapped and read from its end (``terminal.screen.read_tail``).
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(MAGIC))
    except OSError:
        return None
    return None if head == MAGIC or head[:4] == ZSTD_MAGIC else path
