"""Own key rotation: re-encrypt every session with a new key, resumably.

``rotate_key`` makes a new key current (older keys are kept, so everything stays readable),
then rewrites each session's encrypted files under it, one file at a time through a
temporary file and a rename, and stores its transcript copies again in the chunk store
under the new key (their new addresses are keyed by it; the old chunks are swept). A journal, ``<home>/keys/rotate.journal``, names the new key
on its first line and then each session done, one id a line (appended and fsynced), so an
interrupted rotation (Ctrl-C, a crash, a full disk) resumes where it stopped when run
again. Sessions still running keep the old key until they end; once every session is done
the old keys are dropped from the store and the journal is removed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shellkeep.errors import DataError, ShellkeepError
from shellkeep.vault.crypto import Key
from shellkeep.vault.keys import KeySet, KeyUnavailable, forget_cached_keys, merge_key_sets, new_key, primary_store
from shellkeep.store.atomic import FileChanged
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import Status, is_interrupted, iter_session_folders, read_meta, session_lock
from shellkeep.store.chunks import ref_files, ref_name, sweep
from shellkeep.vault.access import Vault
from shellkeep.vault.copies import copy_ref, rewrite_copy, sealed_with
from shellkeep.vault.crypto import is_encrypted, private_files, reencrypt
from shellkeep.vault.env_secrets import reseal_env
from shellkeep.logs import get_logger

log = get_logger(__name__)

JOURNAL_NAME = "rotate.journal"


@dataclass(frozen=True, slots=True)
class RotateResult:
    """What ``rotate_key`` did (``key rotate --json``).

    new_key: the id now current; resumed: an earlier rotation was continued; sessions /
    files: re-encrypted in this run; running: ids of sessions left for later (still
    recording); errors: one line per session that failed; complete: every session is done,
    the old keys are gone and the journal removed.
    """

    new_key: str
    resumed: bool
    sessions: int
    files: int
    running: tuple[str, ...]
    errors: tuple[str, ...]
    complete: bool
    dropped_keys: tuple[str, ...] = ()


def journal_path(paths: Paths) -> Path:
    """Return the rotation journal's path."""
    return paths.home / "keys" / JOURNAL_NAME


def _read_journal(path: Path) -> tuple[str, set[str]] | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    try:
        head = json.loads(lines[0])
        new_id = str(head["new"])
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path} is damaged ({exc}); remove it and run 'shellkeep key rotate' again") from exc
    return new_id, {line.strip() for line in lines[1:] if line.strip()}


def _append(path: Path, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        os.write(fd, (line + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def rotate_key(
    paths: Paths,
    key_file: str = "",
    *,
    include_plain: bool = False,
    on_session: Callable[[str, int, int], None] | None = None,
) -> RotateResult:
    """Make a new key current and re-encrypt every session with it (see the module doc).

    include_plain: also encrypt sessions stored in the clear (recorded before encryption
    was turned on). on_session(session_id, done, total) is called after each session.
    Raises KeyUnavailable when there is no key to rotate, DataError for a damaged journal.
    """
    store, found = primary_store(paths, key_file)
    if found is None or found.current is None:
        raise KeyUnavailable("no encryption key to rotate; run 'shellkeep key init' first")
    journal = journal_path(paths)
    existing = _read_journal(journal)
    if existing is not None:
        new_id, done = existing
        new = found.get(new_id)
        if new is None:
            raise KeyUnavailable(
                f"the rotation in progress ({journal}) is to key {new_id}, which is not in {store.label}; "
                "import it with 'shellkeep key import FILE', or remove the journal to start over"
            )
        if found.current != new_id:
            found = KeySet(new_id, found.keys)
            store.save(found)
        resumed = True
    else:
        new = new_key()
        found = merge_key_sets(found, KeySet(new.id, (new,)), make_current=True)
        store.save(found)
        ensure_dir(journal.parent)
        _append(journal, json.dumps({"new": new.id, "old": [k.id for k in found.keys if k.id != new.id]}))
        done, resumed = set(), False
    forget_cached_keys()

    folders = sorted(iter_session_folders(paths, None), key=lambda f: f.name)
    total = len(folders)
    count = files = 0
    running: list[str] = []
    errors: list[str] = []
    for n, folder in enumerate(folders, start=1):
        if folder.name in done:
            continue
        try:
            meta = read_meta(folder)
        except (OSError, DataError) as exc:
            # Unreadable metadata: its files may still need the old key, so keep it.
            errors.append(f"{folder.name}: {exc}")
            continue
        if meta.status == Status.RUNNING.value and not is_interrupted(meta):
            running.append(meta.id)
            continue
        _remove_stale_temporaries(folder)
        changed = 0
        try:
            vault = Vault(paths, key_file)
            with session_lock(folder):  # the compression after a session renames the recording
                for path in private_files(folder):
                    if is_encrypted(path) or include_plain:
                        changed += _reencrypt_retrying(path, new, vault)
            changed += _reseal_copies(vault, folder, new, include_plain=include_plain)
            changed += reseal_env(folder, new, vault.key)  # the recorded environment's secrets, in meta.json
        except (OSError, ShellkeepError) as exc:
            errors.append(f"{meta.id}: {getattr(exc, 'strerror', None) or exc}")
            continue
        _append(journal, folder.name)
        count += 1 if changed else 0
        files += changed
        if on_session is not None:
            on_session(meta.id, n, total)

    if files:
        try:
            sweep(paths)  # the chunks sealed with the old key that no copy names any more
        except OSError as exc:
            errors.append(f"could not remove the old chunks of transcript copies: {exc.strerror or exc}")
    complete = not running and not errors
    dropped: tuple[str, ...] = ()
    if complete:
        dropped = tuple(k.id for k in found.keys if k.id != new.id)
        store.save(KeySet(new.id, (new,)))
        forget_cached_keys()
        journal.unlink()
    return RotateResult(new.id, resumed, count, files, tuple(running), tuple(errors), complete, dropped)


def _reseal_copies(vault: Vault, folder: Path, key: Key, *, include_plain: bool) -> int:
    """Store a session's copies in the chunk store again under ``key``; return how many were.

    Copies already sealed with ``key`` are left alone, plain ones unless ``include_plain``.
    Raises OSError, DataError, KeyUnavailable.
    """
    done = 0
    for path in ref_files(folder):
        name = ref_name(folder, path)
        ref = copy_ref(folder, name)
        if ref is None or (not ref.sealed and not include_plain) or sealed_with(vault, ref) == {key.id}:
            continue
        done += rewrite_copy(vault, folder, name, None, key=key)
    return done


def _remove_stale_temporaries(folder: Path) -> None:
    """Remove temporary files an interrupted rewrite left (``.<name>.<pid>.<hex>.tmp`` of a dead pid)."""
    for path in [*folder.glob(".*.tmp"), *folder.glob("agent/**/.*.tmp")]:
        parts = path.name.split(".")
        try:
            pid = int(parts[-3])
        except (IndexError, ValueError):
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue  # still alive: someone else's rewrite in progress
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        try:
            path.unlink()
        except OSError:
            pass


def _reencrypt_retrying(path: Path, key: Key, vault: Vault, attempts: int = 5) -> bool:
    """Re-encrypt ``path``; start again when another process rewrote it meanwhile (the
    background compression after a session), so the newest content is what is kept."""
    for attempt in range(attempts):
        try:
            return reencrypt(path, key, vault.key)
        except FileChanged:
            if attempt == attempts - 1 or not path.exists():
                raise
            time.sleep(0.2 * (attempt + 1))
    return False
