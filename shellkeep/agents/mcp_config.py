"""Say where each agent CLI keeps its MCP servers, and the entry that starts shellkeep's server.

Each agent's user-level settings file and entry shape, as its own ``mcp add`` command writes
them (seen with the pinned CLIs: Claude Code 2.1.332, Codex 0.171.0, Gemini CLI 0.61.0, Qwen Code
0.24.4, Copilot CLI 1.0.102; OpenCode 1.18.33 has an interactive ``mcp add`` only, its shape is
from opencode.ai/docs/mcp-servers and checked with ``opencode mcp list``):

- Claude Code, ``claude mcp add --scope user``: ``$CLAUDE_CONFIG_DIR/.claude.json`` (else
  ``~/.claude.json``), ``mcpServers.NAME = {"type": "stdio", "command", "args", "env": {}}``.
- Codex, ``codex mcp add``: ``$CODEX_HOME/config.toml`` (else ``~/.codex``),
  ``[mcp_servers.NAME]`` with ``command`` and ``args``.
- Gemini CLI, ``gemini mcp add -s user``: ``$GEMINI_CLI_HOME/.gemini/settings.json`` (else
  ``~/.gemini``), ``mcpServers.NAME = {"command", "args"}``.
- Qwen Code, ``qwen mcp add -s user``: ``$QWEN_HOME/settings.json`` (else ``~/.qwen``), the same.
- OpenCode: ``$XDG_CONFIG_HOME/opencode/opencode.json`` (else ``~/.config``),
  ``mcp.NAME = {"type": "local", "command": [executable, *args], "enabled": true}``.
- Copilot CLI, ``copilot mcp add``: ``$COPILOT_HOME/mcp-config.json`` (else ``~/.copilot``),
  ``mcpServers.NAME = {"type": "local", "command", "args", "tools": ["*"]}``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.claude import claude_root
from shellkeep.agents.codex import codex_home
from shellkeep.agents.copilot import copilot_home
from shellkeep.agents.gemini import gemini_dir
from shellkeep.agents.locations import home_dir
from shellkeep.agents.qwen import qwen_root
from shellkeep.errors import UserInputError

__all__ = [
    "AGENT_NAMES",
    "SERVER_NAME",
    "McpTarget",
    "ServerCommand",
    "is_installed",
    "mcp_target",
    "runs_shellkeep",
]

SERVER_NAME = "shellkeep"
"""The name shellkeep's MCP server is registered under in every agent."""


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """How an agent starts shellkeep's MCP server: an absolute executable, its arguments, and
    the variables that point it at this archive (``SHELLKEEP_HOME``, ``SHELLKEEP_CONFIG``) when
    they are set: some agents pass their servers a few variables only (Codex)."""

    executable: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        """Return the whole command line: the executable, then the arguments."""
        return (self.executable, *self.args)


Entry = dict[str, object]


@dataclass(frozen=True, slots=True)
class McpTarget:
    """One agent's MCP server table: which file, which table, what an entry looks like.

    agent: the adapter's name ("claude"); title: the agent's name for people ("Claude Code").
    path: the settings file; is_toml: TOML (Codex) rather than JSON.
    table: the key of the servers' table at the top of the file ("mcpServers").
    entry: the whole entry that starts a ``ServerCommand``, as written when there is none.
    launch_keys: the keys of ``entry`` that say what runs; an update rewrites only these and
        ``env_key``, so a user's additions to the entry (a timeout, a tool filter) stay.
    env_key: the key of the server's variables ("env"); absent and empty are the same.
    argv_of: the command line an existing entry runs, or None when it names none.
    folder: the agent's own folder; its existence means the agent is set up here.
    executable: the agent's program name, looked for on PATH.
    """

    agent: str
    title: str
    path: Path
    is_toml: bool
    table: str
    entry: Callable[[ServerCommand], Entry]
    launch_keys: tuple[str, ...]
    env_key: str
    argv_of: Callable[[Mapping[str, object]], tuple[str, ...] | None]
    folder: Path
    executable: str


def _split_argv(entry: Mapping[str, object]) -> tuple[str, ...] | None:
    """Return ``[command, *args]`` of an entry with a string ``command`` and a list ``args``."""
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    return (command, *(str(a) for a in args))


def _list_argv(entry: Mapping[str, object]) -> tuple[str, ...] | None:
    """Return the ``command`` list of an OpenCode entry (executable first)."""
    command = entry.get("command")
    if not isinstance(command, list) or not command:
        return None
    return tuple(str(part) for part in command)


