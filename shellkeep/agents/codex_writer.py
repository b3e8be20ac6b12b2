"""Write a conversation as a Codex rollout, for ``codex resume <id>`` (a hand-off).

Where: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<local time
YYYY-MM-DDThh-mm-ss>-<thread uuid>.jsonl`` (local date and time, as Codex names them). What
(Codex 0.165.0 and 0.171.0 rollout JSONL, ``{timestamp, type, payload}`` lines): a
``session_meta`` (``id``, ``timestamp``, ``cwd``, ``originator: shellkeep``, ``cli_version``,
``source: cli`` and the ``shellkeep_handoff`` mark), then per exchange what the model saw, a
user and an assistant ``response_item`` message (``input_text`` / ``output_text``; tool calls
summarised in the answer), and what the TUI shows, ``event_msg`` ``user_message`` and
``agent_message``. Both pinned versions find such a rollout by its thread id alone, without
an entry in their ``state_5.sqlite`` (they index it on the way), and send its messages as the
conversation (checked with ``codex exec resume`` and ``codex resume`` against the stand-in).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from shellkeep.agents.base import Exchange
from shellkeep.agents.codex import codex_home
from shellkeep.agents.records import parse_time
from shellkeep.agents.transcript_writer import MARK_FIELD, HandoffMark, answer_with_tools, iso_millis, json_line, new_uuid

__all__ = ["CodexWriter", "ROLLOUT_CLI_VERSION"]

ROLLOUT_CLI_VERSION = "0.171.0"
"""The ``cli_version`` a written rollout names: the newest Codex it was tested with."""


class CodexWriter:
    """Write Codex rollouts (see the module)."""

    def new_session_id(self) -> str:
        """Return a random UUID (Codex takes any UUID as a thread id; its own are version 7)."""
        return new_uuid()

    def target(self, session_id: str, cwd: Path, env: Mapping[str, str], now: datetime) -> Path:
        """Return ``$CODEX_HOME/sessions/<local date>/rollout-<local time>-<session_id>.jsonl``."""
        local = now.astimezone()
        return (
            codex_home(env) / "sessions" / local.strftime("%Y") / local.strftime("%m") / local.strftime("%d")
            / f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{session_id}.jsonl"
        )  # fmt: skip

    def lines(self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark) -> list[bytes]:
        """Return the ``session_meta`` line, then four lines per exchange (see the module)."""
        meta = {
            "id": session_id, "timestamp": mark.written_at, "cwd": str(cwd.resolve()), "originator": "shellkeep",
            "cli_version": ROLLOUT_CLI_VERSION, "source": "cli", MARK_FIELD: mark.to_json(),
        }  # fmt: skip
        lines = [json_line({"timestamp": mark.written_at, "type": "session_meta", "payload": meta})]
        for exchange in exchanges:
            asked = parse_time(exchange.time)
            stamp = iso_millis(asked) if asked is not None else mark.written_at
            answer = answer_with_tools(exchange)
            for kind, payload in (
                ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": exchange.prompt}]}),
                ("event_msg", {"type": "user_message", "message": exchange.prompt, "images": []}),
                ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}),
                ("event_msg", {"type": "agent_message", "message": answer}),
            ):
                lines.append(json_line({"timestamp": stamp, "type": kind, "payload": payload}))
        return lines
