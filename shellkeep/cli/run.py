"""``shellkeep run``: record a program in a pty (also ``shellkeep PROGRAM`` and ``shellkeep``)."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, warn
from shellkeep.store.paths import resolve_paths as paths


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--name", help="A name to find the session by later.")
@click.option("--title", help="The recording's title.")
@click.option("--no-input", is_flag=True, help="Do not record what you type.")
@click.option("--no-redact", is_flag=True, help="Store secrets as they are (noted in the metadata).")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[--] PROGRAM [ARGS]...")
def run(name: str | None, title: str | None, no_input: bool, no_redact: bool, argv: tuple[str, ...]) -> int:
    """Record PROGRAM in a pty; with no PROGRAM, record $SHELL.

    The exit status is the program's own (128+N when it is killed by signal N).

    Example: shellkeep run --name fix-login -- claude --model opus
    """
    import os

    from shellkeep.runner import RunRequest, default_argv, load_settings, run_session

    if argv and argv[0].startswith("-"):
        raise click.UsageError(f"no such option: {argv[0]} (put the program after '--')")
    here = cwd()
    settings, _ = load_settings(paths(), here, warn=warn, no_input=no_input, no_redact=no_redact)
    request = RunRequest(argv=argv or default_argv(os.environ), cwd=here, name=name, title=title, settings=settings)
    return run_session(paths(), request, warn=warn).exit_code
