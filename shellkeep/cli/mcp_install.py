"""``shellkeep mcp install``: register shellkeep's MCP server with agent CLIs, or remove it."""

from __future__ import annotations

import click

from shellkeep.cli.console import printable, warn

AGENT_NAMES = ("claude", "codex", "gemini", "qwen", "opencode", "copilot")
"""``agents.mcp_config.AGENT_NAMES``, written out so that ``mcp --help`` loads no agent module;
tests/unit/test_mcp_install.py checks they agree."""

_SAID = {
    "added": "added '{name}' to {path}",
    "updated": "updated '{name}' in {path}",
    "unchanged": "'{name}' already in {path}; nothing changed",
    "removed": "removed '{name}' from {path}",
    "absent": "no '{name}' in {path}; nothing to remove",
}


@click.command("install")
@click.argument("agent", required=False, metavar="AGENT", type=click.Choice(AGENT_NAMES))
@click.option("--all", "all_agents", is_flag=True, help="Every supported agent on PATH or with a settings folder.")
@click.option("--uninstall", is_flag=True, help="Remove shellkeep's entry (only shellkeep's own).")
@click.option("--all-projects", is_flag=True, help="Register the server with --all-projects.")
@click.option("--remote", is_flag=True, help="Register the server with --remote.")
def install(agent: str | None, all_agents: bool, uninstall: bool, all_projects: bool, remote: bool) -> None:
    """Register shellkeep's MCP server with an agent, in its own settings file.

    AGENT is claude, codex, gemini, qwen, opencode or copilot; --all takes every one set up
    here. Claude Code: ~/.claude.json (as 'claude mcp add --scope user'), Codex: config.toml
    [mcp_servers.shellkeep], Gemini CLI and Qwen Code: settings.json, OpenCode: opencode.json,
    Copilot CLI: mcp-config.json. Running it again changes nothing; --uninstall removes only
    shellkeep's own entry. Prints one line per agent: what was done, in which file.

    Example: shellkeep mcp install claude
    """
    from shellkeep.agents.mcp_config import SERVER_NAME
    from shellkeep.app.mcp_install import InstallRequest, install_mcp

    if bool(agent) == all_agents:
        raise click.UsageError("name one agent or give --all")
    if uninstall and (all_projects or remote):
        raise click.UsageError("--all-projects and --remote go with an install, not with --uninstall")
    server_args = (("--all-projects",) if all_projects else ()) + (("--remote",) if remote else ())
    results = install_mcp(InstallRequest((agent,) if agent else (), uninstall, server_args))
    for result in results:
        if result.outcome is not None:
            said = _SAID[result.outcome.value].format(name=SERVER_NAME, path=printable(str(result.path)))
            click.echo(f"{result.agent}: {said}")
    failed = [r for r in results if r.error is not None]
    for result in failed:
        warn(f"{result.agent}: {result.error}")
    if failed:
        raise click.exceptions.Exit(1)
