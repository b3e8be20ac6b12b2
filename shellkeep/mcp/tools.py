"""The bodies of the MCP tools: call the scoped, audited reads of ``app`` and shape their results.

Each function takes the ``Reader`` of the server (its context, scope and the client's name
for the audit log) and the tool's arguments, and returns the JSON-ready result. The SDK
(``mcp.server``) is not imported here: ``server.py`` registers these functions as tools.
Archive text goes out as quoted items with their source, bounded and paged (``pages``).
Errors are raised as ``ShellkeepError``; the server turns them into tool errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from shellkeep.app.archive_reads import checkpoint_patch, list_scope, screen_text, search_scope, session_content
from shellkeep.app.archive_scope import Scope, find_in_scope
from shellkeep.app.context import Context
from shellkeep.app.remote import remote_of
from shellkeep.errors import UserInputError
from shellkeep.mcp.pages import MAX_TEXT_CHARS, NOTE, Item, call_key, json_size, page_of, read_cursor, rows_page, short
from shellkeep.store.session import SessionMeta, iso, parse_iso

if TYPE_CHECKING:
    from shellkeep.agents.base import Exchange
    from shellkeep.archive.listing import ListedSession

__all__ = ["MAX_LIMIT", "Reader", "clamp", "get_diff", "get_screen", "get_session", "list_sessions", "search_sessions"]

MAX_LIMIT = 50
"""The most search hits or sessions one call returns (a larger ``limit`` is clamped)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """Who reads: the command's context, the scope it may see, ``name`` for the audit log
    (``mcp:CLIENT VERSION``), and the most characters of archive text in one response."""

    ctx: Context
    scope: Scope
    name: str
    max_chars: int = MAX_TEXT_CHARS


def clamp(limit: int | None, default: int = 20) -> int:
    """Return ``limit`` at most ``MAX_LIMIT`` (``default`` for None).

    Raises UserInputError for a limit below 1.
    """
    if limit is not None and limit < 1:
        raise UserInputError(f"limit: give 1 to {MAX_LIMIT}, not {limit}")
    return min(MAX_LIMIT, default if limit is None else limit)


def _at(started_at: str, offset_s: float | None) -> str:
    """Return the ISO time ``offset_s`` seconds after ``started_at`` (``started_at`` itself when unknown)."""
    if offset_s is None:
        return started_at
    try:
        return iso(parse_iso(started_at) + timedelta(seconds=offset_s))
    except ValueError:
        return started_at


def search_sessions(reader: Reader, query: str, agent: str | None, since: str | None, limit: int | None, cursor: str | None) -> dict[str, object]:
    """Return the hits of ``query`` in scope as quoted snippets, best first, paged; ``skipped`` says
    which encrypted sessions were not searched (their key missing), when some were not."""
    limit = clamp(limit)
    key = call_key("search_sessions", query, agent, since, limit)
    start = read_cursor(cursor, key)
    skipped: list[str] = []
    hits = search_scope(
        reader.ctx, reader.scope, query, reader=reader.name, agents=(agent,) if agent else (), since=since, limit=limit, on_skip=skipped.append
    )
    items = []
    for hit in hits:
        source: dict[str, object] = {
            "session": hit.session_id,
            "time": _at(hit.started_at, hit.time),
            "kind": hit.kind,
            "agent": short(hit.agent),
            "offset_s": round(hit.time, 3),
        }
        if hit.exchange is not None:
            source["exchange"] = hit.exchange
        if hit.session_name:
            source["session_name"] = short(hit.session_name)
        if hit.machine is not None:
            source["machine"] = short(hit.machine)
        items.append(Item(source, hit.snippet))
    page = page_of(items, key, start, reader.max_chars)
    result: dict[str, object] = {"note": NOTE, "query": query, "hits": page.items, "next_cursor": page.next_cursor}
    if skipped:
        result["skipped"] = "; ".join(skipped)
    return result


def list_sessions(
    reader: Reader, status: str | None, agent: str | None, since: str | None, limit: int | None, cursor: str | None
) -> dict[str, object]:
    """Return the sessions in scope, newest first: metadata only, paged."""
    limit = clamp(limit)
    key = call_key("list_sessions", status, agent, since, limit)
    start, _ = read_cursor(cursor, key)
    found = list_scope(
        reader.ctx, reader.scope, statuses=(status,) if status else (), agents=(agent,) if agent else (), since=since, limit=limit
    )
    page = rows_page([_row(s) for s in found], key, start, reader.max_chars)
    return {"sessions": page.items, "next_cursor": page.next_cursor}


def _row(listed: ListedSession) -> dict[str, object]:
    meta = listed.meta()
    return _meta_json(meta)


