"""The ``shellkeep`` entry point: a click group whose subcommands load lazily.

Anything that is not a shellkeep command is a program to record: ``shellkeep claude -c``
runs ``claude -c`` with every argument untouched. This is the only place that turns a
``ShellkeepError`` into a message and an exit status.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import Any

import click

from shellkeep import __version__

# name -> "module:function"; every entry is exercised by the --help contract test.
COMMANDS: dict[str, str] = {
    "run": "shellkeep.cli.run:run",
    "ls": "shellkeep.cli.ls:ls",
    "show": "shellkeep.cli.show:show",
    "replay": "shellkeep.cli.replay:replay",
    "config": "shellkeep.cli.config:config",
    "resume": "shellkeep.cli.resume:resume",
    "browse": "shellkeep.cli.browse:browse",
    "search": "shellkeep.cli.search:search",
    "cat": "shellkeep.cli.cat:cat",
    "export": "shellkeep.cli.export:export",
    "import": "shellkeep.cli.import_:import_",
    "audit": "shellkeep.cli.audit:audit",
    "reindex": "shellkeep.cli.reindex:reindex",
    "key": "shellkeep.cli.key:key",
    "gc": "shellkeep.cli.gc:gc",
    "pin": "shellkeep.cli.pin:pin",
    "unpin": "shellkeep.cli.pin:unpin",
    "redact": "shellkeep.cli.redact:redact",
}


class ShellkeepGroup(click.Group):
    """A group that loads subcommands on first use and runs unknown names as programs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

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


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING - 10 * verbose
    if quiet:
        level = logging.ERROR
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("shellkeep: %(message)s"))
    root = logging.getLogger("shellkeep")
    root.handlers[:] = [handler]
    root.setLevel(max(level, logging.DEBUG))


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
    _configure_logging(verbose, quiet)
    if ctx.invoked_subcommand is None:
        run = ctx.command.get_command(ctx, "run")  # type: ignore[attr-defined]
        return ctx.invoke(run)
    return None


def entry() -> None:
    """Run the CLI and exit with the right status; the console-script entry point."""
    from shellkeep.errors import InternalError, ShellkeepError

    try:
        rv: Any = main.main(prog_name="shellkeep", standalone_mode=False)
    except ShellkeepError as exc:
        _error(str(exc))
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _error("aborted")
        sys.exit(130)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "shellkeep"
        _error(f"{_lower_first(exc.format_message())}; see '{where} --help'")
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        _error(_lower_first(exc.format_message()))
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a file or folder the user named, or the data folder, is unusable
        where = f": {exc.filename}" if exc.filename else ""
        _error(f"{(exc.strerror or str(exc)).lower()}{where}; check the path and its permissions")
        sys.exit(1)
    except Exception as exc:  # noqa: BLE001 - a bug: one line and a log, not a traceback
        if os.environ.get("SHELLKEEP_DEBUG") == "1":
            raise
        log_path = _write_crash_log(exc)
        bug = InternalError(f"internal error: {type(exc).__name__}: {exc}; details in {log_path}")
        _error(str(bug))
        sys.exit(bug.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)


def _lower_first(text: str) -> str:
    text = " ".join(text.split()).rstrip(".")
    return text[:1].lower() + text[1:]


def _error(message: str) -> None:
    from shellkeep.cli.options import warn

    warn(message)


def _write_crash_log(exc: BaseException) -> str:
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        from shellkeep.store.paths import ensure_dir, resolve_paths

        logs = ensure_dir(resolve_paths().logs)
        fd, name = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=logs)
    except OSError:
        fd, name = tempfile.mkstemp(prefix="shellkeep-crash-", suffix=".log")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return name
