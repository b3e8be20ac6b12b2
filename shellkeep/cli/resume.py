"""``shellkeep resume``: redraw a session's last screen and put its conversation back."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, paths, session_argument, warn


@click.command()
@session_argument
@click.option("--pick", is_flag=True, help="Choose the session in an interactive picker.")
@click.option("--exchanges", "exchanges_n", type=click.IntRange(min=0), default=None, help="How many exchanges to re-inject (config resume.exchanges, 5).")
@click.option("--no-screen", is_flag=True, help="Do not redraw the last screen.")
@click.option("--agent", "agent", metavar="NAME", help="Hand the conversation to another agent (re-injection).")
@click.option("--dry-run", is_flag=True, help="Print what would be run and typed; change nothing.")
def resume(
    ref: str | None, last: bool, pick: bool, exchanges_n: int | None, no_screen: bool, agent: str | None, dry_run: bool
) -> int:
    """Put a session back: its last screen, then its agent, in the same conversation.

    With no SESSION: the newest session of this project that was cut short (interrupted,
    terminal closed, killed) and not resumed yet, else the newest one.

    Example: shellkeep resume --last --exchanges 3
    """
    from shellkeep.resume import choose_session, plan_resume
    from shellkeep.store.paths import project_root_of

    here = project_root_of(cwd())
    if pick:
        from shellkeep.cli.browse import pick_session

        chosen = pick_session(paths(), here)
        if chosen is None:
            return 0
        ref, last = chosen, False
    meta = choose_session(paths(), here, ref, last=last)
    settings, resume_cfg = _settings(meta)
    plan = plan_resume(meta, exchanges=resume_cfg[0] if exchanges_n is None else exchanges_n, agent=agent)
    click.echo(_banner(plan), err=True)
    if not no_screen:
        _print_last_screen(meta.cast)
    if dry_run:
        click.echo(f"would run: {' '.join(plan.argv)}")
        click.echo(f"in: {plan.cwd}")
        click.echo(f"mode: {plan.mode}")
        if plan.inject_text:
            click.echo("would type:")
            click.echo(plan.inject_text)
        return 0
    from shellkeep.runner import RunRequest, run_session

    request = RunRequest(
        argv=plan.argv,
        cwd=plan.cwd,
        name=meta.name,
        settings=settings,
        parent=meta.id,
        inject=plan.inject_text.encode("utf-8") if plan.inject_text else None,
        inject_settle_s=resume_cfg[1],
        use_adapter=plan.mode != "native",
    )
    return run_session(paths(), request, warn=warn).exit_code


def _banner(plan: object) -> str:
    from shellkeep.cli.output import format_local_time

    meta = plan.session  # type: ignore[attr-defined]
    mode = plan.mode  # type: ignore[attr-defined]
    how = {
        "native": "native resume",
        "inject": f"re-injecting {len(plan.exchanges)} exchanges",  # type: ignore[attr-defined]
        "restart": "starting again",
    }[mode]
    argv = " ".join(plan.argv)  # type: ignore[attr-defined]
    when = format_local_time(meta.ended_at or meta.started_at)
    return f"── shellkeep: {meta.id} · {meta.agent} · {meta.status} {when} · {how}: {argv} ──"


def _print_last_screen(cast: str) -> None:
    from pathlib import Path

    from shellkeep.errors import DataError
    from shellkeep.screen import last_screen

    try:
        screen = last_screen(Path(cast))
    except (OSError, DataError) as exc:
        warn(f"cannot redraw the last screen: {exc}")
        return
    click.echo(screen.to_ansi())


def _settings(meta: object) -> tuple[object, tuple[int, float]]:
    import os
    from pathlib import Path

    from shellkeep.errors import ConfigError
    from shellkeep.runner import RecordSettings, settings_from_config
    from shellkeep.store.paths import project_root_of

    try:
        from shellkeep.config import load_config

        config = load_config(paths(), project_root_of(Path(meta.cwd)), os.environ, {})  # type: ignore[attr-defined]
    except ConfigError as exc:
        warn(f"{exc}; using default settings")
        return RecordSettings(), (5, 0.8)
    return settings_from_config(config), (config.resume.exchanges, config.resume.inject_settle_ms / 1000)
