"""Search the sessions' text: FTS5 over the index for plain sessions, merged with the hits
of encrypted ones searched in memory (``archive.private_search``).

The query language and its FTS5 form are ``archive.fts``'s; this module brings the index up
to date (``archive.scan.sync`` with content), applies the filters and merges the hits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.content import content_of
from shellkeep.archive.fts import fts_query, select_hits
from shellkeep.archive.hits import SearchHit
from shellkeep.archive.index import meta_from_json, meta_json_of, sources_for, with_index
from shellkeep.archive.listing import session_filter
from shellkeep.archive.private_search import search_private
from shellkeep.archive.scan import sync
from shellkeep.store.paths import Paths
from shellkeep.store.session import Recover, SessionMeta

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

__all__ = ["SearchHit", "SearchRequest", "search"]


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A full-text search: ``query`` in the syntax of ``fts.parse_query``; filters as in
    ``SessionQuery`` (project None: every project; ``also_projects`` searched with it, the
    same repository at former paths); ``limit``: most hits returned."""

    query: str
    project: str | None = None
    also_projects: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    since: datetime | None = None
    limit: int = 20


def search(
    paths: Paths,
    request: SearchRequest,
    *,
    vault: Vault | None = None,
    recover: Recover | None = None,
    on_skip: Callable[[str], None] | None = None,
) -> list[SearchHit]:
    """Search transcripts, prompts, answers and marker labels; best hits first.

    Plain sessions are searched with FTS5 in the index, encrypted ones with the same FTS5
    query over an in-memory index of their decrypted ``search.jsonl`` (``archive.fts``,
    ``private_search.search_private``, which builds the file for a session indexed before
    it existed); the hits, both ranked by bm25, are merged by rank. Blocks while the
    encrypted sessions are decrypted and indexed in memory. on_skip: given the line saying
    which encrypted sessions were not searched (their key missing), besides the warning logged.

    Raises UserInputError for a query FTS5 cannot parse, DataError / ShellkeepError as
    ``list_indexed``.
    """
    fts_query(request.query)  # a query without a word is refused before any work
    if not paths.projects.is_dir():
        return []
    src = sources_for(paths, vault, recover)

    def work(conn: sqlite3.Connection, fresh: bool) -> list[SearchHit]:
        projects = None if request.project is None else (request.project, *request.also_projects)
        for project in projects or (None,):
            sync(conn, src, project, fresh=fresh, content=True)
            fresh = False  # a fresh index was rebuilt whole by the first sync
        where, args = session_filter(projects, request.agents, (), request.since, None, None, alias="s")
        where = where.replace(" WHERE ", " AND ", 1)
        hits = select_hits(conn, request.query, where=where, args=args, limit=request.limit)
        private = _private_sessions(conn, where, args)
        if private:
            hits += search_private(
                src.vault,
                private,
                request.query,
                limit=request.limit,
                build=lambda meta: content_of(meta, src.vault).chunks,
                on_skip=on_skip,
            )
            hits.sort(key=lambda hit: hit.rank)
        return hits[: request.limit]

    return with_index(paths, work)


def _private_sessions(conn: sqlite3.Connection, where: str, args: Sequence[object]) -> list[SessionMeta]:
    """Return the ended sessions matching a search's filters (``where``: ``AND ...`` clauses
    on alias ``s``) whose ``meta.json`` the index keeps no copy of: the encrypted ones
    (``search_private`` passes over any other). Their ``meta.json`` is read from disk."""
    sql = (
        "SELECT s.folder FROM sessions s LEFT JOIN session_json j ON j.id = s.id "
        f"WHERE s.status != 'running' AND j.id IS NULL{where}"
    )
    found = []
    for (folder,) in conn.execute(sql, list(args)):
        meta_json = meta_json_of(folder, None)
        if meta_json is not None:
            found.append(meta_from_json(meta_json, Path(folder)))
    return found
