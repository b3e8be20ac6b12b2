"""List the indexed sessions: the ``ls`` query, the git projects a repository was recorded in,
and the listing from the session folders when the index cannot be opened at all.

Every listing first brings the index up to date with the folders (``archive.scan.sync``).
``session_filter`` is the SQL of the filters that listing, search and usage share.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.archive.index import is_plain, meta_from_json, meta_json_of, sources_for, started_s, with_index
from shellkeep.agents.registry import typed_command
from shellkeep.archive.scan import sync
from shellkeep.errors import DataError, ShellkeepError
from shellkeep.git.identity import GitIdentity, remote_key
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths
from shellkeep.vault.about import with_sealed_about
from shellkeep.store.session import (
    CUT_SHORT_STATUSES,
    SHORT_SESSION_S,
    Recover,
    SessionMeta,
    is_trivial,
    list_sessions,
    read_meta,
    readable_text,
    title_of,
)

if TYPE_CHECKING:
    import sqlite3

    from shellkeep.vault.access import Vault

__all__ = [
    "GitProject", "ListedSession", "SessionQuery", "find_sessions", "git_projects", "list_indexed", "resumed_as_of",
    "session_filter",
]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class SessionQuery:
    """Which sessions ``list_indexed`` returns, newest first.

    project: a project key (folder name under ``projects/``), or None for every project.
    agents / statuses: keep sessions whose agent / status is one of these (empty: any).
    since / until: aware datetimes; a session counts by its start (since <= start < until).
    name: the session's name contains this text (case-insensitive), or matches it as a
    glob when it holds ``*``, ``?`` or ``[``. limit: at most this many (None: all).
    trivial: False leaves out the sessions shorter than a second with no input
    (``store.session.is_trivial``), True keeps only those, None (the default) keeps both.
    also_projects: more project keys listed with ``project`` (the same repository recorded
    at a former path: ``app.moves.moved_projects``); ignored when ``project`` is None.
    """

    project: str | None = None
    also_projects: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    name: str | None = None
    limit: int | None = None
    trivial: bool | None = None


@dataclass(slots=True, eq=True)  # not frozen: a frozen __init__ takes 7x as long (19 ms per 10,000 rows)
class ListedSession:
    """A session as ``ls`` lists it: the columns of its table, and ``meta.json`` as stored
    (``meta_json``, None unless asked for: reading it costs most of a 10 000-row listing).
    plain: its recording is known to be plain (False: encrypted, or too new to tell).

    ``to_json()`` returns the ``meta.json`` object (the ``ls --json`` contract); ``meta()``
    builds the full ``SessionMeta``. Both need ``meta_json``.
    """

    id: str
    name: str | None
    agent: str
    status: str
    started_at: str
    duration: float | None
    exit_code: int | None
    project: str
    folder: str
    meta_json: str | None = field(default=None, repr=False)
    plain: bool = True
    detail: str = "full"  # meta.json detail (record.detail); "imported" for an agent's own session imported
    title: str = ""
    """What the session was about, on one line (``store.session.title_of``: its ``title``,
    else ``about``, else its command)."""
    resumed_as: str | None = None
    """The id of the newest run that resumed this session (its failed native resumes aside), None if none."""

    def to_json(self) -> dict[str, object]:
        """Return the session's ``meta.json`` object; raises ValueError without ``meta_json``."""
        if self.meta_json is None:
            raise ValueError("listed without its metadata; pass full=True")
        obj: dict[str, object] = json.loads(self.meta_json)
        return obj

    def meta(self) -> SessionMeta:
        """Return the full metadata; raises ValueError without ``meta_json``."""
        if self.meta_json is None:
            raise ValueError("listed without its metadata; pass full=True")
        return meta_from_json(self.meta_json, Path(self.folder))

    @classmethod
    def of(cls, meta: SessionMeta) -> ListedSession:
        """Build from metadata read from a folder."""
        return cls(
            meta.id,
            meta.name,
            meta.agent,
            meta.status,
            meta.started_at,
            meta.duration,
            meta.exit_code,
            meta.folder.parent.name,
            str(meta.folder),
            json.dumps(meta.to_json(), ensure_ascii=False),
            is_plain(meta),
            meta.detail,
            title_of(meta),
        )


def resumed_as_of(metas: Sequence[SessionMeta]) -> dict[str, str]:
    """Return, for each session of ``metas`` that one of them resumes, the newest such run's id."""
    found: dict[str, SessionMeta] = {}
    for meta in metas:
        if meta.parent and not meta.resume_failed:
            known = found.get(meta.parent)
            if known is None or (meta.started_at, meta.id) > (known.started_at, known.id):
                found[meta.parent] = meta
    return {parent: run.id for parent, run in found.items()}


def list_indexed(
    paths: Paths, query: SessionQuery, *, full: bool = True, vault: Vault | None = None, recover: Recover | None = None
) -> list[ListedSession]:
    """Return the sessions matching ``query``, newest first, from an up-to-date index.

    full: include each session's stored ``meta.json`` (for JSON output and ``meta()``).
    vault, recover: the keys and the recovery hook of the command (see ``Sources``).

    Raises DataError for an index from a newer shellkeep, ShellkeepError when it cannot
    be opened.
    """

    if not paths.projects.is_dir():
        return []  # nothing recorded yet: no index to make

    def work(conn: sqlite3.Connection, fresh: bool) -> list[ListedSession]:
        sync(conn, sources_for(paths, vault, recover), query.project, fresh=fresh)
        projects = None if query.project is None else (query.project, *query.also_projects)
        where, args = session_filter(
            projects, query.agents, query.statuses, query.since, query.until, query.name, trivial=query.trivial
        )
        sql = (
            "SELECT id, name, agent, status, started_at, duration, exit_code, project, folder, "
            + ("(SELECT meta_json FROM session_json j WHERE j.id = sessions.id), " if full else "NULL, ")
            + "EXISTS (SELECT 1 FROM session_json j WHERE j.id = sessions.id), coalesce(detail, 'full'), "
            + "(SELECT coalesce(nullif(json_extract(j.meta_json, '$.title'), ''), json_extract(j.meta_json, '$.about')) "
            + "FROM session_json j WHERE j.id = sessions.id), "
            + "(SELECT json_array(json(json_extract(j.meta_json, '$.command')), json_extract(j.meta_json, '$.agent_session_id')) "
            + "FROM session_json j WHERE j.id = sessions.id), "
            + "(SELECT r.id FROM sessions r WHERE r.resumes = sessions.id ORDER BY r.started_s DESC, r.id DESC LIMIT 1) "
            + f"FROM sessions{where} ORDER BY started_s DESC, id DESC"
        )
        if query.limit is not None:
            sql += " LIMIT ?"
            args.append(query.limit)
        # Positional: a fifth less time than keywords over 10,000 rows (the fields' order is the SELECT's);
        # typed loosely because the row's length is the SELECT's, which mypy cannot count.
        make: Callable[..., ListedSession] = ListedSession
        listed = [make(*row[:-5], bool(row[-5]), row[-4], _title(row[-3], row[2], row[-2]), row[-1]) for row in conn.execute(sql, args)]
        # The index keeps no copy of the meta.json of a session not known to be plain (sealed,
        # or no recording): its title is read from the folder, and from its sealed about.txt.
        listed = [item if item.plain else _read_in(item, vault, full) for item in listed]
        if not full:
            return listed
        found = []
        for item in listed:
            meta_json = meta_json_of(item.folder, item.meta_json)
            if meta_json is not None:
                found.append(item if meta_json is item.meta_json else replace(item, meta_json=meta_json))
        return found

    return with_index(paths, work)


def _title(title: str | None, agent: str, command_json: str | None) -> str:
    """Return a listed session's title: ``title`` (its own, else ``about``), else its command
    as typed (``command_json``: ``[command, agent_session_id]`` from ``meta.json``, see
    ``typed_command``), on one line, as ``title_of`` gives it."""
    if not title:
        try:
            command, agent_session_id = json.loads(command_json or "[[], null]")
        except ValueError:
            command, agent_session_id = [], None
        if isinstance(command, list):
            typed = typed_command([str(arg) for arg in command], agent, agent_session_id if isinstance(agent_session_id, str) else None)
            title = " ".join(typed)
        else:
            title = ""
    return " ".join(title.split())


def _read_in(item: ListedSession, vault: Vault | None, full: bool) -> ListedSession:
    """Return ``item`` with what its folder's ``meta.json`` holds, read once: its title (else
    its sealed ``about.txt``, ``vault.about``; vault: the keys; else its command; '' when
    unreadable) and, when ``full``, the ``meta.json`` text itself."""
    try:
        meta = read_meta(Path(item.folder))
        title = title_of(with_sealed_about(meta, vault))
    except (OSError, ShellkeepError):
        return replace(item, title="")
    meta_json = json.dumps(meta.to_json(), ensure_ascii=False) if full else item.meta_json
    return replace(item, title=title, meta_json=meta_json)


@dataclass(frozen=True, slots=True)
class GitProject:
    """A project folder whose sessions were recorded in a git work tree: its key, the root
    path it was recorded at, and the repository's identity there."""

    project: str
    project_root: str
    identity: GitIdentity


def git_projects(
    paths: Paths, identity: GitIdentity, *, vault: Vault | None = None, recover: Recover | None = None
) -> list[GitProject]:
    """Return the projects whose sessions hold a git identity that ``identity`` matches.

    Every project folder is brought up to date first (``sync``); the candidates are the
    sessions sharing the remote (the index keeps its ``remote_key``) or the root commit,
    each then compared by ``GitIdentity.matches``. One entry per project and root path.
    Raises as ``list_indexed``.
    """
    if not paths.projects.is_dir() or not (identity.remote or identity.root_commit):
        return []

    def work(conn: sqlite3.Connection, fresh: bool) -> list[GitProject]:
        sync(conn, sources_for(paths, vault, recover), None, fresh=fresh)
        rows = conn.execute(
            "SELECT DISTINCT project, project_root, git_remote, git_root_commit FROM sessions "
            "WHERE (git_remote IS NOT NULL AND git_remote = ?) OR (git_root_commit IS NOT NULL AND git_root_commit = ?)",
            (remote_key(identity.remote) if identity.remote else None, identity.root_commit),
        ).fetchall()
        found: dict[tuple[str, str], GitProject] = {}
        for project, root, remote, commit in rows:
            theirs = GitIdentity(remote, commit)
            if root and identity.matches(theirs):
                found.setdefault((project, root), GitProject(project, root, theirs))
        return list(found.values())

    return with_index(paths, work)


def session_filter(
    project: str | Sequence[str] | None,
    agents: Sequence[str],
    statuses: Sequence[str],
    since: datetime | None,
    until: datetime | None,
    name: str | None,
    alias: str = "",
    *,
    trivial: bool | None = None,
) -> tuple[str, list[object]]:
    """Return the SQL ``WHERE`` clause (with its leading " WHERE ", or "") and arguments that
    keep the ``sessions`` rows matching these filters, as ``SessionQuery`` describes them.

    alias: the table's alias in the caller's query ("" for none).
    """
    p = f"{alias}." if alias else ""
    clauses: list[str] = []
    args: list[object] = []
    if isinstance(project, str):
        project = (project,)
    if project is not None:
        clauses.append(f"{p}project IN ({', '.join('?' * len(project))})")
        args.extend(project)
    if agents:
        clauses.append(f"{p}agent IN ({', '.join('?' * len(agents))})")
        args.extend(agents)
    if statuses:
        clauses.append(f"{p}status IN ({', '.join('?' * len(statuses))})")
        args.extend(statuses)
    if since is not None:
        clauses.append(f"{p}started_s >= ?")
        args.append(since.timestamp())
    if until is not None:
        clauses.append(f"{p}started_s < ?")
        args.append(until.timestamp())
    if name:
        name = readable_text(name)  # as meta.json stores a name that was not UTF-8
        if any(c in name for c in "*?["):
            clauses.append(f"{p}name GLOB ?")
            args.append(name)
        else:
            clauses.append(f"instr(lower({p}name), lower(?)) > 0")
            args.append(name)
    if trivial is not None:
        # As store.session.is_trivial; an unknown input_bytes (NULL) is never trivial.
        cut_short = ", ".join("?" for _ in CUT_SHORT_STATUSES)
        test = (
            f"({p}duration IS NOT NULL AND {p}duration < ? AND COALESCE({p}input_bytes, 1) = 0"
            f" AND NOT (COALESCE({p}detail, 'full') != 'full' AND COALESCE({p}exchange_count, 0) > 0)"
            f" AND {p}status NOT IN ({cut_short}))"
        )
        clauses.append(test if trivial else f"NOT {test}")
        args.extend((SHORT_SESSION_S, *CUT_SHORT_STATUSES))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), args


