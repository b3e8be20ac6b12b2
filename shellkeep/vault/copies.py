"""Store and read agent transcript copies once per content: chunking, addresses, sealing.

A copy is written as a stream of lines (already redacted by the caller), cut into chunks of
about ``CHUNK_TARGET_BYTES`` after a line end, so that two copies of one transcript, the
second longer (the conversation resumed and appended to), share every chunk but the last
of the shorter one. Each chunk is stored once in the chunk store (``store.chunks``) under
its address, and the session folder gets a reference (``agent/<name>.ref``).

Addresses: the SHA-256 of a plain chunk; for a sealed one (``encryption.encrypt`` on) an
HMAC-SHA256 of its plaintext under a key derived from the encryption key, so that the name
of a stored chunk tells nothing about its content to whoever lacks the key. A sealed chunk
is a shellkeep encrypted file (``vault.crypto``), one record per line group.

Copies made before this store (a whole file in ``agent/``) are still read (``open_copy``).
"""

from __future__ import annotations

import hashlib
import hmac
import io
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.chunks import REF_SUFFIX, CopyRef, chunk_path, read_ref, ref_path, store_lock, write_ref
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import AGENT_FOLDER
from shellkeep.vault.access import Vault
from shellkeep.vault.crypto import key_id_of_file, split_records, write_records_atomic
from shellkeep.vault.crypto import Key

__all__ = ["CHUNK_TARGET_BYTES", "copy_lines", "copy_names", "copy_ref", "open_copy", "rewrite_copy", "sealed_with", "store_copy"]

log = get_logger(__name__)

CHUNK_TARGET_BYTES = 4 << 20
"""A chunk is cut at the first line end at or after this many bytes, or between two pieces
of a line once it holds four times as much (a NUL hole with no line end)."""

_ADDRESS_LABEL = b"shellkeep copy address v1"


def _addresser(key: Key | None) -> Callable[[bytes], str]:
    """Return the address function of chunks written with ``key`` (None: plain)."""
    if key is None:
        return lambda data: hashlib.sha256(data).hexdigest()
    secret = hmac.new(key.secret, _ADDRESS_LABEL, hashlib.sha256).digest()
    return lambda data: hmac.new(secret, data, hashlib.sha256).hexdigest()


def _chunks(lines: Iterable[bytes], target: int) -> Iterator[bytes]:
    """Group ``lines`` (each with its line end, the last may lack one) into chunks of about ``target`` bytes."""
    pending: list[bytes] = []
    size = 0
    for line in lines:
        pending.append(line)
        size += len(line)
        if (size >= target and line.endswith(b"\n")) or size >= 4 * target:  # a NUL hole has no line end
            yield b"".join(pending)
            pending, size = [], 0
    if pending:
        yield b"".join(pending)


_PIECE_BYTES = 1 << 20
"""Most bytes read at a time while copying (a NUL hole of any size is copied piece by piece)."""


def copy_lines(fh: IO[bytes], transform: Callable[[bytes], bytes] | None, limit: int | None = None) -> Iterator[bytes]:
    """Yield a transcript's bytes line by line (its first ``limit`` bytes when given) for ``store_copy``.

    transform: applied to each line (redaction), None to pass lines as they are. A run of
    NUL bytes (a hole a crash left: no line end, maybe gigabytes) is passed on piece by
    piece, never joined or transformed, and the text before it is transformed on its own.
    """
    copied = 0
    pending: list[bytes] = []

    def line_of(parts: list[bytes]) -> bytes:
        line = b"".join(parts)
        return line if transform is None else transform(line)

    while limit is None or copied < limit:
        piece = fh.readline(_PIECE_BYTES if limit is None else min(_PIECE_BYTES, limit - copied))
        if not piece:
            break
        copied += len(piece)
        if not piece.strip(b"\x00"):
            if pending:
                yield line_of(pending)
                pending = []
            yield piece
        elif piece.endswith(b"\n"):
            yield line_of([*pending, piece])
            pending = []
        else:
            pending.append(piece)
    if pending:
        yield line_of(pending)


def store_copy(vault: Vault, folder: Path, name: str, lines: Iterable[bytes], *, key: Key | None = None) -> CopyRef:
    """Store the copy of the transcript ``name`` for the session in ``folder``; return its reference.

    lines: the copy's content in order, line by line with line ends (a long line may come in
    pieces), streamed: at most one chunk is held. Chunks already stored are reused (and not written again); the reference
    ``agent/<name>.ref`` replaces any earlier copy of that name (a whole-file copy too).
    key: seal with this key (default: the vault's writing key; None when encryption is off).
    Raises OSError, KeyUnavailable.
    """
    if key is None:
        key = vault.writing_key()
    with store_lock(vault.paths, exclusive=False):
        ref = _stage(vault, name, lines, key)
        _replace(folder, ref)
    return ref


