"""``shellkeep run``: record a program in a pty (also ``shellkeep PROGRAM`` and ``shellkeep``).

The plain forms never get here: ``cli/entry.py`` records them without importing click.
This command serves ``--help``, errors, and runs after group options (``shellkeep -v claude``).
"""

from __future__ import annotations

import click

from shellkeep.cli.record import RunArgs, record


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--name", help="A name to find the session by later.")
@click.option("--title", help="The recording's title.")
@click.option("--no-input", is_flag=True, help="Do not record what you type.")
@click.option("--no-redact", is_flag=True, help="Store secrets as they are (noted in the metadata).")
@click.option(
    "--restart",
    metavar="POLICY",
    help="Resume the program in place when it crashes: 'on-failure' (up to 3 times), "
    "'on-failure:N', or 'no' (default: record.restart).",
)
@click.option("-q", "--quiet", is_flag=True, help="No start line (as 'shellkeep -q run').")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[--] PROGRAM [ARGS]...")
def run(
    name: str | None,
    title: str | None,
    no_input: bool,
    no_redact: bool,
    restart: str | None,
    quiet: bool,
    argv: tuple[str, ...],
) -> int:
    """Record PROGRAM in a pty; with no PROGRAM, record $SHELL.

    The exit status is the program's own (128+N when it is killed by signal N).

    With --restart on-failure[:N] a crash (a signal, or a non-zero exit not right after
    your own Ctrl-C, Ctrl-D or /exit) resumes the session in place, up to N times.

    Example: shellkeep run --name fix-login -- claude --model opus
    """
    if argv and argv[0].startswith("-"):
        raise click.UsageError(f"no such option: {argv[0]} (put the program after '--')")
    root = click.get_current_context().find_root()
    quiet = quiet or bool(root.params.get("quiet"))  # shellkeep -q PROGRAM, or run -q: no start line
    return record(
        RunArgs(argv=argv, name=name, title=title, no_input=no_input, no_redact=no_redact, quiet=quiet, restart=restart)
    )
