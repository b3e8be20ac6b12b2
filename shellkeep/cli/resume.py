"""``shellkeep resume``: redraw a session's last screen and put its conversation back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import complete_agent, context, count, session_argument, warn
from shellkeep.cli.output import format_local_time
from shellkeep.cli.resume_all import resume_all
from shellkeep.errors import ShellkeepError
from shellkeep.store.session import readable_text

if TYPE_CHECKING:
    from shellkeep.app.context import Context
    from shellkeep.app.env_restore import EnvRestore
    from shellkeep.app.resume import ResumePlan
    from shellkeep.store.session import SessionMeta
    from shellkeep.vault.access import Vault


@click.command()
@session_argument
@click.option("--pick", is_flag=True, help="Choose the session in an interactive picker (as 'shellkeep browse').")
@click.option(
    "--exchanges", "exchanges_n", type=count(min=0), default=None,
    help="How many of the last exchanges to re-inject (config resume.exchanges, default 5).",
)  # fmt: skip
@click.option("--no-screen", is_flag=True, help="Do not redraw the session's last screen first.")
@click.option("--agent", metavar="NAME", shell_complete=complete_agent, help="Hand the conversation to another agent or program: into its own history where shellkeep writes it (claude, codex, gemini, qwen), else by re-injection.")
@click.option("--native-only", is_flag=True, help="Use the agent's own resume and never fall back to re-injection.")
@click.option("--inject", "force_inject", is_flag=True, help="Start the agent anew and re-inject, even where it can resume natively.")
@click.option(
    "--cwd", "cwd", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Resume in this directory (a moved or renamed project folder, or a folder on this machine for a session pulled from another) instead of the session's own.",
)  # fmt: skip
@click.option(
    "--env", "env_choice", type=click.Choice(["recorded", "current"]), default="recorded", show_default=True,
    help="Give the agent the environment its session recorded (secrets by name; another machine's code-running variables never), or keep today's.",
)  # fmt: skip
@click.option("--dry-run", is_flag=True, help="Print what would be run and typed; change nothing.")
@click.option("--all", "all_sessions", is_flag=True, help="Every session cut short since the last boot, in every project.")
@click.option("--since", metavar="WHEN", help="With --all: those that ended since WHEN (2024-05-01, today, 2h, 3d) instead.")
@click.option("--print", "print_only", is_flag=True, help="With --all: print the commands it would run (inside tmux, the tmux commands), for a script; run nothing.")
@click.option(
    "--resend/--no-resend", "resend", default=None,
    help="Send the prompt the agent never answered (it was cut short mid-turn) again once it is ready, or never; default: ask.",
)  # fmt: skip
@click.option(
    "-y", "--yes", is_flag=True,
    help="Run without asking: a finished session's command started again, or a session pulled from another machine.",
)  # fmt: skip
def resume(
    ref: str | None,
    last: bool,
    pick: bool,
    exchanges_n: int | None,
    no_screen: bool,
    agent: str | None,
    native_only: bool,
    force_inject: bool,
    cwd: Path | None,
    env_choice: str,
    dry_run: bool,
    all_sessions: bool,
    since: str | None,
    print_only: bool,
    resend: bool | None,
    yes: bool,
) -> int:
    """Put a session back: its last screen, then its agent, in the same conversation.

    With no SESSION: the newest session of this project that was cut short (interrupted,
    terminal closed, killed) and not resumed yet, else the newest one; starting that one's
    command again (a command, not an agent's conversation) is asked first (y/N), or,
    without a terminal, needs --yes.

    A session pulled from another machine ('sync pull') is not trusted to run here: anyone
    who can write the remote can change its command. Resume shows the exact command line,
    the directory, the variables it sets and those it will not apply (they could run code, send
    your keys elsewhere, or name a folder that is not yours),
    and asks (y/N); without a terminal it needs --yes. --dry-run says it would ask.

    A prompt the agent never answered (it died mid-turn) is named in the banner and, once
    the agent is ready, typed again: asked (y/N) on a terminal, always with --resend, never
    with --no-resend. A prompt holding a redacted secret is never sent again.

    When the agent's own resume fails (it exits with an error at once, or says the session
    is unknown), the agent is started anew with the last exchanges re-injected.

    A session whose folder was moved or renamed is resumed with --cwd DIR, or without it in
    the new folder when that holds the same git repository. A session pulled from another
    machine ('sync pull') is resumed in this machine's checkout of its git repository (or
    --cwd DIR), its agent's transcript put where the agent looks here.

    With --all: every session of this machine cut short since the last boot (or --since)
    and not resumed yet, in every project; inside tmux each in a new window (those that
    shared a tmux window as its panes, in its layout), otherwise one after another here.

    Example: shellkeep resume --last --exchanges 3
    """
    from shellkeep.app.env_restore import agent_files_env, environment_for, is_pulled
    from shellkeep.app.resume import ResumeMode, check_agent_on_path, choose_default, plan_resume, resumed_as, run_resume, with_environment
    from shellkeep.tui.picker import pick_session

    if native_only and force_inject:
        raise click.UsageError("give --native-only or --inject, not both")
    if all_sessions:
        given = [flag for flag, on in (("SESSION", ref), ("--last", last), ("--pick", pick), ("--agent", agent), ("--cwd", cwd)) if on]
        if given:
            raise click.UsageError(f"give --all or {given[0]}, not both")
        passed = (*(("--exchanges", str(exchanges_n)) if exchanges_n is not None else ()),
                  *(("--no-screen",) if no_screen else ()), *(("--native-only",) if native_only else ()),
                  *(("--inject",) if force_inject else ()), *(("--env", env_choice) if env_choice != "recorded" else ()),
                  *(() if resend is None else ("--resend" if resend else "--no-resend",)), *(("--yes",) if yes else ()))  # fmt: skip
        return resume_all(since, passed, dry_run=dry_run, print_only=print_only)
    if since or print_only:
        raise click.UsageError(f"{'--since' if since else '--print'} goes with --all")
    ctx = context()
    if pick:
        chosen = pick_session(ctx)
        if chosen is None:
            return 0
        ref, last = chosen, False
    meta, fallback = choose_default(ctx, ref, last=last)
    restore = environment_for(ctx, meta, cwd=cwd, keep_current=env_choice == "current", handed_to=agent)
    env = {**os.environ, **dict(restore.updates)}  # the transcript is looked for where the agent will look
    if agent is not None:  # a hand-off leaves the session's agent's variables out: its files are still found with them
        env = {**agent_files_env(ctx, meta), **env}
        check_agent_on_path(agent, env)
    plan = plan_resume(
        ctx, meta, exchanges=exchanges_n, agent=agent, env=env, dry_run=dry_run, warn=warn, force_inject=force_inject, cwd=cwd
    )
    plan = with_environment(plan, restore)
    if plan.note:
        warn(plan.note)
    again = resumed_as(plan.session)
    if again and not dry_run:  # a dry run says it in its plan
        warn(f"already resumed as {again}; this starts another branch (resume {again} to go on with it)")
    env_line = restore.line()
    if env_line:
        warn(env_line)
    # Anyone who can write the remote wrote this session's command and environment: ask first.
    pulled = is_pulled(ctx, meta)
    if pulled and dry_run and not yes:
        warn(f"session {meta.id} was pulled from another machine: running it would ask first (y/N), or need --yes")
    elif pulled and not yes and not _confirm_pulled(plan, restore):
        return 1
    # Nothing was cut short and the newest session is a plain command (no agent conversation to
    # go on with): running it again may not be what a habitual 'resume' meant, so ask.
    rerun = fallback and plan.mode is not ResumeMode.NATIVE and not meta.agent_session_id and agent is None
    if rerun and not (yes or dry_run or pulled) and not _confirm_rerun(plan):
        return 1
    banner = _banner(plan, ctx.vault)
    from shellkeep.app.in_flight import files_in_flight, in_flight_line

    flying = in_flight_line(files_in_flight(ctx, plan.session))
    banner += f"\n{flying}" if flying else ""
    click.echo(banner, err=True)
    would_ask = False
    if plan.unanswered is not None:
        plan, said, would_ask = _resend_choice(plan, resend, dry_run=dry_run)
        click.echo(said, err=True)
        banner += "\n" + said
    elif resend:
        warn(f"nothing to send again: session {plan.session.id} has no unanswered prompt")
    if dry_run:
        _print_plan(plan, would_ask=would_ask, resumed=again)
        return 0
    if not no_screen:
        _print_last_screen(ctx, plan.session, _rows(banner))
    return run_resume(ctx, plan, warn=warn, native_only=native_only).exit_code


def _confirm_rerun(plan: ResumePlan) -> bool:
    """Ask before starting an ended session's command again; without a terminal, say what would run."""
    import sys

    meta = plan.session
    what = f"session {meta.id} {meta.status} {format_local_time(meta.ended_at or meta.started_at)}"
    command = readable_text(_shell_words(plan.argv))
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        warn(f"no session was cut short; resuming would run '{command}' again ({what}); pass --yes to do so")
        return False
    return click.confirm(f"no session was cut short; run '{command}' again ({what})?", default=False, err=True)


