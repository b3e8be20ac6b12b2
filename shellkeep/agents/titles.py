"""Read an agent's own title for a conversation: the words it shows in its own session list.

One reader per agent format, each given the conversation's transcript (a path the adapter
found) and returning the title on one line, or None when the agent wrote none:

- Claude Code (transcript JSONL): the last ``custom-title`` (``customTitle``, the user's
  ``/rename``), else the last ``ai-title`` (``aiTitle``), else the last ``summary``
  (``summary``, older versions).
- Codex (``$CODEX_HOME/session_index.jsonl``, beside ``sessions/``): the last
  ``thread_name`` of the thread's id.
- Gemini CLI (chat JSONL): the last ``{"$set": {"summary": ...}}``.
- Qwen Code (chat JSONL): the last ``system`` record of subtype ``custom_title``
  (``systemPayload.customTitle``).

OpenCode keeps its title in its database (``OpenCodeAdapter.read_title``); Copilot CLI's
``workspace.yaml`` ``name`` is the first prompt, which shellkeep has already. Only the lines
that name a title record are parsed, so a large transcript costs one pass of byte matching.
Each reader raises OSError when the file cannot be read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from shellkeep.agents import jsonl
from shellkeep.agents.records import JsonObject, as_dict, as_str, one_line

__all__ = ["claude_title", "codex_title", "gemini_title", "qwen_title"]


def _records(path: Path, needles: Sequence[bytes]) -> Iterator[JsonObject]:
    """Yield the JSON object records of ``path`` whose line holds one of ``needles``."""
    if path.name.endswith(".zst"):  # compressed at rest: decompressed whole, as jsonl reads it
        for record in jsonl.read_records(path):
            text = json.dumps(record, separators=(",", ":")).encode("utf-8")
            if any(needle in text for needle in needles):
                yield record
        return
    with open(path, "rb") as fh:
        for line in fh:
            if not any(needle in line for needle in needles):
                continue
            try:
                record = json.loads(line)
            except ValueError:  # a cut or damaged line: not a title
                continue
            if isinstance(record, dict):
                yield record


def _line(text: str | None) -> str | None:
    found = one_line(text or "")
    return found or None


def claude_title(transcript: Path) -> str | None:
    """Return Claude Code's title of the conversation in ``transcript`` (see the module doc)."""
    found: dict[str, str] = {}
    keys = {"custom-title": "customTitle", "ai-title": "aiTitle", "summary": "summary"}
    for record in _records(transcript, (b'"custom-title"', b'"ai-title"', b'"type":"summary"', b'"type": "summary"')):
        kind = as_str(record.get("type"))
        if kind in keys:
            text = _line(as_str(record.get(keys[kind])))
            if text:
                found[kind] = text
    return found.get("custom-title") or found.get("ai-title") or found.get("summary")


def codex_title(rollout: Path, thread_id: str | None) -> str | None:
    """Return Codex's thread name for ``thread_id`` from the ``session_index.jsonl`` of the
    ``$CODEX_HOME`` that holds ``rollout`` (``sessions/YYYY/MM/DD/`` or ``archived_sessions/``)."""
    if not thread_id:
        return None
    for home in list(rollout.parents)[:5]:
        index = home / "session_index.jsonl"
        if index.is_file():
            break
    else:
        return None
    found: str | None = None
    for record in _records(index, (thread_id.encode("utf-8"),)):
        if record.get("id") == thread_id:
            found = _line(as_str(record.get("thread_name"))) or found
    return found


def gemini_title(chat: Path) -> str | None:
    """Return Gemini CLI's summary of the conversation in ``chat`` (its last ``$set``)."""
    found: str | None = None
    for record in _records(chat, (b'"$set"',)):
        found = _line(as_str((as_dict(record.get("$set")) or {}).get("summary"))) or found
    return found


def qwen_title(chat: Path) -> str | None:
    """Return Qwen Code's title of the conversation in ``chat`` (its last ``custom_title``)."""
    found: str | None = None
    for record in _records(chat, (b'"custom_title"',)):
        if record.get("subtype") == "custom_title":
            found = _line(as_str((as_dict(record.get("systemPayload")) or {}).get("customTitle"))) or found
    return found
