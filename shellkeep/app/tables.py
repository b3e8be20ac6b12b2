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
from shellkeep.app.remote import remote_sessions
from shellkeep.archive.export.table import Row, session_rows, write_table
from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import open_output
from shellkeep.store.audit import record_many, remote_detail
from shellkeep.store.session import SessionMeta, iter_session_folders, parse_iso, read_meta
from shellkeep.vault.exchanges import read_exchanges

log = get_logger(__name__)


def table_rows(
    ctx: Context, *, since: datetime | None = None, remote: bool = False, machine: str | None = None
) -> Iterator[Row]:
    """Yield the rows of every session of every project (``archive.export.table.COLUMNS``).

    since: only sessions started at or after it (an aware datetime). remote: the sessions
    pulled from other machines (``sync pull``) instead of this machine's; machine: only those
    of that machine (id prefix or host name; implies remote). A session whose ``meta.json``
    is damaged is skipped with a logged warning. Sessions are read in batches of
    ``AUDIT_BATCH``, each batch audited in one append before its rows are yielded (a pulled
    session's entry says where it came from). Raises KeyUnavailable when a sealed
    ``exchanges.jsonl``'s key is missing, UserInputError when ``machine`` matches none pulled.
    """
    if remote or machine is not None:
        pulled = sorted(remote_sessions(ctx.paths, machine), key=lambda m: (m.started_at, m.id))
        if not pulled:
            log.warning("no sessions pulled from other machines; run 'shellkeep sync pull' first")
        metas: list[SessionMeta] = [m for m in pulled if _started_since(m, since)]
        batches: Iterator[list[SessionMeta]] = (metas[i : i + AUDIT_BATCH] for i in range(0, len(metas), AUDIT_BATCH))
    else:
        folders = sorted(iter_session_folders(ctx.paths, None), key=lambda f: f.name)
        batches = (
            [m for m in (_meta_since(f, since) for f in folders[i : i + AUDIT_BATCH]) if m is not None]
            for i in range(0, len(folders), AUDIT_BATCH)
        )
    for batch in batches:
        try:
            record_many(ctx.paths, "export", [(m.id, m.project, remote_detail(m, "all")) for m in batch])
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
    return meta if _started_since(meta, since) else None


def _started_since(meta: SessionMeta, since: datetime | None) -> bool:
    if since is None:
        return True
    try:
        return parse_iso(meta.started_at) >= since
    except ValueError:
        return False


def export_table(ctx: Context, fmt: str, out: IO[bytes], *, since: datetime | None = None, remote: bool = False,
                 machine: str | None = None) -> int:
    """Write every session's rows (``table_rows``) to ``out`` as ``fmt`` (jsonl or csv); return the rows.

    Raises UserInputError for an unknown format, OSError from ``out``.
    """
    return write_table(table_rows(ctx, since=since, remote=remote, machine=machine), fmt, out)


def export_table_to_file(ctx: Context, fmt: str, target: Path | str, *, since: datetime | None = None,
                         remote: bool = False, machine: str | None = None) -> int:
    """Write the table to ``target`` as ``store.atomic.open_output`` does (mode 0600); return the rows.

    A failed export leaves no half-written regular file. Raises ShellkeepError naming
    ``target`` when its folder is missing or not writable, UserInputError for a bad format.
    """
    if remote or machine is not None:
        remote_sessions(ctx.paths, machine)  # a machine pulled from nowhere fails before the file is made
    with open_output(target) as out:
        return export_table(ctx, fmt, out, since=since, remote=remote, machine=machine)
