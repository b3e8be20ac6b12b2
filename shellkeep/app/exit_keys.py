"""Note when the user typed an exit key, in front of the recorder on the relay's sink.

A non-zero exit status soon after the user's own Ctrl-C, Ctrl-D or exit line is the user's
doing, not a crash (``app.supervise`` restarts only crashes).
"""

from __future__ import annotations

from shellkeep.termsize import TermSize

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.pty.sink import Sink

__all__ = ["EXIT_KEY_WINDOW_S", "ExitKeyWatch", "NullSink"]


EXIT_KEY_WINDOW_S = 5.0
"""A non-zero exit within this many seconds of the user's own exit key is the user's doing."""


_EXIT_LINES = frozenset({b"/exit", b"/quit", b"exit", b"quit", b":q", b":quit"})



class ExitKeyWatch:
    """A sink in front of the recorder that notes when the user last typed an exit key.

    Exit keys: Ctrl-C, Ctrl-D, or Enter ending a line that reads ``/exit``, ``/quit``,
    ``exit``, ``quit``, ``:q`` or ``:quit``. ``exit_key_at`` is float seconds since the spawn
    (the relay's clock), None until one is typed. Output and resizes go straight to the
    inner sink (no extra call on the hot path).
    """

    def __init__(self, inner: Sink) -> None:
        self._inner = inner
        self.on_output = inner.on_output
        self.on_resize = inner.on_resize
        self.exit_key_at: float | None = None
        self._line = b""

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        """Note an exit key in ``raw``, then pass it on."""
        if b"\x03" in raw or b"\x04" in raw:
            self.exit_key_at = at
        elif b"\r" in raw or b"\n" in raw:
            line = (self._line + raw).replace(b"\n", b"\r").split(b"\r")
            if any(part.strip() in _EXIT_LINES for part in line[:-1]):
                self.exit_key_at = at
            self._line = line[-1][-16:]
        else:
            self._line = (self._line + raw)[-16:]
        self._inner.on_input(raw, at, hidden)



class NullSink:
    """A sink for an unrecorded run: drops everything."""

    def on_output(self, raw: bytes, at: float) -> None:
        pass

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        pass

    def on_resize(self, size: TermSize, at: float) -> None:
        pass

