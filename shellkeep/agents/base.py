"""Define what every agent adapter speaks: exchanges, agent sessions, launches, the protocol.

An adapter knows one agent CLI (Claude Code, Codex, ...): how to recognise its command
line, how to pre-assign the agent's own session id, where the agent keeps its transcript,
how to read exchanges from it and how to start the agent again on the same conversation.
The records here are what the rest of shellkeep stores (``exchanges.jsonl``, ``meta.json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeAlias, TypeVar, runtime_checkable

from shellkeep.errors import DataError

__all__ = [
    "INJECTED_CONTEXT_PREFIX",
    "MAX_TOOL_RESULT_CHARS",
    "MAX_TOOL_SUMMARY_CHARS",
    "AgentAdapter",
    "AgentSession",
    "Exchange",
    "JsonValue",
    "Launch",
    "ScreenChrome",
    "ToolCall",
    "Usage",
]

JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
"""A value as ``json.dumps`` writes it."""

_T = TypeVar("_T")
_D = TypeVar("_D")

MAX_TOOL_SUMMARY_CHARS = 120
"""Longest ``ToolCall.summary``, in characters."""

MAX_TOOL_RESULT_CHARS = 200
"""Longest entry of ``Exchange.tool_results``, in characters."""

INJECTED_CONTEXT_PREFIX = "[shellkeep] Context from the earlier session"
"""How the block ``shellkeep resume`` types into a program begins.

A prompt that starts with it is shellkeep's re-injection, not something the user asked,
so it is never stored as an exchange.
"""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool the agent called during an exchange.

    name: the tool's name as the agent spells it (``Bash``, ``exec_command``, ``read_file``).
    summary: its arguments on one line, at most ``MAX_TOOL_SUMMARY_CHARS`` characters
    (the command, path or pattern when the arguments have one, else compact JSON).
    """

    name: str
    summary: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens spent on one exchange, as the agent reported them (ints, 0 when not reported).

    input: prompt tokens (some agents count cached tokens in here too, as they report it);
    output: generated tokens; cache_read: prompt tokens served from the cache;
    cache_write: prompt tokens written to the cache.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: Usage) -> Usage:
        """Return the field-wise sum of two usages."""
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
        )


