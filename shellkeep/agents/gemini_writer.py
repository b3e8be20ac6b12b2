"""Write a conversation as a Gemini CLI chat file, for ``gemini -r <id>`` (a hand-off).

Where: the project's ``chats`` folder under ``$GEMINI_CLI_HOME/.gemini`` (else ``~/.gemini``)
``/tmp/<project>/``, found as ``gemini.GeminiAdapter`` finds it (``projects.json``, the
``.project_root`` marker, the slug, the legacy hash), named ``session-<UTC minute
YYYY-MM-DDThh-mm>-<first 8 characters of the id>.jsonl``. A project Gemini CLI never ran in has
no such folder yet: the hand-off is refused (its registry is Gemini's to write). What (Gemini
CLI 0.57.0 and 0.61.0 ``ChatRecordingService`` JSONL, as in tests/data/agents/gemini-real/):
the metadata line ``{sessionId, projectHash (sha256 of the cwd), startTime, lastUpdated, kind:
main}`` with the ``shellkeep_handoff`` mark, then per exchange ``{id, timestamp, type: user,
content: [{text}]}`` and ``{id, timestamp, type: gemini, content: <answer text>, thoughts: [],
model}`` (tool calls summarised in the answer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path

from shellkeep.agents.base import Exchange
from shellkeep.agents.gemini import chat_dirs, gemini_dir
from shellkeep.agents.records import as_dict, as_str, parse_time
from shellkeep.agents.transcript_writer import MARK_FIELD, HandoffMark, HandoffRefused, answer_with_tools, iso_millis, json_line, new_uuid

__all__ = ["GeminiWriter"]


class GeminiWriter:
    """Write Gemini CLI chat files (see the module)."""

    def new_session_id(self) -> str:
        """Return a random UUID (Gemini CLI's session ids are UUIDs)."""
        return new_uuid()

    def target(self, session_id: str, cwd: Path, env: Mapping[str, str], now: datetime) -> Path:
        """Return ``<project>/chats/session-<UTC minute>-<id8>.jsonl``; HandoffRefused without a project folder."""
        root = gemini_dir(env)
        folders = chat_dirs(root, cwd) or _registered(root, cwd)
        if not folders:
            raise HandoffRefused(f"gemini has no project folder for {cwd} yet (run gemini there once)")
        minute = now.strftime("%Y-%m-%dT%H-%M")
        return folders[0] / f"session-{minute}-{session_id[:8]}.jsonl"

    def lines(
        self, exchanges: Sequence[Exchange], session_id: str, cwd: Path, mark: HandoffMark, env: Mapping[str, str]
    ) -> list[bytes]:
        """Return the metadata line, then a user and a gemini message per exchange."""
        head = {
            "sessionId": session_id, "projectHash": hashlib.sha256(str(cwd).encode()).hexdigest(),
            "startTime": mark.written_at, "lastUpdated": mark.written_at, "kind": "main", MARK_FIELD: mark.to_json(),
        }  # fmt: skip
        lines = [json_line(head)]
        for exchange in exchanges:
            asked = parse_time(exchange.time) or parse_time(mark.written_at)
            stamp = iso_millis(asked) if asked is not None else mark.written_at
            answered = iso_millis(asked + timedelta(milliseconds=1)) if asked is not None else mark.written_at
            lines.append(json_line({"id": new_uuid(), "timestamp": stamp, "type": "user", "content": [{"text": exchange.prompt}]}))
            answer: dict[str, object] = {
                "id": new_uuid(), "timestamp": answered, "type": "gemini", "content": answer_with_tools(exchange), "thoughts": [],
            }  # fmt: skip
            if exchange.model:
                answer["model"] = exchange.model
            lines.append(json_line(answer))
        return lines


def _registered(root: Path, cwd: Path) -> list[Path]:
    """Return the ``chats`` folder of the project ``projects.json`` maps ``cwd`` to, when that
    project's folder exists (Gemini CLI made it) but holds no chat yet."""
    try:
        mapping = as_dict(json.loads((root / "projects.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return []
    projects = as_dict(mapping.get("projects")) if mapping is not None else None
    for key in (str(cwd), str(cwd.resolve())):
        slug = as_str(projects.get(key)) if projects is not None else None
        if slug and "/" not in slug and slug not in (".", "..") and (root / "tmp" / slug).is_dir():
            return [root / "tmp" / slug / "chats"]
    return []
