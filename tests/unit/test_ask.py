"""``shellkeep ask``: the agent chosen, each agent's command line, the failures named in one line.

In process (click's CliRunner through ``invoke_sk``). The agents here are small programs put on
PATH under the agents' names: they stand in for an installed CLI where only its presence, its
exit status or its output matters; the real CLIs run in tests/agents/test_ask_*.py.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from shellkeep.agents.ask_commands import McpServer, build_ask_command, shared_folder
from shellkeep.app.ask import SERVER_TOOLS, AskRequest, choose_agent, server_for
from shellkeep.app.context import open_context
from shellkeep.config.toml import toml_loads
from shellkeep.store.paths import Paths
from tests.factory import make_session
from tests.helpers import invoke_sk

SERVER = McpServer("shellkeep", "/opt/sk/bin/shellkeep", ("mcp", "--all-projects"), {"SHELLKEEP_HOME": "/data/sk"}, Path("/work/p"), SERVER_TOOLS)


def _agent(folder: Path, name: str, body: str = "exit 0") -> Path:
    """Put an executable ``name`` (a shell script running ``body``) in ``folder``; return it."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PATH"}
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    return env


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--agent", "claude"], 127, "shellkeep: claude: command not found; install it, or choose another with --agent claude, codex or gemini\n"),
        ([], 127, "shellkeep: no agent to ask: none of claude, codex, gemini is installed; install one\n"),
        (["--agent", "aider"], 2, "shellkeep: 'aider' cannot be given an MCP server for one non-interactive run; use --agent claude, codex or gemini\n"),
    ],
    ids=["chosen-missing", "none-installed", "cannot-take-a-server"],
)
def test_an_agent_that_cannot_answer_is_one_line(home: Paths, tmp_path: Path, args: list[str], code: int, message: str) -> None:
    result = invoke_sk("ask", *args, "what did we decide?", env=_env(tmp_path / "empty-bin"))
    assert result.returncode == code
    assert result.stdout == b""
    assert result.stderr.decode().splitlines()[-1] + "\n" == message


