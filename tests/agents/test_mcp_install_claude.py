"""After ``shellkeep mcp install claude``, the real Claude Code searches the archive through shellkeep.

A session of this project was recorded first (bash printing a sentence). ``mcp install claude``
writes Claude Code's ``~/.claude.json`` in process; then Claude Code (newest pinned version,
``--permission-mode default`` so that it asks as it does a user who did not pick auto mode)
runs in a real pty against the Anthropic stand-in, which answers the prompt with a
``tool_use`` of ``mcp__shellkeep__search_sessions`` (Claude Code names an MCP tool
``mcp__<server>__<tool>``). Claude asks ("Do you want to proceed?"), the test answers Yes as
a user would, Claude starts ``shellkeep mcp`` from the entry and runs the tool; the stand-in's
next request carries the archive's text as the ``tool_result``: the recorded sentence, not
only the word the query named.

Seen with Claude Code 2.1.332: the first conversation request lists the MCP tools as deferred
(a system message names ``mcp__shellkeep__search_sessions``); ``/mcp`` lists the server as
``✔ shellkeep  5 tools`` once it answered, which the test waits for before typing the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from .mcp_checks import ANSWER, PROMPT, RECORDED, WORD, record_and_install
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin, ToolUse, content_texts, tool_results
from .test_claude_standin_direct import READY, WAIT_S

pytestmark = [pytest.mark.agent, pytest.mark.newest_only, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]


def test_claude_runs_shellkeeps_search_after_mcp_install(
    drive: Drive, claude_bin: Path, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    record_and_install("claude", agent_env, project_dir, Path(agent_env["HOME"]) / ".claude.json")

    anthropic_standin.script_tool_uses([ToolUse("mcp__shellkeep__search_sessions", {"query": WORD})])
    anthropic_standin.script([ANSWER])
    driver = drive([claude_bin, "--permission-mode", "default"], env=agent_env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    driver.type("/mcp")
    driver.wait_for_screen("/mcp", WAIT_S)
    driver.press("enter")
    driver.wait_for_screen("✔ shellkeep", WAIT_S)  # the server started from the entry answered (its tools listed)
    driver.press("escape")
    driver.wait_for_screen(READY, WAIT_S)
    driver.type(PROMPT)
    driver.wait_for_screen(PROMPT, WAIT_S)
    driver.press("enter")
    driver.wait_for_screen("Do you want to proceed?", WAIT_S)  # Claude asks before the MCP tool runs
    driver.wait_for_quiet(0.5, WAIT_S)  # a key pressed while the dialog still draws is lost
    driver.press("enter")  # 1. Yes
    driver.wait_for_screen(ANSWER, WAIT_S)

    followup = anthropic_standin.wait_for_request(lambda r: r.is_conversation and bool(tool_results(r)), WAIT_S)
    [result] = tool_results(followup)
    assert not result.get("is_error"), json.dumps(result)
    text = "\n".join(content_texts([result]))
    assert RECORDED in text, text  # the archive's text, not only the query's word