def _confirm_pulled(plan: ResumePlan, restore: EnvRestore) -> bool:
    """Ask before running a session pulled from another machine: its exact command line, where,
    with which variables, and those not applied; without a terminal, refuse in one line."""
    import sys

    from shellkeep.app.environment import shown_value
    from shellkeep.app.remote import remote_of

    meta = plan.session
    origin = remote_of(meta) or {}
    machine = origin.get("host") or meta.host or "another machine"
    command = _visible(_shell_words(plan.argv))
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        warn(f"session {meta.id} was pulled from {_visible(machine)}; pass --yes to run what it would run: {command}")
        return False
    lines = [
        f"session {meta.id} was recorded on {_visible(machine)} and pulled from {_visible(origin.get('url', 'a remote'))};"
        " whoever can write there can change what it runs",
        f"  it would run: {command}",
        f"  in: {_visible(str(plan.cwd))}",
        *(f"  with: {_visible(f'{k}={shown_value(meta, k, v)}')}" for k, v in plan.env_updates),
        *(f"  not applied (could run code): {_visible(v)}" for v in restore.not_applied),
        *(f"  not applied (could send your keys elsewhere): {_visible(v)}" for v in restore.not_routed),
        *(f"  not applied (not a folder of yours in your home): {_visible(v)}" for v in restore.not_yours),
    ]
    click.echo("\n".join(lines), err=True)
    if click.confirm("run it?", default=False, err=True):
        return True
    warn(f"session {meta.id} not resumed")
    return False


