"""Know Gemini CLI (``gemini``): its per-project chat files, their upserted records, ``gemini -r``.

Chats: ``$GEMINI_CLI_HOME`` (else ``~``) ``/.gemini/tmp/<project>/chats/session-<UTC minute>-<first
8 chars of the session id>.jsonl``, where ``<project>`` is the slug ``~/.gemini/projects.json``
maps the cwd to (older versions: ``sha256(cwd)``). Gemini CLI 0.61 ``ChatRecordingService``
JSONL: line 1 is metadata ``{sessionId, startTime, ...}``; then message records ``{id,
timestamp, type: user|gemini|info|error|warning, content, toolCalls, tokens, model}`` that are
upserts (a message is re-appended whenever it changes; last wins, first position kept),
``{"$set": {...}}`` metadata updates and ``{"$rewindTo": id}`` truncations. Older versions
wrote one ``session-….json`` document with a ``messages`` array. ``--session-id <uuid>``
chooses a new session's id; resume with ``gemini -r <id>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from shellkeep.agents import jsonl
from shellkeep.agents.adapter import HELP, VERSION, CommandAdapter, TranscriptLayout
from shellkeep.agents.argv import Arity, Grammar, Option
from shellkeep.agents.base import AgentSession, Exchange, ScreenChrome, Usage
from shellkeep.agents.locations import UUID_PATTERN, home_dir, newest
from shellkeep.agents.titles import gemini_title
from shellkeep.agents.plan import Plan, PlanBuilder, items_from, scan_records
from shellkeep.agents.records import (
    ExchangeBuilder,
    JsonObject,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    last,
    parse_time,
    texts_of,
)
from shellkeep.logs import get_logger

__all__ = ["GEMINI_FORMAT", "GeminiAdapter", "chat_dirs", "gemini_dir"]

log = get_logger(__name__)

_RESUME = Option(("--resume", "-r"), Arity.OPTIONAL)
_SESSION_ID = Option(("--session-id",), Arity.ONE)
_SESSION_FILE = Option(("--session-file",), Arity.ONE)
_PROMPT = Option(("--prompt", "-p"), Arity.ONE)
_PROMPT_INTERACTIVE = Option(("--prompt-interactive", "-i"), Arity.ONE)
_LIST_SESSIONS = Option(("--list-sessions",))
_DELETE_SESSION = Option(("--delete-session",), Arity.ONE)
_LIST_EXTENSIONS = Option(("--list-extensions", "-l"))

_GRAMMAR = Grammar(
    options=(
        HELP,
        VERSION,
        _RESUME,
        _SESSION_ID,
        _SESSION_FILE,
        _PROMPT,
        _PROMPT_INTERACTIVE,
        _LIST_SESSIONS,
        _DELETE_SESSION,
        _LIST_EXTENSIONS,
        *(
            Option(names, Arity.ONE)
            for names in (
                ("--model", "-m"),
                ("--approval-mode",),
                ("--output-format", "-o"),
                ("--sandbox-image",),
                ("--proxy",),
            )
        ),
        *(
            Option(names, Arity.MANY)
            for names in (
                ("--extensions", "-e"),
                ("--include-directories",),
                ("--allowed-tools",),
                ("--allowed-mcp-server-names",),
            )
        ),
        *(
            Option(names)
            for names in (
                ("--sandbox", "-s"),
                ("--yolo", "-y"),
                ("--debug", "-d"),
                ("--screen-reader",),
                ("--experimental-acp",),
                ("--checkpointing", "-c"),
            )
        ),
    ),
    subcommands=frozenset({"mcp", "extensions", "extension", "skills", "skill", "hooks", "hook"}),
)

_SLUG_CHARS = r"[^a-z0-9]"


def gemini_dir(env: Mapping[str, str]) -> Path:
    """Return Gemini CLI's folder: ``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``."""
    configured = env.get("GEMINI_CLI_HOME")
    return (Path(configured) if configured else home_dir(env)) / ".gemini"


