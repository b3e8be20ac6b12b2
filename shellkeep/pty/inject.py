"""Type a block of text into the child once its output has settled (resume's re-injection).

Knows bytes only: it watches the child's output for quiet and for bracketed paste mode
(``ESC[?2004h`` on, ``ESC[?2004l`` off, xterm ctlseqs) and hands the relay the bytes to
write, once.
"""

from __future__ import annotations

PASTE_ON = b"\x1b[?2004h"
PASTE_OFF = b"\x1b[?2004l"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


class SettledInjection:
    """Inject ``payload`` when the child has been quiet for ``settle_s`` after its first output.

    Args:
        payload: the text to type, as bytes (newlines as ``\\n``; sent as ``\\r`` outside a paste).
        settle_s: float seconds of no output that count as "ready for input".
        max_wait_s: float seconds after which the payload is sent even if output never settles.
        submit: press Enter after the block.
    """

    def __init__(self, payload: bytes, *, settle_s: float = 0.8, max_wait_s: float = 30.0, submit: bool = True) -> None:
        self.payload = payload
        self.settle_s = settle_s
        self.max_wait_s = max_wait_s
        self.submit = submit
        self.bracketed = False
        self.done = False
        self._seen_output = False
        self._last_output_at = 0.0
        self._tail = b""

    @property
    def pending(self) -> bool:
        """Return whether the payload is still to be sent."""
        return not self.done

    def on_output(self, raw: bytes, at: float) -> None:
        """Observe child output: time of the last byte, and bracketed paste switches."""
        self._seen_output = True
        self._last_output_at = at
        window = self._tail + raw
        on = window.rfind(PASTE_ON)
        off = window.rfind(PASTE_OFF)
        if on != -1 or off != -1:
            self.bracketed = on > off
        self._tail = window[-(len(PASTE_ON) - 1) :]

    def poll(self, at: float) -> bytes | None:
        """Return the bytes to write now (once), or None; ``at`` is seconds since start."""
        if self.done:
            return None
        settled = self._seen_output and at - self._last_output_at >= self.settle_s
        if not settled and at < self.max_wait_s:
            return None
        self.done = True
        enter = b"\r" if self.submit else b""
        if self.bracketed:
            return PASTE_START + self.payload + PASTE_END + enter
        return self.payload.replace(b"\n", b"\r") + enter
