"""The OTLP export of a real Claude Code session, recorded under ``shellkeep claude`` against the stand-in.

One question with a secret in it; the upkeep after the session sends the trace to a loopback
receiver (``tests/otlp_receiver.py``), which decodes it. The exchange's span carries the model
and token counts Claude Code took from the stand-in's answer, and its prompt redacted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, only_session, wait_until
from tests.otlp_receiver import OtlpReceiver, configure_otlp, spans

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"  # a GitHub token the built-in rules catch
PROMPT = f"remember the token {SECRET} pineapple"
ANSWER = "STANDIN-ANSWER-1: pineapple"


def test_a_claude_session_arrives_with_its_model_and_tokens_and_no_secret(
    home: Paths,
    drive: Callable[..., ScreenDriver],
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    receiver = OtlpReceiver()
    try:
        configure_otlp(home, receiver.endpoint, content=True)
        env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
        driver = drive([*SK, "claude"], env=env, cwd=project_dir)
        driver.wait_for_screen(READY, WAIT_S)
        ask(driver, PROMPT, ANSWER)
        claude_session = quit_claude(driver)
        wait_until(lambda: receiver.requests(), 90)
        meta, _, _ = only_session(home)
        found = spans(receiver.requests()[0])
        [root] = [attrs for name, attrs, _, _ in found if name == "shellkeep.session"]
        assert root["shellkeep.session.id"] == meta["id"] and root["gen_ai.agent.name"] == "claude"
        assert root["gen_ai.conversation.id"] == claude_session
        chats = [attrs for name, attrs, _, _ in found if name.startswith("gen_ai.chat")]
        assert chats, "no exchange span"
        chat = chats[0]
        assert isinstance(chat["gen_ai.request.model"], str) and chat["gen_ai.request.model"].startswith("claude")
        assert isinstance(chat["gen_ai.usage.input_tokens"], int) and chat["gen_ai.usage.input_tokens"] > 0
        assert isinstance(chat["gen_ai.usage.output_tokens"], int) and chat["gen_ai.usage.output_tokens"] > 0
        assert "remember the token [REDACTED:" in str(chat["gen_ai.prompt"]) and ANSWER in str(chat["gen_ai.completion"])
        assert SECRET.encode() not in receiver.bodies[0]
    finally:
        receiver.close()
