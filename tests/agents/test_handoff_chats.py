"""The real Gemini CLI and Qwen Code resume the chat files shellkeep writes for a hand-off.

shellkeep's writer (``agents.gemini_writer`` / ``agents.qwen_writer``) writes two exchanges as a
new chat of the project; the agent, run non-interactively on it (``-r <id> -p <prompt>``, the
same resume as the interactive one's), sends them to its stand-in as its own user and model
messages before the new prompt. Gemini CLI is started once before, as on a machine where it
ran in the project (it registers the project's folder; shellkeep never does). The newest of
each (``newest_only``); 0.57.0 and 0.23.4 read the same files (checked by hand on 2026-12-06).
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shellkeep.agents.base import Exchange, ToolCall
from shellkeep.agents.transcript_writer import HandoffMark, create_new, iso_millis
from shellkeep.agents.writers import writer_for

from .standin_gemini import GeminiStandin
from .standin_openai import OpenAIStandin

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180), pytest.mark.newest_only]

EXCHANGES = [
    Exchange(index=0, time=None, prompt="the first word is kiwi", answer="ANSWER-ONE kiwi", tool_calls=(ToolCall("Bash", "ls"),)),
    Exchange(index=1, time=None, prompt="the second word is lime", answer="ANSWER-TWO lime"),
]
EXPECTED = [
    ("user", "the first word is kiwi"), ("model", "[tools used: Bash ls]\n\nANSWER-ONE kiwi"),
    ("user", "the second word is lime"), ("model", "ANSWER-TWO lime"), ("user", "the third word is fig"),
]  # fmt: skip
WAIT_S = 120.0


def _write(agent: str, project: Path, env: dict[str, str]) -> str:
    now = datetime.now(timezone.utc)
    writer = writer_for(agent)
    assert writer is not None
    written = create_new(writer, EXCHANGES, project, env, HandoffMark("20261206-000000-0001", "claude", iso_millis(now)), now)
    return written.session_id


def _run(argv: list[str], project: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=WAIT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_gemini_resumes_the_chat_shellkeep_wrote(gemini_env: dict[str, str], gemini_standin: GeminiStandin, project_dir: Path) -> None:
    _run(["gemini", "-p", "hello"], project_dir, gemini_env)  # its first start here registers the project
    session_id = _write("gemini", project_dir, gemini_env)
    _run(["gemini", "-r", session_id, "-p", "the third word is fig"], project_dir, gemini_env)
    request = gemini_standin.wait_for_request(lambda r: r.is_conversation and "fig" in r.last_user_text(), timeout_s=WAIT_S)
    assert [(role, text) for role, text in request.texts() if not text.startswith("<")] == EXPECTED


def test_qwen_resumes_the_chat_shellkeep_wrote(qwen_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path) -> None:
    session_id = _write("qwen", project_dir, qwen_env)
    _run(["qwen", "-r", session_id, "-p", "the third word is fig"], project_dir, qwen_env)
    request = openai_standin.wait_for_request(lambda r: r.is_conversation and r.last_user_text() == "the third word is fig", timeout_s=WAIT_S)
    texts = [(role, text) for role, text in request.texts() if role in ("user", "assistant") and not text.startswith("<")]
    assert texts == [("assistant" if role == "model" else role, text) for role, text in EXPECTED]