def _visible(text: str) -> str:
    """Return ``text`` with every control character (an escape sequence could hide the rest) as ``\\xNN``."""
    text = readable_text(text)
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _resend_choice(plan: ResumePlan, resend: bool | None, *, dry_run: bool) -> tuple[ResumePlan, str, bool]:
    """Decide whether the unanswered prompt is sent again (asking on a terminal).

    Returns the plan, its banner line, and whether the run would ask (``dry_run`` on a
    terminal without a flag: the plan shown is the one without it). A dry run decides as the
    run would in the same place: without a terminal and a flag, it is not sent.
    """
    import sys

    from shellkeep.app.resume import with_resend
    from shellkeep.app.unanswered import banner_line

    unanswered = plan.unanswered
    assert unanswered is not None
    sent = with_resend(plan)
    if unanswered.refusal is not None:
        return plan, banner_line(unanswered, f"not sent again: {unanswered.refusal}"), False
    if sent is plan:
        return plan, banner_line(unanswered, f"not sent again: {plan.agent} would run it"), False
    if resend is False:
        return plan, banner_line(unanswered, "not sent again: --no-resend"), False
    if resend is None:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return plan, banner_line(unanswered, "not sent again; pass --resend to send it"), False
        if dry_run:
            return plan, banner_line(unanswered, "would ask to send it again; --resend sends it, --no-resend never"), True
        click.echo(banner_line(unanswered), err=True)
        if not click.confirm("send it again once the agent is ready?", default=False, err=True):
            return plan, "not sending it again", False
        return sent, "sending it again once the agent is ready", False
    return sent, banner_line(unanswered, "would send it again" if dry_run else "sending it again once the agent is ready"), False


