"""``shellkeep browse``: pick a session in the interactive picker, then resume or replay it."""

from __future__ import annotations

import click

from shellkeep.cli.options import context
from shellkeep.cli.replay import replay
from shellkeep.cli.resume import resume


@click.command()
@click.option("--all", "all_projects", is_flag=True, help="Start with the sessions of every project.")
@click.option("--all-sessions", is_flag=True, help="Also the sessions shorter than a second with no input.")
@click.pass_context
def browse(ctx: click.Context, all_projects: bool, all_sessions: bool) -> int:
    """Pick a session: type to filter, Enter resumes it, Ctrl-R replays it, Ctrl-A shows every project.

    Example: shellkeep browse --all
    """
    from shellkeep.tui.picker import run_picker

    choice = run_picker(context(), all_projects=all_projects, allow_replay=True, all_sessions=all_sessions)
    if choice is None:
        return 0
    if choice.action == "replay":
        ctx.invoke(replay, ref=choice.session_id, last=False)
        return 0

    return int(ctx.invoke(resume, ref=choice.session_id, last=False) or 0)
