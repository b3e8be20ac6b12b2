"""Know GitHub Copilot CLI (``copilot``): its session-state folders, event log, ``--resume``.

Sessions: ``$COPILOT_HOME`` (else ``~/.copilot``) ``/session-state/<session uuid>/events.jsonl``,
an append-only event log beside ``workspace.yaml`` (Copilot CLI 1.0 session state, as
documented by empathic/toolpath): envelope ``{type, id, parentId, timestamp, data}`` with
``session.start{sessionId, context{cwd}}``, ``user.message{content}``, ``assistant.message
{content, toolRequests[{toolCallId, name, arguments}], outputTokens, model}``,
``tool.execution_complete{toolCallId, success, result{content}}`` and, where present,
``assistant.usage{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}``.
Token usage: Copilot CLI 1.0.102 writes ``session.usage_record{usage{model, inputTokens,
outputTokens, ...}}`` events; 1.0.88 writes none, only rows of ``assistant_usage_events``
(``session_id, model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
created_at``) in ``~/.copilot/session-store.db`` (SQLite, opened read-only), taken when the
event log has no usage: each row counts for the exchange whose prompt came last before it.
``--session-id <uuid>`` sets a new session's id; resume with ``copilot --resume <id>``.
Task list: rows of the ``todos`` table of ``session.db`` beside ``events.jsonl``, written by the
model through the ``sql`` tool (``read_copilot_plan``).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from shellkeep.agents import jsonl
from shellkeep.agents.adapter import HELP, VERSION, CommandAdapter, TranscriptLayout
from shellkeep.agents.argv import Arity, Grammar, Option
from shellkeep.agents.base import AgentSession, Exchange, ScreenChrome, Usage
from shellkeep.agents.locations import UUID_PATTERN, home_dir
from shellkeep.agents.plan import Plan, PlanBuilder, items_from
from shellkeep.agents.records import ExchangeBuilder, JsonObject, as_dict, as_int, as_list, as_str, dig, parse_time
from shellkeep.logs import get_logger

__all__ = ["COPILOT_FORMAT", "CopilotAdapter", "copilot_home"]

log = get_logger(__name__)

_RESUME = Option(("--resume", "-r"), Arity.OPTIONAL)
_CONTINUE = Option(("--continue",))
_SESSION_ID = Option(("--session-id",), Arity.ONE)
_PROMPT = Option(("--prompt", "-p"), Arity.ONE)
_INTERACTIVE = Option(("--interactive", "-i"), Arity.ONE)

_GRAMMAR = Grammar(
    options=(
        HELP,
        VERSION,
        _RESUME,
        _CONTINUE,
        _SESSION_ID,
        _PROMPT,
        _INTERACTIVE,
        *(
            Option(names, Arity.ONE)
            for names in (
                ("--model",),
                ("--name", "-n"),
                ("--log-level",),
                ("--log-dir",),
                ("--agent",),
                ("--config-dir",),
                ("--additional-mcp-config",),
                ("--stream",),
            )
        ),
        *(
            Option(names, Arity.MANY)
            for names in (
                ("--add-dir",),
                ("--allow-tool",),
                ("--deny-tool",),
                ("--allow-url",),
                ("--deny-url",),
            )
        ),
        *(
            Option(names)
            for names in (
                ("--allow-all-tools",),
                ("--allow-all-paths",),
                ("--allow-all",),
                ("--yolo",),
                ("--banner",),
                ("--no-color",),
                ("--screen-reader",),
                ("--disable-builtin-mcps",),
                ("--no-custom-instructions",),
            )
        ),
    ),
    subcommands=frozenset({"help", "version", "update", "login", "logout", "sessions", "session", "mcp", "plugin"}),
)


def copilot_home(env: Mapping[str, str]) -> Path:
    """Return Copilot CLI's folder: ``$COPILOT_HOME`` when set, else ``~/.copilot``."""
    configured = env.get("COPILOT_HOME")
    return Path(configured) if configured else home_dir(env) / ".copilot"


def _is_prompt(record: JsonObject) -> bool:
    """Return whether an event is a user message."""
    return record.get("type") == "user.message"


