"""Errors and warnings on the terminal: one line each, the exit status from the error's class.

This is the only place that turns a ``ShellkeepError`` into a message and an exit status
(``guarded``); ``warn`` writes every warning line. Both are click-free, for the recording
fast path (``cli/entry.py``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from shellkeep.errors import InternalError, ShellkeepError
from shellkeep.store.paths import ensure_dir, resolve_paths
from shellkeep.store.session import readable_text


def guarded(call: Callable[[], int]) -> int:
    """Return ``call()``'s exit status; an error becomes one line on stderr and its status."""
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


def printable(text: str) -> str:
    """Return ``text`` fit for the user's terminal: a byte of a path that was not UTF-8 shows as ``\\xNN``.

    Python reads such paths with surrogateescape (``\\udcff`` for byte 0xff); every message
    that shows a path goes through here (``store.session.readable_text``).
    """
    return readable_text(text)


def warn(message: str) -> None:
    """Write one warning line to stderr (with a carriage return, safe in raw mode)."""
    end = "\r\n" if sys.stderr.isatty() else "\n"
    sys.stderr.write(f"shellkeep: {printable(message)}{end}")
    sys.stderr.flush()


def _write_crash_log(exc: BaseException) -> str:
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        logs = ensure_dir(resolve_paths().logs)
        fd, name = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=logs)
    except OSError:
        fd, name = tempfile.mkstemp(prefix="shellkeep-crash-", suffix=".log")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return name
