"""The ``shellkeep`` console script: record at once, or hand every other command to click.

Recording is the main job and start-up is part of it, so ``shellkeep``, ``shellkeep
PROGRAM [ARGS...]`` and the plain forms of ``shellkeep run`` are recognised here and run
without importing click (``cli/record.py``); everything else, ``--help`` and every error
included, goes through the click group in ``cli/main.py``. This is the only place that
turns a ``ShellkeepError`` into a message and an exit status.
"""

from __future__ import annotations

import os
import sys

from shellkeep.cli.console import guarded, warn

__all__ = ["entry", "guarded", "warn"]


def entry() -> None:
    """Run the CLI and exit with the right status; the console-script entry point."""
    _open_missing_std_fds()
    from shellkeep.cli.record import parse_run_args

    # Shell completion (click's _SHELLKEEP_COMPLETE) is always click's.
    fast = None if "_SHELLKEEP_COMPLETE" in os.environ else parse_run_args(sys.argv[1:])
    if fast is None:
        sys.exit(guarded(_click_main))
    from shellkeep.cli.record import record

    code = guarded(lambda: record(fast))
    # The session is stored and every file closed: skip the interpreter's teardown
    # (a few milliseconds of module clean-up), as a shell's exit would.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def _open_missing_std_fds() -> None:
    """Put /dev/null on each of fds 0, 1 and 2 that is closed, with a Python stream for it.

    Started as ``shellkeep ... <&- >&- 2>&-``, shellkeep would otherwise hand the first
    free number to the first file it opens (a recording), and write the screen's bytes or
    a warning into it.
    """
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        os.set_inheritable(fd, True)  # the std fds of the programs shellkeep starts
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))


def _click_main() -> int:
    from shellkeep.cli.main import run_click

    return run_click()
