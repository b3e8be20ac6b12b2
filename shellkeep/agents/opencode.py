"""Know OpenCode (``opencode``): its SQLite store, sessions, messages and parts, ``opencode -s``.

Store (OpenCode ≥ 1.2): ``$XDG_DATA_HOME/opencode/opencode.db`` (``opencode-<channel>.db``
on other release channels; ``$OPENCODE_DB`` overrides), tables ``session(id, directory,
parent_id, time_created, time_updated, ...)``, ``message(id, session_id, time_created, data)``
and ``part(id, message_id, session_id, data)`` where ``data`` is JSON text (OpenCode
``message-v2.ts``: message ``{role, modelID, tokens{input, output, cache{read, write}}}``, part
``{type: text|reasoning|tool|..., text, tool, state{input, output, error}}``). Opened read-only.
OpenCode takes no id; it prints ``opencode -s <ses_…>`` on exit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from shellkeep.agents.adapter import HELP, VERSION, CommandAdapter
from shellkeep.agents.argv import Arity, Grammar, Option
from shellkeep.agents.base import AgentSession, Exchange, Launch, ScreenChrome, Usage
from shellkeep.agents.locations import CLOCK_SLACK, find_in_screen, shown_on_screen, xdg_data_home
from shellkeep.agents.plan import Plan, PlanBuilder, items_from
from shellkeep.agents.records import ExchangeBuilder, JsonObject, as_dict, as_int, as_str, dig, last
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    import sqlite3

__all__ = ["OpenCodeAdapter", "database_paths"]

log = get_logger(__name__)

_CONTINUE = Option(("--continue", "-c"))
_SESSION = Option(("--session", "-s"), Arity.ONE)
_FORK = Option(("--fork",))
_PROMPT = Option(("--prompt",), Arity.ONE)

_GRAMMAR = Grammar(
    options=(
        HELP,
        VERSION,
        _CONTINUE,
        _SESSION,
        _FORK,
        _PROMPT,
        Option(("--model", "-m"), Arity.ONE),
        Option(("--agent",), Arity.ONE),
        Option(("--port",), Arity.ONE),
        Option(("--hostname",), Arity.ONE),
        Option(("--log-level",), Arity.ONE),
        Option(("--print-logs",)),
    ),
    subcommands=frozenset(
        {
            "run",
            "serve",
            "web",
            "acp",
            "mcp",
            "auth",
            "agent",
            "models",
            "stats",
            "export",
            "import",
            "github",
            "pr",
            "session",
            "db",
            "debug",
            "upgrade",
            "uninstall",
            "generate",
            "attach",
        }
    ),
    prompt_positionals=False,  # opencode [project]: the positional is a directory
)

_CHUNK = 500  # ids per IN (...) query, below SQLite's variable limit


def database_paths(env: Mapping[str, str]) -> list[Path]:
    """Return OpenCode's existing databases, the one in use first.

    ``$OPENCODE_DB`` (absolute, or relative to the data folder; ``:memory:`` means none) wins;
    else ``opencode.db``, then channel databases ``opencode-*.db``, most recently written first.
    """
    data = xdg_data_home(env) / "opencode"
    configured = env.get("OPENCODE_DB")
    if configured:
        if configured == ":memory:":
            return []
        path = Path(configured) if os.path.isabs(configured) else data / configured
        return [path] if path.is_file() else []
    found = [data / "opencode.db"] if (data / "opencode.db").is_file() else []
    channels = [p for p in data.glob("opencode-*.db") if p.is_file()]
    channels.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return found + channels


_PLACEHOLDER_TITLES = ("New session - ", "Child session - ")
"""How OpenCode titles a session until its title request answers (1.18 ``session/index.ts``)."""


def _connect(path: Path) -> sqlite3.Connection:
    """Open ``path`` read-only (``file:…?mode=ro``); raises ``sqlite3.Error`` when it cannot."""
    import sqlite3

    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=2.0)
    connection.row_factory = sqlite3.Row
    return connection


def _json(text: object) -> JsonObject:
    """Return a JSON ``data`` column as an object ({} when it is not one)."""
    if isinstance(text, (bytes, str)):
        try:
            value = json.loads(text)
        except ValueError:
            return {}
        return as_dict(value) or {}
    return {}


def _ms(moment: datetime) -> int:
    """Return an aware datetime as epoch milliseconds (OpenCode's time columns)."""
    return int(moment.timestamp() * 1000)


OPENCODE_SCREEN = ScreenChrome(
    input_box=r"┃\s+\S+ · .*",  # the input box's agent and model line: "┃  Build · Mock Model Mock"
    lines=(
        r"┃.*",  # the edge of the boxes around the prompt's echo and around the input box
        r"▣ .*",  # below an answer: "▣  Build · Mock Model · 23.5s"
    ),
    echo_trim=r"^\s*┃",
)
"""What OpenCode 1.18.33 draws besides answers (seen in tests/agents/test_screen_exchanges.py), on
the alternate screen: the prompt echoed in a box edged with ``┃`` (``┃  <prompt>`` between two
``┃`` lines), the answer indented below it, then ``▣  Build · <model> · 23.5s``; at the bottom
the input box (``┃`` lines, ``┃  Build · <model> <provider>``, a row of ``▀``) and its footer."""


class OpenCodeAdapter(CommandAdapter):
    """Adapter for OpenCode (``opencode``, ``npx opencode-ai``)."""

    name = "opencode"
    title = "OpenCode"
    # Its config and database (under the XDG folders unless OPENCODE_* says), and provider keys.
    env_names = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                 "OPENAI_API_KEY", "OPENAI_BASE_URL", "GEMINI_API_KEY", "OPENROUTER_API_KEY")  # fmt: skip
    env_prefixes = ("OPENCODE_",)
    executables = ("opencode",)
    tested_versions = ("1.17.19", "1.18.33")
    """The OpenCode versions this adapter was tested with, end to end (tests/agents/test_resume_opencode.py)."""
    packages = ("opencode-ai",)
    screen_chrome = OPENCODE_SCREEN
    # Its empty input box's placeholder in a new session (1.18.33), drawn only once it started
    # (20 s with both cores busy, its database made anew): re-injected context waits for it;
    # keys typed before it are lost.
    ready_prompt = r"Ask anything"
    grammar = _GRAMMAR
    conversation_options = (_CONTINUE, _SESSION)
    id_options = (_SESSION,)
    fork_options = (_FORK,)
    dropped_on_resume = (_CONTINUE, _SESSION, _FORK, _PROMPT)
    ready_prompt_required = True  # it queries the terminal, then drew nothing for over 10 s with both cores busy

    def looks_like_id(self, value: str) -> bool:
        """Return whether ``value`` is an OpenCode session id (``ses_…``)."""
        return value.startswith("ses_")

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return the session ``launch`` ran in ``cwd``.

        OpenCode takes no id up front and every session shares one database, so the session
        is matched by what this one showed. In order: the ``opencode -s ses_…`` hint on the
        last screen; among the top-level sessions of ``cwd`` created after ``started_at``,
        the one whose prompts the last screen shows (``shown_on_screen``), else, when none
        or several do, the newest; the ``-s <id>`` the user gave; the session of ``cwd``
        last updated after ``started_at`` (``--continue``). The transcript is the database
        holding the session.
        """
        databases = database_paths(env)
        since = _ms(started_at - CLOCK_SLACK)
        directories = sorted({str(cwd), str(cwd.resolve())})
        marks = ",".join("?" * len(directories))
        hinted = find_in_screen(screen_text, r"opencode (?:-s|--session)[ =](ses_[A-Za-z0-9]+)")
        for path in databases:
            fresh = self._query_all(
                path,
                f"SELECT id FROM session WHERE directory IN ({marks}) AND parent_id IS NULL "
                "AND time_created >= ? ORDER BY time_created DESC",
                (*directories, since),
            )
            if hinted in fresh:
                break  # the hint below names it
            if len(fresh) > 1:  # two sessions in one folder: the one whose prompts this screen shows
                shown = [i for i in fresh if shown_on_screen(self._prompts(path, i), screen_text)]
                fresh = shown or fresh
            if fresh:
                return AgentSession(agent=self.name, session_id=fresh[0], transcript=path)
        for candidate in (hinted, launch.agent_session_id):
            if candidate is None:
                continue
            for path in databases:
                if self._query_one(path, "SELECT id FROM session WHERE id = ?", (candidate,)) is not None:
                    return AgentSession(agent=self.name, session_id=candidate, transcript=path)
            return AgentSession(agent=self.name, session_id=candidate, transcript=databases[0] if databases else None)
        for path in databases:
            found = self._query_one(
                path,
                f"SELECT id FROM session WHERE directory IN ({marks}) AND parent_id IS NULL "
                "AND time_updated >= ? ORDER BY time_updated DESC LIMIT 1",
                (*directories, since),
            )
            if found is not None:
                return AgentSession(agent=self.name, session_id=found, transcript=path)
        return None

    def _prompts(self, path: Path, session_id: str, limit: int = 3) -> list[str]:
        """Return the last ``limit`` prompts of a session (the ones likeliest still on screen)."""
        session = AgentSession(agent=self.name, session_id=session_id, transcript=path)
        return [e.prompt for e in self.read_exchanges(session, limit)]

    def _query_all(self, path: Path, query: str, params: Sequence[object]) -> list[str]:
        """Return the first column of every row of ``query``, or [] (also when unreadable)."""
        import sqlite3

        try:
            connection = _connect(path)
            try:
                rows = connection.execute(query, tuple(params)).fetchall()
            finally:
                connection.close()
        except sqlite3.Error as exc:
            log.warning("cannot read opencode database %s: %s", path, exc)
            return []
        return [str(row[0]) for row in rows]

    def _query_one(self, path: Path, query: str, params: Sequence[object]) -> str | None:
        """Return the first column of the first row of ``query``, or None (also when unreadable)."""
        found = self._query_all(path, query, params)
        return found[0] if found else None

    def resume_words(self, session: AgentSession) -> list[str]:
        """Return ``["-s", <ses_…>]``."""
        return ["-s", session.session_id or ""]

    def resume_env(self, session: AgentSession) -> dict[str, str]:
        """Return ``{"OPENCODE_DB": <the database the session was found in>}``.

        OpenCode names its database by release channel (``opencode-<channel>.db``); a build
        of another channel, or an update that changed channel, opens another file and reports
        the session unknown (anomalyco/opencode#16562, #21059). ``$OPENCODE_DB`` makes it open
        the right one. {} when the database is not known.
        """
        if session.transcript is None:
            return {}
        return {"OPENCODE_DB": str(session.transcript)}

    def native_resume_problem(self, session: AgentSession, env: Mapping[str, str]) -> str | None:
        """Return why ``opencode -s <id>`` would resume ``session`` without part of its conversation:
        the database holds no such session, or a message of it lost its content (a part row
        gone, as a lost page of the database leaves it: OpenCode then silently sends the prompt
        without its answer); None when it is whole or cannot be read (the resume is tried).
        """
        import sqlite3

        if session.transcript is None or session.session_id is None or not session.transcript.is_file():
            return None
        try:
            connection = _connect(session.transcript)
            try:
                return _hole(connection, session.session_id, session.transcript)
            finally:
                connection.close()
        except (sqlite3.Error, OSError) as exc:
            log.warning("cannot check opencode database %s: %s", session.transcript, exc)
            return None

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the session's exchanges from the database; only the last ``limit`` prompts' parts are read.

        Messages (small: no content) are all read to find where the last ``limit`` user
        messages start; parts (text, tool calls, outputs) only from there on.
        """
        import sqlite3

        if session.transcript is None or session.session_id is None:
            return []
        try:
            connection = _connect(session.transcript)
            try:
                return self._read(connection, session.session_id, limit)
            finally:
                connection.close()
        except (sqlite3.Error, OSError) as exc:
            log.warning("cannot read opencode database %s: %s", session.transcript, exc)
        except Exception as exc:  # another program's database: whatever breaks, the caller gets []
            log.warning("cannot read opencode session %s: %s", session.session_id, exc)
        return []

    def _read(self, connection: sqlite3.Connection, session_id: str, limit: int | None) -> list[Exchange]:
        """Build exchanges from one session's message and part rows."""
        messages = [
            (str(row["id"]), _json(row["data"]))
            for row in connection.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,)
            )
        ]
        if limit is not None:
            starts = [i for i, (_, data) in enumerate(messages) if data.get("role") == "user"]
            if limit <= 0:
                return []
            if len(starts) > limit:
                messages = messages[starts[-limit] :]
        parts: dict[str, list[JsonObject]] = {}
        ids = [message_id for message_id, _ in messages]
        for offset in range(0, len(ids), _CHUNK):
            chunk = ids[offset : offset + _CHUNK]
            rows = connection.execute(
                f"SELECT message_id, data FROM part WHERE message_id IN ({','.join('?' * len(chunk))}) ORDER BY id",
                chunk,
            )
            for row in rows:
                parts.setdefault(str(row["message_id"]), []).append(_json(row["data"]))
        builder = ExchangeBuilder()
        for message_id, data in messages:
            message_parts = parts.get(message_id, [])
            if data.get("role") == "user":
                texts = [
                    as_str(p.get("text")) or ""
                    for p in message_parts
                    if p.get("type") == "text" and p.get("synthetic") is not True and p.get("ignored") is not True
                ]
                builder.prompt("\n".join(t for t in texts if t), dig(data, "time", "created"))
                continue
            if data.get("role") != "assistant":
                continue
            for part in message_parts:
                kind = part.get("type")
                if kind == "text" and part.get("synthetic") is not True:
                    builder.answer(as_str(part.get("text")) or "")
                elif kind == "tool":
                    state = as_dict(part.get("state")) or {}
                    builder.tool_call(as_str(part.get("tool")) or "?", state.get("input"))
                    if state.get("status") == "completed":
                        builder.tool_result(state.get("output"))
                    elif state.get("status") == "error":
                        builder.tool_result(f"error: {as_str(state.get('error')) or ''}")
            builder.set_model(as_str(data.get("modelID")) or as_str(dig(data, "model", "modelID")))
            tokens = as_dict(data.get("tokens"))
            if tokens is not None:
                builder.add_usage(
                    Usage(
                        input=as_int(tokens.get("input")),
                        output=as_int(tokens.get("output")),
                        cache_read=as_int(dig(tokens, "cache", "read")),
                        cache_write=as_int(dig(tokens, "cache", "write")),
                    )
                )
        return last(builder.exchanges(), limit)

    def read_title(self, session: AgentSession) -> str | None:
        """Return the session's ``title`` in OpenCode's database, or None while it is still the
        placeholder OpenCode gives before its title request answers (``New session - <time>``)."""
        if session.transcript is None or session.session_id is None or not session.transcript.is_file():
            return None
        title = self._query_one(session.transcript, "SELECT title FROM session WHERE id = ?", (session.session_id,))
        text = " ".join((title or "").split())
        return None if not text or text.startswith(_PLACEHOLDER_TITLES) else text

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the todo list the session stopped at: its last ``todowrite`` tool part, or None.

        A ``part`` row of the session whose data is ``{type: tool, tool: todowrite, state:
        {input: {todos: [{content, status, priority}]}}}``, status ``pending``,
        ``in_progress``, ``completed`` or ``cancelled`` (OpenCode 1.18 ``tool/todo.ts``), read
        from the session's database in part order. Raises OSError when it cannot be read.
        """
        import sqlite3

        if session.transcript is None or session.session_id is None or not session.transcript.is_file():
            return None
        builder = PlanBuilder()
        try:
            connection = _connect(session.transcript)
            try:
                rows = connection.execute(
                    "SELECT data FROM part WHERE session_id = ? AND data LIKE '%todowrite%' ORDER BY id", (session.session_id,)
                ).fetchall()
            finally:
                connection.close()
        except sqlite3.Error as exc:
            raise OSError(f"cannot read opencode database {session.transcript}: {exc}") from exc
        for row in rows:
            part = _json(row["data"])
            if part.get("type") == "tool" and part.get("tool") == "todowrite":
                builder.replace("todowrite", items_from(dig(part, "state", "input", "todos"), ("content",)))
        return builder.plan()

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return nothing: the database is shared by every OpenCode session of the user."""
        return []


_CONTENT_PARTS = frozenset({"text", "tool", "reasoning", "file", "patch", "subtask", "agent"})
"""The part types that carry what was said or done (``step-start``/``step-finish`` carry none)."""


def _hole(connection: sqlite3.Connection, session_id: str, db: Path) -> str | None:
    """Return what is missing of session ``session_id`` in the opened database, or None."""
    if connection.execute("SELECT 1 FROM session WHERE id = ?", (session_id,)).fetchone() is None:
        return f"OpenCode's database {db} holds no session {session_id}"
    kinds: dict[str, set[str]] = {}
    for row in connection.execute("SELECT message_id, data FROM part WHERE session_id = ?", (session_id,)):
        kinds.setdefault(str(row["message_id"]), set()).add(str(_json(row["data"]).get("type")))
    rows = connection.execute("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,))
    for n, row in enumerate(rows, 1):
        data = _json(row["data"])
        role, found = data.get("role"), kinds.get(str(row["id"]), set())
        finished = role == "user" or dig(data, "time", "completed") is not None
        if finished and "error" not in data and not found & _CONTENT_PARTS:
            return f"OpenCode's database {db} has lost the content of message {n} ({role}) of session {session_id}"
    return None
