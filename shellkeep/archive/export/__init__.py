"""Export a session: its recording (cast), transcript (txt), conversation (md), data (json)
or a self-contained audit page (html).

``export_session`` writes one format to a binary stream; ``export_to_file`` writes it to a
file through a temporary name, so a failed export leaves no half-written file behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from shellkeep.errors import UserInputError
from shellkeep.archive.export import formats, html
from shellkeep.store.atomic import open_output
from shellkeep.store.session import SessionMeta
from shellkeep.vault.about import with_sealed_about
from shellkeep.vault.access import Vault

__all__ = ["FORMATS", "export_session", "export_to_file"]

FORMATS: tuple[str, ...] = ("cast", "txt", "md", "json", "html", "agent")
"""The export formats, as ``--format`` takes them."""


def export_session(meta: SessionMeta, fmt: str, out: IO[bytes], vault: Vault) -> None:
    """Write ``meta``'s session to ``out`` in format ``fmt`` (one of ``FORMATS``).

    vault: reads the (sealed, compressed) recording and exchanges.
    Blocks while the recording is read (and rendered, for txt and html). Raises
    UserInputError for an unknown format, DataError for a corrupt recording.
    """
    writers = {
        "cast": formats.write_cast,
        "txt": formats.write_txt,
        "md": formats.write_md,
        "json": formats.write_json,
        "html": html.write_html,
        "agent": formats.write_agent,
    }
    writer = writers.get(fmt)
    if writer is None:
        raise UserInputError(f"unknown export format '{fmt}'; use one of {', '.join(FORMATS)}")
    writer(with_sealed_about(meta, vault), out, vault)  # an encrypted session's title is sealed


def export_to_file(meta: SessionMeta, fmt: str, target: Path | str, vault: Vault) -> None:
    """Write the export to ``target`` as ``store.atomic.open_output`` does (mode 0600).

    A regular file is replaced through a temporary file and a rename, a symlink's target
    is written so, a device or pipe is written directly. Raises ShellkeepError naming
    ``target`` when its folder is missing or not writable (nothing is left behind),
    UserInputError for an empty name or a folder, DataError for a corrupt recording.
    """
    with open_output(target) as out:
        export_session(meta, fmt, out, vault)
