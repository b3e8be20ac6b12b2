"""Export many sessions as one table for BI tools: JSON Lines or CSV, one row per session and per exchange.

Every row has the same ``COLUMNS`` (``kind`` tells a session row from an exchange row); a
value that does not apply to a row's kind is null (JSON ``null``, an empty CSV field).
Rows are written as they come (``write_table``), so memory stays flat however many
sessions there are. Formats: JSON Lines (jsonlines.org, one UTF-8 object a line) and CSV
(RFC 4180, a header line, ``\\r\\n`` line ends, UTF-8).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from shellkeep.agents.base import Exchange
from shellkeep.errors import UserInputError
from shellkeep.store.session import SessionMeta, is_interrupted

__all__ = ["COLUMNS", "TABLE_FORMATS", "Row", "session_rows", "write_table"]

TABLE_FORMATS: tuple[str, ...] = ("jsonl", "csv")
"""The formats of ``export --all``."""

COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("kind", "string", "'session' or 'exchange'"),
    ("session_id", "string", "the session's id (sorts by start time)"),
    ("session_name", "string", "the name given with --name, or null"),
    ("project", "string", "the project's folder name (base name and a short hash)"),
    ("project_root", "string", "the project's absolute path"),
    ("agent", "string", "the agent or program recorded (claude, codex, bash...)"),
    ("host", "string", "the machine it ran on"),
    ("status", "string", "finished, killed, hangup, interrupted or running"),
    ("started_at", "timestamp", "session start, ISO 8601 UTC"),
    ("ended_at", "timestamp", "session end, ISO 8601 UTC, or null"),
    ("duration_s", "float", "session length in seconds, or null"),
    ("exit_code", "integer", "the program's exit status, or null"),
    ("exchange_count", "integer", "session rows: the number of exchanges"),
    ("exchange_index", "integer", "exchange rows: 0-based position in the session"),
    ("time", "timestamp", "session rows: started_at; exchange rows: when the prompt was sent, or null"),
    ("model", "string", "exchange rows: the model that answered, or null"),
    ("input_tokens", "integer", "prompt tokens (session rows: the session's total), or null"),
    ("output_tokens", "integer", "generated tokens, or null"),
    ("cache_read_tokens", "integer", "prompt tokens served from the cache, or null"),
    ("cache_write_tokens", "integer", "prompt tokens written to the cache, or null"),
    ("tool_calls", "integer", "exchange rows: the number of tool calls"),
    ("prompt", "string", "exchange rows: the prompt as stored (redacted)"),
    ("answer", "string", "exchange rows: the answer as stored (redacted)"),
)
"""(name, type, meaning) of every column, in order: the schema docs/export.md documents."""

_NAMES = tuple(name for name, _, _ in COLUMNS)

Row = dict[str, "str | int | float | None"]
"""One row: every name of ``COLUMNS`` to its value."""


def _status(meta: SessionMeta) -> str:
    return "interrupted" if is_interrupted(meta) else meta.status


def session_rows(meta: SessionMeta, exchanges: Sequence[Exchange]) -> Iterator[Row]:
    """Yield ``meta``'s session row, then one row per exchange, in order."""
    usage = meta.usage or {}
    common: Row = {
        "session_id": meta.id,
        "session_name": meta.name,
        "project": meta.project,
        "project_root": meta.project_root,
        "agent": meta.agent,
        "host": meta.host or None,
        "status": _status(meta),
        "started_at": meta.started_at,
        "ended_at": meta.ended_at,
        "duration_s": meta.duration,
        "exit_code": meta.exit_code,
    }
    yield {
        **dict.fromkeys(_NAMES),
        **common,
        "kind": "session",
        "exchange_count": len(exchanges) or meta.exchange_count,
        "time": meta.started_at,
        "input_tokens": usage.get("input"),
        "output_tokens": usage.get("output"),
        "cache_read_tokens": usage.get("cache_read"),
        "cache_write_tokens": usage.get("cache_write"),
    }
    for exchange in exchanges:
        u = exchange.usage
        yield {
            **dict.fromkeys(_NAMES),
            **common,
            "kind": "exchange",
            "exchange_index": exchange.index,
            "time": exchange.time,
            "model": exchange.model,
            "input_tokens": u.input if u else None,
            "output_tokens": u.output if u else None,
            "cache_read_tokens": u.cache_read if u else None,
            "cache_write_tokens": u.cache_write if u else None,
            "tool_calls": len(exchange.tool_calls),
            "prompt": exchange.prompt,
            "answer": exchange.answer,
        }


def write_table(rows: Iterable[Row], fmt: str, out: IO[bytes]) -> int:
    """Write ``rows`` to ``out`` as ``fmt`` (one of ``TABLE_FORMATS``), each as it comes; return how many.

    CSV starts with the header line even when there is no row. Raises UserInputError for
    an unknown format; OSError from ``out``.
    """
    if fmt not in TABLE_FORMATS:
        raise UserInputError(f"unknown table format '{fmt}'; use one of {', '.join(TABLE_FORMATS)}")
    count = 0
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
            count += 1
        return count
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=_NAMES)
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
        count += 1
        if text.tell() > 65536:  # flush in pieces: memory stays flat
            out.write(text.getvalue().encode("utf-8"))
            text.seek(0)
            text.truncate()
    out.write(text.getvalue().encode("utf-8"))
    return count
