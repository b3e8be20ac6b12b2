"""Build the one-shot command lines that ask an agent a question with an MCP server attached.

``shellkeep ask`` runs the user's own agent non-interactively, with shellkeep's MCP server
given for that one call only: nothing is written into the agent's own settings. Each agent
takes a server its own way (facts checked with the pinned CLIs, ``--help`` and their docs):

- Claude Code (2.1.197, 2.1.332): ``claude -p PROMPT --no-session-persistence
  --strict-mcp-config --tools "" --mcp-config JSON --allowedTools mcp__<server>__<tool>,...``.
  The prompt comes first: ``--tools``, ``--mcp-config`` and ``--allowedTools`` take every
  argument after them. ``--tools ""`` removes every built-in tool (Read, Bash... would otherwise
  run without asking); a tool not allowed comes back as a permission request, so the server's
  tools, and only those, are allowed. ``MCP_CONNECTION_NONBLOCKING=false`` makes ``-p`` wait for
  the server to start.
- Codex (0.165.0, 0.171.0): ``codex exec --ephemeral`` with the server as ``-c
  mcp_servers.<server>.*`` overrides (values are TOML); ``default_tools_approval_mode =
  "approve"`` runs its tools without the approval that exec mode cannot ask for; ``required =
  true`` makes exec wait for the server before the first request (0.171 would send it without
  the server's tools, and a call of one came back ``unsupported call``). Codex passes
  only a few variables to a server's environment, so shellkeep's own go in ``env``. The last
  message is written to ``-o FILE`` (stdout also carries progress on older versions). Codex's
  own tools are turned off by ``-c features.*=false`` overrides (``_CODEX_BUILTINS_OFF``): a
  call of its shell then comes back as ``unsupported call``. The user's other MCP servers (in
  ``$CODEX_HOME/config.toml``) get ``enabled=false`` for the call.
- Gemini CLI (0.57.0, 0.61.0): ``gemini -p PROMPT --allowed-mcp-server-names <server>``, the
  server in a system settings file named by ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` (a copy of
  the machine's system settings with the server added, ``trust: true`` so that its calls need
  no confirmation; the file must lie where no folder up to ``/`` is writable by others, or
  Gemini CLI skips it). Its ``tools.core`` allowlist names only the server's tools
  (``mcp_<server>_<tool>``): no built-in tool is registered. Gemini CLI has no flag that keeps
  ``-p`` out of its own chat history (it writes ``~/.gemini/tmp/<project>/chats/session-*.jsonl``).

Every builder is pure: it returns the argv, the environment to add and the files to write.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.codex import codex_home

__all__ = ["ASK_AGENTS", "AskCommand", "McpServer", "build_ask_command", "executable_of", "gemini_system_settings", "shared_folder"]


@dataclass(frozen=True, slots=True)
class McpServer:
    """A stdio MCP server to attach for one call.

    name: the server's name in the agent (its tools are ``mcp__<name>__<tool>`` in Claude
    Code). command/args: how to start it. env: variables it needs beyond the agent's own
    (Codex passes few). cwd: the folder it runs in (its scope). tools: its tools' names.
    """

    name: str
    command: str
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AskCommand:
    """One run of an agent: ``argv``, variables added to the environment, files to write first
    (``(path, text)``), and where the answer is: ``answer_file`` when set, else stdout.
    needs_private_folder: the agent ignores the files when a folder above them is writable by
    others (``shared_folder``). failures: ``(exit status, message)`` for the statuses whose
    meaning is known, the message saying what to do."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    files: tuple[tuple[Path, str], ...] = ()
    answer_file: Path | None = None
    needs_private_folder: bool = False
    failures: tuple[tuple[int, str], ...] = ()


_Builder = Callable[[str, str, McpServer, Path, Mapping[str, str]], AskCommand]


def _prompt(question: str) -> str:
    """Return ``question`` as a prompt argument: one starting with '-' would read as an option,
    so it gets a leading space (the model does not mind)."""
    return " " + question if question.startswith("-") else question


def claude_command(executable: str, question: str, server: McpServer, workdir: Path, env: Mapping[str, str]) -> AskCommand:
    """Return ``claude -p`` with ``server`` attached and its tools (only those) allowed."""
    config = {"mcpServers": {server.name: {"type": "stdio", "command": server.command, "args": list(server.args), "env": dict(server.env)}}}
    allowed = ",".join(f"mcp__{server.name}__{tool}" for tool in server.tools)
    argv = (
        executable, "-p", _prompt(question), "--no-session-persistence", "--strict-mcp-config", "--tools", "",
        "--mcp-config", json.dumps(config), "--allowedTools", allowed,
    )
    return AskCommand(argv, {"MCP_CONNECTION_NONBLOCKING": "false"})


def _toml(value: object) -> str:
    """Return ``value`` (a string, a list of strings or a string table) as a TOML value.

    JSON strings are TOML basic strings (``json.dumps`` escapes only what TOML also reads).
    """
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {json.dumps(str(v))}" for k, v in value.items()) + "}"
    return json.dumps(value)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

_CODEX_BUILTINS_OFF = (
    "features.shell_tool=false", "features.unified_exec=false", "features.view_image=false",
    "features.multi_agent=false", "features.goals=false", "features.apps=false", 'web_search="disabled"',
)
"""Codex's own tools turned off for the call (0.165.0, 0.171.0): the shell (``exec_command``,
``write_stdin``), image reading, sub-agents, goals, apps and web search."""


