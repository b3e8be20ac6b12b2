"""``shellkeep mcp``: the archive as a read-only MCP server on stdio, for the user's agents."""

from __future__ import annotations

import sys

import click

from shellkeep.cli.options import context

_BY_HAND = (
    "shellkeep: this is an MCP server for agents to start, waiting for one on stdin; "
    "register it with 'shellkeep mcp install AGENT' (Ctrl-C ends it)"
)


@click.group(invoke_without_command=True)
@click.option("--all-projects", is_flag=True, help="Serve every project's sessions, not just this one's.")
@click.option("--remote", is_flag=True, help="Also serve the sessions pulled from other machines ('shellkeep sync pull').")
def mcp(all_projects: bool, remote: bool) -> None:
    """Serve this project's sessions to AI agents as a read-only MCP server on stdin/stdout.

    An agent started with it can search the user's past sessions (every agent's prompts,
    answers and screens), read one session's exchanges, a screen, or a checkpoint's patch:
    the tools search_sessions, list_sessions, get_session, get_screen and get_diff. The
    project is the git top-level of the working directory. Everything returned is redacted
    as stored, bounded in size, and each read is in the audit log under the agent's name.
    stdout carries the protocol only.

    Register it with an agent once: shellkeep mcp install AGENT.

    Example: shellkeep mcp install claude
    """
    if click.get_current_context().invoked_subcommand is not None:
        return
    from shellkeep.app.archive_scope import open_scope
    from shellkeep.mcp.server import run_stdio
    from shellkeep.mcp.tools import Reader

    ctx = context()
    scope = open_scope(ctx, all_projects=all_projects, remote=remote)
    if sys.stdin.isatty():
        click.echo(_BY_HAND, err=True)
    run_stdio(lambda client: Reader(ctx, scope, client))


from shellkeep.cli.mcp_install import install  # noqa: E402 - the subcommand, after its group

mcp.add_command(install)
