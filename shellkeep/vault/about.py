"""Keep what an encrypted session was about (its title) sealed beside it, and read it back.

With ``encryption.encrypt`` on, ``SessionMeta.about`` (the agent's own title, else the first
prompt, redacted: ``app.about``) is content, and ``meta.json`` is never sealed: it is kept in
``about.txt`` (``store.session.ABOUT_FILE``), sealed like the exchanges, and read through the
vault by whatever shows a title (``ls``, ``show``, the web pages, export). Never written back
into ``meta.json``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.session import ABOUT_FILE, SessionMeta

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

__all__ = ["store_sealed_about", "with_sealed_about"]

log = get_logger(__name__)


def store_sealed_about(meta: SessionMeta, text: str, vault: Vault) -> None:
    """Store ``text`` as ``meta``'s sealed ``about.txt``; a failure is logged (the title is extra)."""
    try:
        vault.write_private(meta.folder / ABOUT_FILE, text.encode("utf-8"))
    except (OSError, ShellkeepError) as exc:
        log.warning("could not store the sealed title of %s: %s", meta.id, exc)


def with_sealed_about(meta: SessionMeta, vault: Vault | None) -> SessionMeta:
    """Return ``meta`` with ``about`` read from its sealed ``about.txt`` when it has neither a
    title nor ``about`` (in memory only: never write the result to ``meta.json``). ``meta``
    itself when there is no such file, no vault, or it cannot be read (no key: logged)."""
    path = meta.folder / ABOUT_FILE
    if meta.title or meta.about or vault is None or not path.is_file():
        return meta
    try:
        text = vault.read_private(path).decode("utf-8", "replace")
    except (OSError, ShellkeepError) as exc:
        log.debug("could not read the sealed title of %s: %s", meta.id, exc)
        return meta
    return dataclasses.replace(meta, about=" ".join(text.split()) or None)
