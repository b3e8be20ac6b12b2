"""Tests for ``CommandAdapter.fresh_argv``: the user's command as a new conversation (re-injection)."""

from __future__ import annotations

import pytest

from shellkeep.agents.registry import adapter_named

SID = "3f2a9c1e-7b4d-4e21-9a0f-5c6d7e8f9a01"


@pytest.mark.parametrize(
    ("agent", "argv", "fresh"),
    [
        ("claude", ["claude", "--model", "opus", "--session-id", SID, "fix it"], ["claude", "--model", "opus"]),
        ("claude", ["claude", "--resume", SID, "--fork-session", "-p"], ["claude"]),
        ("claude", ["npx", "@anthropic-ai/claude-code", "-c"], ["npx", "@anthropic-ai/claude-code"]),
        ("codex", ["codex", "-m", "gpt-5", "resume", SID], ["codex", "-m", "gpt-5"]),
        ("codex", ["codex", "--full-auto", "write the tests"], ["codex", "--full-auto"]),
        ("gemini", ["gemini", "--session-id", "g-1", "-m", "pro"], ["gemini", "-m", "pro"]),
        ("qwen", ["qwen", "-r", "q-1"], ["qwen"]),
        ("copilot", ["copilot", "--session-id", "c-1", "--model", "x"], ["copilot", "--model", "x"]),
        ("opencode", ["opencode", "-s", "ses_abc", "src"], ["opencode", "src"]),
        ("aider", ["aider", "--restore-chat-history", "-m", "do it", "calc.py"], ["aider", "calc.py"]),
    ],
    ids=["claude", "claude-resume-fork-print", "claude-npx-continue", "codex-resume", "codex-prompt",
         "gemini", "qwen", "copilot", "opencode-keeps-directory", "aider-keeps-files"],
)  # fmt: skip
def test_fresh_argv_drops_the_conversation_flags_and_prompt(agent: str, argv: list[str], fresh: list[str]) -> None:
    assert adapter_named(agent).fresh_argv(argv) == fresh  # type: ignore[attr-defined]
