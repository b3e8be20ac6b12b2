"""Know Qwen Code (``qwen``, a Gemini CLI fork): its chat JSONL, ``--session-id``, ``qwen -r``.

Chats: ``$QWEN_HOME`` (else ``~/.qwen``) ``/projects/<cwd, every character that is not a letter
or digit as '-'>/chats/<session id>.jsonl``. Qwen Code 0.24 ``ChatRecordingService`` records
are Claude-like envelopes (``uuid, parentUuid, sessionId, timestamp, type: user|assistant|
tool_result|system, cwd``) carrying a Gemini ``Content`` ``message`` (``role``, ``parts`` with
``text``/``functionCall``/``functionResponse``), ``usageMetadata`` and ``model``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from shellkeep.agents import jsonl
from shellkeep.agents.adapter import HELP, VERSION, CommandAdapter, TranscriptLayout, jsonl_per_id
from shellkeep.agents.argv import Arity, Grammar, Option
from shellkeep.agents.base import AgentSession, Exchange, ScreenChrome, Usage
from shellkeep.agents.locations import UUID_PATTERN, dash_encoded, home_dir
from shellkeep.agents.titles import qwen_title
from shellkeep.agents.plan import Plan, PlanBuilder, items_from, scan_records
from shellkeep.agents.records import (
    ExchangeBuilder,
    JsonObject,
    as_dict,
    as_int,
    as_list,
    as_str,
    dig,
    texts_of,
)

__all__ = ["QWEN_FORMAT", "QwenAdapter", "qwen_root"]

_CONTINUE = Option(("--continue", "-c"))
_RESUME = Option(("--resume", "-r"), Arity.OPTIONAL)
_SESSION_ID = Option(("--session-id",), Arity.ONE)
_FORK = Option(("--fork-session",))
_PROMPT = Option(("--prompt", "-p"), Arity.ONE)
_PROMPT_INTERACTIVE = Option(("--prompt-interactive", "-i"), Arity.ONE)

_GRAMMAR = Grammar(
    options=(
        HELP,
        VERSION,
        _CONTINUE,
        _RESUME,
        _SESSION_ID,
        _FORK,
        _PROMPT,
        _PROMPT_INTERACTIVE,
        Option(("--chat-recording",), Arity.OPTIONAL),
        *(
            Option(names, Arity.ONE)
            for names in (
                ("--model", "-m"),
                ("--approval-mode",),
                ("--output-format", "-o"),
                ("--openai-api-key",),
                ("--openai-base-url",),
                ("--auth-type",),
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
        *(Option(names) for names in (("--sandbox", "-s"), ("--yolo", "-y"), ("--debug", "-d"))),
    ),
    subcommands=frozenset({"mcp", "extensions", "sessions", "session", "auth"}),
)


def qwen_root(env: Mapping[str, str]) -> Path:
    """Return Qwen Code's folder: ``$QWEN_HOME`` when set, else ``~/.qwen``."""
    configured = env.get("QWEN_HOME")
    return Path(configured) if configured else home_dir(env) / ".qwen"


def _parts(record: JsonObject) -> list[object]:
    """Return the ``message.parts`` of a record."""
    return as_list(dig(record, "message", "parts"))


def _prompt_text(record: JsonObject) -> str | None:
    """Return the prompt of a ``user`` record (None for anything else or an empty text)."""
    if record.get("type") != "user":
        return None
    text = "\n".join(texts_of(_parts(record)))
    return text if text.strip() else None


def _is_prompt(record: JsonObject) -> bool:
    """Return whether a record is a prompt the user typed."""
    return _prompt_text(record) is not None


def _build(records: Iterable[JsonObject]) -> list[Exchange]:
    """Turn chat records in file order into exchanges; a record repeated by uuid counts once (last wins)."""
    unique: dict[str, JsonObject] = {}
    for position, record in enumerate(records):
        unique[as_str(record.get("uuid")) or f"#{position}"] = record
    builder = ExchangeBuilder()
    for record in unique.values():
        kind = record.get("type")
        if kind == "user":
            prompt = _prompt_text(record)
            if prompt is not None:
                builder.prompt(prompt, record.get("timestamp"))
        elif kind == "assistant":
            for part in (as_dict(item) for item in _parts(record)):
                if part is None:
                    continue
                call = as_dict(part.get("functionCall"))
                if call is not None:
                    builder.tool_call(as_str(call.get("name")) or "?", call.get("args"))
            builder.answer("\n".join(texts_of(_parts(record))))
            usage = as_dict(record.get("usageMetadata"))
            if usage is not None:
                builder.add_usage(
                    Usage(
                        input=as_int(usage.get("promptTokenCount")),
                        output=as_int(usage.get("candidatesTokenCount")),
                        cache_read=as_int(usage.get("cachedContentTokenCount")),
                    )
                )
            builder.set_model(as_str(record.get("model")))
        elif kind == "tool_result":
            display = dig(record, "toolCallResult", "resultDisplay")
            if isinstance(display, str) and display:
                builder.tool_result(display)
                continue
            for part in (as_dict(item) for item in _parts(record)):
                if part is not None and "functionResponse" in part:
                    builder.tool_result(dig(part, "functionResponse", "response"))
    return builder.exchanges()