def test_the_default_agent_is_this_projects_most_used_installed_one(home: Paths, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    for name in ("claude", "codex", "gemini"):
        _agent(bin_dir, name)
    ctx = open_context(paths=home, cwd=Path.cwd())
    env = _env(bin_dir)
    assert choose_agent(ctx, None, env)[0] == "claude"  # nothing recorded: the first installed

    for n in (1, 2):
        make_session(home, Path.cwd(), n, agent="codex")
    make_session(home, Path.cwd(), 3, agent="gemini")
    make_session(home, Path.cwd(), 4, agent="bash")
    make_session(home, tmp_path / "elsewhere", 5, agent="gemini")  # another project does not count
    make_session(home, tmp_path / "elsewhere", 6, agent="gemini")
    assert choose_agent(ctx, None, env) == ("codex", str(bin_dir / "codex"))

    make_session(home, Path.cwd(), 7, agent="gemini")  # a tie: the one used last
    assert choose_agent(ctx, None, env)[0] == "gemini"
    (bin_dir / "gemini").unlink()  # the most used is not installed: the next one
    assert choose_agent(ctx, None, env)[0] == "codex"
    assert choose_agent(ctx, "claude", env)[0] == "claude"  # --agent wins


def test_claude_gets_the_prompt_first_and_only_shellkeeps_tools(tmp_path: Path) -> None:
    command = build_ask_command("claude", "/bin/claude", "what broke the build?", SERVER, tmp_path, {})
    argv = list(command.argv)
    assert argv[:3] == ["/bin/claude", "-p", "what broke the build?"]  # before the options taking every argument after them
    assert argv.index("--mcp-config") > 2 and argv.index("--allowedTools") > 2
    assert "--no-session-persistence" in argv and "--strict-mcp-config" in argv
    assert argv[argv.index("--tools") + 1] == ""  # no built-in tool (Read, Bash...) at all
    config = json.loads(argv[argv.index("--mcp-config") + 1])
    assert config == {"mcpServers": {"shellkeep": {
        "type": "stdio", "command": "/opt/sk/bin/shellkeep", "args": ["mcp", "--all-projects"], "env": {"SHELLKEEP_HOME": "/data/sk"},
    }}}
    assert argv[argv.index("--allowedTools") + 1].split(",") == [
        "mcp__shellkeep__search_sessions", "mcp__shellkeep__list_sessions", "mcp__shellkeep__get_session",
        "mcp__shellkeep__get_screen", "mcp__shellkeep__get_diff",
    ]
    assert argv[-1] == argv[argv.index("--allowedTools") + 1]  # nothing after it would be read as a tool
    assert command.env == {"MCP_CONNECTION_NONBLOCKING": "false"}
    assert build_ask_command("claude", "c", "-v is what?", SERVER, tmp_path, {}).argv[2] == " -v is what?"  # not an option


def test_codex_gets_the_server_as_overrides_with_its_tools_approved(tmp_path: Path) -> None:
    command = build_ask_command("codex", "/bin/codex", "-what broke?", SERVER, tmp_path, {})
    argv = list(command.argv)
    assert argv[:3] == ["/bin/codex", "exec", "--ephemeral"]
    assert argv[-2:] == ["--", "-what broke?"]
    overrides = "\n".join(argv[i + 1] for i, arg in enumerate(argv) if arg == "-c")
    assert toml_loads(overrides) == {"mcp_servers": {"shellkeep": {
        "command": "/opt/sk/bin/shellkeep", "args": ["mcp", "--all-projects"], "cwd": "/work/p",
        "default_tools_approval_mode": "approve", "required": True, "enabled_tools": list(SERVER_TOOLS),
        "env": {"SHELLKEEP_HOME": "/data/sk"},
    }}, "features": {  # Codex's own tools off: its shell, image reading, sub-agents, goals, apps
        "shell_tool": False, "unified_exec": False, "view_image": False, "multi_agent": False, "goals": False, "apps": False,
    }, "web_search": "disabled"}
    assert command.answer_file == tmp_path / "answer.txt" and argv[argv.index("-o") + 1] == str(command.answer_file)


def test_codex_leaves_the_users_other_mcp_servers_out(tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        '[mcp_servers.docs]\ncommand = "docs"\n[mcp_servers.shellkeep]\ncommand = "old"\n[mcp_servers."odd.name"]\ncommand = "x"\n'
    )
    argv = build_ask_command("codex", "/bin/codex", "q", SERVER, tmp_path, {"CODEX_HOME": str(codex_home)}).argv
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
    assert [o for o in overrides if o.endswith(".enabled=false")] == ["mcp_servers.docs.enabled=false"]
    (codex_home / "config.toml").write_text("[mcp_servers\n")  # broken: Codex says so itself
    assert "mcp_servers.docs.enabled=false" not in build_ask_command("codex", "c", "q", SERVER, tmp_path, {"CODEX_HOME": str(codex_home)}).argv


def test_gemini_gets_the_server_in_a_copy_of_the_system_settings(tmp_path: Path) -> None:
    system = tmp_path / "system.json"
    system.write_text(json.dumps({
        "mcpServers": {"corp": {"command": "corp-mcp"}}, "security": {"auth": {"enforcedType": "x"}},
        "tools": {"core": ["run_shell_command"], "sandbox": True},
    }))
    command = build_ask_command("gemini", "/bin/gemini", "why?", SERVER, tmp_path, {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(system)})
    assert command.argv[:3] == ("/bin/gemini", "-p", "why?")
    assert command.argv[-2:] == ("--allowed-mcp-server-names", "shellkeep")
    [(path, text)] = command.files
    assert command.env == {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(path)} and path.parent == tmp_path
    settings = json.loads(text)
    assert settings["security"] == {"auth": {"enforcedType": "x"}}  # the machine's own settings still apply
    assert settings["mcpServers"]["corp"] == {"command": "corp-mcp"}
    assert settings["mcpServers"]["shellkeep"] == {
        "command": "/opt/sk/bin/shellkeep", "args": ["mcp", "--all-projects"], "env": {"SHELLKEEP_HOME": "/data/sk"},
        "cwd": "/work/p", "trust": True, "includeTools": list(SERVER_TOOLS),
    }
    # The built-in tools' allowlist names the server's tools only: no built-in tool is registered.
    assert settings["tools"] == {"core": [f"mcp_shellkeep_{tool}" for tool in SERVER_TOOLS], "sandbox": True}
    assert json.loads(system.read_text())["mcpServers"] == {"corp": {"command": "corp-mcp"}}  # not written
    assert command.needs_private_folder  # Gemini CLI skips a settings file below a folder others may write


def test_gemini_in_a_folder_it_does_not_trust_says_what_to_do(tmp_path: Path) -> None:
    # Gemini CLI exits 55 in a folder it does not trust (FatalUntrustedWorkspaceError); the
    # user's trust setting is left alone: the line says how to trust it, or which agent to ask.
    command = build_ask_command("gemini", "/bin/gemini", "why?", SERVER, tmp_path, {})
    assert dict(command.failures) == {55: (
        "gemini does not trust /work/p, so it will not run there; trust the folder in Gemini CLI "
        "(run 'gemini' in it and answer its trust prompt), or ask another agent with --agent claude or --agent codex"
    )}
    assert "--skip-trust" not in command.argv and "GEMINI_CLI_TRUST_WORKSPACE" not in command.env


def test_gemini_is_refused_when_its_settings_would_be_skipped(home: Paths, tmp_path: Path) -> None:
    shared = shared_folder(home.home)
    if shared is None:
        pytest.skip(f"no folder above {home.home} is writable by others here")
    assert shared_folder(tmp_path / "not" / "made") == shared_folder(tmp_path)  # made later, private
    result = invoke_sk("ask", "--agent", "gemini", "why?", env=_env(_agent(tmp_path / "bin", "gemini").parent))
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode().splitlines()[-1] == (
        f"shellkeep: gemini reads no settings file under {shared} (others may write to it), so it cannot be given shellkeep's "
        "MCP server; set SHELLKEEP_HOME to a private folder, or choose another with --agent claude, codex or gemini"
    )


def test_the_server_is_this_shellkeep_with_the_pass_through_flags(home: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLKEEP_SYNC_URL", "s3://key:secret@bucket")
    ctx = open_context(paths=home, cwd=Path.cwd())
    server = server_for(ctx, AskRequest("q", all_projects=True, remote=True), Path.cwd())
    assert os.path.isabs(server.command)
    assert server.args[-3:] == ("mcp", "--all-projects", "--remote")
    assert server.env["SHELLKEEP_HOME"] == str(home.home) and "SHELLKEEP_SYNC_URL" not in server.env
    assert server_for(ctx, AskRequest("q"), Path.cwd()).args[-1] == "mcp"


def test_the_agents_failure_is_its_last_stderr_line(home: Paths, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _agent(bin_dir, "claude", "echo 'starting' >&2; echo 'Error: invalid API key' >&2; exit 3")
    result = invoke_sk("ask", "what did we decide?", env=_env(bin_dir))
    assert result.returncode == 1
    assert result.stdout == b""
    assert result.stderr.decode().splitlines()[-1] == "shellkeep: claude failed (exit 3): Error: invalid API key"
    # Several lines (Codex on a broken config.toml): the one naming the error, with the next when
    # it ends with ':'; never the caret line under a source excerpt. Colours are dropped.
    codex_says = "WARNING: proceeding, even though...\nError loading config.toml:\n/c/config.toml:2:1: duplicate key\n  |\n2 | model = \"b\"\n  | ^^^^^\n"
    _agent(bin_dir, "claude", f"printf '%s' '{codex_says}' >&2; exit 1")
    several = invoke_sk("ask", "what did we decide?", env=_env(bin_dir))
    assert several.stderr.decode().splitlines()[-1] == (
        "shellkeep: claude failed (exit 1): Error loading config.toml: /c/config.toml:2:1: duplicate key"
    )
    _agent(bin_dir, "claude", r"printf '\033[31mSomething is off here.\033[0m\n  | ^^^\n' >&2; exit 2")
    coloured = invoke_sk("ask", "what did we decide?", env=_env(bin_dir))
    assert coloured.stderr.decode().splitlines()[-1] == "shellkeep: claude failed (exit 2): Something is off here."
    _agent(bin_dir, "claude", "kill -9 $$")
    killed = invoke_sk("ask", "what did we decide?", env=_env(bin_dir))
    assert (killed.returncode, killed.stderr.decode().splitlines()[-1]) == (1, "shellkeep: claude failed (killed by signal 9): no message")


def test_the_sessions_cited_are_those_read_that_the_answer_names(home: Paths, tmp_path: Path) -> None:
    first = make_session(home, Path.cwd(), 1, agent="codex", name="schema-talk")
    second = make_session(home, Path.cwd(), 2, agent="claude")
    third = make_session(home, Path.cwd(), 3, agent="claude")
    # The stand-in agent does what the server does for each session it returns (an audit
    # entry naming it), then answers naming two of the three: the second before the first.
    reads = [(m.id, m.project, "search_sessions") for m in (first, second, third)]
    server_reads = tmp_path / "server_reads.py"
    server_reads.write_text(
        "from shellkeep.store.audit import record_many\nfrom shellkeep.store.paths import resolve_paths\n"
        f"record_many(resolve_paths(), 'mcp', {reads!r})\n"
    )
    answer = f"We chose the schema in {second.id}; see also schema-talk."
    bin_dir = tmp_path / "bin"
    _agent(bin_dir, "claude", f"{sys.executable} {server_reads} && echo '{answer}'")
    invoke_sk("search", "anything")  # another reader's entry before the call is not the agent's
    result = invoke_sk("ask", "--agent", "claude", "which schema?", env=_env(bin_dir))
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode().splitlines()
    assert out[0] == answer
    assert out[1:3] == ["", "Sessions cited:"]
    assert [line.split()[0] for line in out[3:]] == [second.id, first.id]
    assert "schema-talk" in out[4] and "codex" in out[4]

    as_json = json.loads(invoke_sk("ask", "--json", "which schema?", env=_env(bin_dir)).stdout)
    assert as_json["answer"] == answer and as_json["named"] is True
    assert [s["id"] for s in as_json["cited"]] == [second.id, first.id]

    _agent(bin_dir, "claude", f"{sys.executable} {server_reads} && echo 'nothing named'")
    unnamed = invoke_sk("ask", "which schema?", env=_env(bin_dir)).stdout.decode().splitlines()
    assert unnamed[2] == "Sessions read:"  # none named: every session it read
    assert [line.split()[0] for line in unnamed[3:]] == [first.id, second.id, third.id]


def test_the_tools_allowed_are_the_servers_own_and_read_only(home: Paths) -> None:
    from tests.unit.test_mcp_server import listed_tools

    tools = listed_tools()
    assert sorted(SERVER_TOOLS) == sorted(tool.name for tool in tools)
    assert all(tool.annotations is not None and tool.annotations.read_only_hint for tool in tools)
