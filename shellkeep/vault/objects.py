"""Own the sealing of what ``shellkeep sync`` puts in a bucket: objects and manifest MACs.

Sealed object format (shellkeep sync object, version 1)::

    magic    6  b"SKSO1\\n"
    key id   8  the key's id (``vault.keys.key_id_of``)
    nonce   12  HMAC-SHA256(nonce key, plaintext)[:12]
    sealed   AES-256-GCM(plaintext), 16-byte tag at the end, associated data = magic + key id

The nonce is derived from the plaintext (a synthetic nonce, as AES-SIV does): the same part
sealed twice gives the same object, so a push cut short and run again finds the parts it
sent already there. The cost is that two equal parts are seen to be equal; nothing else is
learnt. The keys for sealing, nonces and manifest MACs are derived from the user's key with
HKDF-SHA256 (distinct labels); the user's key itself never leaves the machine.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

from shellkeep.errors import DataError, KeyUnavailable

if TYPE_CHECKING:
    from collections.abc import Callable

    from shellkeep.vault.crypto import Key

MAGIC = b"SKSO1\n"
_HEAD_BYTES = len(MAGIC) + 8 + 12
SEAL_OVERHEAD = _HEAD_BYTES + 16
"""Bytes a sealed object adds to its plaintext (head, nonce, GCM tag): ``sync status`` counts them."""


def _derive(key: Key, label: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"shellkeep sync " + label).derive(key.secret)


def seal_object(data: bytes, key: Key) -> bytes:
    """Return ``data`` sealed for the bucket with ``key`` (deterministic: see the module doc)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = hmac.new(_derive(key, b"nonce"), data, hashlib.sha256).digest()[:12]
    head = MAGIC + key.id_bytes
    return head + nonce + AESGCM(_derive(key, b"object")).encrypt(nonce, data, head)


def is_sealed_object(blob: bytes) -> bool:
    """Return whether ``blob`` is a sealed object."""
    return blob.startswith(MAGIC)


def key_id_of_object(blob: bytes) -> str:
    """Return the id of the key a sealed object needs; raises DataError for a blob that is not one."""
    if len(blob) < _HEAD_BYTES + 16 or not blob.startswith(MAGIC):
        raise DataError("a remote object is not sealed by shellkeep; it was changed or written by something else")
    return blob[len(MAGIC) : len(MAGIC) + 8].hex()


def open_object(blob: bytes, key_for: Callable[[str], Key], where: str) -> bytes:
    """Return the plaintext of a sealed object.

    Raises KeyUnavailable when no store holds its key, DataError when it fails authentication.
    """
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key_id = key_id_of_object(blob)
    try:
        key = key_for(key_id)
    except KeyUnavailable as exc:
        raise KeyUnavailable(
            f"{where} is sealed with key {key_id}, which is in none of your key stores; "
            "import the team's key with 'shellkeep key import'"
        ) from exc
    head = blob[: len(MAGIC) + 8]
    nonce = blob[len(head) : _HEAD_BYTES]
    try:
        return AESGCM(_derive(key, b"object")).decrypt(nonce, blob[_HEAD_BYTES:], head)
    except InvalidTag as exc:
        raise DataError(f"{where} fails authentication: it was changed in the remote; it is refused") from exc


def manifest_mac(canonical: bytes, key: Key) -> str:
    """Return the hex HMAC-SHA256 of a manifest's canonical JSON (without its ``mac``)."""
    return hmac.new(_derive(key, b"manifest"), canonical, hashlib.sha256).hexdigest()


def check_manifest_mac(canonical: bytes, mac: str, key: Key, where: str) -> None:
    """Raise DataError unless ``mac`` is the manifest MAC of ``canonical`` under ``key``."""
    if not hmac.compare_digest(manifest_mac(canonical, key), mac):
        raise DataError(f"{where} fails authentication: it was changed in the remote; it is refused")
