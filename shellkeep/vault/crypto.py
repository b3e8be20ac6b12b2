"""Own encryption at rest: the sealed-record file format, its writer and its reader.

Format (shellkeep encrypted file, version 1). A 28-byte file header::

    magic    8  b"\\x89SKE\\r\\n\\x1a\\n"   (PNG-style: not text, not JSON, not zstd)
    version  1  1
    algo     1  1 = AES-256-GCM
    reserved 2  zero
    key id   8  the key's id (``vault.keys.key_id_of``)
    file id  8  random, so a record cannot be moved from one file to another

then records, each one ``write``/``flush`` of the writer::

    length   4  big-endian byte count of ciphertext + tag (16..64 MiB)
    check    4  length XOR 0xFFFFFFFF (a flipped length byte is caught, not taken for a cut)
    nonce   12  random (``os.urandom``)
    sealed   length bytes: AES-256-GCM(plaintext), 16-byte tag at the end,
                associated data = file header + record number (8 bytes, big-endian, from 0)

A file cut at any byte reads up to its last whole record (a cut record is the end, as a
cut last line is in asciicast); a record that fails authentication, a bad length check or
an unknown version raises ``DataError``; a key in no store raises ``KeyUnavailable``.
Records of recordings and JSONL files hold whole lines, so a cut file still gives whole
lines. Encryption is AES-256-GCM from the ``cryptography`` package (imported inside the
functions that use it, never on ``shellkeep run``'s start-up path).

A ``Key`` is the record this format seals with; where keys are kept, made and found is
``vault.keys``, which reads the sealed headers here (so the record lives here, below it).
"""

from __future__ import annotations

import errno
import io
import os
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO, Protocol

from shellkeep.errors import DataError, KeyUnavailable, ShellkeepError
from shellkeep.store.atomic import FileIdentity, file_identity, write_bytes_atomic
from shellkeep.logs import get_logger
from shellkeep.store.chunks import REF_SUFFIX
from shellkeep.store.session import ABOUT_FILE, AGENT_FOLDER, CAST_FILES, EXCHANGES_FILE, PLAN_FILE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM


log = get_logger(__name__)

MAGIC = b"\x89SKE\r\n\x1a\n"
VERSION = 1
ALGO_AES_256_GCM = 1
HEADER_BYTES = 28
_RECORD_HEAD = struct.Struct(">II")
_RECORD_HEAD_BYTES = _RECORD_HEAD.size + 12  # length, check, nonce
_TAG_BYTES = 16
MAX_RECORD_BYTES = 64 << 20
RECORD_TARGET_BYTES = 256 << 10
"""The writer seals a record once this much plaintext is buffered (and on every flush)."""


@dataclass(frozen=True, slots=True)
class Key:
    """One AES-256 key: ``id`` 16 hex digits, ``secret`` 32 bytes, ``created_at`` ISO 8601 UTC."""

    id: str
    secret: bytes = field(repr=False)
    created_at: str = ""

    @property
    def id_bytes(self) -> bytes:
        """Return the id as the 8 bytes written into file headers."""
        return bytes.fromhex(self.id)


class KeySource(Protocol):
    """Anything that finds a key by its id (a ``vault.access.Vault``)."""

    def key(self, key_id: str) -> Key:
        """Return the key with ``key_id``; raises KeyUnavailable."""


def _aesgcm(key: Key) -> AESGCM:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key.secret)


def _file_header(key: Key, file_id: bytes) -> bytes:
    return MAGIC + bytes((VERSION, ALGO_AES_256_GCM, 0, 0)) + key.id_bytes + file_id


def is_encrypted(path: Path) -> bool:
    """Return whether ``path`` starts with the encrypted-file magic (False if unreadable)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def key_id_of_file(path: Path) -> str | None:
    """Return the key id in an encrypted file's header, or None when it is not encrypted."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEADER_BYTES)
    except OSError:
        return None
    if len(head) < HEADER_BYTES or not head.startswith(MAGIC):
        return None
    return head[12:20].hex()


