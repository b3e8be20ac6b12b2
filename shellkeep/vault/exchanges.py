"""A session's stored exchanges: ``exchanges.jsonl``, read and written through the vault.

Format: one ``agents.records.Exchange.to_json`` object a line (JSON Lines), sealed when
encryption is on (``vault.crypto``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.agents.base import Exchange
from shellkeep.logs import get_logger
from shellkeep.store.session import EXCHANGES_FILE, SessionMeta
from shellkeep.vault.crypto import read_private
from shellkeep.vault.scrubber import redact_jsonl_text

if TYPE_CHECKING:
    from shellkeep.capture.redaction import Redactor
    from shellkeep.vault.access import Vault

log = get_logger(__name__)


def is_collected(meta: SessionMeta) -> bool:
    """Return whether ``meta``'s exchanges were stored (``exchanges.jsonl`` exists)."""
    return (meta.folder / EXCHANGES_FILE).is_file()


def read_exchanges(meta: SessionMeta, vault: Vault | None, limit: int | None = None) -> list[Exchange]:
    """Return the stored exchanges of a session (the last ``limit`` when given); [] if none.

    Reads ``exchanges.jsonl`` (one ``Exchange.to_json`` object a line), decrypting it when
    it is encrypted; a malformed line is skipped with a logged warning, an unreadable file
    gives [] with one. vault: the keys for a sealed file (None: plain files only).
    Raises KeyUnavailable (its key cannot be found) and DataError (a damaged encrypted
    record), both ``ShellkeepError``.
    """
    path = meta.folder / EXCHANGES_FILE
    try:
        lines = read_private(path, vault.key if vault is not None else None).decode("utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("could not read %s: %s", path, exc)
        return []
    found: list[Exchange] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            found.append(Exchange.from_json(obj))
        except Exception as exc:  # noqa: BLE001 - a bad line is skipped, not fatal
            log.warning("skipping a malformed exchange in %s: %s", path, exc)
    if limit is None:
        return found
    return found[-limit:] if limit > 0 else []


def write_exchanges(folder: Path, exchanges: list[Exchange], vault: Vault, *, redactor: Redactor | None = None) -> None:
    """Store ``exchanges`` as ``exchanges.jsonl`` (one JSON object a line), atomically, 0600.

    Sealed when ``vault.encrypt`` is on. redactor: applied to every string value (prompts,
    answers, tool calls) first; None stores them as given.
    Raises OSError, KeyUnavailable (encryption on, no key).
    """
    text = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in exchanges)
    if redactor is not None:
        text = redact_jsonl_text(text, redactor)
    vault.write_private(folder / EXCHANGES_FILE, text.encode("utf-8"))
