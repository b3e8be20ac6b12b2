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


def _click_main() -> int:
    from shellkeep.cli.main import run_click

    return run_click()