def _build(records: Iterable[JsonObject]) -> list[Exchange]:
    """Turn events in file order into exchanges; an event repeated by id counts once (last wins).

    Usage comes from ``assistant.usage`` events when the exchange has any, else from the
    ``outputTokens`` of its assistant messages.
    """
    unique: dict[str, JsonObject] = {}
    for position, record in enumerate(records):
        unique[as_str(record.get("id")) or f"#{position}"] = record
    builder = ExchangeBuilder()
    reported: list[Usage] = []
    output_tokens = 0

    def flush_usage() -> None:
        nonlocal output_tokens
        if reported:
            total = Usage()
            for usage in reported:
                total = total + usage
            builder.add_usage(total)
        elif output_tokens:
            builder.add_usage(Usage(output=output_tokens))
        reported.clear()
        output_tokens = 0

    for record in unique.values():
        kind = record.get("type")
        data = as_dict(record.get("data")) or {}
        if kind == "user.message":
            flush_usage()
            builder.prompt(as_str(data.get("content")) or "", record.get("timestamp"))
        elif kind == "assistant.message":
            builder.answer(as_str(data.get("content")) or "")
            for request in (as_dict(item) for item in as_list(data.get("toolRequests"))):
                if request is not None:
                    builder.tool_call(as_str(request.get("name")) or "?", request.get("arguments"))
            if builder.is_open:
                output_tokens += as_int(data.get("outputTokens"))
            builder.set_model(as_str(data.get("model")))
        elif kind == "tool.execution_complete":
            result = dig(data, "result", "content")
            if data.get("success") is False:
                error = dig(data, "error", "message") or data.get("error") or result
                builder.tool_result(f"error: {error if isinstance(error, str) else ''}")
            else:
                builder.tool_result(result)
        elif kind in ("assistant.usage", "session.usage_record") and builder.is_open:
            # 1.0.102 writes session.usage_record{usage{...}}; 1.0.88 neither (see _stored_usage)
            usage = as_dict(data.get("usage")) if kind == "session.usage_record" else data
            usage = usage or {}
            reported.append(
                Usage(
                    input=as_int(usage.get("inputTokens")),
                    output=as_int(usage.get("outputTokens")),
                    cache_read=as_int(usage.get("cacheReadTokens")),
                    cache_write=as_int(usage.get("cacheWriteTokens")),
                )
            )
            builder.set_model(as_str(usage.get("model")))
    flush_usage()
    return builder.exchanges()


COPILOT_FORMAT = jsonl.TranscriptFormat(is_prompt=_is_prompt, build=_build)
"""How Copilot CLI event logs are read."""


def read_copilot_plan(events: Path) -> Plan | None:
    """Return the todo list of a Copilot CLI session, or None when it kept none.

    Copilot CLI (1.0.88, 1.0.102) has no todo tool: its system prompt has the model keep todos
    with its ``sql`` tool in the session's own SQLite database, ``session.db`` beside
    ``events.jsonl``, table ``todos(id, title, description, status, created_at, updated_at)``,
    status ``pending``, ``in_progress``, ``done`` or ``blocked`` (seen in the request it sends
    and the database it made). Rows in the order they were made; opened read-only. Raises
    OSError when the database cannot be read.
    """
    import sqlite3

    database = events.parent / "session.db"
    if not database.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{quote(str(database))}?mode=ro", uri=True, timeout=2.0)
        try:
            rows = connection.execute("SELECT id, title, status FROM todos ORDER BY created_at, rowid").fetchall()
        finally:
            connection.close()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise OSError(f"cannot read copilot todos from {database}: {exc}") from exc
    except sqlite3.Error as exc:
        raise OSError(f"cannot read copilot todos from {database}: {exc}") from exc
    builder = PlanBuilder()
    builder.replace("sql", items_from([{"id": i, "title": t, "status": s} for i, t, s in rows], ("title",)))
    return builder.plan()