@dataclass(frozen=True, slots=True)
class Exchange:
    """One prompt of the user and everything the agent did about it.

    index: 0-based position in the list ``read_exchanges`` returned (with ``limit=None``
    that is the position in the whole conversation).
    time: when the prompt was sent, ISO 8601 in UTC (``2026-11-29T09:15:03.000Z``), or None.
    prompt: the text the user typed. answer: the agent's text, paragraphs joined by a blank line.
    tool_calls / tool_results: in the order they happened; each result is one line of at
    most ``MAX_TOOL_RESULT_CHARS`` characters.
    model: the model that answered, or None. usage: summed over the exchange, or None.
    """

    index: int
    time: str | None
    prompt: str
    answer: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[str, ...] = ()
    model: str | None = None
    usage: Usage | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """Return the exchange as a JSON object with snake_case keys (one exchanges.jsonl line)."""
        usage: JsonValue = None
        if self.usage is not None:
            usage = {
                "input": self.usage.input,
                "output": self.usage.output,
                "cache_read": self.usage.cache_read,
                "cache_write": self.usage.cache_write,
            }
        return {
            "index": self.index,
            "time": self.time,
            "prompt": self.prompt,
            "answer": self.answer,
            "tool_calls": [{"name": c.name, "summary": c.summary} for c in self.tool_calls],
            "tool_results": list(self.tool_results),
            "model": self.model,
            "usage": usage,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Exchange:
        """Build an exchange from what ``to_json`` returned (after a JSON round trip).

        Missing optional keys take their defaults. Raises ``DataError`` naming the key
        when a value has the wrong type.
        """
        calls = []
        for item in _typed(data, "tool_calls", list, []):
            if not isinstance(item, dict):
                raise DataError(f"exchange key 'tool_calls' holds a {type(item).__name__}; expected objects")
            calls.append(ToolCall(name=_typed(item, "name", str, ""), summary=_typed(item, "summary", str, "")))
        results = _typed(data, "tool_results", list, [])
        if not all(isinstance(r, str) for r in results):
            raise DataError("exchange key 'tool_results' must hold strings")
        usage_data = _typed(data, "usage", dict, None)
        usage = None
        if usage_data is not None:
            usage = Usage(
                input=_typed(usage_data, "input", int, 0),
                output=_typed(usage_data, "output", int, 0),
                cache_read=_typed(usage_data, "cache_read", int, 0),
                cache_write=_typed(usage_data, "cache_write", int, 0),
            )
        return cls(
            index=_typed(data, "index", int, 0),
            time=_typed(data, "time", str, None),
            prompt=_typed(data, "prompt", str, ""),
            answer=_typed(data, "answer", str, ""),
            tool_calls=tuple(calls),
            tool_results=tuple(str(r) for r in results),
            model=_typed(data, "model", str, None),
            usage=usage,
        )


def _typed(data: Mapping[str, object], key: str, kind: type[_T], default: _D) -> _T | _D:
    """Return ``data[key]`` when it is a ``kind`` (missing or null gives ``default``), else raise DataError."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise DataError(f"exchange key '{key}' holds a {type(value).__name__}, expected {kind.__name__}")


@dataclass(frozen=True, slots=True)
class AgentSession:
    """The agent's own conversation behind one shellkeep session.

    agent: the adapter's name. session_id: the agent's id for the conversation (Claude's
    uuid, Codex's thread id, OpenCode's ``ses_…``; for aider the ``chat started at`` stamp),
    or None when it has none. transcript: the file the agent writes it to (for OpenCode the
    shared SQLite database), or None; the file may not exist yet while the agent runs.
    """

    agent: str
    session_id: str | None
    transcript: Path | None

    def to_json(self) -> dict[str, JsonValue]:
        """Return the session as a JSON object (``agent``, ``session_id``, ``transcript``)."""
        return {
            "agent": self.agent,
            "session_id": self.session_id,
            "transcript": None if self.transcript is None else str(self.transcript),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> AgentSession:
        """Build a session from what ``to_json`` returned; raises ``DataError`` on a wrong type."""
        agent = data.get("agent")
        session_id = data.get("session_id")
        transcript = data.get("transcript")
        if (
            not isinstance(agent, str)
            or not isinstance(session_id, (str, type(None)))
            or not isinstance(transcript, (str, type(None)))
        ):
            raise DataError("agent session is malformed; expected agent, session_id and transcript strings")
        return cls(agent=agent, session_id=session_id, transcript=None if transcript is None else Path(transcript))


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start the agent for a new shellkeep session.

    argv: the command to run (the user's, plus any flag the adapter added).
    env_updates: variables to set in the child's environment on top of the user's.
    agent_session_id: the agent's session id when it is known before the start
    (pre-assigned by the adapter or named by the user's resume flag), else None.
    """

    argv: tuple[str, ...]
    env_updates: dict[str, str] = field(default_factory=dict)
    agent_session_id: str | None = None


@dataclass(frozen=True, slots=True)
class ScreenChrome:
    """What an agent's full-screen interface draws around the conversation, for answers rebuilt from the screen.

    When the agent's transcript is gone, exchanges are built from the recording
    (``shellkeep.agents.generic.exchanges_from_recording``); these say which screen text is
    the agent's furniture rather than its answer. Patterns are regular expressions (Python
    ``re``) matched against one screen line with its surrounding spaces stripped.

    input_box: the first line of the input box the agent draws below the conversation (a
        rule, a prompt sign). When set, the prompt typed into that box is found again where
        the agent echoes it into the conversation above, and its answer is what follows the
        echo up to the input box; None: a line-based program, whose answer is drawn below
        the line the prompt was typed on.
    lines: lines that are never answer text: status lines, spinners, timings, banners.
    mark: a decoration starting an answer's lines (a bullet), removed with the indent that
        aligns the lines after it.
    echo_trim: what the agent draws on the lines of a prompt's echo besides the prompt (a
        box's edge before it, a time after it), removed before the echo is looked for.
    partial_lines: the agent streams an answer in a live region that can leave a line drawn
        while it was still arriving above its whole form (aider): a line the next one repeats
        and completes is dropped. Never for a shell: a sorted listing has such lines.
    """

    input_box: str | None = None
    lines: tuple[str, ...] = ()
    mark: str | None = None
    echo_trim: str | None = None
    partial_lines: bool = False


@dataclass(frozen=True, slots=True)
class WaitingHints:
    """How an agent's own screen shows that it waits for its user, for ``shellkeep ps`` and notifications.

    Patterns are regular expressions (Python ``re``) matched against the visible text of the
    agent's latest output (about 4 KiB, ``capture.activity.visible_text``: escape sequences
    become spaces, a cursor move to another row ends a line, runs of spaces become one); the
    reason of the latest match is the session's ``hint``. A match is evidence of waiting; no
    match is no evidence either way (the terminal's modes still count).

    approval: the agent's approval dialog (a command or an edit to allow, a folder to trust);
        list first the pattern of the question, the line a notification shows.
    input: the agent's ready input prompt (its input box's footer).
    """

    approval: tuple[str, ...] = ()
    input: tuple[str, ...] = ()

    def patterns(self) -> dict[str, tuple[str, ...]]:
        """Return reason -> patterns, as ``capture.activity.RecentOutput`` takes them."""
        return {"approval": self.approval, "input": self.input}


@runtime_checkable
class AgentAdapter(Protocol):
    """Know one agent CLI: recognise it, launch it, find and read its conversation, resume it.

    Adapters are stateless and never raise on a missing or unreadable transcript: they log
    a warning and return an empty result. Built-in adapters live in ``shellkeep.agents``;
    third-party ones register under the entry-point group ``shellkeep.agents``.
    """

    name: str
    has_native_transcript: bool
    """Whether the agent keeps a conversation of its own (``find_session`` can find it);
    False for the generic adapter, whose exchanges come from the recording."""
    screen_chrome: ScreenChrome
    """What the agent draws besides its answers, left out of exchanges rebuilt from the
    recording when its transcript is gone (an empty ``ScreenChrome`` for line-based programs)."""

    def matches(self, argv: Sequence[str]) -> bool:
        """Return whether ``argv`` runs this agent (by ``argv[0]``'s base name, npx, node, ...)."""
        ...

    def agent_name(self, argv: Sequence[str]) -> str:
        """Return the name a session running ``argv`` is stored under (meta.json's ``agent``).

        The adapter's ``name``; the generic adapter's is the program's base name (``bash``).
        """
        ...

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """Return the launch for ``argv`` run in ``cwd``; pre-assign the agent's session id where it can."""
        ...

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return the agent's conversation started by ``launch``, or None when none is found.

        Args:
            launch: what ``prepare`` returned.
            cwd: the directory the agent ran in.
            env: the child's environment (HOME and the agent's own variables are read here,
                never from ``os.environ``).
            started_at: aware UTC datetime of the launch; files older than it are not new.
            screen_text: plain text of the last screen, where agents print their resume hint.
        """
        ...

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the conversation's exchanges in order; only the last ``limit`` when given.

        With a limit the transcript is read from its end, so the cost follows the size of
        the last exchanges, not of the file. Unreadable → ``[]`` and a logged warning.
        """
        ...

    def resume_argv(self, original_argv: Sequence[str], session: AgentSession) -> list[str] | None:
        """Return the command that reopens ``session`` natively, or None when the agent has none.

        The user's other arguments are kept; earlier session, resume and continue flags and
        an initial prompt are dropped.
        """
        ...

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return the existing files worth copying into the shellkeep session folder."""
        ...
