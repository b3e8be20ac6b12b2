"""The real Claude Code under ``shellkeep claude`` asks for approval: ps says waiting, a POST says why.

The Anthropic stand-in answers the first conversation request with a Bash ``tool_use``
(``touch made-by-tool.txt``), so Claude Code (started with ``--permission-mode default``:
2.1.332 would otherwise approve by itself in auto mode) draws its approval dialog and waits.
The recorder's writer recognises the dialog by the adapter's waiting hint
(``agents.claude.CLAUDE_WAITING``), ``shellkeep ps --json`` shows ``waiting`` with
``hint: approval``, and the waiting notifier POSTs to a loopback receiver with the dialog's
question as the last line. The tests/data/agents/screens/claude-*-approval.cast recordings
are sessions like this one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, run_sk, wait_until
from tests.receiver import Receiver, configure_notify

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicRequest, AnthropicStandin
from .standin_server import Reply
from .test_claude_standin_direct import EXIT_AGAIN, READY, WAIT_S

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

QUESTION = "Do you want to proceed?"


class BashToolStandin(AnthropicStandin):
    """The stand-in, except that a conversation request with no tool result yet gets a Bash tool call."""

    def handle(self, request: AnthropicRequest) -> Reply:
        answered = any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for message in request.messages
            if isinstance(message.get("content"), list)
            for block in message["content"]
        )
        if not request.is_conversation or answered or not request.body_dict().get("stream"):
            return super().handle(request)
        usage = {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        message: dict[str, Any] = {
            "id": self.new_id("msg"), "type": "message", "role": "assistant", "model": "claude-standin",
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage,
        }  # fmt: skip
        call = json.dumps({"command": "touch made-by-tool.txt", "description": "Create a file"})
        return Reply.sse(
            [
                ("message_start", {"type": "message_start", "message": message}),
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {}}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta", "partial_json": call}}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                   "usage": {"output_tokens": 5}}),
                ("message_stop", {"type": "message_stop"}),
            ]
        )  # fmt: skip


@pytest.fixture
def anthropic_standin() -> Iterator[AnthropicStandin]:
    """Replace the suite's stand-in (``agent_env`` points Claude Code at it) with the tool-calling one."""
    with BashToolStandin() as standin:
        yield standin


def test_claude_waiting_for_approval_is_shown_by_ps_and_notified(
    home: Paths, drive: Callable[..., ScreenDriver], agent_env: dict[str, str], project_dir: Path
) -> None:
    with Receiver() as receiver:
        configure_notify(home, url=receiver.url, format="json", events=["waiting"], waiting_delay_s=0)
        env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
        driver = drive([*SK, "claude", "--permission-mode", "default"], env=env, cwd=project_dir)
        driver.wait_for_screen(READY, WAIT_S)
        driver.type("please create the file")
        driver.wait_for_screen("please create the file", WAIT_S)
        driver.press("enter")
        driver.wait_for_screen(QUESTION, WAIT_S)

        def approval_notified() -> list[dict[str, object]]:
            driver.pump(0.05)  # keep the pty drained while waiting
            return [b for b in map(lambda r: json.loads(r.body), receiver.requests) if b["hint"] == "approval"]

        [body] = wait_until(approval_notified, WAIT_S)  # type: ignore[misc]
        assert (body["agent"], body["state"], body["last_line"]) == ("claude", "waiting", QUESTION)

        def listed() -> dict[str, object] | None:
            driver.pump(0.05)
            sessions = json.loads(run_sk("ps", "--json").stdout)
            return sessions[0] if sessions and sessions[0]["hint"] == "approval" else None

        session = wait_until(listed, WAIT_S)
        assert session["state"] == "waiting" and session["id"] == body["session"]  # type: ignore[index]
        assert not (project_dir / "made-by-tool.txt").exists()  # nothing was approved
        driver.press("escape")
        driver.wait_for_screen(READY, WAIT_S)
        driver.press("ctrl-c")
        driver.wait_for_screen(EXIT_AGAIN, WAIT_S)
        driver.press("ctrl-c")
        assert driver.wait_exit(WAIT_S) == 0, driver.dump()
