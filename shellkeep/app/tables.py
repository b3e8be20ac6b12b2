"""Export every session as one table (``shellkeep export --all``): rows streamed from the session folders.

The session folders and their ``meta.json`` and ``exchanges.jsonl`` are read one session at
a time, oldest first by id, so memory does not grow with the number of sessions (only
their folder names are held, to sort them, and a batch of ``AUDIT_BATCH`` metadata).
Each session read is audited.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO

from shellkeep.app.context import Context
from shellkeep.archive.export.table import Row, session_rows, write_table
from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import open_output
from shellkeep.store.audit import record_many
from shellkeep.store.session import SessionMeta, iter_session_folders, parse_iso, read_meta
from shellkeep.vault.exchanges import read_exchanges

log = get_logger(__name__)


def table_rows(ctx: Context, *, since: datetime | None = None) -> Iterator[Row]:
    """Yield the rows of every session of every project (``archive.export.table.COLUMNS``).

    since: only sessions started at or after it (an aware datetime). A session whose
    ``meta.json`` is damaged is skipped with a logged warning. Sessions are read in batches
    of ``AUDIT_BATCH``, each batch audited in one append before its rows are yielded.
    Raises KeyUnavailable when a sealed ``exchanges.jsonl``'s key is missing.
    """
    folders = sorted(iter_session_folders(ctx.paths, None), key=lambda f: f.name)
    for start in range(0, len(folders), AUDIT_BATCH):
        batch = [m for m in (_meta_since(f, since) for f in folders[start : start + AUDIT_BATCH]) if m is not None]
        try:
            record_many(ctx.paths, "export", [(m.id, m.project, "all") for m in batch])
        except OSError as exc:
            log.warning("could not write the audit log %s (%s)", ctx.paths.audit_log, exc.strerror or exc)
        for meta in batch:
            yield from session_rows(meta, read_exchanges(meta, ctx.vault))


AUDIT_BATCH = 256
"""How many sessions one audit append covers: the log is fsynced once per batch, not per session."""


def _meta_since(folder: Path, since: datetime | None) -> SessionMeta | None:
    """Return the session in ``folder`` when it started at or after ``since``; None to skip it."""
    try:
        meta = read_meta(folder)
    except (DataError, OSError) as exc:
        log.warning("skipping %s: %s", folder, exc)
        return None
    if since is None:
        return meta
    try:
        return meta if parse_iso(meta.started_at) >= since else None
    except ValueError:
        return None


def export_table(ctx: Context, fmt: str, out: IO[bytes], *, since: datetime | None = None) -> int:
    """Write every session's rows to ``out`` as ``fmt`` (jsonl or csv); return the number of rows.

    Raises UserInputError for an unknown format, OSError from ``out``.
    """
    return write_table(table_rows(ctx, since=since), fmt, out)


def export_table_to_file(ctx: Context, fmt: str, target: Path | str, *, since: datetime | None = None) -> int:
    """Write the table to ``target`` as ``store.atomic.open_output`` does (mode 0600); return the rows.

    A failed export leaves no half-written regular file. Raises ShellkeepError naming
    ``target`` when its folder is missing or not writable, UserInputError for a bad format.
    """
    with open_output(target) as out:
        return export_table(ctx, fmt, out, since=since)
