"""``shellkeep run``: record a program in a pty (also ``shellkeep PROGRAM`` and ``shellkeep``)."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, paths, warn


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--name", help="A name to find the session by later.")
@click.option("--title", help="The recording's title.")
@click.option("--no-input", is_flag=True, help="Do not record what you type.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[--] PROGRAM [ARGS]...")
def run(name: str | None, title: str | None, no_input: bool, argv: tuple[str, ...]) -> int:
    """Record PROGRAM in a pty; with no PROGRAM, record $SHELL.

    The exit status is the program's own (128+N when it is killed by signal N).

    Example: shellkeep run --name fix-login -- claude --model opus
    """
    import os

    from shellkeep.runner import RunRequest, default_argv, run_session

    here = cwd()
    settings = _settings(here, no_input)
    request = RunRequest(
        argv=argv or default_argv(os.environ),
        cwd=here,
        name=name,
        title=title,
        settings=settings,
    )
    outcome = run_session(paths(), request, warn=warn)
    return outcome.exit_code


def _settings(here: object, no_input: bool) -> object:
    """Resolve how to record from config and flags; a broken config warns, never blocks."""
    import os
    from pathlib import Path

    from shellkeep.errors import ConfigError
    from shellkeep.runner import RecordSettings, settings_from_config
    from shellkeep.store.paths import project_root_of

    try:
        from shellkeep.config import load_config

        config = load_config(paths(), project_root_of(Path(str(here))), os.environ, {})
    except ImportError:  # TEMP until config.py lands
        return RecordSettings(record_input=not no_input)
    except ConfigError as exc:
        warn(f"{exc}; recording with default settings")
        return RecordSettings(record_input=not no_input)
    return settings_from_config(config, no_input=no_input)