def _banner(plan: ResumePlan, vault: Vault | None = None) -> str:
    import shutil

    from shellkeep.app.plan import stored_plan

    meta = plan.session
    how = {
        "native": "native resume",
        "inject": f"re-injecting {len(plan.exchanges)} exchange{'s' if len(plan.exchanges) != 1 else ''}",
        "restart": "starting again",
    }[plan.mode.value]
    when = format_local_time(meta.ended_at or meta.started_at)
    head = f"── shellkeep: {meta.id} · {meta.agent} · {meta.status} {when}"
    command = _visible(_shell_words(plan.argv))  # an escape sequence in it could hide the rest
    line = f"{head} · {how}: {command} ──"
    stopped = stored_plan(meta, vault)  # the agent's task list where it stopped (app.plan)
    tail = f"\nplan: {stopped.summary()}" if stopped else ""
    if len(line) < shutil.get_terminal_size().columns:
        return line + tail
    return f"{head} ──\n{how}: {command}{tail}"  # too narrow for one line: the command on a line of its own, whole


def _rows(text: str) -> int:
    """Return how many terminal rows ``text`` takes, its long lines wrapped at the terminal's width."""
    import shutil

    width = max(shutil.get_terminal_size().columns, 1)
    return sum(max(1, -(-len(line) // width)) for line in text.split("\n"))


def _print_plan(plan: ResumePlan, *, would_ask: bool = False, resumed: str | None = None) -> None:
    """Print what a dry run would do; would_ask: the unanswered prompt would be asked about first;
    resumed: the run that already resumed the session."""
    from shellkeep.app.environment import shown_value
    from shellkeep.app.resume import inject_wait

    click.echo(f"mode: {plan.mode.value}")
    click.echo(f"would run: {_visible(_shell_words(plan.argv))}")
    click.echo(f"in: {readable_text(str(plan.cwd))}")
    for key, value in plan.env_updates:
        click.echo(f"with: {key}={shown_value(plan.session, key, value)}")
    click.echo(f"parent: {plan.session.id}")
    if resumed:
        click.echo(f"already resumed as {resumed}; this starts another branch (resume {resumed} to go on with it)")
    if plan.inject_text:
        click.echo(f"would type, {inject_wait(plan)}:")
        click.echo(plan.inject_text)
    elif plan.resend_text:
        click.echo(f"would send again, {inject_wait(plan)}: {plan.resend_text}")
    if would_ask and plan.unanswered is not None:
        click.echo(f"would ask first whether to send again: {plan.unanswered.prompt.strip()}")


def _print_last_screen(ctx: Context, meta: SessionMeta, banner_rows: int = 1) -> None:
    from shellkeep.app.reads import last_screen

    import shutil

    if meta.detail != "full":
        if isinstance(meta.extra.get("imported_from_agent"), str):  # app.history_import
            warn(f"no last screen to redraw: session {meta.id} was imported from the agent (no terminal recording)")
        else:
            warn(f"no last screen to redraw: session {meta.id} kept its {meta.detail} only (record.detail)")
        return
    try:
        screen = last_screen(ctx, meta, command="resume")  # audited, as every read
    except (OSError, ShellkeepError) as exc:
        warn(f"cannot redraw the last screen: {exc}")
        return
    import dataclasses

    width, height = shutil.get_terminal_size((screen.size.cols, screen.size.rows))
    used = len(screen.to_text().split("\n"))
    room = max(height - banner_rows - 1, 1)  # the banner above, the agent's first line below
    lines = screen.lines[max(used - room, 0) : used]  # a full screen loses its top rows, not the banner
    screen = dataclasses.replace(screen, lines=tuple(row[:width] for row in lines))  # cut, never wrap
    click.echo(screen.to_ansi())


def _shell_words(argv: tuple[str, ...]) -> str:
    import shlex

    return shlex.join(argv)
