"""Write a conversation as a Claude Code transcript, for ``claude --resume <id>`` (a hand-off).

Where: ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``) ``/projects/<cwd dash-encoded>/<uuid>.jsonl``,
as ``claude.ClaudeAdapter`` reads it. What (Claude Code 2.1.197 and 2.1.332 transcript JSONL):
per exchange a ``user`` record whose ``message`` is ``{role: user, content: <prompt>}`` and an
``assistant`` record whose ``message`` is an Anthropic Messages API message with one text block
(tool calls summarised in it, ``transcript_writer.answer_with_tools``), linked by
``uuid``/``parentUuid`` into one branch, each with the envelope Claude Code writes (``cwd``,
``sessionId``, ``timestamp``, ``isSidechain``, ``userType``) and the ``shellkeep_handoff`` mark.

An answer's ``model`` is the exchange's when it is a Claude model (``claude-…``), else
``<synthetic>``, what Claude Code writes on answers no model gave: on resume it restores the
model of the last answer, and says "Session model … could not be restored" for another
agent's model (``gpt-5-codex``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from shellkeep.agents.base import Exchange, JsonValue
from shellkeep.agents.claude import claude_root
from shellkeep.agents.locations import dash_encoded
from shellkeep.agents.records import parse_time
from shellkeep.agents.transcript_writer import (
    MARK_FIELD,
    HandoffMark,
    HandoffRefused,
    answer_with_tools,
    iso_millis,
    json_line,
    new_uuid,
)

__all__ = ["ClaudeWriter"]

SYNTHETIC_MODEL = "<synthetic>"
"""The model Claude Code names on answers no model gave; its resume restores no model from them."""

_MAX_FOLDER_NAME = 200
"""Claude Code cuts longer project folder names and adds a hash suffix shellkeep cannot compute."""


class ClaudeWriter:
    """Write Claude Code transcripts (see the module)."""

    def new_session_id(self) -> str:
        """Return a random UUID (Claude Code's session ids are UUIDs)."""
        return new_uuid()

    def target(self, session_id: str, cwd: Path, env: Mapping[str, str], now: datetime) -> Path:
        """Return ``<config>/projects/<cwd dash-encoded>/<session_id>.jsonl`` (cwd symlink-resolved,
        as Claude Code's own working directory is). Raises HandoffRefused for a folder name past
        200 characters (its hash suffix is not known)."""
        encoded = dash_encoded(cwd.resolve())
        if len(encoded) > _MAX_FOLDER_NAME:
            raise HandoffRefused(f"claude's project folder name for {cwd} is longer than {_MAX_FOLDER_NAME} characters")
        return claude_root(env) / "projects" / encoded / f"{session_id}.jsonl"

    def lines(
        self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark, env: Mapping[str, str]
    ) -> list[bytes]:
        """Return a user and an assistant record per exchange, one branch from the first prompt."""
        written = parse_time(mark.written_at)
        envelope: dict[str, JsonValue] = {
            "isSidechain": False,
            "userType": "external",
            "cwd": str(cwd.resolve()),
            "sessionId": session_id,
            MARK_FIELD: mark.to_json(),
        }
        lines: list[bytes] = []
        parent: str | None = None
        for number, exchange in enumerate(exchanges, start=1):
            asked = parse_time(exchange.time) or written
            stamp = iso_millis(asked) if asked is not None else mark.written_at
            answered = iso_millis(asked + timedelta(milliseconds=1)) if asked is not None else mark.written_at
            prompt_uuid, answer_uuid = new_uuid(), new_uuid()
            lines.append(json_line({
                "parentUuid": parent, **envelope, "type": "user",
                "message": {"role": "user", "content": exchange.prompt},
                "uuid": prompt_uuid, "timestamp": stamp,
            }))  # fmt: skip
            lines.append(json_line({
                "parentUuid": prompt_uuid, **envelope, "type": "assistant",
                "message": {
                    "id": f"msg_shellkeep_{session_id[:8]}_{number:04d}", "type": "message", "role": "assistant",
                    "model": _claude_model(exchange.model), "content": [{"type": "text", "text": answer_with_tools(exchange)}],
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
                },
                "uuid": answer_uuid, "timestamp": answered,
            }))  # fmt: skip
            parent = answer_uuid
        return lines


def _claude_model(model: str | None) -> str:
    """Return ``model`` when it names a Claude model, else ``<synthetic>`` (see the module)."""
    return model if model and model.startswith("claude-") else SYNTHETIC_MODEL
