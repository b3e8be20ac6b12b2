"""Give every module a logger that imports ``logging`` only when something is logged.

``logging`` costs about 5 ms to import; ``shellkeep run`` must have its child running
before that matters. ``get_logger(__name__)`` returns a stand-in that loads the real
logger on first use and, unless ``logging`` was configured already, gives the ``shellkeep``
logger its one handler: ``shellkeep: <message>`` on stderr, at the level the last
``configure`` asked for (warnings and worse by default).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_configured = False
_wanted = (0, False)  # (verbose, quiet) of the last ``configure``


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Send shellkeep's log records to stderr as ``shellkeep: <message>``.

    verbose: each step lowers the level by one (WARNING → INFO → DEBUG); quiet: errors only.
    Applied at once when ``logging`` is loaded already, else by the first use of a logger
    from ``get_logger``: a command that logs nothing never imports ``logging``.
    """
    global _configured, _wanted
    _wanted = (verbose, quiet)
    _configured = False
    if "logging" in sys.modules:
        _apply()


def _apply() -> None:
    global _configured
    import logging

    verbose, quiet = _wanted
    level = logging.ERROR if quiet else logging.WARNING - 10 * verbose
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("shellkeep: %(message)s"))
    root = logging.getLogger("shellkeep")
    root.handlers[:] = [handler]
    root.setLevel(max(level, logging.DEBUG))
    _configured = True


class _LazyLogger:
    """Forward attribute access to ``logging.getLogger(name)``, importing it on first use."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            if not _configured:
                _apply()
            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)


def get_logger(name: str) -> Any:
    """Return the logger of module ``name`` (a ``logging.Logger`` once used)."""
    return _LazyLogger(name)
