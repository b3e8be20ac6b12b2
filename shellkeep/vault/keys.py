"""Own the encryption keys: where they are kept, how they are made, found, exported and imported.

A key is 32 random bytes (AES-256). Its id is the first 8 bytes of SHA-256 over a fixed
label and the key, as 16 hex digits: it names the key in every encrypted file's header
without telling anything about it, and a file's key can be recognised among several.

Keys are kept as one ``key set`` (the current key plus older ones still needed to read
files written before a rotation), stored as a small JSON document::

    {"format": "shellkeep-keys", "version": 1, "current": "<id>",
     "keys": [{"id": "<id>", "key": "<base64>", "created_at": "<ISO 8601 UTC>"}]}

in one of these places, tried in this order:

1. ``encryption.key_file`` when the config names one (a file, 0600);
2. the OS keyring (the ``keyring`` package), service ``shellkeep``, user
   ``keys:<data directory>``, when a usable backend exists (none on a headless CI box);
3. the key file ``<data directory>/keys/keys.json`` (0600, folder 0700).

Reading looks for a key id in every place; writing (``init``, ``import``, ``rotate``) uses
the first place that already holds keys, else the first place available. ``keyring`` is
imported inside the functions that use it; a keyring call may block (a desktop unlock prompt).

A first key is never made beside sessions sealed under a key that no store holds (a lost
or deleted key file): ``init_key`` and ``current_key(create=True)`` read the key id in the
header of every sealed file of the data folder (``vault.crypto.key_id_of_file``, a 28-byte
read each) and raise ``KeyLost``, saying to import the old key; nor in a store that lacks a
key sealed sessions need while another store holds it (``encryption.key_file`` pointed at a
new file: ``KeyHidden``, saying to copy the keys there). A key kept in a plain file
inside the data folder is called out once per data folder (``plain_key_notice``).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import secrets
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shellkeep.errors import DataError, ShellkeepError
from shellkeep.errors import KeyUnavailable as KeyUnavailable  # raised by every reader of keys
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import Paths, ensure_dir
from shellkeep.logs import get_logger
from shellkeep.store.session import iso, iter_session_folders, utc_now
from shellkeep.vault.crypto import Key, key_id_of_file, private_files

log = get_logger(__name__)

KEY_BYTES = 32
KEY_ID_BYTES = 8
KEYRING_SERVICE = "shellkeep"
KEYS_FORMAT = "shellkeep-keys"
_ID_LABEL = b"shellkeep key id v1\x00"


class KeyLost(KeyUnavailable):
    """Sessions are sealed under keys no store holds: no new key is made beside them (exit 1)."""

    def __init__(self, paths: Paths, lost: dict[str, int]) -> None:
        ids = ", ".join(sorted(lost))
        count = sum(lost.values())
        super().__init__(
            f"{count} session{'' if count == 1 else 's'} in {paths.home} {'is' if count == 1 else 'are'} encrypted "
            f"with key{'' if len(lost) == 1 else 's'} {ids}, which no key store holds; import your key export with "
            "'shellkeep key import FILE' (no new key was made; if it is lost for good: 'shellkeep key init --force')"
        )
        self.lost = lost


class KeyHidden(KeyUnavailable):
    """Sessions are sealed under a key that only a store other than the one new keys go to
    holds (``encryption.key_file`` changed to a new file): no second key is made (exit 1)."""

    def __init__(self, paths: Paths, hidden: dict[str, int], store: str, holder: str) -> None:
        ids = ", ".join(sorted(hidden))
        count = sum(hidden.values())
        kept = f"kept in {holder}" if holder else "kept elsewhere"
        super().__init__(
            f"{count} session{'' if count == 1 else 's'} in {paths.home} {'is' if count == 1 else 'are'} encrypted "
            f"with key{'' if len(hidden) == 1 else 's'} {ids}, {kept} but not in {store} (encryption.key_file); "
            "copy the keys there with 'shellkeep key export - | shellkeep key import -' (no new key was made)"
        )
        self.hidden = hidden


@dataclass(frozen=True, slots=True)
class KeySet:
    """The keys of one store: ``current`` encrypts new files; all of ``keys`` can decrypt."""

    current: str | None
    keys: tuple[Key, ...]

    def get(self, key_id: str) -> Key | None:
        """Return the key with ``key_id``, or None."""
        return next((k for k in self.keys if k.id == key_id), None)

    @property
    def current_key(self) -> Key | None:
        """Return the key new files are encrypted with, or None."""
        return self.get(self.current) if self.current else None

    def to_json(self) -> dict[str, object]:
        """Return the stored JSON document (secrets base64)."""
        return {
            "format": KEYS_FORMAT,
            "version": 1,
            "current": self.current,
            "keys": [
                {"id": k.id, "key": base64.b64encode(k.secret).decode("ascii"), "created_at": k.created_at}
                for k in self.keys
            ],
        }


def key_id_of(secret: bytes) -> str:
    """Return the 16-hex-digit id of a key."""
    return hashlib.sha256(_ID_LABEL + secret).digest()[:KEY_ID_BYTES].hex()


def new_key() -> Key:
    """Return a fresh random key (``secrets.token_bytes``)."""
    secret = secrets.token_bytes(KEY_BYTES)
    return Key(key_id_of(secret), secret, iso(utc_now()))


def parse_key_set(text: str, where: str) -> KeySet:
    """Parse a key set document; ``where`` names its place in error messages.

    Raises DataError when it is not a valid key set (a key whose id does not match its
    bytes is refused: the document was altered or damaged).
    """
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise DataError(f"{where} is not a shellkeep key file (not JSON: {exc}); restore it from your key export") from exc
    if not isinstance(obj, dict) or obj.get("format") != KEYS_FORMAT or not isinstance(obj.get("keys"), list):
        raise DataError(f"{where} is not a shellkeep key file; restore it from your key export")
    if obj.get("version") != 1:
        raise DataError(f"{where} is a key file of version {obj.get('version')!r}; upgrade shellkeep to read it")
    keys: list[Key] = []
    for item in obj["keys"]:
        try:
            secret = base64.b64decode(item["key"], validate=True)
            key = Key(str(item["id"]), secret, str(item.get("created_at") or ""))
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{where} holds a malformed key entry; restore it from your key export") from exc
        if len(secret) != KEY_BYTES or key_id_of(secret) != key.id:
            raise DataError(f"{where}: key {key.id} does not match its id (damaged); restore it from your key export")
        keys.append(key)
    current = obj.get("current")
    if current is not None and not any(k.id == current for k in keys):
        raise DataError(f"{where}: the current key {current} is not in the file; restore it from your key export")
    return KeySet(current if isinstance(current, str) else None, tuple(keys))


def merge_key_sets(base: KeySet | None, extra: KeySet, *, make_current: bool = False) -> KeySet:
    """Return ``base`` plus the keys of ``extra`` it lacks.

    The current key stays ``base``'s unless it has none or ``make_current`` is set, then
    it is ``extra``'s.
    """
    keys = list(base.keys) if base else []
    known = {k.id for k in keys}
    keys += [k for k in extra.keys if k.id not in known]
    current = base.current if base else None
    if make_current or current is None:
        current = extra.current or current
    return KeySet(current, tuple(keys))


# -- stores ----------------------------------------------------------------------------------


class KeyStore(Protocol):
    """A place that holds one key set."""

    @property
    def label(self) -> str:
        """Describe the place for messages ("the OS keyring (...)" or a file path)."""

    def load(self) -> KeySet | None:
        """Return the stored key set, or None when there is none; raises DataError, OSError."""

    def save(self, key_set: KeySet) -> None:
        """Store ``key_set``, replacing what was there; raises OSError or KeyUnavailable."""


@dataclass(frozen=True, slots=True)
class FileKeyStore:
    """A key set in a JSON file, written atomically with mode 0600 (folder 0700)."""

    path: Path

    @property
    def label(self) -> str:
        """Return the file's path."""
        return str(self.path)

    def load(self) -> KeySet | None:
        """Return the key set in the file, or None when the file does not exist."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise DataError(f"{self.path} is not a shellkeep key file; restore it from your key export") from exc
        return parse_key_set(text, str(self.path))

    def save(self, key_set: KeySet) -> None:
        """Write the key set atomically (temporary file, fsync, rename), mode 0600."""
        ensure_dir(self.path.parent)
        write_bytes_atomic(self.path, (json.dumps(key_set.to_json(), indent=2) + "\n").encode("utf-8"))


@dataclass(frozen=True, slots=True)
class KeyringStore:
    """A key set in the OS keyring, one entry per data directory."""

    home: Path

    @property
    def username(self) -> str:
        """Return the keyring user name (the data directory keeps installations apart)."""
        return f"keys:{self.home}"

    @property
    def label(self) -> str:
        """Return a description of the keyring entry."""
        return f"the OS keyring (service '{KEYRING_SERVICE}', user '{self.username}')"

    def load(self) -> KeySet | None:
        """Return the key set in the keyring, or None; raises KeyUnavailable on a keyring error."""
        import keyring
        import keyring.errors

        try:
            text = keyring.get_password(KEYRING_SERVICE, self.username)
        except keyring.errors.KeyringError as exc:
            raise KeyUnavailable(f"cannot read the OS keyring ({exc}); unlock it, or set encryption.key_file") from exc
        return None if text is None else parse_key_set(text, self.label)

    def save(self, key_set: KeySet) -> None:
        """Store the key set in the keyring; raises KeyUnavailable on a keyring error."""
        import keyring
        import keyring.errors

        try:
            keyring.set_password(KEYRING_SERVICE, self.username, json.dumps(key_set.to_json()))
        except keyring.errors.KeyringError as exc:
            raise KeyUnavailable(f"cannot write to the OS keyring ({exc}); unlock it, or set encryption.key_file") from exc


def keyring_usable() -> bool:
    """Return whether the ``keyring`` package has a real backend here (not fail/null).

    Never raises: a missing package or a broken backend means no keyring.
    """
    try:
        import keyring
        import keyring.backends.fail
        import keyring.backends.null

        backend = keyring.get_keyring()
    except Exception as exc:  # noqa: BLE001 - any keyring trouble means "use the key file"
        log.debug("no usable keyring: %s", exc)
        return False
    if isinstance(backend, (keyring.backends.fail.Keyring, keyring.backends.null.Keyring)):
        return False
    try:
        return float(getattr(backend, "priority", 0)) > 0
    except Exception:  # noqa: BLE001
        return False


def default_key_file(paths: Paths) -> Path:
    """Return the key file used when no keyring is usable: ``<home>/keys/keys.json``."""
    return paths.home / "keys" / "keys.json"


def candidate_stores(paths: Paths, key_file: str = "") -> list[KeyStore]:
    """Return the places keys may be in, in the order they are tried (see the module doc).

    key_file: ``encryption.key_file`` ("" = unset; ``~`` is expanded).
    """
    stores: list[KeyStore] = []
    if key_file:
        stores.append(FileKeyStore(Path(key_file).expanduser().absolute()))
    if keyring_usable():
        stores.append(KeyringStore(paths.home))
    default = FileKeyStore(default_key_file(paths))
    if not key_file or default.path != Path(key_file).expanduser().absolute():
        stores.append(default)
    return stores


def primary_store(paths: Paths, key_file: str = "") -> tuple[KeyStore, KeySet | None]:
    """Return the store new keys go to, with what it holds.

    ``encryption.key_file`` when set; else the first place already holding keys; else the
    keyring when usable, else the default key file.
    """
    stores = candidate_stores(paths, key_file)
    if key_file:
        return stores[0], stores[0].load()
    for store in stores:
        found = store.load()
        if found is not None and found.keys:
            return store, found
    return stores[0], None


_cache_lock = threading.Lock()
_cache: dict[tuple[str, str], dict[str, Key]] = {}


def forget_cached_keys() -> None:
    """Drop the keys cached by ``find_key`` (after keys were added or removed)."""
    with _cache_lock:
        _cache.clear()


def find_key(paths: Paths, key_id: str, key_file: str = "", *, cached: bool = True) -> Key:
    """Return the key with ``key_id`` from any store (cached per process once found).

    cached: False looks in the stores every time and keeps nothing (a long-running server
    must notice a key that was removed). Raises KeyUnavailable naming the id and what to do;
    DataError for a damaged key file.
    """
    cache_key = (str(paths.home), key_file)
    if cached:
        with _cache_lock:
            hit = _cache.get(cache_key, {}).get(key_id)
        if hit is not None:
            return hit
    for store in candidate_stores(paths, key_file):
        found = store.load()
        key = found.get(key_id) if found else None
        if key is not None:
            if cached:
                with _cache_lock:
                    _cache.setdefault(cache_key, {})[key_id] = key
            return key
    raise KeyUnavailable(
        f"the key {key_id} this file is encrypted with is not available; "
        "import it with 'shellkeep key import FILE' (nothing was changed)"
    )


def sealed_key_ids(paths: Paths) -> dict[str, int]:
    """Return the key ids the data folder's sealed files are under, with how many sessions use each.

    Reads the 28-byte header of each session's private files (``crypto.private_files``);
    unreadable files are passed over. Raises DataError when the data folder is not a folder.
    """
    used: dict[str, int] = {}
    for folder in iter_session_folders(paths, None):
        ids = {key_id for path in private_files(folder) if (key_id := key_id_of_file(path)) is not None}
        for key_id in ids:
            used[key_id] = used.get(key_id, 0) + 1
    return used


def lost_key_ids(paths: Paths, key_file: str = "") -> dict[str, int]:
    """Return the ids of keys sealed sessions need that no store holds, with their session counts."""
    known = all_keys(paths, key_file)
    return {key_id: n for key_id, n in sealed_key_ids(paths).items() if key_id not in known}


def _refuse_beside_lost_keys(paths: Paths, key_file: str, store: KeyStore | None = None, held: KeySet | None = None) -> None:
    """Raise KeyLost when sealed sessions need a key no store holds; with ``store`` (where a
    new key would go, holding ``held``), KeyHidden when they need one that only another store holds."""
    known = all_keys(paths, key_file)
    used = sealed_key_ids(paths)
    lost = {key_id: n for key_id, n in used.items() if key_id not in known}
    if lost:
        raise KeyLost(paths, lost)
    if store is None:
        return
    hidden = {key_id: n for key_id, n in used.items() if (held is None or held.get(key_id) is None)}
    if hidden:
        raise KeyHidden(paths, hidden, store.label, _holder(paths, key_file, next(iter(sorted(hidden)))))


def _holder(paths: Paths, key_file: str, key_id: str) -> str:
    """Return the label of the first store that holds ``key_id`` ("" when none does)."""
    for store in candidate_stores(paths, key_file):
        found = store.load()
        if found is not None and found.get(key_id) is not None:
            return store.label
    return ""


def current_key(paths: Paths, key_file: str = "", *, create: bool = False) -> Key:
    """Return the key new files are encrypted with.

    create: make and store a key when there is none anywhere (a first encrypted session),
    logging where it went so the user can back it up; never beside sessions sealed under
    a key no store holds (``KeyLost``: at record time the recording is then suspended and
    nothing is stored in the clear).
    Raises KeyUnavailable when there is none and ``create`` is False, or it cannot be stored;
    KeyLost (a KeyUnavailable) as said.
    """
    store, found = primary_store(paths, key_file)
    key = found.current_key if found else None
    if key is not None:
        return key
    if not create:
        raise KeyUnavailable("no encryption key yet; run 'shellkeep key init' (or 'shellkeep key import FILE')")
    _refuse_beside_lost_keys(paths, key_file, store, found)
    key = new_key()
    try:
        store.save(merge_key_sets(found, KeySet(key.id, (key,)), make_current=True))
    except OSError as exc:
        raise KeyUnavailable(f"cannot store a new encryption key in {store.label}: {exc.strerror or exc}") from exc
    log.warning("created encryption key %s in %s; back it up with 'shellkeep key export'", key.id, store.label)
    notice = plain_key_notice(paths, key_file)
    if notice:
        log.warning("%s", notice)
    forget_cached_keys()
    return key


def _current_of(store: KeyStore) -> str | None:
    """Return the id of ``store``'s current key (None when it holds none or cannot be read)."""
    try:
        found = store.load()
    except (OSError, ShellkeepError):
        return None
    return found.current if found is not None else None