QWEN_FORMAT = jsonl.TranscriptFormat(is_prompt=_is_prompt, build=_build)
"""How Qwen Code chat files are read."""


def _head(path: Path) -> tuple[datetime | None, str | None]:
    """Return the first timestamp and cwd recorded in a chat file."""
    return jsonl.head_start(path, max_records=4)


QWEN_SCREEN = ScreenChrome(
    input_box=r"─{20,}",
    lines=(
        r"➜ .*",  # "➜ work · standin-model"
        r"Auto mode .*",  # "Auto mode (shift + tab to cycle)"
        r"Press Ctrl\+C again to exit\.?",
        r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] .*",  # the spinner while a turn runs
    ),
    mark="◆\ufe0e? ",
)
"""What Qwen Code 0.23.4 and 0.24.4 draw besides answers (seen in tests/agents/test_resume_qwen.py),
on the alternate screen: the prompt echoed as ``> <prompt>``, an answer as ``◆ <text>``, then the
input box (a rule, ``>   Type your message or @path/to/file``, a rule) and its footer
(``➜ <folder> · <model>``, ``Auto mode (shift + tab to cycle)``)."""



def read_qwen_plan(chat: Path) -> Plan | None:
    """Return the todo list of a Qwen Code chat as its last ``todo_write`` call left it, or None.

    An ``assistant`` record's part ``{functionCall: {name: todo_write, args: {todos: [{id,
    content, status}]}}}``, status ``pending``, ``in_progress`` or ``completed`` (Qwen Code 0.24).
    """
    builder = PlanBuilder()
    for record in scan_records(chat, (b'"todo_write"',)):
        for part in (as_dict(item) for item in _parts(record)):
            call = as_dict(part.get("functionCall")) if part is not None else None
            if call is not None and call.get("name") == "todo_write":
                builder.replace("todo_write", items_from(dig(call, "args", "todos"), ("content",)))
    return builder.plan()


class QwenAdapter(CommandAdapter):
    """Adapter for Qwen Code (``qwen``, ``npx @qwen-code/qwen-code``)."""

    name = "qwen"
    title = "Qwen Code"
    # Its home and runtime folder, and the OpenAI-compatible endpoint, key and model it talks to.
    env_names = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY")
    env_prefixes = ("QWEN_",)
    executables = ("qwen",)
    tested_versions = ("0.23.4", "0.24.4")
    answers_written_late = True
    ready_prompt = r"Type your message or @path/to/file"  # its empty input box, drawn late as Gemini CLI's (its fork); its paste takes the Enter
    screen_chrome = QWEN_SCREEN
    input_includes_cache_read = True
    packages = ("@qwen-code/qwen-code",)
    grammar = _GRAMMAR
    session_option = _SESSION_ID
    conversation_options = (_CONTINUE, _RESUME, _SESSION_ID)
    id_options = (_RESUME, _SESSION_ID)
    fork_options = (_FORK,)
    dropped_on_resume = (_CONTINUE, _RESUME, _SESSION_ID, _FORK, _PROMPT, _PROMPT_INTERACTIVE)
    transcript_format = QWEN_FORMAT
    resume_hint = rf"qwen (?:--resume|-r)[ =]({UUID_PATTERN})"

    def transcript_layout(self, cwd: Path, env: Mapping[str, str]) -> TranscriptLayout:
        """Return ``<id>.jsonl`` chat files in ``cwd``'s project folder (as given and resolved)."""
        projects = qwen_root(env) / "projects"
        folders = list(dict.fromkeys(projects / dash_encoded(d) / "chats" for d in (cwd, cwd.resolve())))
        return jsonl_per_id(folders, _head)

    def read_title(self, session: AgentSession) -> str | None:
        """Return the agent's title of the conversation (``agents.titles.qwen_title``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return qwen_title(session.transcript)

    def read_plan(self, session: AgentSession) -> Plan | None:
        """Return the task list the conversation stopped at (``read_qwen_plan``)."""
        if session.transcript is None or not session.transcript.is_file():
            return None
        return read_qwen_plan(session.transcript)

    def resume_words(self, session: AgentSession) -> list[str]:
        """Return ``["-r", <id>]``."""
        return ["-r", session.session_id or ""]
