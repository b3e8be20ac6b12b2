"""The vault: which keys open and seal this user's stored files, resolved once per command.

``app.context`` builds one ``Vault`` from the resolved settings (``encryption.encrypt`` and
``encryption.key_file``) and passes it down; nothing below ``app`` reads the config to find
keys. Every read of a stored file's plaintext and every sealed write goes through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from shellkeep.errors import KeyUnavailable, ShellkeepError
from shellkeep.store.paths import Paths
from shellkeep.vault import crypto

if TYPE_CHECKING:
    from shellkeep.asciicast.reader import Cast
    from shellkeep.vault.crypto import Key

# The key stores (vault.keys) and the recording readers (vault.recording) load on first use:
# a listing of plain sessions (ls, search over an up-to-date index) needs neither.


@dataclass(frozen=True, slots=True)
class Vault:
    """Keys for one command: where they are looked up, and whether new files are sealed.

    paths: the data folder's layout (key file and keyring entry names derive from it).
    key_file: ``encryption.key_file`` of the config ("" for the default stores).
    encrypt: ``encryption.encrypt``: seal the files this command writes.
    remember_keys: keep a key found for the rest of the process; False looks it up in the
    stores at every use (``serve``: a key moved away stops decrypting at once).
    """

    paths: Paths
    key_file: str = ""
    encrypt: bool = False
    remember_keys: bool = True

    def key(self, key_id: str) -> Key:
        """Return the key with ``key_id`` from any store; raises KeyUnavailable."""
        from shellkeep.vault.keys import find_key

        return find_key(self.paths, key_id, self.key_file, cached=self.remember_keys)

    def writing_key(self) -> Key | None:
        """Return the key new files are sealed with (made on first use), None when ``encrypt`` is off.

        Raises KeyUnavailable when no key can be found or stored.
        """
        from shellkeep.vault.keys import current_key

        return current_key(self.paths, self.key_file, create=True) if self.encrypt else None

    def key_for_rewrite(self, key_id: str) -> Key:
        """Return the key to rewrite an encrypted file with: the current key, else ``key_id``'s.

        Raises KeyUnavailable when neither can be found.
        """
        from shellkeep.vault.keys import current_key

        try:
            return current_key(self.paths, self.key_file)
        except KeyUnavailable:
            return self.key(key_id)

    def missing_key(self, path: Path) -> str | None:
        """Return the id of the key ``path`` is sealed with when no store holds it, else None.

        None for a plain, unreadable or too short file, and for one whose key is found
        (cached for the process unless ``remember_keys`` is off). Reads the file's header only; never raises.
        """
        key_id = crypto.key_id_of_file(path)
        if key_id is None:
            return None
        try:
            self.key(key_id)
        except KeyUnavailable:
            return key_id
        except (OSError, ShellkeepError):  # a damaged key store: reading the file will say so
            return None
        return None

    def open_plain(self, path: Path) -> IO[bytes]:
        """Open a stored file's plaintext (decrypted when sealed; zstd is not undone)."""
        return crypto.open_plain(path, self.key)

    def read_private(self, path: Path) -> bytes:
        """Return a stored file's plaintext; raises FileNotFoundError, DataError, KeyUnavailable."""
        return crypto.read_private(path, self.key)

    def write_private(self, path: Path, data: bytes) -> None:
        """Store ``data`` at ``path`` atomically (0600), sealed when ``encrypt`` is on; raises OSError, KeyUnavailable."""
        crypto.write_private(path, data, self.writing_key())

    def open_stream(self, path: Path) -> IO[bytes]:
        """Open a recording's plain asciicast bytes (see ``recording.open_stream``)."""
        from shellkeep.vault import recording

        return recording.open_stream(path, self)

    def open_recording(self, path: Path) -> Cast:
        """Open a recording of any kind (see ``recording.open_recording``)."""
        from shellkeep.vault import recording

        return recording.open_recording(path, self)
