"""Define the ``Sink`` protocol: where the relay hands every read, without waiting on it."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object  # at run time the protocol is documentation only

from shellkeep.termsize import TermSize


class Sink(Protocol):
    """Receive what passes through the relay. Every method must return at once.

    ``at`` is float seconds since the child started. The relay calls these on its own
    thread and never handles their errors: a sink must not raise.
    """

    def on_output(self, raw: bytes, at: float) -> None:
        """Take bytes the child wrote to its terminal (already on the user's screen)."""

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        """Take bytes the user typed; ``hidden`` when the child's terminal had echo off
        in canonical mode (a password prompt)."""

    def on_resize(self, size: TermSize, at: float) -> None:
        """Take a new terminal size, already passed on to the child."""
