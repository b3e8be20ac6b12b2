"""Write a conversation into an agent's own transcript format: what every writer shares.

A hand-off (``shellkeep resume SESSION --agent OTHER``) gives one agent's conversation to
another as the other's own history: a writer turns shellkeep's exchanges into the records the
target agent writes itself (its user and assistant messages, tool calls summarised as text
inside the assistant's), under a fresh session id, in the folder the agent resumes from. The
writers live beside their adapters (``claude_writer``, ``codex_writer``, ``gemini_writer``,
``qwen_writer``); ``writers.writer_for`` finds one by agent name.

Every written transcript carries the mark ``shellkeep_handoff`` (``HandoffMark``): a field the
agents ignore, in each record (Claude Code, Qwen Code) or in the head record (Codex's
``session_meta``, Gemini CLI's metadata line). A transcript is only ever created, never
written over (``create_new``: ``O_EXCL``).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from shellkeep.agents.base import Exchange, JsonValue
from shellkeep.errors import ShellkeepError

__all__ = [
    "MARK_FIELD",
    "HandoffMark",
    "HandoffRefused",
    "TranscriptWriter",
    "WrittenTranscript",
    "answer_with_tools",
    "create_new",
    "iso_millis",
    "json_line",
    "read_mark",
]

MARK_FIELD = "shellkeep_handoff"
"""The record field that marks a transcript as written by shellkeep (agents ignore it)."""

_ATTEMPTS = 3
"""How many fresh ids a writer tries when a file is already at the path (never written over)."""


class HandoffRefused(ShellkeepError):
    """The conversation cannot be written into the agent's history here (the caller re-injects)."""


@dataclass(frozen=True, slots=True)
class HandoffMark:
    """Where a written transcript came from: shellkeep's session id, its agent, when written.

    written_at: ISO 8601 UTC with milliseconds (``2026-12-06T08:30:00.000Z``).
    """

    from_session: str
    from_agent: str
    written_at: str

    def to_json(self) -> dict[str, JsonValue]:
        """Return ``{"by": "shellkeep", "from_session", "from_agent", "written_at"}``."""
        return {"by": "shellkeep", "from_session": self.from_session, "from_agent": self.from_agent, "written_at": self.written_at}


@dataclass(frozen=True, slots=True)
class WrittenTranscript:
    """A transcript a writer created: the agent's new session id, the file, how many exchanges."""

    session_id: str
    path: Path
    exchanges: int


class TranscriptWriter(Protocol):
    """Write exchanges as one agent's own transcript, for its native resume."""

    def target(self, session_id: str, cwd: Path, env: Mapping[str, str], now: datetime) -> Path:
        """Return where the transcript of a new session ``session_id`` started in ``cwd`` goes.

        env: the environment the agent will run with (its home and config folders are read
        there). now: aware UTC time of the writing (some agents name files by it).
        Raises HandoffRefused when the agent has no place for it here.
        """
        ...

    def new_session_id(self) -> str:
        """Return a fresh session id of the agent's kind."""
        ...

    def lines(
        self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark, env: Mapping[str, str]
    ) -> list[bytes]:
        """Return the transcript's records, one JSON line each (``\\n``-terminated); env as for ``target``."""
        ...


def iso_millis(when: datetime) -> str:
    """Return an aware datetime as ISO 8601 UTC with milliseconds and ``Z`` (JavaScript's toISOString)."""
    utc = when.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def json_line(record: Mapping[str, object]) -> bytes:
    """Return one record as a compact JSON line (as JSON.stringify and serde_json write it)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def answer_with_tools(exchange: Exchange) -> str:
    """Return the answer an agent gives in a hand-off: its tool calls summarised, then its text.

    ``[tools used: Bash ls -la; Read parse.py]`` (one line, in call order) precedes the answer
    when there were calls; an exchange without either gives ``(no answer was recorded)``.
    """
    parts = []
    if exchange.tool_calls:
        parts.append("[tools used: " + "; ".join(f"{c.name} {c.summary}".strip() for c in exchange.tool_calls) + "]")
    if exchange.answer.strip():
        parts.append(exchange.answer.strip())
    return "\n\n".join(parts) or "(no answer was recorded)"


def new_uuid() -> str:
    """Return a random UUID (version 4) as text."""
    return str(uuid.uuid4())


def create_new(
    writer: TranscriptWriter,
    exchanges: Sequence[Exchange],
    cwd: Path,
    env: Mapping[str, str],
    mark: HandoffMark,
    now: datetime,
    *,
    dry_run: bool = False,
) -> WrittenTranscript:
    """Create the transcript ``writer`` makes of ``exchanges``, under a fresh id; return it.

    The file is opened with ``O_CREAT | O_EXCL`` (mode 0600, its folders made 0700): a file
    already at the path is never written over; a new id is tried instead (3 times). A failed
    write removes the partial file. ``dry_run`` writes nothing and returns where it would go.
    Raises HandoffRefused (no place for it, or every id taken) and OSError.
    """
    prompts = [e for e in exchanges if e.prompt.strip()]
    if not prompts:
        raise HandoffRefused("no exchange to hand off")
    for _ in range(_ATTEMPTS):
        session_id = writer.new_session_id()
        path = writer.target(session_id, cwd, env, now)
        if dry_run:
            return WrittenTranscript(session_id, path, len(prompts))
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        _fill(fd, path, writer.lines(prompts, session_id, cwd, mark, env))
        return WrittenTranscript(session_id, path, len(prompts))
    raise HandoffRefused(f"a file was already at each new transcript path in {path.parent}")


def _fill(fd: int, path: Path, lines: Iterable[bytes]) -> None:
    """Write ``lines`` to the new file ``fd`` and sync it; remove it when that fails."""
    try:
        with os.fdopen(fd, "wb") as fh:
            for line in lines:
                fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def read_mark(path: Path, head_of: Callable[[dict[str, object]], object] | None = None, max_records: int = 4) -> dict[str, object] | None:
    """Return the ``shellkeep_handoff`` mark found in the first ``max_records`` records of a JSONL
    transcript (at the top level, or in ``head_of(record)`` when given), or None."""
    try:
        with open(path, "rb") as fh:
            for _, line in zip(range(max_records), fh):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(record, dict):
                    continue
                holder = head_of(record) if head_of is not None else record
                found = holder.get(MARK_FIELD) if isinstance(holder, dict) else None
                if isinstance(found, dict):
                    return found
    except OSError:
        return None
    return None
