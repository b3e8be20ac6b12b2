"""The pages and JSON endpoints of ``shellkeep serve`` (Starlette handlers, server-rendered HTML).

- ``/``: the sessions of every project, newest first, with filters (``project``, ``agent``,
  ``status``: a stored status or a live state, ``since``, ``limit``: at most this many) and
  ``q``: a search in the query language of ``shellkeep search`` (``archive.search.search``),
  best hits first, only in the sessions the filters keep;
- ``/s/{id}``: one session: its recording in asciinema-player, or, while it runs and
  publishes, its live stream (``/ws/s/{id}``); its exchanges and markers as a timeline that
  seeks the player; an input box with ``--allow-input``. A session with no recording (imported
  from an agent's own history, ``record.detail`` below ``full``) shows why and its exchanges;
- ``/stats``: what ``shellkeep stats`` sums (``since``, ``by``);
- ``/api/sessions`` (the list's rows; with ``q``: the sessions with hits, best first),
  ``/api/sessions/{id}/cast`` (the recording as asciicast v2, decrypted,
  redacted as stored; 404 with the reason for a session that has none),
  ``/api/sessions/{id}/input`` (POST ``{"text": ...}``), ``/api/stats``.

Every page or endpoint that shows a recording, its exchanges or search hits from it leaves
an audit entry (command ``serve``), as the CLI's reads do. Handlers that touch the disk are
plain functions: Starlette runs them in its thread pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import itertools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.websockets import WebSocket, WebSocketDisconnect

from shellkeep.agents.base import Exchange
from shellkeep.app.conversation import live_exchanges
from shellkeep.app.env_restore import agent_files_env
from shellkeep.app.display import format_duration, format_local_time
from shellkeep.app.history_import import agent_title, imported_from_agent
from shellkeep.app.listing import SUSPENDED_KEY_MISSING, missing_key, missing_keys
from shellkeep.app.plan import session_plan
from shellkeep.app.ps import LiveSession, LiveState, live_sessions
from shellkeep.app.reads import NoRecording, read_session
from shellkeep.app.serve import ServeSetup
from shellkeep.app.stats import USAGE_GROUPS, StatsReport, StatsRequest, compute_stats, row_label, session_costs
from shellkeep.archive.export import export_session
from shellkeep.archive.listing import ListedSession, SessionQuery, find_sessions
from shellkeep.archive.search import SearchRequest, search
from shellkeep.archive.since import parse_time
from shellkeep.archive.timeline import exchange_offset_s, read_session_markers
from shellkeep.errors import KeyUnavailable, SessionNotFound, ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.audit import record, record_read
from shellkeep.store.session import META_FILE, SessionMeta, Status, is_interrupted, read_meta, title_of
from shellkeep.vault.about import with_sealed_about
from shellkeep.vault.exchanges import read_exchanges
from shellkeep.web.live import LiveRefusedError, forward_live, has_live_socket, send_input

__all__ = ["Pages", "LIVE_STATES"]

log = get_logger(__name__)

LIVE_STATES = tuple(state.value for state in LiveState)
"""The live states the ``status`` filter also takes besides the stored statuses."""

_LIST_LIMIT = 500
_SEARCH_LIMIT = 50
_MAX_LIMIT = 10_000
_STATUS_OVERFETCH = 10  # the index knows no status: ask for more hits, keep the filtered ones
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MAX_INPUT_CHARS = 64 * 1024
_MAX_REF_CHARS = 256
_TEXT_PREVIEW = 400

_T = TypeVar("_T")


class Pages:
    """The handlers, bound to one ``ServeSetup`` (context, token, origin, input switch)."""

    def __init__(self, setup: ServeSetup, templates: Path, served_origins: frozenset[str]) -> None:
        self.setup = setup
        self.served_origins = served_origins
        self.ctx = setup.ctx
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates)),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.env.filters["duration"] = format_duration
        self.env.filters["local"] = format_local_time

    # -- rendering -----------------------------------------------------------------------

    def _page(self, name: str, status: int = 200, **values: object) -> HTMLResponse:
        return self._render(name, values, status)

    def _render(self, name: str, values: dict[str, object], status: int = 200) -> HTMLResponse:
        html = self.env.get_template(name).render(allow_input=self.setup.allow_input, **values)
        return HTMLResponse(html, status_code=status, headers=_NO_STORE)

    def _message(self, text: str, status: int) -> HTMLResponse:
        return self._page("message.html", status=status, title="shellkeep", message=text)

    def _guarded(self, work: Callable[[], _T], as_json: bool = False) -> _T | Response:
        """Run ``work``; a ShellkeepError becomes one line on a page (or a JSON error)."""
        try:
            return work()
        except SessionNotFound as exc:
            return _error(str(exc), 404, as_json) if as_json else self._message(str(exc), 404)
        except UserInputError as exc:
            return _error(str(exc), 400, as_json) if as_json else self._message(str(exc), 400)
        except KeyUnavailable as exc:
            return _error(str(exc), 409, as_json) if as_json else self._message(str(exc), 409)
        except ShellkeepError as exc:
            return _error(str(exc), 500, as_json) if as_json else self._message(str(exc), 500)

    # -- the session list ----------------------------------------------------------------

    def session_list(self, request: Request) -> Response:
        """``/``: the list, or the hits of ``q``; a bad filter or query is one line above it (400)."""
        result = self._guarded(lambda: self._list_page(_Filters.of(request)))
        assert isinstance(result, Response)
        return result

    def _list_page(self, filters: _Filters) -> Response:
        try:
            if filters.q:
                hits = self._search(filters)
                return self._page("list.html", filters=filters, hits=hits, sessions=[], projects=self._projects(),
                                  statuses=_status_choices(), error=None)
            rows = self._rows(filters, filters.max_rows(_LIST_LIMIT))
        except UserInputError as exc:
            return self._page("list.html", status=400, filters=filters, hits=None, sessions=[], projects=self._projects(),
                              statuses=_status_choices(), error=str(exc))
        return self._page("list.html", filters=filters, hits=None, sessions=rows, projects=self._projects(),
                          statuses=_status_choices(), error=None)

    def sessions_json(self, request: Request) -> Response:
        """``/api/sessions``: the list as JSON (an array of objects), same filters as ``/``."""
        filters = _Filters.of(request)
        result = self._guarded(lambda: self._json_rows(filters), as_json=True)
        if isinstance(result, Response):
            return result
        return JSONResponse([row.to_json() for row in result], headers=_NO_STORE)

    def _json_rows(self, filters: _Filters) -> list[_Row]:
        limit = filters.max_rows(_LIST_LIMIT)
        if not filters.q:
            return self._rows(filters, limit)
        rows = {row.id: row for row in self._rows(dataclasses.replace(filters, all_sessions=True), None)}
        found = [rows[i] for i in dict.fromkeys(str(hit["session_id"]) for hit in self._search(filters)) if i in rows]
        return found[:limit]

    def _rows(self, filters: _Filters, limit: int | None) -> list[_Row]:
        live = {s.id: s for s in live_sessions(self.ctx)}
        statuses: tuple[str, ...] = ()
        if filters.status in LIVE_STATES:
            statuses = (Status.RUNNING.value,)
        elif filters.status:
            if filters.status not in {s.value for s in Status}:
                raise UserInputError(f"unknown status '{filters.status}'; use one of {', '.join(_status_choices())}")
            statuses = (filters.status,)
        query = SessionQuery(
            project=filters.project or None,
            agents=(filters.agent,) if filters.agent else (),
            statuses=statuses,
            since=parse_time(filters.since) if filters.since else None,
            limit=None if filters.status in LIVE_STATES else limit,
            trivial=None if filters.all_sessions else False,
        )
        found = find_sessions(self.ctx.paths, query, full=False, vault=self.ctx.vault, recover=self.ctx.recover)
        missing = missing_keys(self.ctx, found)
        costs = session_costs(self.ctx) if found else {}
        rows = [_Row.of(s, live.get(s.id), s.id in missing, costs.get(s.id, 0.0)) for s in found]
        if filters.status in LIVE_STATES:
            rows = [r for r in rows if r.state == filters.status]
        return rows[:limit] if limit is not None else rows

    def _search(self, filters: _Filters) -> list[dict[str, object]]:
        """Return the hits of ``filters.q`` in the sessions the filters keep (status included)."""
        limit = filters.max_rows(_SEARCH_LIMIT)
        # The search shows hits in short sessions too: so does the status filter on them.
        kept = {row.id for row in self._rows(dataclasses.replace(filters, all_sessions=True), None)} if filters.status else None
        request = SearchRequest(
            query=filters.q,
            project=filters.project or None,
            agents=(filters.agent,) if filters.agent else (),
            since=parse_time(filters.since) if filters.since else None,
            limit=limit if kept is None else limit * _STATUS_OVERFETCH,
        )
        hits = search(self.ctx.paths, request, vault=self.ctx.vault, recover=self.ctx.recover)
        if kept is not None:
            hits = [hit for hit in hits if hit.session_id in kept][:limit]
        for session_id, project in dict.fromkeys((h.session_id, h.project) for h in hits):
            try:
                record(self.ctx.paths, "serve", session_id, project=project, detail="search hit")
            except OSError as exc:
                log.warning("could not write the audit log (%s)", exc.strerror or exc)
        return [
            {**dataclasses.asdict(hit), "parts": _highlighted(hit.snippet, hit.highlights)}
            for hit in hits
        ]

    def _projects(self) -> list[str]:
        return sorted(p.name for p in self._project_folders())

    # -- one session ---------------------------------------------------------------------

    def _meta(self, session_id: str) -> SessionMeta:
        """Return the session ``session_id`` names, as the CLI resolves it: an id, a unique id
        prefix or a name (``Context.resolve``); an interrupted one repaired.

        An exact id is looked for in each project's folder first, without listing every
        session. Raises SessionNotFound, AmbiguousSession (a prefix of several: "matches N
        sessions"), DataError for an unreadable ``meta.json``.
        """
        if _SESSION_ID.fullmatch(session_id) and session_id not in (".", ".."):
            for project in self._project_folders():
                folder = project / session_id
                if (folder / META_FILE).is_file():
                    meta = read_meta(folder)
                    return self.ctx.recover(meta) if is_interrupted(meta) else meta
        if session_id.strip() and session_id.isprintable() and len(session_id) <= _MAX_REF_CHARS:
            try:  # the ref builds no path here: a name may hold any printable character
                return self.ctx.resolve(session_id)
            except SessionNotFound:
                pass
        raise SessionNotFound(f"no session '{session_id}'; pick one from the list")

    def _project_folders(self) -> list[Path]:
        try:
            return [p for p in self.ctx.paths.projects.iterdir() if p.is_dir()]
        except OSError:
            return []

    def session_page(self, request: Request) -> Response:
        """``/s/{id}``: the player (recorded or live), the timeline, the input box."""
        replay = request.query_params.get("replay") == "1"  # a live session's recording so far (?t= to seek)
        result = self._guarded(lambda: self._session_values(request.path_params["session_id"], replay))
        if isinstance(result, Response):
            return result
        return self._render("session.html", result)

    def _session_values(self, session_id: str, replay: bool = False) -> dict[str, object]:
        meta = self._meta(session_id)
        live = next((s for s in live_sessions(self.ctx) if s.id == meta.id), None)
        streams = live is not None and has_live_socket(meta.folder)
        values: dict[str, object] = {
            "meta": meta,
            "title": meta.name or meta.id,
            "state": live.state if live is not None else None,
            "duration": live.duration if live is not None else meta.duration,
            "is_live": streams and not replay,
            "replaying": streams and replay,
            "problem": None,
            "no_recording": None,
            "exchanges": [],
            "markers": [],
            "plan": None,
            "session_title": live.title if live is not None and live.title else title_of(with_sealed_about(meta, self.ctx.vault)),
            "resumed_as": self._resumed_as(meta),
        }
        key_id = missing_key(self.ctx, meta)
        if key_id is not None:
            values["problem"] = (
                f"{SUSPENDED_KEY_MISSING}: this session is encrypted with key {key_id}, which is not on this machine; "
                "import it with 'shellkeep key import' and reload"
            )
            return values
        no_recording = _no_recording(meta)
        values["no_recording"] = no_recording
        record_read(self.ctx.paths, "serve", meta, detail="page")
        files_env = agent_files_env(self.ctx, meta)  # the agent's files are where its session had them
        values["plan"] = session_plan(meta, self.ctx.config.redact, files_env, self.ctx.vault)  # the agent's task list: stored, or live from its transcript
        try:
            exchanges = live_exchanges(meta, self.ctx.vault, self.ctx.config.redact, files_env)[1]  # cut short: read live
            markers = read_session_markers(meta, self.ctx.vault) if no_recording is None else []
        except KeyUnavailable as exc:
            values["problem"] = f"{exc}; import the key with 'shellkeep key import' and reload"
            return values
        except (ShellkeepError, OSError) as exc:
            values["problem"] = f"the recording cannot be read: {exc}"
            return values
        values["exchanges"] = [
            {
                "n": e.index + 1,
                "time_s": exchange_offset_s(meta, e) if no_recording is None else None,  # nothing to seek
                "prompt": _preview(e.prompt),
                "answer": _preview(e.answer),
                "tools": _tool_rows(e),
            }
            for e in exchanges
        ]
        values["markers"] = [{"n": m.n, "time_s": m.time_s, "label": m.label} for m in markers]
        return values

    def _resumed_as(self, meta: SessionMeta) -> str | None:
        """Return the id of the newest run that resumed ``meta``'s session (as the list says), None if none."""
        found = find_sessions(self.ctx.paths, SessionQuery(project=meta.project), full=False, vault=self.ctx.vault, recover=self.ctx.recover)
        return next((s.resumed_as for s in found if s.id == meta.id), None)

    def session_cast(self, request: Request) -> Response:
        """``/api/sessions/{id}/cast``: the recording as asciicast v2 (audited)."""

        def work() -> Response:
            try:
                meta, _ = read_session(self.ctx, self._meta(request.path_params["session_id"]), command="serve", detail="recording")
            except NoRecording as exc:  # imported from an agent's history, record.detail, nothing recorded
                return _error(str(exc), 404)
            out = io.BytesIO()
            export_session(meta, "cast", out, self.ctx.vault)
            return Response(out.getvalue(), media_type="application/x-asciicast", headers=_NO_STORE)

        result = self._guarded(work, as_json=True)
        assert isinstance(result, Response)
        return result

    def session_input(self, request: Request, payload: object) -> Response:
        """``POST /api/sessions/{id}/input``: type ``{"text": ...}`` into a live session.

        Only with ``--allow-input`` and from the server's own origin (else 403); blocks while
        the text is handed to the recorder (``web.live.send_input``).
        """
        if not self.setup.allow_input:
            return _error("this server is read-only; start it with 'shellkeep serve --allow-input'", 403, True)
        if request.headers.get("origin") not in self.setup_origins(request):
            return _error("cross-origin input refused", 403, True)
        text = payload.get("text") if isinstance(payload, dict) else None
        if not isinstance(text, str) or not text or len(text) > _MAX_INPUT_CHARS:
            return _error(f"give {{\"text\": ...}} with 1 to {_MAX_INPUT_CHARS} characters", 400, True)
        result = self._guarded(lambda: self._meta(request.path_params["session_id"]), as_json=True)
        if isinstance(result, Response):
            return result
        meta = result
        client = request.client.host if request.client else "unknown"
        try:
            send_input(meta.folder, text, f"web {client}")
        except OSError:
            return _error(f"session {meta.id} is not live; nothing was typed", 409, True)
        return JSONResponse({"sent": len(text)}, headers=_NO_STORE)

    def setup_origins(self, request: Request) -> set[str]:
        """Return the origins a state-changing request may come from (as for WebSockets)."""
        origins = set(self.served_origins)
        if not origins:
            host = request.headers.get("host")
            if host:
                origins.add(f"http://{host}")
        return origins

    async def live_socket(self, websocket: WebSocket) -> None:
        """``/ws/s/{id}``: the live stream, subprotocol ``v2.asciicast`` (see ``web.live``)."""
        session_id = websocket.path_params["session_id"]
        try:
            meta = self._meta(session_id)
        except ShellkeepError:
            await websocket.close(code=1008)
            return
        if not has_live_socket(meta.folder):
            await websocket.close(code=1008)
            return
        offered = websocket.scope.get("subprotocols") or []
        await websocket.accept(subprotocol="v2.asciicast" if "v2.asciicast" in offered else None)
        record_read(self.ctx.paths, "serve", meta, detail="live")

        async def watch_close() -> None:
            with contextlib.suppress(WebSocketDisconnect):
                while True:
                    message = await websocket.receive()
                    if message["type"] == "websocket.disconnect":
                        return

        forward = asyncio.ensure_future(forward_live(meta.folder, websocket.send_text))
        closed = asyncio.ensure_future(watch_close())
        done, pending = await asyncio.wait({forward, closed}, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if forward in done:
            exc = forward.exception()
            if isinstance(exc, LiveRefusedError):  # 1013 "try again later", the reason for people
                with contextlib.suppress(Exception):
                    await websocket.close(code=1013, reason=f"session {meta.id} has {exc}; try again later"[:120])
                return
            if exc is not None:
                log.warning("live stream of %s stopped: %s", meta.id, exc)
            with contextlib.suppress(Exception):
                await websocket.close(code=1000 if exc is None else 1011)

    # -- stats ---------------------------------------------------------------------------

    def stats_page(self, request: Request) -> Response:
        """``/stats``: the sums of ``shellkeep stats``."""
        since = request.query_params.get("since", "").strip()
        by = request.query_params.get("by", "").strip()
        result = self._guarded(lambda: self._stats(since, by))
        if isinstance(result, Response):
            return result
        groups = list(result.groups)
        biggest = max([_tokens(g) for g in groups] + [1])
        return self._page("stats.html", title="stats", report=result, since=since, by=by, groups=USAGE_GROUPS, row_label=row_label,
                          rows=[(g, round(100 * _tokens(g) / biggest)) for g in groups])

    def stats_json(self, request: Request) -> Response:
        """``/api/stats``: the report of ``shellkeep stats --json``."""
        since = request.query_params.get("since", "").strip()
        by = request.query_params.get("by", "").strip()
        result = self._guarded(lambda: self._stats(since, by), as_json=True)
        if isinstance(result, Response):
            return result
        return JSONResponse(dataclasses.asdict(result), headers=_NO_STORE)

    def _stats(self, since: str, by: str) -> StatsReport:
        if by and by not in USAGE_GROUPS:
            raise UserInputError(f"unknown grouping '{by}'; use one of {', '.join(USAGE_GROUPS)}")
        return compute_stats(self.ctx, StatsRequest(since=parse_time(since) if since else None, by=by or None))


# -- values the templates show -------------------------------------------------------------

_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_NO_STORE = {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "content-security-policy": _CSP,  # nothing from the network, no framing
    "x-content-type-options": "nosniff",
}


@dataclasses.dataclass(frozen=True, slots=True)
class _Filters:
    project: str = ""
    agent: str = ""
    status: str = ""
    since: str = ""
    q: str = ""
    all_sessions: bool = False
    limit: str = ""

    def max_rows(self, default: int) -> int:
        """Return ``limit`` as a number (``default`` when not given); raises UserInputError."""
        if not self.limit:
            return default
        if not self.limit.isdigit() or not 1 <= int(self.limit) <= _MAX_LIMIT:
            raise UserInputError(f"limit must be a whole number from 1 to {_MAX_LIMIT}, not '{self.limit}'")
        return int(self.limit)

    @classmethod
    def of(cls, request: Request) -> _Filters:
        params = request.query_params
        return cls(
            project=params.get("project", "").strip(),
            agent=params.get("agent", "").strip(),
            status=params.get("status", "").strip(),
            since=params.get("since", "").strip(),
            q=params.get("q", "").strip(),
            all_sessions=params.get("all") == "1",
            limit=params.get("limit", "").strip(),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class _Row:
    id: str
    name: str | None
    agent: str
    status: str
    state: str | None
    started_at: str
    duration: float | None
    exit_code: int | None
    project: str
    title: str = ""
    cost_usd: float | None = 0.0
    """The estimated cost (``app.stats.session_costs``); None when a model it used has no price."""
    resumed_as: str | None = None

    @classmethod
    def of(cls, listed: ListedSession, live: LiveSession | None, key_missing: bool, cost_usd: float | None = 0.0) -> _Row:
        status = SUSPENDED_KEY_MISSING if key_missing else listed.status
        title = live.title if live is not None and live.title else listed.title
        return cls(listed.id, listed.name, listed.agent, status, live.state if live else None, listed.started_at,
                   live.duration if live else listed.duration, listed.exit_code, listed.project, title, cost_usd, listed.resumed_as)

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _no_recording(meta: SessionMeta) -> str | None:
    """Return why the session has no terminal recording to play (None: it has one)."""
    cast = Path(meta.cast)
    agent = imported_from_agent(meta)
    if agent is not None and not cast.exists():
        return f"imported from {agent_title(agent)}'s own history: there is no terminal recording, only the exchanges"
    if meta.detail != "full" and not cast.exists():
        return f"this session kept no terminal recording (record.detail = {meta.detail!r})"
    if meta.recording_error and _is_empty(cast):
        return f"this session recorded nothing ({meta.recording_error})"
    return None


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def _status_choices() -> list[str]:
    return [s.value for s in Status] + list(LIVE_STATES)


def _error(text: str, status: int, as_json: bool = True) -> Response:
    return JSONResponse({"error": text}, status_code=status, headers=_NO_STORE)


def _highlighted(snippet: str, ranges: list[list[int]]) -> list[tuple[str, bool]]:
    parts: list[tuple[str, bool]] = []
    pos = 0
    for start, end in ranges:
        parts.append((snippet[pos:start], False))
        parts.append((snippet[start:end], True))
        pos = end
    parts.append((snippet[pos:], False))
    return [p for p in parts if p[0]]


def _tool_rows(exchange: Exchange) -> list[dict[str, str]]:
    """Return an exchange's tool calls as ``{"name", "input", "result"}`` rows: each call with its
    arguments on one line and the result in the same place of ``tool_results`` ('' when none came
    back); a result past the last call gets a row of its own, named ''."""
    return [
        {"name": call.name if call else "", "input": call.summary if call else "", "result": result or ""}
        for call, result in itertools.zip_longest(exchange.tool_calls, exchange.tool_results)
    ]


def _preview(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_PREVIEW else text[: _TEXT_PREVIEW - 1] + "…"


def _tokens(row: object) -> int:
    return sum(int(getattr(row, name)) for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