def chat_dirs(root: Path, cwd: Path) -> list[Path]:
    """Return the ``chats`` folders that may hold ``cwd``'s sessions, the likeliest first.

    Looked up through ``projects.json``, the ``.project_root`` marker of each project
    folder, the slug rule (base name lowercased, other characters '-') and the legacy
    ``sha256(cwd)`` folder.
    """
    tmp = root / "tmp"
    keys = [str(cwd), str(cwd.resolve())]
    found: list[Path] = []
    try:
        mapping = as_dict(json.loads((root / "projects.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        mapping = None
    projects = as_dict(mapping.get("projects")) if mapping is not None else None
    if projects is not None:
        for key in keys:
            slug = as_str(projects.get(key))
            if slug:
                found.append(tmp / slug)
    for marker in sorted(tmp.glob("*/.project_root")):
        try:
            if marker.read_text(encoding="utf-8").strip() in keys:
                found.append(marker.parent)
        except OSError:
            continue
    for key in keys:
        slug = re.sub(_SLUG_CHARS, "-", Path(key).name.lower())
        if slug:
            found.append(tmp / slug)
        found.append(tmp / hashlib.sha256(key.encode()).hexdigest())
    unique: list[Path] = []
    for folder in found:
        chats = folder / "chats"
        if chats not in unique and chats.is_dir():
            unique.append(chats)
    return unique


def _is_metadata(record: JsonObject) -> bool:
    """Return whether a record is the metadata first line (it has a sessionId and no type)."""
    return "sessionId" in record and "type" not in record


def _messages(records: Iterable[JsonObject]) -> list[JsonObject]:
    """Return the chat's messages after applying upserts and ``$rewindTo`` (``$set`` is metadata).

    A message re-appended with the same id replaces the earlier one in its first position.
    ``$rewindTo: X`` removes X and every message after it; when X is not among the records
    (a window read from the end, where X came earlier) every message so far is removed.
    """
    partial: bool | None = None  # the window does not start at the file's metadata record
    ordered: dict[str, JsonObject] = {}
    for record in records:  # iterated once: ``build`` may be handed a stream (agents.jsonl)
        if partial is None:
            partial = not _is_metadata(record)
        if "$rewindTo" in record:
            target = as_str(record.get("$rewindTo"))
            if target is not None and target in ordered:
                keys = list(ordered)
                for key in keys[keys.index(target) :]:
                    del ordered[key]
            elif partial:
                ordered.clear()
            continue
        message_id = as_str(record.get("id"))
        if message_id is not None and "type" in record:
            ordered[message_id] = record
    return list(ordered.values())


def _content_text(value: object) -> str:
    """Return the text of Gemini content: a string or a list of parts (thoughts skipped)."""
    if isinstance(value, str):
        return value
    obj = as_dict(value)
    if obj is not None:
        return "\n".join(texts_of(as_list(obj.get("parts"))))
    return "\n".join(texts_of(as_list(value)))


def _build(records: Iterable[JsonObject]) -> list[Exchange]:
    """Turn chat records in file order into exchanges (see ``_messages`` for upserts)."""
    builder = ExchangeBuilder()
    for message in _messages(records):
        kind = message.get("type")
        if kind == "user":
            shown = message.get("displayContent")
            text = _content_text(shown) if shown else _content_text(message.get("content"))
            builder.prompt(text, message.get("timestamp"))
        elif kind == "gemini":
            builder.answer(_content_text(message.get("content")))
            for call in (as_dict(item) for item in as_list(message.get("toolCalls"))):
                if call is None:
                    continue
                builder.tool_call(as_str(call.get("name")) or "?", call.get("args"))
                display = call.get("resultDisplay")
                if isinstance(display, str) and display:
                    builder.tool_result(display)
                elif call.get("result") is not None:
                    builder.tool_result(call.get("result"))
            tokens = as_dict(message.get("tokens"))
            if tokens is not None:
                builder.add_usage(
                    Usage(
                        input=as_int(tokens.get("input")),
                        output=as_int(tokens.get("output")),
                        cache_read=as_int(tokens.get("cached")),
                    )
                )
            builder.set_model(as_str(message.get("model")))
    return builder.exchanges()


def _is_prompt(record: JsonObject) -> bool:
    """Return whether a record is a user message."""
    return record.get("type") == "user"


GEMINI_FORMAT = jsonl.TranscriptFormat(is_prompt=_is_prompt, build=_build)
"""How Gemini CLI chat files are read."""


def chat_head(path: Path) -> tuple[str | None, datetime | None]:
    """Return the session id and start time a chat file's metadata gives (line 1 of a ``.jsonl``,
    or the ``.json`` document); ``(None, None)`` when unreadable."""
    if path.suffix == ".json":
        try:
            document = as_dict(json.loads(path.read_text(encoding="utf-8"))) or {}
        except (OSError, ValueError):
            return None, None
        return as_str(document.get("sessionId")), parse_time(document.get("startTime"))
    for record in jsonl.read_head(path, max_records=1):
        return as_str(record.get("sessionId")), parse_time(record.get("startTime"))
    return None, None


def _one_per_session(paths: list[Path]) -> list[Path]:
    """Return ``paths`` with, for each session id, only its largest file (the one with the messages).

    Files whose head names no id are kept as they are; the order of the kept files is kept.
    """
    largest: dict[str, Path] = {}
    for path in paths:
        session_id = chat_head(path)[0]
        if session_id is not None and (session_id not in largest or _size(path) > _size(largest[session_id])):
            largest[session_id] = path
    kept = set(largest.values())
    return [p for p in paths if p in kept or chat_head(p)[0] is None]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _message_ids(path: Path, max_bytes: int) -> tuple[set[str], bool] | None:
    """Return the ids of the messages a chat file holds, and whether any is its own record.

    Messages are counted in message records and in ``$set`` ``messages`` lists (the state a
    start or a resume writes). None when the file is bigger than ``max_bytes``, cannot be
    read or holds a line that is not a JSON object.
    """
    try:
        if path.stat().st_size > max_bytes:
            return None
        with open(path, "rb") as fh:  # line by line: a transcript of any size is never held whole
            return _ids_in(fh)
    except OSError:
        return None


def _ids_in(lines: Iterable[bytes]) -> tuple[set[str], bool] | None:
    """Return ``_message_ids`` of a chat file's ``lines``, read one at a time."""
    ids: set[str] = set()
    own = False
    for line in lines:
        if not line.strip():
            continue
        try:
            record = as_dict(json.loads(line))
        except ValueError:
            return None
        if record is None:
            return None
        changes = as_dict(record.get("$set"))
        if changes is not None:
            for message in (as_dict(m) for m in as_list(changes.get("messages"))):
                message_id = as_str(message.get("id")) if message is not None else None
                if message_id is not None:
                    ids.add(message_id)
        elif "type" in record:
            own = True
            message_id = as_str(record.get("id"))
            if message_id is not None:
                ids.add(message_id)
    return ids, own


def _is_leftover(path: Path, transcript: Path, max_bytes: int = 1 << 20) -> bool:
    """Return whether ``path`` holds nothing ``transcript`` does not: no message record of its
    own, and only messages (in its ``$set`` state) the transcript also holds."""
    found = _message_ids(path, max_bytes)
    if found is None or found[1]:
        return False
    if not found[0]:
        return True
    kept = _message_ids(transcript, 1 << 40)
    return kept is not None and found[0] <= kept[0]



def read_gemini_plan(chat: Path) -> Plan | None:
    """Return the todo list of a Gemini CLI chat as its last ``write_todos`` call left it, or None.

    A ``gemini`` message's ``toolCalls`` entry ``{name: write_todos, args: {todos: [{description,
    status}]}}``, status one of ``pending``, ``in_progress``, ``completed``, ``cancelled``,
    ``blocked`` (Gemini CLI 0.61 ``tools/write-todos.js``). A legacy ``.json`` chat is read whole.
    """
    builder = PlanBuilder()
    if chat.suffix == ".json":
        document = as_dict(json.loads(chat.read_text(encoding="utf-8"))) or {}
        records: Iterable[JsonObject] = [m for m in (as_dict(item) for item in as_list(document.get("messages"))) if m is not None]
    else:
        records = scan_records(chat, (b'"write_todos"',))
    for message in records:
        for call in (as_dict(item) for item in as_list(message.get("toolCalls"))):
            if call is not None and call.get("name") == "write_todos":
                builder.replace("write_todos", items_from(dig(call, "args", "todos"), ("description",)))
    return builder.plan()


GEMINI_SCREEN = ScreenChrome(
    # Below an answer (0.61.0): "? for shortcuts" (right-aligned), a rule, "Shift+Tab to accept
    # edits", then the input box between a row of ▄ and a row of ▀; the next prompt's echo is
    # boxed the same way (" > the prompt" between ▄ and ▀ rows).
    input_box=r"\? for shortcuts|─{20,}|Shift\+Tab to accept edits|▄{20,}",
    lines=(
        r"▀{20,}",  # the bottom edge of the box around the prompt's echo
        r"ℹ .*",  # notices: "ℹ Initializing... Prompts will be queued."
        r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .*",  # the spinner while a turn runs
    ),
    mark="✦ ",
)
"""Gemini CLI's screen around its answers (``✦ <answer>``), for exchanges rebuilt from the recording."""


class GeminiAdapter(CommandAdapter):
    """Adapter for Gemini CLI (``gemini``, ``npx @google/gemini-cli``)."""

    name = "gemini"
    title = "Gemini CLI"
    # geminicli.com docs (configuration, authentication): its home, model, key, Vertex settings.
    env_names = ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
                 "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_APPLICATION_CREDENTIALS")  # fmt: skip
    env_prefixes = ("GEMINI_",)
    executables = ("gemini",)
    tested_versions = ("0.57.0", "0.61.0")
    input_includes_cache_read = True
    missing_transcript_reinjects = True
    # Its empty input box (0.57.0, 0.61.0); drawn only after ~1.2 s where the terminal answers no queries.
    ready_prompt = r"Type your message or @path/to/file"
    screen_chrome = GEMINI_SCREEN
    inject_use_paste = False  # an untrusted paste (no answer to its queries) makes the next Enter a new line
    packages = ("@google/gemini-cli",)
    grammar = _GRAMMAR
    session_option = _SESSION_ID
    non_conversation_options = (_LIST_SESSIONS, _DELETE_SESSION, _LIST_EXTENSIONS)
    conversation_options = (_RESUME, _SESSION_ID, _SESSION_FILE)
    id_options = (_RESUME, _SESSION_ID)
    dropped_on_resume = (_RESUME, _SESSION_ID, _SESSION_FILE, _PROMPT, _PROMPT_INTERACTIVE)
    transcript_format = GEMINI_FORMAT
    resume_hint = rf"gemini (?:--resume|-r)[ =]({UUID_PATTERN})"

    def looks_like_id(self, value: str) -> bool:
        """Return whether ``value`` is a session uuid (``-r`` also takes ``latest`` and an index)."""
        return re.fullmatch(UUID_PATTERN, value) is not None

    def chat_dirs(self, cwd: Path, env: Mapping[str, str]) -> list[Path]:
        """Return the folders holding ``cwd``'s chat files."""
        return chat_dirs(gemini_dir(env), cwd)

    def chat_files(self, folder: Path) -> list[Path]:
        """Return a chats folder's session files, most recently written first."""
        return newest([*folder.glob("session-*.jsonl"), *folder.glob("session-*.json")])

    def session_file(self, folders: list[Path], session_id: str) -> Path | None:
        """Return the chat file of ``session_id`` (named after its first 8 characters), or None.

        ``gemini --resume`` in a later minute than the session's start opens a second file of
        the same id holding its metadata line alone, while the messages still go to the
        first: of several files of one id, the one holding messages (the largest) is taken.
        """
        for folder in folders:
            found = [p for p in self.chat_files(folder) if session_id[:8] in p.name and chat_head(p)[0] == session_id]
            if found:
                return max(found, key=_size)
        return None

    def remove_resume_leftovers(self, session: AgentSession) -> list[Path]:
        """Delete the content-less chat files of ``session`` beside its transcript; return them.

        The trap (Gemini CLI 0.57–0.61, google-gemini/gemini-cli#27368, #29198): ``gemini
        --resume`` in a later UTC minute than the session's start leaves
        ``session-<that minute>-<id8>.jsonl`` holding its metadata line and the injected
        ``<session_context>`` message (in a ``$set``), and the next start of Gemini CLI (even
        ``--list-sessions``) deletes every file of that id, the real transcript with it. Only
        a file whose head names the session, with no message record of its own and no
        message the transcript lacks, is removed; the transcript itself never. Never raises:
        a file that cannot be read or removed is left.
        """
        transcript, session_id = session.transcript, session.session_id
        if transcript is None or session_id is None or not transcript.is_file():
            return []
        removed: list[Path] = []
        for path in transcript.parent.glob(f"session-*-{session_id[:8]}.jsonl"):
            if path == transcript or chat_head(path)[0] != session_id or not _is_leftover(path, transcript):
                continue
            try:
                path.unlink()
            except OSError as exc:
                log.warning("cannot remove %s's resume leftover %s: %s", self.name, path, exc)
                continue
            removed.append(path)
        return removed

    def transcript_layout(self, cwd: Path, env: Mapping[str, str]) -> TranscriptLayout:
        """Return the chat files of ``cwd``'s chats folders.

        A pre-assigned id whose chat was never written gives a session without transcript
        (the file name holds the start minute, not known in advance). Of several files of one
        id (the second one a resume in a later minute opens, with a fresh start time and no
        message) only the one holding the messages counts.
        """
        folders = self.chat_dirs(cwd, env)
        return TranscriptLayout(
            transcripts=lambda: _one_per_session([p for folder in folders for p in self.chat_files(folder)]),
            path_of=lambda session_id: self.session_file(folders, session_id),
            id_of=lambda path: chat_head(path)[0],
            head_of=lambda path: (chat_head(path)[1], None),
            expected_path=lambda session_id: None,
        )

    def transcript_path_in(self, session: AgentSession, cwd: Path, env: Mapping[str, str]) -> Path | None:
        """Return the chat file of the same name in ``cwd``'s likeliest chats folder, or None."""
        folders = self.chat_dirs(cwd, env)
        if not folders or session.transcript is None:
            return None
        return folders[0] / session.transcript.name

    def resume_words(self, session: AgentSession) -> list[str]:
        """Return ``["-r", <id>]``."""
        return ["-r", session.session_id or ""]

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the chat's exchanges; a legacy ``.json`` document is read whole."""
        path = session.transcript
        if path is not None and path.suffix == ".json":
            try:
                document = as_dict(json.loads(path.read_text(encoding="utf-8"))) or {}
            except (OSError, ValueError) as exc:
                log.warning("cannot read %s chat %s: %s", self.name, path, exc)
                return []
            messages = [m for m in (as_dict(item) for item in as_list(document.get("messages"))) if m is not None]
            return last(_build([{"sessionId": document.get("sessionId")}, *messages]), limit)
        return super().read_exchanges(session, limit)

    def read_title(self, session: AgentSession) -> str | None:
        """Return the agent's title of the conversation (``agents.titles.gemini_title``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return gemini_title(session.transcript)

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the task list the conversation stopped at (``read_gemini_plan``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return read_gemini_plan(session.transcript)

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return the chat file and its subagents' chats (``chats/<session id>/*.jsonl``)."""
        files = super().transcript_files(session)
        if files and session.transcript is not None and session.session_id is not None:
            files.extend(sorted((session.transcript.parent / session.session_id).glob("*.jsonl")))
        return files
