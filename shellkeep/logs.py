"""Give every module a logger that imports ``logging`` only when something is logged.

``logging`` costs about 5 ms to import; ``shellkeep run`` must have its child running
before that matters. ``get_logger(__name__)`` returns a stand-in that loads the real
logger on first use and, unless ``configure`` ran first, gives the ``shellkeep`` logger
its one handler: ``shellkeep: <message>`` on stderr, warnings and worse.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

_configured = False


def configure(verbose: int = 0, quiet: bool = False) -> None:
    """Send shellkeep's log records to stderr as ``shellkeep: <message>``.

    verbose: each step lowers the level by one (WARNING → INFO → DEBUG); quiet: errors only.
    """
    global _configured
    import logging
    import sys

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
                configure()
            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)


def get_logger(name: str) -> Any:
    """Return the logger of module ``name`` (a ``logging.Logger`` once used)."""
    return _LazyLogger(name)