def all_keys(paths: Paths, key_file: str = "") -> dict[str, Key]:
    """Return every key any store holds, by id."""
    found: dict[str, Key] = {}
    for store in candidate_stores(paths, key_file):
        key_set = store.load()
        for key in key_set.keys if key_set else ():
            found.setdefault(key.id, key)
    return found


@dataclass(frozen=True, slots=True)
class KeyReport:
    """What a key command did (``key ... --json``): ``store`` where the keys are, ``current``
    id, ``keys`` every id held there, ``added`` ids new in this call, ``beside_data`` the
    store is a plain file inside the data folder, ``lost`` ids of keys sealed sessions
    need that no store holds (``key status`` only)."""

    store: str
    current: str | None
    keys: tuple[str, ...]
    added: tuple[str, ...] = ()
    beside_data: bool = False
    lost: tuple[str, ...] = ()


def _report(paths: Paths, store: KeyStore, key_set: KeySet | None, added: Iterable[str] = ()) -> KeyReport:
    return KeyReport(
        store=store.label,
        current=key_set.current if key_set else None,
        keys=tuple(k.id for k in key_set.keys) if key_set else (),
        added=tuple(added),
        beside_data=is_beside_data(paths, store),
    )


def is_beside_data(paths: Paths, store: KeyStore) -> bool:
    """Return whether ``store`` is a plain key file inside the data folder (a copy of the
    data, a backup or a synced folder, then holds the key that opens it)."""
    if not isinstance(store, FileKeyStore):
        return False
    try:
        return store.path.resolve().is_relative_to(paths.home.resolve())
    except OSError:
        return False