def _stage(vault: Vault, name: str, lines: Iterable[bytes], key: Key | None) -> CopyRef:
    """Store the chunks of a copy (the caller holds the store's lock) and return its reference.

    key: seal with it; None: store plain.
    """
    address_of = _addresser(key)
    chunks: list[tuple[str, int]] = []
    for chunk in _chunks(lines, CHUNK_TARGET_BYTES):
        address = address_of(chunk)
        path = chunk_path(vault.paths, address)
        if not path.is_file():
            ensure_dir(path.parent)
            if key is None:
                write_bytes_atomic(path, chunk)
            else:
                write_records_atomic(path, split_records(chunk), key)
        chunks.append((address, len(chunk)))
    return CopyRef(name, sum(size for _, size in chunks), tuple(chunks), sealed=key is not None)


def _replace(folder: Path, ref: CopyRef) -> None:
    """Write ``ref`` as the session's copy of its transcript, dropping a whole-file copy of the name."""
    write_ref(ref_path(folder, ref.name), ref)
    legacy = folder / AGENT_FOLDER / ref.name
    if legacy.is_file():
        legacy.unlink()  # the reference holds it now


def copy_names(folder: Path) -> list[str]:
    """Return the names of the transcript copies a session folder holds (references and whole
    files: old ones, pulled ones), a side folder's as their path (``<id>/tool-results/x.txt``)."""
    agent = folder / AGENT_FOLDER
    try:
        entries = [p.relative_to(agent).as_posix() for p in agent.rglob("*") if p.is_file() and not p.name.startswith(".")]
    except OSError:
        return []
    names = {rel[: -len(REF_SUFFIX)] if rel.endswith(REF_SUFFIX) else rel for rel in entries}
    return sorted(names)


def copy_ref(folder: Path, name: str) -> CopyRef | None:
    """Return the reference of a session's copy ``name``, or None when it is a whole file or absent.

    Raises DataError for a damaged reference.
    """
    try:
        return read_ref(ref_path(folder, name))
    except FileNotFoundError:
        return None


def open_copy(vault: Vault, folder: Path, name: str) -> IO[bytes]:
    """Open the plaintext of a session's copy of the transcript ``name``, following its reference.

    Streams chunk after chunk (decrypted when sealed). Raises FileNotFoundError when the
    session holds no such copy, DataError when a chunk is missing or damaged (while reading),
    KeyUnavailable when a chunk's key is not at hand.
    """
    ref = copy_ref(folder, name)
    if ref is None:
        return vault.open_plain(folder / AGENT_FOLDER / name)  # a copy from before the chunk store
    return io.BufferedReader(_ChunkReader(vault, ref, ref_path(folder, name)), 1 << 16)


class _ChunkReader(io.RawIOBase):
    """The plaintext of a copy's chunks, one after the other."""

    def __init__(self, vault: Vault, ref: CopyRef, where: Path) -> None:
        super().__init__()
        self._vault = vault
        self._ref = ref
        self._where = where
        self._next = 0
        self._current: IO[bytes] | None = None

    def readable(self) -> bool:
        """Return True."""
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Fill ``buffer`` from the current chunk, moving to the next at its end; 0 at the end."""
        view = memoryview(buffer).cast("B")
        while True:
            if self._current is None:
                if self._next >= len(self._ref.chunks):
                    return 0
                address, _ = self._ref.chunks[self._next]
                self._next += 1
                path = chunk_path(self._vault.paths, address)
                try:
                    self._current = self._vault.open_plain(path)
                except FileNotFoundError:
                    raise DataError(
                        f"{self._where} names a chunk that is gone ({address[:12]}); "
                        "the copy cannot be read whole (its transcript may still be with the agent)"
                    ) from None
            data = self._current.read(len(view))
            if data:
                view[: len(data)] = data
                return len(data)
            self._current.close()
            self._current = None

    def close(self) -> None:
        """Close the chunk being read."""
        if self._current is not None:
            self._current.close()
            self._current = None
        super().close()


def rewrite_copy(vault: Vault, folder: Path, name: str, transform: Callable[[bytes], bytes] | None, *, key: Key | None) -> bool:
    """Store a session's copy again, its lines passed through ``transform``; return whether it changed.

    For ``redact`` (transform: redact one line) and ``key rotate`` (no transform, ``key`` the
    new key). key: seal the new chunks with it; None: store them plain. The old chunks stay until no reference names them (``store.chunks.sweep``).
    A whole-file copy from before the chunk store is moved into it. Raises OSError,
    DataError, KeyUnavailable; nothing is replaced before the new copy is whole.
    """
    before = copy_ref(folder, name)
    with store_lock(vault.paths, exclusive=False):
        with open_copy(vault, folder, name) as fh:
            after = _stage(vault, name, copy_lines(fh, transform), key)
        if before is not None and after.chunks == before.chunks:
            return False
        _replace(folder, after)
    return True


def sealed_with(vault: Vault, ref: CopyRef) -> set[str | None]:
    """Return the key ids a copy's chunks are sealed with (None for a plain chunk)."""
    return {key_id_of_file(chunk_path(vault.paths, address)) for address, _ in ref.chunks}