def _codex_servers(env: Mapping[str, str]) -> list[str]:
    """Return the names of the MCP servers in the user's Codex ``config.toml`` that a ``-c``
    override can name (bare keys); [] when it is missing or broken (Codex reports that itself)."""
    import tomlkit  # only ask reads Codex's config

    try:
        doc = tomlkit.parse((codex_home(env) / "config.toml").read_text(encoding="utf-8")).unwrap()
    except (OSError, ValueError):
        return []
    servers = doc.get("mcp_servers")
    return [name for name in servers if _BARE_KEY.fullmatch(name)] if isinstance(servers, dict) else []


def codex_command(executable: str, question: str, server: McpServer, workdir: Path, env: Mapping[str, str]) -> AskCommand:
    """Return ``codex exec --ephemeral`` with ``server`` given by ``-c`` overrides, its tools approved."""
    prefix = f"mcp_servers.{server.name}"
    settings: list[tuple[str, object]] = [
        ("command", server.command),
        ("args", list(server.args)),
        ("cwd", str(server.cwd)),
        ("default_tools_approval_mode", "approve"),
        ("required", True),
        ("enabled_tools", list(server.tools)),
    ]
    if server.env:
        settings.append(("env", dict(server.env)))
    overrides = [arg for key, value in settings for arg in ("-c", f"{prefix}.{key}={_toml(value)}")]
    overrides += [arg for setting in _CODEX_BUILTINS_OFF for arg in ("-c", setting)]
    others = [name for name in _codex_servers(env) if name != server.name]
    overrides += [arg for name in others for arg in ("-c", f"mcp_servers.{name}.enabled=false")]
    answer = workdir / "answer.txt"
    argv = (
        executable, "exec", "--ephemeral", "--skip-git-repo-check", "--color", "never",
        "-o", str(answer), *overrides, "--", question,
    )
    return AskCommand(argv, {}, answer_file=answer)


def gemini_system_settings(env: Mapping[str, str]) -> Path:
    """Return the system settings file Gemini CLI reads on this machine: the one
    ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` names, else ``/etc/gemini-cli/settings.json`` (Linux)
    or ``/Library/Application Support/GeminiCli/settings.json`` (macOS)."""
    named = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
    if named:
        return Path(named)
    if os.uname().sysname == "Darwin":
        return Path("/Library/Application Support/GeminiCli/settings.json")
    return Path("/etc/gemini-cli/settings.json")


def _read_settings(path: Path) -> dict[str, object]:
    """Return the JSON object in ``path``; {} when it is missing or not an object (Gemini CLI
    reports a broken one itself)."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def shared_folder(path: Path) -> Path | None:
    """Return the first of ``path`` and its parents that others may write (group or other
    write bit, sticky or not), or None; a folder not made yet counts as private. Gemini CLI skips a system settings file under one
    ("Parent directory '/tmp' is insecure")."""
    for folder in (path, *path.parents):
        try:
            if folder.stat().st_mode & 0o022:
                return folder
        except FileNotFoundError:
            continue  # made later, private
        except OSError:
            return folder  # cannot tell: not known to be private
    return None


def gemini_command(executable: str, question: str, server: McpServer, workdir: Path, env: Mapping[str, str]) -> AskCommand:
    """Return ``gemini -p`` with ``server`` in a copy of the system settings, trusted, its tools alone allowed.

    ``workdir`` must be private (``needs_private_folder``): else Gemini CLI skips the settings.
    """
    settings = _read_settings(gemini_system_settings(env))
    servers = settings.get("mcpServers")
    servers = dict(servers) if isinstance(servers, dict) else {}
    servers[server.name] = {
        "command": server.command, "args": list(server.args), "env": dict(server.env), "cwd": str(server.cwd),
        "trust": True, "includeTools": list(server.tools),
    }
    settings["mcpServers"] = servers
    tools = settings.get("tools")
    settings["tools"] = {**(tools if isinstance(tools, dict) else {}), "core": [f"mcp_{server.name}_{tool}" for tool in server.tools]}
    path = workdir / "gemini-system-settings.json"
    argv = (executable, "-p", _prompt(question), "--output-format", "text", "--allowed-mcp-server-names", server.name)
    others = " or ".join(f"--agent {agent}" for agent in _BUILDERS if agent != "gemini")
    untrusted = (  # its FatalUntrustedWorkspaceError; the user's trust setting is theirs to change
        f"gemini does not trust {server.cwd}, so it will not run there; trust the folder in Gemini CLI "
        f"(run 'gemini' in it and answer its trust prompt), or ask another agent with {others}"
    )
    return AskCommand(
        argv, {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(path)}, files=((path, json.dumps(settings, indent=2)),),
        needs_private_folder=True, failures=((55, untrusted),),
    )


_BUILDERS: dict[str, tuple[str, _Builder]] = {
    "claude": ("claude", claude_command),
    "codex": ("codex", codex_command),
    "gemini": ("gemini", gemini_command),
}

ASK_AGENTS: tuple[str, ...] = tuple(_BUILDERS)
"""The agents ``shellkeep ask`` can run with an MCP server, in the order the first installed
is taken; the others cannot take one non-interactively without their settings being written."""


def executable_of(agent: str) -> str:
    """Return the program name of ``agent`` (one of ``ASK_AGENTS``); KeyError otherwise."""
    return _BUILDERS[agent][0]


def build_ask_command(
    agent: str, executable: str, question: str, server: McpServer, workdir: Path, env: Mapping[str, str]
) -> AskCommand:
    """Return how ``agent`` (one of ``ASK_AGENTS``) at ``executable`` answers ``question`` with ``server``.

    workdir: a private folder for the run's files (settings, the answer). env: the
    environment the agent will run in (Gemini's system settings path is read from it).
    Raises KeyError for another agent.
    """
    return _BUILDERS[agent][1](executable, question, server, workdir, env)