NOTICE_FILE = "plain-key-file.noticed"
"""Marker in ``<home>/keys/``: the plain key file beside the data was called out already."""


def plain_key_notice(paths: Paths, key_file: str = "") -> str | None:
    """Return the warning that the key is a plain file beside the data, once per data folder.

    The first call that finds the primary store to be such a file returns the warning and
    leaves a marker file (``NOTICE_FILE``); later calls return None, as they do when the
    key is in the keyring or a file outside the data folder. Never raises.
    """
    try:
        store, found = primary_store(paths, key_file)
        marker = paths.home / "keys" / NOTICE_FILE
        if found is None or not is_beside_data(paths, store) or marker.exists():
            return None
        ensure_dir(marker.parent)
        marker.touch(mode=0o600)
    except (OSError, ShellkeepError) as exc:
        log.debug("no plain key file notice: %s", exc)
        return None
    return plain_key_warning(store.label)


def plain_key_warning(where: str) -> str:
    """Return the one-line warning about a key kept in a plain file beside the data (``where``: its path)."""
    return (
        f"the encryption key is a plain file inside the data folder ({where}): "
        "a copy or backup of the folder opens its sessions; keep the key apart "
        "(an OS keyring, or encryption.key_file outside the data folder)"
    )


def init_key(paths: Paths, key_file: str = "", *, force: bool = False) -> KeyReport:
    """Make the first key and store it (keyring where usable, else a 0600 key file).

    force: make it even beside sessions sealed under keys no store holds (they stay
    unreadable until their key is imported).
    Raises ShellkeepError when a key already exists (it is never replaced: files need it);
    KeyLost when sealed sessions need a key no store holds and ``force`` is not set.
    """
    store, found = primary_store(paths, key_file)
    if found is not None and found.current:
        raise ShellkeepError(
            f"an encryption key already exists ({found.current} in {store.label}); "
            "use 'shellkeep key rotate' to replace it"
        )
    if not force:
        _refuse_beside_lost_keys(paths, key_file, store, found)
    key = new_key()
    key_set = merge_key_sets(found, KeySet(key.id, (key,)), make_current=True)
    try:
        store.save(key_set)
    except OSError as exc:
        raise ShellkeepError(f"cannot store the key in {store.label}: {exc.strerror or exc}") from exc
    forget_cached_keys()
    return _report(paths, store, key_set, (key.id,))