def _stored_usage(session: AgentSession) -> list[tuple[datetime, Usage, str | None]]:
    """Return ``(created_at, usage, model)`` of the session's rows in ``session-store.db``, oldest first.

    The database is ``session-state``'s sibling; [] when it, its table or the session's rows
    are missing or unreadable (logged).
    """
    import sqlite3

    if session.transcript is None or session.session_id is None:
        return []
    database = session.transcript.parent.parent.parent / "session-store.db"
    if not database.is_file():
        return []
    try:
        connection = sqlite3.connect(f"file:{quote(str(database))}?mode=ro", uri=True, timeout=2.0)
        try:
            rows = connection.execute(
                "SELECT created_at, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, model "
                "FROM assistant_usage_events WHERE session_id = ? ORDER BY id",
                (session.session_id,),
            ).fetchall()
        finally:
            connection.close()
    except sqlite3.Error as exc:
        log.warning("cannot read copilot usage from %s: %s", database, exc)
        return []
    found = []
    for created, tokens_in, tokens_out, cache_read, cache_write, model in rows:
        at = parse_time(created)
        if at is not None:
            usage = Usage(input=as_int(tokens_in), output=as_int(tokens_out),
                          cache_read=as_int(cache_read), cache_write=as_int(cache_write))
            found.append((at, usage, as_str(model)))
    return found


def _with_stored_usage(exchanges: Sequence[Exchange], stored: Sequence[tuple[datetime, Usage, str | None]]) -> list[Exchange]:
    """Give each exchange the stored usage rows made after its prompt and before the next one's."""
    times = [parse_time(e.time) for e in exchanges]
    result = []
    for n, exchange in enumerate(exchanges):
        start, end = times[n], times[n + 1] if n + 1 < len(times) else None
        mine = [(u, m) for at, u, m in stored if start is not None and at >= start and (end is None or at < end)]
        if not mine:
            result.append(exchange)
            continue
        total = Usage()
        for usage, _ in mine:
            total = total + usage
        model = exchange.model or next((m for _, m in mine if m), None)
        result.append(dataclasses.replace(exchange, usage=total, model=model))
    return result


def _head(path: Path) -> tuple[datetime | None, str | None]:
    """Return the start time and cwd of a session from its ``session.start`` event."""
    for record in jsonl.read_head(path, max_records=4):
        if record.get("type") == "session.start":
            data = as_dict(record.get("data")) or {}
            begun = parse_time(data.get("startTime")) or parse_time(record.get("timestamp"))
            return begun, as_str(dig(data, "context", "cwd"))
    return None, None


COPILOT_SCREEN = ScreenChrome(
    input_box=r"─{20,}",  # the rule above its input line
    lines=(
        r"[/~]\S*(?: \S+)?",  # the folder (and branch) drawn above the input box
    ),
    mark="● ",
    echo_trim=r"\s+\d{1,2}:\d{2}(?:\s*[AP]M)?\s*$",  # the time drawn right of the echo
)
"""What Copilot CLI 1.0.102 draws besides answers (seen in tests/agents/test_screen_exchanges.py),
inline: the prompt echoed as ``❯ <prompt>`` with the time at the right edge, the answer as ``●
<text>``; at the bottom the folder, the input line between two rules and a status line
(``● Working · 29 B esc esc interrupt``, the model)."""


