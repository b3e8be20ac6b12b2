"""Keep the secret values of a session's recorded environment: sealed, or as keyed fingerprints.

Sealed values are one small container of the same format as a sealed recording
(``vault.crypto``: AES-256-GCM records under the user's encryption key), carried base64 in
``meta.json``. A fingerprint is ``hmac-sha256:<key id>:<64 hex digits>``, keyed with a random
32-byte key kept 0600 in the data folder (``Paths.env_fingerprint_key``), made on first use.
It is a key of its own, not derived from the encryption key: fingerprints are kept when
encryption is off, and a stolen ``meta.json`` gives no way to test guesses of a secret
without that file. The key id (16 hex digits of the key's SHA-256) says which machine's key
made a fingerprint, so one made elsewhere is never compared with a wrong key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from shellkeep.errors import DataError
from shellkeep.store.paths import Paths, ensure_dir

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a recording's thread)
if TYPE_CHECKING:
    from shellkeep.vault.crypto import Key, KeyLookup

__all__ = [
    "FingerprintKey",
    "fingerprint",
    "fingerprint_id",
    "fingerprint_key",
    "fingerprint_key_id",
    "open_sealed",
    "reseal_env",
    "seal",
    "sealed_key_id",
]

_PREFIX = "hmac-sha256"
_KEY_BYTES = 32


@dataclass(frozen=True, slots=True)
class FingerprintKey:
    """The local fingerprint key: ``id`` 16 hex digits, ``secret`` 32 bytes."""

    id: str
    secret: bytes = field(repr=False)


def fingerprint_key(paths: Paths, *, create: bool) -> FingerprintKey | None:
    """Return this data folder's fingerprint key, made (0600) when ``create`` and missing.

    Returns None when there is none and ``create`` is False, or the file is not 32 bytes.
    Raises OSError when it cannot be read or made.
    """
    path = paths.env_fingerprint_key
    try:
        secret = path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
        ensure_dir(path.parent)
        secret = secrets.token_bytes(_KEY_BYTES)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another recording made it first: use that one
            secret = path.read_bytes()
        else:
            with os.fdopen(fd, "wb") as fh:
                fh.write(secret)
    if len(secret) != _KEY_BYTES:
        return None
    return FingerprintKey(fingerprint_key_id(secret), secret)


def fingerprint_key_id(secret: bytes) -> str:
    """Return the id of a fingerprint key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(secret).hexdigest()[:16]


def fingerprint(key: FingerprintKey, name: str, value: str) -> str:
    """Return ``hmac-sha256:<key id>:<hex>`` of ``name`` and ``value`` (the name is mixed in,
    so one value under two names gives two fingerprints)."""
    digest = hmac.new(key.secret, f"{name}\0{value}".encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()
    return f"{_PREFIX}:{key.id}:{digest}"


def fingerprint_id(text: str) -> str | None:
    """Return the key id of a fingerprint made by ``fingerprint``, None when it is not one."""
    parts = text.split(":")
    return parts[1] if len(parts) == 3 and parts[0] == _PREFIX else None


def seal(data: bytes, key: Key) -> str:
    """Return ``data`` sealed with ``key`` (the format of sealed recordings), as base64 text."""
    from shellkeep.vault.crypto import EncryptedWriter

    sink = io.BytesIO()
    writer = EncryptedWriter(sink, key)
    writer.write(data)
    writer.flush()
    sealed = sink.getvalue()
    writer.close()
    return base64.b64encode(sealed).decode("ascii")


def open_sealed(text: str, keys: KeyLookup) -> bytes:
    """Return the plaintext of ``seal``'s output.

    Raises KeyUnavailable when its key is not here, DataError when it is damaged, ValueError
    when ``text`` is not base64.
    """
    from shellkeep.vault.crypto import open_decrypting

    raw = base64.b64decode(text.encode("ascii"), validate=True)
    with open_decrypting(io.BytesIO(raw), "the sealed environment in meta.json", keys) as fh:
        return fh.read()



def sealed_key_id(text: str) -> str | None:
    """Return the id of the key ``seal``'s output is sealed with (None when it is not one)."""
    from shellkeep.vault.crypto import HEADER_BYTES, MAGIC

    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except ValueError:
        return None
    if len(raw) < HEADER_BYTES or not raw.startswith(MAGIC):
        return None
    return raw[12:20].hex()  # the header's key id, as ``crypto.key_id_of_file`` reads it


def reseal_env(folder: Path, key: Key, keys: KeyLookup) -> int:
    """Seal the recorded environment's secrets in ``folder``'s ``meta.json`` with ``key``
    (``key rotate``); return 1 when it was rewritten, 0 when there was nothing to do.

    Raises DataError or KeyUnavailable when the sealed values cannot be opened, OSError when
    ``meta.json`` cannot be written.
    """
    import dataclasses

    from shellkeep.store.session import read_meta, write_meta

    meta = read_meta(folder)
    env = meta.env
    sealed = env.get("sealed") if isinstance(env, dict) else None
    if not isinstance(env, dict) or not isinstance(sealed, str) or sealed_key_id(sealed) in (None, key.id):
        return 0
    try:
        plain = open_sealed(sealed, keys)
    except ValueError as exc:
        raise DataError(f"{folder / 'meta.json'}: its sealed environment is damaged ({exc})") from exc
    write_meta(dataclasses.replace(meta, env={**env, "sealed": seal(plain, key)}))
    return 1