def _env(command: ServerCommand, key: str = "env") -> Entry:
    """Return ``{key: {NAME: value}}`` for the command's variables, or {} when it has none."""
    return {key: dict(command.env)} if command.env else {}


def _claude_entry(command: ServerCommand) -> Entry:
    return {"type": "stdio", "command": command.executable, "args": list(command.args), "env": dict(command.env)}


def _plain_entry(command: ServerCommand) -> Entry:
    return {"command": command.executable, "args": list(command.args), **_env(command)}


def _opencode_entry(command: ServerCommand) -> Entry:
    return {"type": "local", "command": list(command.argv), **_env(command, "environment"), "enabled": True}


def _copilot_entry(command: ServerCommand) -> Entry:
    return {"type": "local", "command": command.executable, "args": list(command.args), **_env(command), "tools": ["*"]}


def _config_home(env: Mapping[str, str]) -> Path:
    """Return ``$XDG_CONFIG_HOME`` from ``env`` when absolute, else ``~/.config``."""
    value = env.get("XDG_CONFIG_HOME")
    return Path(value) if value and os.path.isabs(value) else home_dir(env) / ".config"


def _claude_settings(env: Mapping[str, str]) -> Path:
    """Return Claude Code's user settings: ``.claude.json`` in ``$CLAUDE_CONFIG_DIR``, else in HOME."""
    return claude_root(env) / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home_dir(env) / ".claude.json"


def _targets(env: Mapping[str, str]) -> dict[str, McpTarget]:
    """Return every supported agent's target under ``env`` (HOME and the agents' overrides)."""
    opencode = _config_home(env) / "opencode"
    return {
        "claude": McpTarget("claude", "Claude Code", _claude_settings(env), False, "mcpServers", _claude_entry,
                            ("type", "command", "args"), "env", _split_argv, claude_root(env), "claude"),
        "codex": McpTarget("codex", "Codex", codex_home(env) / "config.toml", True, "mcp_servers", _plain_entry,
                           ("command", "args"), "env", _split_argv, codex_home(env), "codex"),
        "gemini": McpTarget("gemini", "Gemini CLI", gemini_dir(env) / "settings.json", False, "mcpServers",
                            _plain_entry, ("command", "args"), "env", _split_argv, gemini_dir(env), "gemini"),
        "qwen": McpTarget("qwen", "Qwen Code", qwen_root(env) / "settings.json", False, "mcpServers", _plain_entry,
                          ("command", "args"), "env", _split_argv, qwen_root(env), "qwen"),
        "opencode": McpTarget("opencode", "OpenCode", opencode / "opencode.json", False, "mcp", _opencode_entry,
                              ("type", "command"), "environment", _list_argv, opencode, "opencode"),
        "copilot": McpTarget("copilot", "Copilot CLI", copilot_home(env) / "mcp-config.json", False, "mcpServers",
                             _copilot_entry, ("type", "command", "args"), "env", _split_argv, copilot_home(env), "copilot"),
    }  # fmt: skip


AGENT_NAMES = ("claude", "codex", "gemini", "qwen", "opencode", "copilot")
"""The agents ``shellkeep mcp install`` registers the server with, in the order ``--all`` goes."""


def mcp_target(agent: str, env: Mapping[str, str]) -> McpTarget:
    """Return ``agent``'s target under ``env``; raises UserInputError for an agent not supported."""
    found = _targets(env).get(agent)
    if found is None:
        raise UserInputError(f"shellkeep cannot register its MCP server with '{agent}'; choose one of {', '.join(AGENT_NAMES)}")
    return found


def is_installed(target: McpTarget, env: Mapping[str, str]) -> bool:
    """Return whether the agent is set up here: its program on ``env``'s PATH, its folder or file present."""
    if shutil.which(target.executable, path=env.get("PATH", os.defpath)):
        return True
    return target.folder.is_dir() or target.path.is_file()


def runs_shellkeep(argv: tuple[str, ...] | None) -> bool:
    """Return whether a command line starts a shellkeep MCP server: this one or another copy.

    It does when its program is named ``shellkeep`` (any folder: an older install, another
    venv) and its first argument is ``mcp``, or it is ``PYTHON -m shellkeep mcp``. This is how
    an entry named ``shellkeep`` is known for shellkeep's own, to update or remove it.
    """
    if not argv:
        return False
    if os.path.basename(argv[0]) == "shellkeep":
        return argv[1:2] == ("mcp",)
    return argv[1:4] == ("-m", "shellkeep", "mcp")