class CopilotAdapter(CommandAdapter):
    """Adapter for GitHub Copilot CLI (``copilot``, ``npx @github/copilot``)."""

    name = "copilot"
    title = "GitHub Copilot CLI"
    # Its home, its provider switches and the GitHub tokens it signs in with.
    env_names = ("GH_TOKEN", "GITHUB_TOKEN", "GH_HOST", "XDG_CONFIG_HOME", "XDG_STATE_HOME")
    env_prefixes = ("COPILOT_",)
    executables = ("copilot",)
    tested_versions = ("1.0.88", "1.0.102")
    """The Copilot CLI versions this adapter was tested with, end to end (tests/agents/test_resume_copilot.py)."""
    packages = ("@github/copilot",)
    screen_chrome = COPILOT_SCREEN
    grammar = _GRAMMAR
    session_option = _SESSION_ID
    conversation_options = (_RESUME, _CONTINUE, _SESSION_ID)
    id_options = (_RESUME, _SESSION_ID)
    dropped_on_resume = (_RESUME, _CONTINUE, _SESSION_ID, _PROMPT, _INTERACTIVE)
    transcript_format = COPILOT_FORMAT
    resume_hint = rf"copilot (?:--resume|-r|--session-id)[ =]({UUID_PATTERN})"

    def looks_like_id(self, value: str) -> bool:
        """Return whether ``value`` is a full session uuid (``--resume`` also takes prefixes and names)."""
        return re.fullmatch(UUID_PATTERN, value) is not None

    def transcript_layout(self, cwd: Path, env: Mapping[str, str]) -> TranscriptLayout:
        """Return the ``session-state/<id>/events.jsonl`` logs (of every cwd: each records its own)."""
        state = copilot_home(env) / "session-state"

        def path_of(session_id: str) -> Path | None:
            path = state / session_id / "events.jsonl"
            return path if path.is_file() else None

        return TranscriptLayout(
            transcripts=lambda: list(state.glob("*/events.jsonl")),
            path_of=path_of,
            id_of=lambda path: path.parent.name,
            head_of=_head,
            expected_path=lambda session_id: state / session_id / "events.jsonl",
        )

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the session's exchanges (the last ``limit``), usage from ``session-store.db`` when the log has none."""
        return self._add_usage(session, super().read_exchanges(session, limit))

    def read_transcript(self, session: AgentSession, upto_bytes: int | None = None, *, warn_damage: bool = True) -> jsonl.TranscriptReading:
        """Return ``CommandAdapter.read_transcript``'s reading, usage from ``session-store.db`` when the log has none."""
        reading = super().read_transcript(session, upto_bytes, warn_damage=warn_damage)
        return dataclasses.replace(reading, exchanges=tuple(self._add_usage(session, list(reading.exchanges))))

    def _add_usage(self, session: AgentSession, exchanges: list[Exchange]) -> list[Exchange]:
        if not exchanges or any(e.usage is not None for e in exchanges):
            return exchanges
        stored = _stored_usage(session)
        return _with_stored_usage(exchanges, stored) if stored else exchanges

    def remove_resume_leftovers(self, session: AgentSession) -> list[Path]:
        """Delete the in-use locks dead processes left in the session folder; return them.

        Copilot CLI (1.0.102) marks a session in use with ``inuse.<pid>.lock`` and
        ``inuse.<pid>.hold`` in ``session-state/<id>/``. A crash leaves them, and the next
        ``copilot --resume`` then stops at a "Session in use ... Resume anyway?" dialog. Only
        the locks of a pid that is gone or a zombie are removed; a live owner keeps its lock.
        Never raises.
        """
        if session.transcript is None:
            return []
        removed: list[Path] = []
        try:
            locks = sorted(session.transcript.parent.glob("inuse.*.*"))
        except OSError:
            return []
        for path in locks:
            match = _IN_USE_LOCK.fullmatch(path.name)
            if match is None or _process_alive(int(match.group(1))):
                continue
            try:
                path.unlink()
            except OSError as exc:
                log.info("could not remove the stale lock %s: %s", path, exc)
                continue
            removed.append(path)
        return removed

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the todo list the session stopped at (``read_copilot_plan``)."""
        if session.transcript is None:
            return None
        return read_copilot_plan(session.transcript)

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return ``events.jsonl`` and ``workspace.yaml`` of the session folder."""
        files = super().transcript_files(session)
        if files and session.transcript is not None:
            workspace = session.transcript.parent / "workspace.yaml"
            if workspace.is_file():
                files.append(workspace)
        return files


_IN_USE_LOCK = re.compile(r"inuse\.([0-9]+)\.(?:lock|hold)")
"""An in-use lock of Copilot CLI's session folder, named for the pid holding it."""


def _process_alive(pid: int) -> bool:
    """Return whether ``pid`` is a running process (a zombie is not; one we may not signal is)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # no /proc (macOS): signalled, so alive