def _meta_json(meta: SessionMeta) -> dict[str, object]:
    git = meta.git_start or {}
    row: dict[str, object] = {
        "id": meta.id,
        "name": short(meta.name),
        "title": short(meta.title) or None,
        "agent": short(meta.agent),
        "status": meta.status,
        "exit_code": meta.exit_code,
        "started_at": meta.started_at,
        "duration_s": meta.duration,
        "cwd": short(meta.cwd),
        "project": short(meta.project),
        "git_branch": short(str(git["branch"])) if git.get("branch") is not None else None,
        "exchange_count": meta.exchange_count,
    }
    remote = remote_of(meta)
    if remote is not None:
        row["machine"] = short(remote.get("host") or remote.get("machine"))
    return row


def get_session(reader: Reader, ref: str, cursor: str | None) -> dict[str, object]:
    """Return one session: its metadata, checkpoints, plan and exchanges as quoted items, paged by exchange."""
    meta = find_in_scope(reader.ctx, reader.scope, ref)
    key = call_key("get_session", meta.id)
    start = read_cursor(cursor, key)
    content = session_content(reader.ctx, meta, reader=reader.name, detail="exchanges (mcp get_session)")
    meta = content.meta
    items: list[Item] = []
    if content.plan is not None:
        plan_text = "\n".join([content.plan.summary(), *content.plan.lines()])
        items.append(Item({"session": meta.id, "time": meta.started_at, "kind": "plan"}, plan_text))
    for exchange in content.exchanges:
        items += _exchange_items(meta, exchange)
    result: dict[str, object] = {"note": NOTE, "session": _meta_json(meta)}
    room = reader.max_chars - json_size(result["session"])
    if start == (0, 0):
        checkpoints: list[dict[str, object]] = [
            {"n": c.n, "time": _at(meta.started_at, c.time_s), "label": short(c.label), "exchange": c.exchange, "has_snapshot": c.has_snapshot}
            for c in content.checkpoints
        ]
        shown = rows_page(checkpoints, key, 0, room // 2).items  # at most half the page; get_diff takes any number
        result["checkpoints"] = shown
        if len(shown) < len(checkpoints):
            result["checkpoints_not_shown"] = len(checkpoints) - len(shown)
        room -= json_size(shown)
    page = page_of(items, key, start, max(room, reader.max_chars // 4))
    result["items"] = page.items
    result["next_cursor"] = page.next_cursor
    return result


def _exchange_items(meta: SessionMeta, exchange: Exchange) -> list[Item]:
    number = exchange.index + 1
    time = exchange.time or meta.started_at

    def source(kind: str) -> dict[str, object]:
        return {"session": meta.id, "time": time, "kind": kind, "exchange": number}

    items = [Item(source("prompt"), exchange.prompt)]
    if exchange.answer.strip():
        items.append(Item(source("answer"), exchange.answer))
    if exchange.tool_calls:
        items.append(Item(source("tool_calls"), "\n".join(f"{c.name}: {c.summary}" for c in exchange.tool_calls)))
    return items


def get_screen(
    reader: Reader, ref: str, at: float | None, exchange: int | None, marker: str | None, cursor: str | None
) -> dict[str, object]:
    """Return the screen text of one session at a point (the last screen by default), paged."""
    meta = find_in_scope(reader.ctx, reader.scope, ref)
    key = call_key("get_screen", meta.id, at, exchange, marker)
    start = read_cursor(cursor, key)
    time_s, text = screen_text(reader.ctx, meta, reader=reader.name, at=at, exchange=exchange, marker=marker)
    offset = time_s if time_s is not None else meta.duration
    source: dict[str, object] = {"session": meta.id, "time": _at(meta.started_at, offset), "kind": "screen"}
    if offset is not None:
        source["offset_s"] = round(offset, 3)
    page = page_of([Item(source, text)], key, start, reader.max_chars)
    return {"note": NOTE, "items": page.items, "next_cursor": page.next_cursor}


def get_diff(reader: Reader, ref: str, from_n: int | None, to_n: int | None, cursor: str | None) -> dict[str, object]:
    """Return the patch of one session's files between two checkpoints, paged."""
    meta = find_in_scope(reader.ctx, reader.scope, ref)
    key = call_key("get_diff", meta.id, from_n, to_n)
    start = read_cursor(cursor, key)
    from_label, to_label, patch = checkpoint_patch(reader.ctx, meta, reader=reader.name, from_n=from_n, to_n=to_n)
    from_label, to_label = short(from_label) or "", short(to_label) or ""
    source: dict[str, object] = {"session": meta.id, "time": meta.started_at, "kind": "diff", "from": from_label, "to": to_label}
    page = page_of([Item(source, patch)], key, start, reader.max_chars - json_size([from_label, to_label]))
    return {"note": NOTE, "from": from_label, "to": to_label, "items": page.items, "next_cursor": page.next_cursor}