class EncryptedWriter:
    """A write-only binary file that seals what is written into records on ``raw``.

    Each ``flush`` (and each ``RECORD_TARGET_BYTES`` of writes, at a write boundary) becomes
    one record; the recorder writes whole asciicast lines, so records hold whole lines.

    Args:
        raw: the destination, opened for binary writing (append), empty.
        key: the key, or a function returning it, called on the first record (so a
            recorder can open the file before the child runs and load the key later,
            on its writer thread).
    """

    def __init__(self, raw: BinaryIO, key: Key | Callable[[], Key]) -> None:
        self._raw = raw
        self._key_source = key
        self._cipher: AESGCM | None = None
        self._header = b""
        self._index = 0
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        """Buffer ``data``; seal a record once enough is buffered. Returns ``len(data)``."""
        if self.closed:
            raise ValueError("write to a closed EncryptedWriter")
        if data:
            self._pending.append(bytes(data))
            self._pending_bytes += len(data)
            if self._pending_bytes >= RECORD_TARGET_BYTES:
                self._seal()
        return len(data)

    def flush(self) -> None:
        """Seal what is buffered as one record and flush ``raw``."""
        self._seal()
        self._raw.flush()

    def fileno(self) -> int:
        """Return ``raw``'s file descriptor (for fsync)."""
        return self._raw.fileno()

    def writable(self) -> bool:
        """Return True."""
        return True

    def close(self) -> None:
        """Seal what is buffered and close ``raw`` (closing twice is harmless)."""
        if self.closed:
            return
        try:
            self.flush()
        finally:
            self.closed = True
            self._raw.close()

    def __enter__(self) -> EncryptedWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load_key(self) -> Key:
        """Return the key; a key that cannot be had is an OSError, as a disk failure is.

        The recorder then suspends the recording with one line and nothing unsealed is
        ever written.
        """
        if not callable(self._key_source):
            return self._key_source
        try:
            return self._key_source()
        except ShellkeepError as exc:
            raise OSError(getattr(errno, "ENOKEY", errno.EACCES), f"no encryption key: {exc}") from exc

    def _seal(self) -> None:
        if not self._pending:
            return
        plaintext = b"".join(self._pending)
        if self._cipher is None:
            key = self._load_key()
            self._cipher = _aesgcm(key)
            self._header = _file_header(key, os.urandom(8))
            self._raw.write(self._header)
        nonce = os.urandom(12)
        aad = self._header + self._index.to_bytes(8, "big")
        sealed = self._cipher.encrypt(nonce, plaintext, aad)
        self._raw.write(_RECORD_HEAD.pack(len(sealed), len(sealed) ^ 0xFFFFFFFF) + nonce + sealed)
        self._index += 1
        self._pending.clear()
        self._pending_bytes = 0


