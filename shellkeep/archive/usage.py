"""Sum the token usage of the indexed sessions (``shellkeep stats``), grouped by agent,
project, day or model.

The ``usage`` table holds one row per session and model, summed from the session's
``exchanges.jsonl`` and refreshed whenever its ``meta.json`` changes (``usage_key``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.index import (
    BATCH_SESSIONS,
    Sources,
    meta_from_json,
    meta_json_of,
    sources_for,
    with_index,
    write_transaction,
)
from shellkeep.archive.listing import session_filter
from shellkeep.archive.scan import sync
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.store.session import Recover, SessionMeta

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

__all__ = ["USAGE_GROUPS", "UsageGroup", "UsageReport", "UsageTokens", "usage_report"]

log = get_logger(__name__)

USAGE_GROUPS = ("agent", "project", "day", "model")
"""What ``usage_report`` can group by: the session's agent, project key, local start day
(``YYYY-MM-DD``), or the model that answered."""

_GROUP_SQL = {
    None: "''",
    "agent": "s.agent",
    "project": "s.project",
    "day": "date(s.started_s, 'unixepoch', 'localtime')",
    "model": "COALESCE(u.model, '')",
    "session": "s.id",  # each session apart: the web list's cost column (not a ``stats --by``)
}


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """The sessions of one group (``key``; '' for all of them or for "no model"): how many,
    their recorded seconds (``duration_s``, ended sessions) and their exchanges."""

    key: str
    sessions: int
    duration_s: float
    exchanges: int


@dataclass(frozen=True, slots=True)
class UsageTokens:
    """Tokens one group spent with one model through one agent (``model`` '' when the
    agent named none): input, output, cache_read and cache_write, as the agent reported them."""

    key: str
    model: str
    agent: str
    input: int
    output: int
    cache_read: int
    cache_write: int


@dataclass(frozen=True, slots=True)
class UsageReport:
    """What ``usage_report`` returns: ``groups`` and ``tokens`` keyed as asked (largest
    groups first), and ``total``, every matching session counted once."""

    groups: list[UsageGroup]
    tokens: list[UsageTokens]
    total: UsageGroup


def _usage_rows(meta: SessionMeta, vault: Vault) -> list[tuple[str, int, int, int, int, int]]:
    """Return (model, exchanges, input, output, cache_read, cache_write) per model of a session.

    Summed from its stored exchanges; when none can be read (a missing key, an exchanges
    file older than usage) its ``meta.json`` totals count, under model ''. Never raises.
    """
    from shellkeep.vault.exchanges import read_exchanges  # cold path: see ``archive.content.content_of``

    try:
        exchanges = read_exchanges(meta, vault)
    except ShellkeepError as exc:
        log.debug("usage of %s from its meta.json: %s", meta.id, exc)
        exchanges = []
    rows: dict[str, list[int]] = {}
    for exchange in exchanges:
        row = rows.setdefault(exchange.model or "", [0, 0, 0, 0, 0])
        row[0] += 1
        if exchange.usage is not None:
            row[1] += exchange.usage.input
            row[2] += exchange.usage.output
            row[3] += exchange.usage.cache_read
            row[4] += exchange.usage.cache_write
    if not rows and (meta.usage or meta.exchange_count):
        usage = meta.usage or {}
        rows[""] = [meta.exchange_count] + [int(usage.get(name) or 0) for name in ("input", "output", "cache_read", "cache_write")]
    return [(model, *row) for model, row in rows.items()]  # type: ignore[misc]


def _catch_up_usage(conn: sqlite3.Connection, src: Sources) -> None:
    """Write the ``usage`` rows of ended sessions whose rows are missing or older than their
    ``meta.json`` (reads ``exchanges.jsonl`` only; writes no session file)."""
    rows = conn.execute(
        "SELECT s.id, s.folder, s.meta_key, j.meta_json FROM sessions s LEFT JOIN session_json j ON j.id = s.id "
        "WHERE s.status != 'running' AND (s.usage_key IS NULL OR s.usage_key != s.meta_key)"
    ).fetchall()
    for start in range(0, len(rows), BATCH_SESSIONS):
        batch = []
        for sid, folder, key, meta_json in rows[start : start + BATCH_SESSIONS]:
            text = meta_json_of(folder, meta_json)
            found = _usage_rows(meta_from_json(text, Path(folder)), src.vault) if text is not None else []
            batch.append((sid, key, found))
        with write_transaction(conn):
            for sid, key, found in batch:
                conn.execute("DELETE FROM usage WHERE session_id = ?", (sid,))
                conn.executemany(
                    "INSERT INTO usage (session_id, model, exchanges, input_tokens, output_tokens, cache_read_tokens, "
                    "cache_write_tokens) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(sid, *row) for row in found],
                )
                conn.execute("UPDATE sessions SET usage_key = ? WHERE id = ?", (key, sid))


def usage_report(
    paths: Paths,
    *,
    by: str | None = None,
    since: datetime | None = None,
    vault: Vault | None = None,
    recover: Recover | None = None,
) -> UsageReport:
    """Return the sessions, time, exchanges and tokens of every project, grouped ``by`` one
    of ``USAGE_GROUPS`` (None: one group), counting sessions started at or after ``since``.

    The index is brought up to date first (``sync``) and the token usage of sessions not yet
    summed is read from their ``exchanges.jsonl`` (once per change of their ``meta.json``).
    Grouped by model, a session that used two models counts in both groups (the total
    counts it once); sessions without any model group under ''.

    Raises DataError / ShellkeepError as ``list_indexed``.
    """
    if by not in _GROUP_SQL:
        raise ValueError(f"cannot group by {by!r}")
    empty = UsageReport([], [], UsageGroup("", 0, 0.0, 0))
    if not paths.projects.is_dir():
        return empty
    src = sources_for(paths, vault, recover)
    where, args = session_filter(None, (), (), since, None, None, alias="s")

    def groups(conn: sqlite3.Connection, key_sql: str) -> list[UsageGroup]:
        if "u." in key_sql:
            exchanges, source = "COALESCE(u.exchanges, s.exchange_count)", "sessions s LEFT JOIN usage u ON u.session_id = s.id"
        else:
            exchanges, source = "s.exchange_count", "sessions s"
        sql = (
            f"SELECT {key_sql} AS k, COUNT(DISTINCT s.id), COALESCE(SUM(s.duration), 0), COALESCE(SUM({exchanges}), 0) "
            f"FROM {source}{where} GROUP BY k ORDER BY COUNT(DISTINCT s.id) DESC, k"
        )
        return [UsageGroup(str(k), n, float(d), int(e)) for k, n, d, e in conn.execute(sql, args)]

    def work(conn: sqlite3.Connection, fresh: bool) -> UsageReport:
        sync(conn, src, None, fresh=fresh)
        _catch_up_usage(conn, src)
        key_sql = _GROUP_SQL[by]
        sql = (
            f"SELECT {key_sql} AS k, u.model, s.agent, SUM(u.input_tokens), SUM(u.output_tokens), "
            "SUM(u.cache_read_tokens), SUM(u.cache_write_tokens) FROM usage u JOIN sessions s ON s.id = u.session_id"
            f"{where} GROUP BY k, u.model, s.agent ORDER BY k, u.model, s.agent"
        )
        tokens = [UsageTokens(str(row[0]), *row[1:]) for row in conn.execute(sql, args)]
        total = groups(conn, "''")
        return UsageReport(groups(conn, key_sql), tokens, total[0] if total else empty.total)

    return with_index(paths, work)
