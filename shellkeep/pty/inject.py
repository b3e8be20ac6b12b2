"""Type a block of text into the child once its output has settled (resume's re-injection).

Knows bytes only: it watches the child's output for quiet and for bracketed paste mode
(``ESC[?2004h`` on, ``ESC[?2004l`` off, xterm ctlseqs "Bracketed Paste Mode") and hands the
relay the bytes to write, once.
"""

from __future__ import annotations

PASTE_ON = b"\x1b[?2004h"
PASTE_OFF = b"\x1b[?2004l"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
LINE_JOINER = b" | "
"""What a line break of the block becomes outside a paste (an Enter would submit each line)."""


class SettledInjection:
    """Type ``payload`` when the child has been quiet for ``settle_s`` after its first output.

    Inside bracketed paste (the child switched it on) the block is sent as one paste with
    its line breaks; otherwise its line breaks become ``LINE_JOINER``, so the block is still
    submitted once, as one line. Enter follows when ``submit``. Escape and other control
    characters in the payload are dropped (the paste could otherwise be ended early).

    Args:
        payload: the text to type, UTF-8 bytes, lines separated by ``\\n``.
        settle_s: float seconds of no output that count as "ready for input".
        silent_s: float seconds after the start after which a child that printed nothing
            at all is taken as ready.
        max_wait_s: float seconds after which the payload is sent even if output never settles.
        submit: press Enter after the block.

    Times passed to ``on_output`` and ``poll`` are float seconds since the child started.
    """

    def __init__(
        self,
        payload: bytes,
        *,
        settle_s: float = 0.8,
        silent_s: float = 5.0,
        max_wait_s: float = 30.0,
        submit: bool = True,
    ) -> None:
        self.payload = _printable(payload)
        self.settle_s = settle_s
        self.silent_s = silent_s
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
        """Observe child output: the time of its last byte, and bracketed paste switches.

        A switch cut between two reads is still seen.
        """
        self._seen_output = True
        self._last_output_at = at
        window = self._tail + raw
        on = window.rfind(PASTE_ON)
        off = window.rfind(PASTE_OFF)
        if on != -1 or off != -1:
            self.bracketed = on > off
        self._tail = window[-(len(PASTE_ON) - 1) :]

    def is_ready(self, at: float) -> bool:
        """Return whether the child counts as waiting for input at ``at``."""
        if self._seen_output:
            return at - self._last_output_at >= self.settle_s or at >= self.max_wait_s
        return at >= self.silent_s

    def poll(self, at: float) -> bytes | None:
        """Return the bytes to write now (once), or None while the child is not ready."""
        if self.done or not self.is_ready(at):
            return None
        self.done = True
        enter = b"\r" if self.submit else b""
        if self.bracketed:
            return PASTE_START + self.payload + PASTE_END + enter
        return self.payload.replace(b"\n", LINE_JOINER) + enter


def _printable(payload: bytes) -> bytes:
    """Return ``payload`` with line breaks as ``\\n`` and other C0 controls and DEL removed (tabs kept)."""
    text = payload.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    keep = {0x09, 0x0A}
    return bytes(b for b in text if b >= 0x20 and b != 0x7F or b in keep)