class DecryptingReader(io.RawIOBase):
    """Read the plaintext of an encrypted file record by record (wrap in ``io.BufferedReader``).

    Seeking supports ``tell``, rewinding to 0 and seeking forward (by reading).
    Raises DataError (corrupt record, bad header) or KeyUnavailable while reading.
    """

    def __init__(self, raw: IO[bytes], name: str, key_for: Callable[[str], Key]) -> None:
        super().__init__()
        self._raw = raw
        self._name = name
        self._key_for = key_for
        self._cipher: AESGCM | None = None
        self._header = b""
        self._index = 0
        self._buf = b""
        self._buf_pos = 0
        self._pos = 0
        self._ended = False
        self._start()

    def _start(self) -> None:
        self._raw.seek(0)
        head = self._raw.read(HEADER_BYTES)
        self._index = 0
        self._buf, self._buf_pos, self._pos = b"", 0, 0
        if len(head) < HEADER_BYTES:
            self._ended = True  # cut inside the header: nothing was ever sealed
            return
        self._ended = False
        if not head.startswith(MAGIC):
            raise DataError(f"{self._name} is not a shellkeep encrypted file")
        if head[8] != VERSION or head[9] != ALGO_AES_256_GCM:
            raise DataError(
                f"{self._name} is encrypted with format {head[8]}/{head[9]}, unknown to this shellkeep; upgrade shellkeep"
            )
        if self._cipher is None or head != self._header:
            self._cipher = _aesgcm(self._key_for(head[12:20].hex()))
        self._header = head

    def readable(self) -> bool:
        """Return True."""
        return True

    def seekable(self) -> bool:
        """Return True (see the class doc for what seeking can do)."""
        return True

    def tell(self) -> int:
        """Return the plaintext position."""
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        """Move to a plaintext position: rewinding restarts, forward reads and drops."""
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence != io.SEEK_SET:
            raise io.UnsupportedOperation("an encrypted file cannot seek from its end")
        if offset < self._pos:
            self._start()
        while self._pos < offset:
            if not self._fill():
                break
            take = min(offset - self._pos, len(self._buf) - self._buf_pos)
            self._buf_pos += take
            self._pos += take
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` with plaintext across records; 0 at the end."""
        view = memoryview(buffer).cast("B")
        filled = 0
        while filled < len(view) and self._fill():
            take = min(len(view) - filled, len(self._buf) - self._buf_pos)
            view[filled : filled + take] = self._buf[self._buf_pos : self._buf_pos + take]
            self._buf_pos += take
            self._pos += take
            filled += take
        return filled

    def _fill(self) -> bool:
        """Make sure unread plaintext is buffered; return False at the end."""
        while self._buf_pos >= len(self._buf):
            if self._ended:
                return False
            record = self._next_record()
            if record is None:
                self._ended = True
                return False
            self._buf, self._buf_pos = record, 0
        return True

    def _next_record(self) -> bytes | None:
        head = self._raw.read(_RECORD_HEAD_BYTES)
        if len(head) < _RECORD_HEAD.size:
            return None  # cut before or inside the length: the end
        length, check = _RECORD_HEAD.unpack_from(head)
        number = self._index + 1
        if length ^ 0xFFFFFFFF != check or not _TAG_BYTES <= length <= MAX_RECORD_BYTES:
            raise DataError(
                f"{self._name}: record {number} has a damaged length; the file is corrupt (restore it from a backup)"
            )
        if len(head) < _RECORD_HEAD_BYTES:
            return None
        sealed = self._raw.read(length)
        if len(sealed) < length:
            return None  # the last record was cut while being written
        from cryptography.exceptions import InvalidTag

        aad = self._header + self._index.to_bytes(8, "big")
        assert self._cipher is not None  # set by _start whenever the header was whole
        try:
            plaintext: bytes = self._cipher.decrypt(head[8:], sealed, aad)
        except InvalidTag:
            raise DataError(
                f"{self._name}: record {number} fails authentication; the file is corrupt or was altered "
                "(restore it from a backup)"
            ) from None
        self._index += 1
        return plaintext

    def close(self) -> None:
        """Close the underlying file."""
        if not self.closed:
            self._raw.close()
        super().close()


KeyLookup = Callable[[str], Key]
"""A key id → key function (``Vault.key``); raises KeyUnavailable for an unknown id."""


def _no_keys(key_id: str) -> Key:
    raise KeyUnavailable(
        f"the key {key_id} this file is encrypted with is not available here; "
        "import it with 'shellkeep key import FILE' (nothing was changed)"
    )


def open_decrypting(raw: IO[bytes], name: str, keys: KeyLookup | None) -> io.BufferedReader:
    """Return a buffered reader of the plaintext of the encrypted file ``raw`` (closing it too).

    name: the path, for messages. keys: finds the file's key (None: no key is available).
    Raises KeyUnavailable (exit 1) when its key is not found, DataError for a damaged
    header; later reads raise DataError for a damaged record.
    """
    try:
        return io.BufferedReader(DecryptingReader(raw, name, keys or _no_keys), 1 << 16)
    except BaseException:
        raw.close()
        raise


def open_plain(path: Path, keys: KeyLookup | None) -> IO[bytes]:
    """Open any stored file for reading its plaintext: decrypted when encrypted, else as is.

    (zstd is not undone here; ``vault.recording.open_stream`` does both for recordings.)
    """
    raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    if raw.read(len(MAGIC)) != MAGIC:
        raw.seek(0)
        return raw
    return open_decrypting(raw, str(path), keys)


def read_private(path: Path, keys: KeyLookup | None) -> bytes:
    """Return the plaintext of a stored file (``exchanges.jsonl``, a transcript copy).

    Encrypted files are decrypted (a cut last record is left out); plain files are read
    as they are. Raises FileNotFoundError, DataError, KeyUnavailable.
    """
    with open_plain(path, keys) as fh:
        return fh.read()


def split_records(data: bytes, target: int = RECORD_TARGET_BYTES) -> Iterator[bytes]:
    """Yield pieces of ``data`` of about ``target`` bytes, cut after a newline where one is near."""
    start = 0
    n = len(data)
    while start < n:
        end = min(n, start + target)
        if end < n:
            nl = data.rfind(b"\n", start, end)
            if nl >= start:
                end = nl + 1
        yield data[start:end]
        start = end


def write_records_atomic(path: Path, pieces: Iterable[bytes], key: Key, *, expect: FileIdentity | None = None) -> None:
    """Replace ``path`` with an encrypted file holding ``pieces`` (one record each), atomically.

    expect: as for ``keys.write_bytes_atomic`` (FileChanged when ``path`` changed meanwhile).
    """

    def sealed() -> Iterator[bytes]:
        sink = _ListSink()
        writer = EncryptedWriter(sink, key)  # type: ignore[arg-type]
        for piece in pieces:
            writer.write(piece)
            writer.flush()
            yield from sink.take()
        writer.flush()
        yield from sink.take()

    write_bytes_atomic(path, sealed(), expect=expect)


def write_private(path: Path, data: bytes, key: Key | None) -> None:
    """Store ``data`` at ``path`` atomically (0600): sealed with ``key``, plain when None.

    Records are cut after newlines, so a cut file of JSONL still gives whole lines.
    Raises OSError.
    """
    if key is None:
        write_bytes_atomic(path, data)
    else:
        write_records_atomic(path, split_records(data), key)


def reencrypt(path: Path, key: Key, keys: KeyLookup | None) -> bool:
    """Rewrite ``path`` encrypted with ``key``, atomically; return False when nothing changed.

    A plain file is encrypted; a file already under ``key`` is left alone. The old file is
    read whole first (a damaged one raises DataError before anything is written); one
    rewritten by another process meanwhile raises FileChanged and is left as that made it.
    """
    if key_id_of_file(path) == key.id:
        return False
    before = file_identity(path)
    data = read_private(path, keys)
    write_records_atomic(path, split_records(data), key, expect=before)
    return True


def repair_tail(path: Path) -> int:
    """Cut an encrypted file back to its last whole record; return the bytes removed.

    For recovering an interrupted session: a record cut while being written is dropped,
    as a cut last line is. Records are not decrypted (no key needed). Raises OSError.
    """
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < HEADER_BYTES:
            return 0
        pos = HEADER_BYTES
        while pos < size:
            fh.seek(pos)
            head = fh.read(_RECORD_HEAD.size)
            if len(head) < _RECORD_HEAD.size:
                break
            length, check = _RECORD_HEAD.unpack(head)
            if length ^ 0xFFFFFFFF != check:
                return 0  # damaged, not cut: leave it for the reader to report
            end = pos + _RECORD_HEAD_BYTES + length
            if end > size:
                break
            pos = end
        if pos < size:
            fh.truncate(pos)
        return size - pos


class _ListSink:
    """A write-only in-memory sink whose written bytes are taken in order (for streaming)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> list[bytes]:
        parts, self._parts = self._parts, []
        return parts


SEARCH_FILE = "search.jsonl"
"""An encrypted session's searchable text (``archive/private_search.py``), kept beside it."""


def private_files(folder: Path) -> list[Path]:
    """Return the files of a session folder that hold recorded content (and are encrypted
    when encryption is on): ``session.cast`` and ``session.cast.zst`` (both, while a cut
    compression left both), ``exchanges.jsonl``, ``plan.json``, ``search.jsonl`` and
    everything under ``agent/`` but the references to stored copies (``*.ref``: their
    content is in the chunk store, see ``vault.copies``). Existing files only; ``meta.json``
    is never one of them."""
    found = [folder / name for name in (*CAST_FILES, EXCHANGES_FILE, PLAN_FILE, SEARCH_FILE, ABOUT_FILE) if (folder / name).is_file()]
    agent = folder / AGENT_FOLDER
    if agent.is_dir():
        found += sorted(
            p for p in agent.rglob("*") if p.is_file() and not p.name.endswith((".tmp", REF_SUFFIX))
        )
    return found
