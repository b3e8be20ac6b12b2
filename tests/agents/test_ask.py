"""``shellkeep ask`` with the real Claude Code and Codex against the loopback stand-ins.

A session recorded earlier in the project printed a word; the stand-in answers the question
with one call of shellkeep's ``search_sessions`` tool for that word, then with a text naming
the session. The follow-up request must carry the archive's text as the tool's result (the
agent started ``shellkeep mcp`` from the command line ``ask`` built, and was allowed to call
it), ``ask`` prints the answer and the session cited, the server's read is audited under the
agent's name, and nothing is left behind: no session recorded by shellkeep for the agent's
run, no conversation in the agent's own history, no server in its settings. Before that the
stand-in asks for the agent's own tools (Claude Code's Read and Bash, Codex's shell) on a file
holding another word: ``ask`` turns them off, so each comes back as unavailable and that word
never reaches the model. With the newest pinned versions (the command lines are the same on both).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from tests.helpers import SK, session_folders

from .standin_anthropic import AnthropicStandin, ToolUse, tool_results
from .standin_openai import FunctionCall, OpenAIStandin, function_outputs

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

WORD = "kumquat"
SAID = f"the {WORD} fix was a retry with backoff"
QUESTION = f"how did we fix the {WORD} bug?"
PRIVATE = "zebrafinch"
"""A word only the project's notes.txt holds: the agent's built-in tools would read it."""


def _write_notes(project: Path) -> Path:
    notes = project / "notes.txt"
    notes.write_text(f"private: {PRIVATE}\n")
    return notes


def _record_earlier_session(env: dict[str, str], project: Path, home: Paths) -> str:
    """Record a real session in ``project`` that printed ``SAID``; return its id."""
    done = subprocess.run([*SK, "run", "--", "sh", "-c", f"echo {SAID}"], env=env, cwd=project,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    [meta_file] = session_folders(home)  # the meta.json of each session folder
    return meta_file.parent.name


def _ask(env: dict[str, str], project: Path, agent: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*SK, "ask", "--agent", agent, QUESTION], env=env, cwd=project,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert done.returncode == 0, done.stderr
    return done


def _assert_answer_and_citation(done: subprocess.CompletedProcess[str], answer: str, session_id: str, home: Paths, client: str) -> None:
    assert done.stdout.splitlines() == [answer, "", "Sessions cited:", done.stdout.splitlines()[3]]
    assert done.stdout.splitlines()[3].split()[:2] == [session_id, "sh"]
    reads = [e for e in read_entries(home) if e.command.startswith("mcp:")]
    assert reads and {e.session for e in reads} == {session_id}
    assert all(e.command.startswith(f"mcp:{client}") for e in reads), reads
    assert [f.parent.name for f in session_folders(home)] == [session_id]  # the agent's run is no session of shellkeep's


@pytest.mark.newest_only  # the command line is the same on both pinned versions
def test_ask_claude_answers_from_the_archive(
    home: Paths, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    session_id = _record_earlier_session(env, project_dir, home)
    answer = f"It was a retry with backoff, in session {session_id}."
    notes = _write_notes(project_dir)
    anthropic_standin.script_tool_uses([
        ToolUse("Read", {"file_path": str(notes)}), ToolUse("Bash", {"command": "cat notes.txt"}),
        ToolUse("mcp__shellkeep__search_sessions", {"query": WORD}),
    ])
    anthropic_standin.script([answer])

    done = _ask(env, project_dir, "claude")

    follow_up = anthropic_standin.conversation_requests()[-1]
    read, bash, result = tool_results(follow_up)
    for refused in (read, bash):  # --tools "": Claude Code's own tools are not there
        assert refused.get("is_error") is True and "No such tool available" in json.dumps(refused["content"])
    assert PRIVATE not in follow_up.raw_body.decode()
    text = json.dumps(result["content"])
    assert SAID in text and session_id in text and result.get("is_error") is not True
    _assert_answer_and_citation(done, answer, session_id, home, "claude")
    claude_home = Path(agent_env["HOME"])
    assert list((claude_home / ".claude" / "projects").rglob("*.jsonl")) == []  # --no-session-persistence
    assert "mcpServers" not in json.loads((claude_home / ".claude.json").read_text())


@pytest.mark.newest_only
def test_ask_codex_answers_from_the_archive(
    home: Paths, codex_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    session_id = _record_earlier_session(env, project_dir, home)
    codex_dir = Path(codex_env["CODEX_HOME"])
    # Another MCP server of the user's (a second shellkeep server, so that it would start): not in this call.
    with (codex_dir / "config.toml").open("a") as config:
        config.write(f'\n[mcp_servers.notes]\ncommand = {json.dumps(SK[0])}\nargs = ["-m", "shellkeep", "mcp"]\n')
    config_before = (codex_dir / "config.toml").read_text()
    answer = f"It was a retry with backoff, in session {session_id}."
    _write_notes(project_dir)
    # Codex 0.171 offers an MCP server's tools inside the namespace mcp__<server>.
    openai_standin.script_function_calls([
        FunctionCall("exec_command", {"cmd": "cat notes.txt"}), FunctionCall("shell", {"command": ["cat", "notes.txt"]}),
        FunctionCall("search_sessions", {"query": WORD}, namespace="mcp__shellkeep"),
    ])
    openai_standin.script([answer])

    done = _ask(env, project_dir, "codex")

    follow_up = openai_standin.conversation_requests()[-1]
    exec_command, shell, output = function_outputs(follow_up)
    assert [exec_command["output"], shell["output"]] == ["unsupported call: exec_command", "unsupported call: shell"]
    assert PRIVATE not in follow_up.raw_body.decode()
    assert SAID in json.dumps(output["output"]) and session_id in json.dumps(output["output"])
    _assert_answer_and_citation(done, answer, session_id, home, "codex")
    assert list(codex_dir.glob("sessions/**/rollout-*.jsonl")) == []  # --ephemeral
    assert (codex_dir / "config.toml").read_text() == config_before
    offered = {str(tool.get("name")) for request in openai_standin.conversation_requests() for tool in request.body_dict().get("tools", [])}
    assert "mcp__shellkeep" in offered and not [name for name in offered if name.startswith("mcp__notes")]

    # A config.toml Codex refuses: its error spans lines (a caret under an excerpt); the one
    # line shown names the file and the cause.
    (codex_dir / "config.toml").write_text('model = "a"\nmodel = "b"\n')
    broken = subprocess.run([*SK, "ask", "--agent", "codex", QUESTION], env=env, cwd=project_dir,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=150)
    assert broken.returncode == 1 and broken.stdout == ""
    assert broken.stderr.splitlines()[-1] == (
        f"shellkeep: codex failed (exit 1): Error loading config.toml: {codex_dir / 'config.toml'}:2:1: duplicate key"
    )