_fallbacks_said: set[str] = set()  # the reasons find_sessions fell back to the folders, in this process


def find_sessions(
    paths: Paths, query: SessionQuery, *, full: bool = True, vault: Vault | None = None, recover: Recover | None = None
) -> list[ListedSession]:
    """Return the sessions matching ``query``, newest first: from the index, or, when it
    cannot be opened at all, from the session folders (slower, with one warning).
    full: as in ``list_indexed``.

    Raises DataError for an index written by a newer shellkeep.
    """
    try:
        return list_indexed(paths, query, full=full, vault=vault, recover=recover)
    except DataError:
        raise
    except ShellkeepError as exc:
        if str(exc) not in _fallbacks_said:  # ls asks twice (shown and hidden): said once
            _fallbacks_said.add(str(exc))
            log.warning("%s; listing from the session folders", exc)
    every = list_sessions(paths, None, recover=recover)
    resumed = resumed_as_of(every)
    found = [replace(ListedSession.of(meta), resumed_as=resumed.get(meta.id)) for meta in every if _matches(meta, query)]
    return found[: query.limit] if query.limit else found


def _matches(meta: SessionMeta, query: SessionQuery) -> bool:
    import fnmatch

    if query.project is not None and meta.folder.parent.name not in (query.project, *query.also_projects):
        return False
    if query.agents and meta.agent not in query.agents:
        return False
    if query.statuses and meta.status not in query.statuses:
        return False
    if query.trivial is not None and is_trivial(meta) != query.trivial:
        return False
    started = started_s(meta)
    if query.since is not None and started < query.since.timestamp():
        return False
    if query.until is not None and started >= query.until.timestamp():
        return False
    if query.name:
        name = meta.name or ""
        if any(c in query.name for c in "*?["):
            return fnmatch.fnmatchcase(name, query.name)
        return query.name.lower() in name.lower()
    return True
