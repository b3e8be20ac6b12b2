"""The reads of an archive reader that is not a person (``shellkeep mcp``), each audited and scoped.

Every function takes a ``Scope`` (``app.archive_scope``) and ``reader``, the name the audit
log records (``store.audit``'s ``command``: ``mcp:CLIENT VERSION``). What they return is
the text as stored: redacted when the session was (the checkpoint patch, which is read
from git rather than stored, is redacted here with the same rules). A session sealed with
a key this machine lacks is refused with ``KeyUnavailable`` naming the key, before any
read and without an audit entry.

- ``search_scope``: ``shellkeep search``'s query language and index, in scope, one entry
  per session hit;
- ``list_scope``: the sessions' metadata, as ``ls`` (not audited: nothing recorded is read);
- ``session_content``: the exchanges, the plan and the checkpoints of one session;
- ``screen_text``: the screen at a time, an exchange or a marker, the last by default;
- ``checkpoint_patch``: the patch between two checkpoints.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.app.archive_scope import Scope
from shellkeep.app.context import Context
from shellkeep.app.remote import pulled_machines, remote_of, remote_sessions
from shellkeep.archive.hits import SearchHit
from shellkeep.archive.listing import ListedSession, SessionQuery, list_indexed
from shellkeep.archive.search import SearchRequest, search
from shellkeep.archive.since import parse_time
from shellkeep.archive.timeline import PointNames
from shellkeep.errors import DataError, KeyUnavailable, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.audit import record_many, record_read
from shellkeep.store.session import SessionMeta, Status, read_meta

if TYPE_CHECKING:
    from shellkeep.agents.base import Exchange
    from shellkeep.agents.plan import Plan
    from shellkeep.store.checkpoints import Checkpoint

__all__ = [
    "SessionContent", "checkpoint_patch", "list_scope", "parse_since", "refuse_missing_key", "screen_text", "search_scope",
    "session_content",
]

log = get_logger(__name__)


def parse_since(since: str | None) -> datetime | None:
    """Return the aware time ``since`` names (``archive.since.parse_time``), None for none.

    Raises UserInputError for a time that cannot be read.
    """
    return parse_time(since) if since else None


def search_scope(
    ctx: Context,
    scope: Scope,
    query: str,
    *,
    reader: str,
    agents: tuple[str, ...] = (),
    since: str | None = None,
    limit: int = 20,
    on_skip: Callable[[str], None] | None = None,
) -> list[SearchHit]:
    """Search the sessions in scope with ``shellkeep search``'s query language; best hits first.

    Local sessions through the index (``archive.search``), the pulled ones with ``remote``
    through each machine's own index, each hit marked with its machine. One audit entry per
    session hit (detail ``search hit``), in one append. on_skip: given each line saying which
    encrypted sessions were not searched (key missing; ``archive.search``). Raises UserInputError for a query
    or ``since`` that cannot be parsed, ShellkeepError when an index cannot be opened.
    """
    request = SearchRequest(
        query=query,
        project=None if scope.projects is None else scope.projects[0],
        also_projects=() if scope.projects is None else scope.projects[1:],
        agents=agents,
        since=parse_since(since),
        limit=limit,
    )
    hits = search(ctx.paths, request, vault=ctx.vault, recover=ctx.recover, on_skip=on_skip)
    if scope.remote:
        hits += _remote_hits(ctx, scope, request, on_skip)
        hits.sort(key=lambda hit: hit.rank)
        hits = hits[:limit]
    reads = dict.fromkeys(
        (hit.session_id, hit.project, "search hit" if hit.machine is None else f"search hit; pulled from {hit.machine}") for hit in hits
    )
    _audit(ctx, reader, list(reads))
    return hits


def _remote_hits(ctx: Context, scope: Scope, request: SearchRequest, on_skip: Callable[[str], None] | None) -> list[SearchHit]:
    everywhere = replace(request, project=None, also_projects=())
    found: list[SearchHit] = []
    for machine in pulled_machines(ctx.paths):
        where = ctx.paths.remote_paths(machine)
        for hit in search(where, everywhere, vault=ctx.vault, on_skip=on_skip):
            try:
                meta = read_meta(where.projects / hit.project / hit.session_id)
            except (OSError, DataError):
                continue
            if scope.holds(meta):
                host = (remote_of(meta) or {}).get("host") or machine[:12]
                found.append(replace(hit, machine=host))
    return found


def _audit(ctx: Context, reader: str, reads: list[tuple[str | None, str | None, str | None]]) -> None:
    try:
        record_many(ctx.paths, reader, reads)
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", ctx.paths.audit_log, exc.strerror or exc)


def list_scope(
    ctx: Context,
    scope: Scope,
    *,
    statuses: tuple[str, ...] = (),
    agents: tuple[str, ...] = (),
    since: str | None = None,
    limit: int = 20,
) -> list[ListedSession]:
    """Return the sessions in scope, newest first, with their ``meta.json`` (``ls``'s rows).

    Not audited: metadata only, as ``shellkeep ls``. Raises UserInputError for an unknown
    status or a ``since`` that cannot be parsed, ShellkeepError when the index cannot be opened.
    """
    known = {s.value for s in Status}
    for status in statuses:
        if status not in known:
            raise UserInputError(f"unknown status '{status}'; use one of {', '.join(sorted(known))}")
    after = parse_since(since)
    query = SessionQuery(
        project=None if scope.projects is None else scope.projects[0],
        also_projects=() if scope.projects is None else scope.projects[1:],
        agents=agents,
        statuses=statuses,
        since=after,
        limit=limit,
    )
    found = list_indexed(ctx.paths, query, full=True, vault=ctx.vault, recover=ctx.recover)
    if scope.remote:
        for meta in remote_sessions(ctx.paths):
            if scope.holds(meta) and _kept(meta, statuses, agents, after):
                found.append(ListedSession.of(meta))
        found.sort(key=lambda s: (s.started_at, s.id), reverse=True)
    return found[:limit]


def _kept(meta: SessionMeta, statuses: tuple[str, ...], agents: tuple[str, ...], after: datetime | None) -> bool:
    from shellkeep.store.session import parse_iso

    if statuses and meta.status not in statuses or agents and meta.agent not in agents:
        return False
    try:
        return after is None or parse_iso(meta.started_at) >= after
    except ValueError:
        return False


def refuse_missing_key(ctx: Context, meta: SessionMeta) -> None:
    """Raise KeyUnavailable when ``meta``'s recording is sealed with a key no store here holds."""
    key_id = ctx.vault.missing_key(Path(meta.cast))
    if key_id is not None:
        raise KeyUnavailable(
            f"session {meta.id} is encrypted with key {key_id}, which is not on this machine; "
            "import it with 'shellkeep key import FILE' to read it"
        )


@dataclass(frozen=True, slots=True)
class SessionContent:
    """What one session kept: its metadata, exchanges (0-based ``index``), plan and checkpoints."""

    meta: SessionMeta
    exchanges: list[Exchange]
    plan: Plan | None
    checkpoints: list[Checkpoint]


def session_content(ctx: Context, meta: SessionMeta, *, reader: str, detail: str = "exchanges") -> SessionContent:
    """Return the exchanges, the plan and the checkpoints of ``meta`` (in scope: the caller's check), audited.

    A session cut short and not collected yet has its exchanges read from the agent's own
    transcript as they would be stored (``app.conversation.live_exchanges``). Raises
    KeyUnavailable (sealed, key missing), DataError for damaged stored exchanges.
    """
    from shellkeep.app.conversation import live_exchanges
    from shellkeep.app.env_restore import agent_files_env
    from shellkeep.app.plan import session_plan
    from shellkeep.store.checkpoints import read_checkpoints

    refuse_missing_key(ctx, meta)
    env = agent_files_env(ctx, meta)  # the agent's files are where its session had them
    meta, exchanges = live_exchanges(meta, ctx.vault, ctx.config.redact, env)  # a sealed one without its key raises here
    plan = session_plan(meta, ctx.config.redact, env, ctx.vault)
    record_read(ctx.paths, reader, meta, detail=detail)  # read, and about to be returned
    return SessionContent(meta, exchanges, plan, read_checkpoints(meta.folder))


def screen_text(
    ctx: Context, meta: SessionMeta, *, reader: str, at: float | None = None, exchange: int | None = None, marker: str | None = None
) -> tuple[float | None, str]:
    """Return ``(time_s, text)``: the screen of ``meta`` at ``at`` seconds, the start of the
    1-based ``exchange`` or ``marker`` (a label or 1-based number), else its last screen
    (time None). Audited (detail ``screen ...``).

    Raises UserInputError for more than one point or an unknown exchange or marker,
    KeyUnavailable, NoRecording for a session that kept no terminal recording, DataError
    for a corrupt recording.
    """
    from shellkeep.app.reads import last_screen, read_session
    from shellkeep.archive.timeline import start_time
    from shellkeep.terminal.replay import screen_at

    refuse_missing_key(ctx, meta)
    if at is None and exchange is None and marker is None:
        return None, last_screen(ctx, meta, command=reader).to_text()
    time_s = start_time(meta, ctx.vault, at=at, marker=marker, exchange=exchange, names=_TOOL_POINTS)
    if at is not None:
        _check_at(meta, at)
    meta, cast = read_session(ctx, meta, command=reader, detail=f"screen at {time_s:.1f}s")
    return time_s, screen_at(cast, time_s).to_text()


_TOOL_POINTS = PointNames("at", "marker", "exchange", "give at (seconds since its start) instead", "get_session lists them")


def _check_at(meta: SessionMeta, at: float) -> None:
    """Refuse a time outside the session: before its start, after its end (when it has ended)."""
    end = meta.duration
    if not math.isfinite(at) or at < 0 or (end is not None and at > end):
        until = f"{end:g}, its length in seconds" if end is not None else "its length in seconds"
        raise UserInputError(f"at: give 0 to {until} (session {meta.id}), not {at:g}")


def checkpoint_patch(ctx: Context, meta: SessionMeta, *, reader: str, from_n: int | None = None, to_n: int | None = None) -> tuple[str, str, str]:
    """Return ``(from_label, to_label, patch)``: the git patch of the session's files between
    checkpoints ``from_n`` (default: the first snapshot) and ``to_n`` (default: the last),
    redacted with the user's rules unless the session was recorded without redaction.

    Never the files as they are now: nothing is written to the repository. Audited (detail
    ``diff``). Raises NoSnapshot (no snapshot of the files), UserInputError (an unknown or
    marker-only checkpoint), GitFailed.
    """
    from shellkeep.app.checkpoints import diff
    from shellkeep.capture.redaction import redactor_for
    from shellkeep.store.checkpoints import read_checkpoints

    refuse_missing_key(ctx, meta)
    if to_n is None:
        snaps = [c for c in read_checkpoints(meta.folder) if c.has_snapshot]
        to_n = max(snaps, key=lambda c: (c.time_s, c.n)).n if snaps else None
    result = diff(meta, from_n, to_n)  # raises NoSnapshot before any read when there is none
    record_read(ctx.paths, reader, meta, detail=f"diff {result.from_label} -> {result.to_label}")
    text = redactor_for(ctx.config.redact).redact(result.text) if meta.redacted else result.text
    return result.from_label, result.to_label, text