def export_keys(paths: Paths, key_file: str = "") -> tuple[KeySet, KeyReport]:
    """Return every key (from every store; the primary store's current key is current).

    Raises KeyUnavailable when there is none.
    """
    store, found = primary_store(paths, key_file)
    every = all_keys(paths, key_file)
    if not every:
        raise KeyUnavailable("no encryption key to export; run 'shellkeep key init' first")
    current = found.current if found else None
    if current is None:  # encryption.key_file names a store with no key yet: the key in use elsewhere
        current = next((c for s in candidate_stores(paths, key_file) if (c := _current_of(s)) is not None), None)
    key_set = KeySet(current, tuple(every.values()))
    return key_set, _report(paths, store, key_set)


def import_keys(paths: Paths, text: str, where: str, key_file: str = "", *, make_current: bool = False) -> KeyReport:
    """Add the keys of an exported key set to the primary store.

    The current key stays unless there is none or ``make_current`` is set. Raises DataError
    for a document that is not a key set, ShellkeepError when the store cannot be written.
    """
    extra = parse_key_set(text, where)
    if not extra.keys:
        raise DataError(f"{where} holds no keys")
    store, found = primary_store(paths, key_file)
    known = {k.id for k in found.keys} if found else set()
    key_set = merge_key_sets(found, extra, make_current=make_current)
    try:
        store.save(key_set)
    except OSError as exc:
        raise ShellkeepError(f"cannot store the keys in {store.label}: {exc.strerror or exc}") from exc
    forget_cached_keys()
    return _report(paths, store, key_set, [k.id for k in extra.keys if k.id not in known])


def key_status(paths: Paths, key_file: str = "") -> KeyReport:
    """Return where the keys are, their ids (no secret) and the ids of lost keys sealed sessions need."""
    store, found = primary_store(paths, key_file)
    lost = tuple(sorted(lost_key_ids(paths, key_file)))
    return dataclasses.replace(_report(paths, store, found), lost=lost)
