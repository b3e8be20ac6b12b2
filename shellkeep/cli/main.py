"""The ``shellkeep`` click group: subcommands load lazily from ``COMMANDS``.

Anything that is not a shellkeep command is a program to record: ``shellkeep claude -c``
runs ``claude -c`` with every argument untouched. The console script (``cli/entry.py``)
records the plain forms without click and sends the rest here; errors become one line
through ``cli/entry.guarded``.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import click
from click.shell_completion import CompletionItem

from shellkeep import __version__
from shellkeep.cli.console import warn
from shellkeep.cli.record import COMMANDS, SHORT_HELP
from shellkeep.logs import configure

__all__ = ["COMMANDS", "main", "run_click"]


class ShellkeepGroup(click.Group):
    """A group that loads subcommands on first use and runs unknown names as programs.

    The group's ``--help`` and the completion of a command name take each command's short
    help from ``SHORT_HELP``, so they import no command (click's lazy group pattern).
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # As click.Group.format_commands (no command is hidden), without loading them.
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        with formatter.section("Commands"):
            formatter.write_dl([(name, _short_help(name, limit)) for name in names])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        # As click.Group.shell_complete, without loading the commands it names.
        results = [
            CompletionItem(name, help=_short_help(name))
            for name in self.list_commands(ctx)
            if name.startswith(incomplete)
        ]
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name)
        command = getattr(module, attr)
        assert isinstance(command, click.Command)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Group options come first; the first other word is a command or a program.
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "--":
            i += 1
        if i < len(args):
            word = args[i]
            if word == "--":
                args = [*args[:i], "run", *args[i:]]
            elif word not in COMMANDS:
                args = [*args[:i], "run", "--", *args[i:]]
        return super().parse_args(ctx, args)


@click.group(
    cls=ShellkeepGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("-v", "--verbose", count=True, help="More detail on stderr (repeat for debug).")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.version_option(__version__, "-V", "--version", prog_name="shellkeep")
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool) -> int | None:
    """Record AI coding-agent sessions in a pty and put them back after a crash.

    \b
    shellkeep                 record $SHELL for the current project
    shellkeep PROGRAM [ARGS]  record any program, arguments untouched
    shellkeep ls              list this project's sessions

    Example: shellkeep claude
    """
    configure(verbose, quiet)
    if ctx.invoked_subcommand is None:
        run = ctx.command.get_command(ctx, "run")  # type: ignore[attr-defined]
        code = ctx.invoke(run)
        return code if isinstance(code, int) else None
    return None


def run_click() -> int:
    """Run the click group; return the exit status, a usage error reported as one line."""
    no_args_help = getattr(click.exceptions, "NoArgsIsHelpError", None)  # click 8.2+
    try:
        rv: Any = main.main(prog_name="shellkeep", standalone_mode=False)
    except click.exceptions.Abort:
        warn("aborted")
        return 130
    except click.UsageError as exc:
        if no_args_help is not None and isinstance(exc, no_args_help) and exc.ctx is not None:
            click.echo(exc.ctx.get_help())  # a bare group (shellkeep key): its help, as --help shows it
            shown: int = exc.exit_code
            return shown
        message = re.sub(r"\.? Did you mean (.*)\?$", r" (did you mean \1?)", " ".join(exc.format_message().split()))
        warn(f"{_lower_first(message)}; see '{_command_path(exc.ctx)} --help'")
        return exc.exit_code
    except click.ClickException as exc:
        warn(_lower_first(exc.format_message()))
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    return rv if isinstance(rv, int) else 0


def _short_help(name: str, limit: int = 45) -> str:
    """Return command ``name``'s short help cut to ``limit`` characters, as click cuts its own.

    ``SHORT_HELP`` holds the first sentence of the command's help, so click's shortening of
    it (on a stand-in command) gives what the loaded command would.
    """
    return click.Command(name, help=SHORT_HELP[name]).get_short_help_str(limit)


def _command_path(ctx: click.Context | None) -> str:
    """Return the command the user ran (``shellkeep run``), for the --help hint of an error."""
    path = ctx.command_path if ctx is not None else "shellkeep"
    if path == "shellkeep":  # an option error of a subcommand can come with the group's context
        words = [w for w in sys.argv[1:] if not w.startswith("-")]
        if words and words[0] in COMMANDS:
            path = f"shellkeep {words[0]}"
    return path


def _lower_first(text: str) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text[:1].lower() + text[1:]
