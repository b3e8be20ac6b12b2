"""Find the transcript writer of an agent, for a hand-off into its own history.

Writers (``transcript_writer.TranscriptWriter``) are imported on first use from an explicit
agent name → ``"module:Class"`` table, as adapters are (``registry``). An agent without one
(OpenCode's database, Copilot's event log, aider, any other program) is re-injected instead.
"""

from __future__ import annotations

import importlib

from shellkeep.agents.transcript_writer import TranscriptWriter

__all__ = ["writer_for", "writer_names"]

_WRITERS: dict[str, str] = {
    "claude": "shellkeep.agents.claude_writer:ClaudeWriter",
    "codex": "shellkeep.agents.codex_writer:CodexWriter",
    "gemini": "shellkeep.agents.gemini_writer:GeminiWriter",
    "qwen": "shellkeep.agents.qwen_writer:QwenWriter",
}


def writer_names() -> list[str]:
    """Return the names of the agents shellkeep can write a transcript for."""
    return list(_WRITERS)


def writer_for(agent: str) -> TranscriptWriter | None:
    """Return a writer of ``agent``'s transcripts (an adapter name such as ``codex``), or None."""
    target = _WRITERS.get(agent)
    if target is None:
        return None
    module, _, name = target.partition(":")
    writer: TranscriptWriter = getattr(importlib.import_module(module), name)()
    return writer
