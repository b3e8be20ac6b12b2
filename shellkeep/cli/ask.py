"""``shellkeep ask``: ask the archive a question through your own agent, with shellkeep's MCP server."""

from __future__ import annotations

import click

from shellkeep.cli.options import complete_agent, context, cwd, json_option


@click.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--agent", metavar="AGENT", shell_complete=complete_agent, help="claude, codex or gemini; default: the one most used in this project.")
@click.option("--all-projects", is_flag=True, help="Let the agent read every project's sessions, not just this one's.")
@click.option("--remote", is_flag=True, help="Let it read the sessions pulled from other machines too ('shellkeep sync pull').")
@json_option
def ask(question: tuple[str, ...], agent: str | None, all_projects: bool, remote: bool, as_json: bool) -> None:
    """Ask your own agent a question about past sessions; it reads them through shellkeep's MCP server.

    The agent (Claude Code, Codex or Gemini CLI) runs once, non-interactively, with its own
    login, and with 'shellkeep mcp' attached for this call only: nothing is written into its
    settings. It may use the server's read-only tools, and no others. The answer is printed,
    then the sessions it cites (or, when it names none, the sessions it read), which
    'shellkeep show' and 'shellkeep replay' open.

    Example: shellkeep ask "how did we fix the flaky login test last week?"
    """
    from shellkeep.app.ask import AskRequest, ask as run_ask
    from shellkeep.app.display import format_local_time
    from shellkeep.cli.output import print_json

    request = AskRequest(" ".join(question), agent, all_projects, remote)
    result = run_ask(context(), request, cwd(), on_start=lambda name: click.echo(f"asking {name}, with shellkeep's MCP server attached...", err=True))
    if as_json:
        print_json(result)
        return
    click.echo(result.answer)
    if not result.cited:
        click.echo(f"({result.agent} read no session through shellkeep)", err=True)
        return
    click.echo("\n" + ("Sessions cited:" if result.named else "Sessions read:"))
    for s in result.cited:
        about = s.name or s.title or ""
        click.echo("  " + "  ".join(part for part in (s.id, s.agent or "", format_local_time(s.started_at) if s.started_at else "", about) if part))
