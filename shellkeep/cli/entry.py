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
from collections.abc import Callable


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


def guarded(call: Callable[[], int]) -> int:
    """Return ``call()``'s exit status; an error becomes one line on stderr and its status."""
    from shellkeep.errors import InternalError, ShellkeepError

    try:
        return call()
    except ShellkeepError as exc:
        warn(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a file or folder the user named, or the data folder, is unusable
        where = f": {exc.filename}" if exc.filename else ""
        warn(f"{(exc.strerror or str(exc)).lower()}{where}; check the path and its permissions")
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: one line and a log, not a traceback
        if os.environ.get("SHELLKEEP_DEBUG") == "1":
            raise
        log_path = _write_crash_log(exc)
        bug = InternalError(f"internal error: {type(exc).__name__}: {exc}; details in {log_path}")
        warn(str(bug))
        return bug.exit_code


def warn(message: str) -> None:
    """Write one warning line to stderr (with a carriage return, safe in raw mode)."""
    end = "\r\n" if sys.stderr.isatty() else "\n"
    sys.stderr.write(f"shellkeep: {message}{end}")
    sys.stderr.flush()


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
