"""Write a conversation as a Qwen Code chat file, for ``qwen -r <id>`` (a hand-off).

Where: ``$QWEN_HOME`` (else ``~/.qwen``) ``/projects/<cwd dash-encoded>/chats/<uuid>.jsonl``, as
``qwen.QwenAdapter`` reads it. What (Qwen Code 0.23.4 and 0.24.4 ``ChatRecordingService`` JSONL,
as in tests/data/agents/qwen-real/): per exchange a ``user`` record (``provenance: real_user``,
``message: {role: user, parts: [{text}]}``) and an ``assistant`` record (``provenance:
assistant_output``, ``message: {role: model, parts: [{text}]}``, ``model``), linked by
``uuid``/``parentUuid``, with ``sessionId``, ``timestamp``, ``cwd`` and the ``shellkeep_handoff``
mark; tool calls are summarised in the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from shellkeep.agents.base import Exchange, JsonValue
from shellkeep.agents.locations import dash_encoded
from shellkeep.agents.qwen import qwen_root
from shellkeep.agents.records import parse_time
from shellkeep.agents.transcript_writer import MARK_FIELD, HandoffMark, answer_with_tools, iso_millis, json_line, new_uuid

__all__ = ["QwenWriter"]


class QwenWriter:
    """Write Qwen Code chat files (see the module)."""

    def new_session_id(self) -> str:
        """Return a random UUID (Qwen Code's session ids are UUIDs)."""
        return new_uuid()

    def target(self, session_id: str, cwd: Path, env: Mapping[str, str], now: datetime) -> Path:
        """Return ``<qwen home>/projects/<cwd dash-encoded>/chats/<session_id>.jsonl`` (cwd symlink-resolved)."""
        return qwen_root(env) / "projects" / dash_encoded(cwd.resolve()) / "chats" / f"{session_id}.jsonl"

    def lines(
        self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark, env: Mapping[str, str]
    ) -> list[bytes]:
        """Return a user and an assistant record per exchange, one chain from the first prompt."""
        envelope: dict[str, JsonValue] = {"sessionId": session_id, "cwd": str(cwd.resolve()), MARK_FIELD: mark.to_json()}
        lines: list[bytes] = []
        parent: str | None = None
        for exchange in exchanges:
            asked = parse_time(exchange.time) or parse_time(mark.written_at)
            stamp = iso_millis(asked) if asked is not None else mark.written_at
            answered = iso_millis(asked + timedelta(milliseconds=1)) if asked is not None else mark.written_at
            prompt_uuid, answer_uuid = new_uuid(), new_uuid()
            lines.append(json_line({
                "uuid": prompt_uuid, "parentUuid": parent, **envelope, "timestamp": stamp, "type": "user",
                "provenance": "real_user", "message": {"role": "user", "parts": [{"text": exchange.prompt}]},
            }))  # fmt: skip
            record: dict[str, JsonValue] = {
                "uuid": answer_uuid, "parentUuid": prompt_uuid, **envelope, "timestamp": answered, "type": "assistant",
                "provenance": "assistant_output", "message": {"role": "model", "parts": [{"text": answer_with_tools(exchange)}]},
            }  # fmt: skip
            if exchange.model:
                record["model"] = exchange.model
            lines.append(json_line(record))
            parent = answer_uuid
        return lines
