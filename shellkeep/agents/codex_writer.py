"""Write a conversation as a Codex rollout, for ``codex resume <id>`` (a hand-off).

Where: ``$CODEX_HOME`` (else ``~/.codex``) ``/sessions/YYYY/MM/DD/rollout-<local time
YYYY-MM-DDThh-mm-ss>-<thread uuid>.jsonl`` (local date and time, as Codex names them). What
(Codex 0.165.0 and 0.171.0 rollout JSONL, ``{timestamp, type, payload}`` lines): a
``session_meta`` (``id``, ``timestamp``, ``cwd``, ``originator: shellkeep``, ``cli_version``,
``source: cli``, ``model_provider`` and the ``shellkeep_handoff`` mark), then per exchange what the model saw, a
user and an assistant ``response_item`` message (``input_text`` / ``output_text``; tool calls
summarised in the answer), and what the TUI shows, ``event_msg`` ``user_message`` and
``agent_message``. Both pinned versions find such a rollout by its thread id alone, without
an entry in their ``state_5.sqlite`` (they index it on the way), and send its messages as the
conversation (checked with ``codex exec resume`` and ``codex resume`` against the stand-in).

``model_provider`` is the one Codex will use (``model_provider`` of its ``config.toml``, of the
selected ``profile`` first; ``openai`` when unset, as Codex's default): once Codex has run in a
home, ``codex resume`` of a rollout whose provider is missing or not configured stops at a
"Model provider unavailable" dialog.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from shellkeep.agents.base import Exchange
from shellkeep.agents.codex import codex_home
from shellkeep.agents.records import parse_time
from shellkeep.agents.transcript_writer import MARK_FIELD, HandoffMark, answer_with_tools, iso_millis, json_line, new_uuid

__all__ = ["CodexWriter", "ROLLOUT_CLI_VERSION", "model_provider"]

ROLLOUT_CLI_VERSION = "0.171.0"
"""The ``cli_version`` a written rollout names: the newest Codex it was tested with."""

DEFAULT_MODEL_PROVIDER = "openai"
"""The provider Codex uses when its config.toml names none."""


def model_provider(env: Mapping[str, str]) -> str:
    """Return the model provider Codex will use with ``env``: its config.toml's ``model_provider``
    (the selected ``profile``'s first), else ``openai``; a missing or unreadable file counts as none."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        config = tomllib.loads((codex_home(env) / "config.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return DEFAULT_MODEL_PROVIDER
    profiles, profile = config.get("profiles"), config.get("profile")
    chosen = profiles.get(profile) if isinstance(profiles, dict) and isinstance(profile, str) else None
    for table in (chosen, config):
        provider = table.get("model_provider") if isinstance(table, dict) else None
        if isinstance(provider, str) and provider:
            return provider
    return DEFAULT_MODEL_PROVIDER


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

    def lines(
        self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark, env: Mapping[str, str]
    ) -> list[bytes]:
        """Return the ``session_meta`` line (its provider read from ``env``'s Codex home), then four
        lines per exchange (see the module)."""
        meta = {
            "id": session_id, "timestamp": mark.written_at, "cwd": str(cwd.resolve()), "originator": "shellkeep",
            "cli_version": ROLLOUT_CLI_VERSION, "source": "cli", "model_provider": model_provider(env),
            MARK_FIELD: mark.to_json(),
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
