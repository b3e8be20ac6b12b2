"""``shellkeep resume --all``: the listing, the plan and the run of every session cut short."""

from __future__ import annotations

from typing import TYPE_CHECKING

import os
import shlex

import click

from shellkeep.cli.options import context, warn
from shellkeep.cli.output import format_local_time

if TYPE_CHECKING:
    from shellkeep.app.resume_all import ResumeAllPlan


def resume_all(since: str | None, options: tuple[str, ...], *, dry_run: bool, print_only: bool) -> int:
    """Bring back every session cut short (``app.resume_all``); return the exit status.

    options: passed on to each ``shellkeep resume``. dry_run: show the plan. print_only:
    print the commands it would run, for a script: inside tmux one ``tmux`` command per
    window (``app.tmux_layout``), otherwise one ``shellkeep resume ID`` line per session.
    """
    from shellkeep.app.resume_all import plan_resume_all, run_one_by_one
    from shellkeep.app.tmux_layout import open_tmux_windows, tmux_windows
    from shellkeep.archive.since import parse_time

    ctx = context()
    plan = plan_resume_all(ctx, since=parse_time(since) if since else None, options=options)
    when = format_local_time(plan.since.isoformat())
    bound = f"since the last boot ({when})" if plan.since_boot else f"since {when}"
    if not plan.comebacks:
        warn(f"no session cut short {bound} is waiting to be resumed; run 'shellkeep ls --all' for the others")
        return 0
    pane_env = ctx.paths.as_env()  # a pane runs in the tmux server's environment, not this one
    commands = [w.tmux_argv(pane_env) for w in tmux_windows(plan)] if plan.in_tmux else [c.argv for c in plan.comebacks]
    if print_only:
        for argv in commands:
            click.echo(shlex.join(argv))
        return 0
    count = len(plan.comebacks)
    warn(f"{count} session{'s' if count != 1 else ''} cut short {bound}:")
    _list(plan)
    in_panes = sum(1 for c in plan.comebacks if (c.session.place or {}).get("kind") == "tmux")
    if in_panes and not plan.in_tmux:
        warn(f"{in_panes} of them sat in tmux; run 'shellkeep resume --all' inside tmux to get their windows and layout back")
    if dry_run:
        for argv in commands:
            click.echo(shlex.join(argv))
        return 0
    if plan.in_tmux:
        opened = open_tmux_windows(plan, env=os.environ, pane_env=pane_env)
        warn(f"opened {opened} tmux window{'s' if opened != 1 else ''} for {count} session{'s' if count != 1 else ''}")
        return 0
    return run_one_by_one(plan, warn=warn)


def _list(plan: ResumeAllPlan) -> None:
    for comeback in plan.comebacks:
        meta = comeback.session
        ended = format_local_time(meta.ended_at or meta.started_at)
        click.echo(f"  {meta.id}  {meta.project}  {meta.agent}  {meta.status} {ended}  {meta.cwd}", err=True)

