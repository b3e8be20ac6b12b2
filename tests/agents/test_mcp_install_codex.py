"""After ``shellkeep mcp install codex``, the real Codex CLI searches the archive through shellkeep.

A session of this project was recorded first (bash printing a sentence). ``mcp install codex``
adds ``[mcp_servers.shellkeep]`` to the stand-in's ``config.toml`` in process; then Codex
(newest pinned version) runs in a real pty against the OpenAI Responses stand-in, which answers
the prompt with a ``function_call`` of ``search_sessions`` in namespace ``mcp__shellkeep``
(Codex 0.171.0 offers an MCP server's tools as a Responses ``namespace`` tool named
``mcp__<server>``, each function by its own name). Codex runs it without asking: it asks
("Allow the shellkeep MCP server to run tool ...?") only for a tool not annotated read-only,
and every tool of shellkeep's server is. The stand-in's next request carries the archive's text as the ``function_call_output``: the recorded
sentence, not only the word the query named.

Seen with Codex 0.171.0: its MCP servers start with the thread, about 2 s after the composer
shows (the footer then names the model and folder); a prompt sent before that goes without
the server's tools. ``/mcp`` prints the servers' state once (``shellkeep: starting``, later
``shellkeep: connected (5 tools)``); the test asks again until shellkeep is connected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from .mcp_checks import ANSWER, PROMPT, RECORDED, WORD, record_and_install
from .screen_driver import ScreenDriver
from .standin_openai import FunctionCall, OpenAIStandin, function_outputs
from .test_codex_standin_direct import READY, WAIT_S

pytestmark = [pytest.mark.agent, pytest.mark.newest_only, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]


def server_connected(driver: ScreenDriver) -> bool:
    """Ask ``/mcp`` for the servers' state, again each time it answered that shellkeep is starting
    (its answer is a snapshot); return whether it answered ``shellkeep: connected``."""
    screen = driver.text()
    if "shellkeep: connected" in screen:
        return True
    asked = screen.count("🔌  MCP Tools")
    if asked == screen.count("shellkeep: starting") and "› /mcp" not in screen:
        driver.type("/mcp")
        driver.wait_for_screen("/mcp", WAIT_S)
        driver.press("enter")
        driver.wait_until(lambda: driver.text().count("🔌  MCP Tools") > asked, WAIT_S, "the answer to /mcp")
    return False


def test_codex_runs_shellkeeps_search_after_mcp_install(
    drive: Drive, codex_bin: Path, codex_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    record_and_install("codex", codex_env, project_dir, Path(codex_env["CODEX_HOME"]) / "config.toml")

    openai_standin.script_function_calls([FunctionCall("search_sessions", {"query": WORD}, namespace="mcp__shellkeep")])
    openai_standin.script([ANSWER])
    driver = drive([codex_bin], env=codex_env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    driver.wait_until(lambda: server_connected(driver), WAIT_S, "/mcp shows shellkeep connected")
    driver.type(PROMPT)
    driver.wait_for_screen(PROMPT, WAIT_S)
    driver.press("enter")
    driver.wait_for_screen(ANSWER, WAIT_S)
    assert "Allow the shellkeep MCP server" not in driver.text()  # read-only tools run unasked

    followup = openai_standin.wait_for_request(lambda r: r.is_conversation and bool(function_outputs(r)), WAIT_S)
    [output] = function_outputs(followup)
    assert RECORDED in str(output["output"]), output  # the archive's text, not only the query's word
