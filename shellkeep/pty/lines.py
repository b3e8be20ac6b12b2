"""Write piped input to the child's pty whole, lines longer than the line discipline holds included.

In canonical mode Linux's line discipline (n_tty) keeps at most 4095 bytes of a line not yet
ended and drops what comes after, up to the newline: ``printf '%5000s\\n' | script -c 'wc
-c'`` counts 4096 (util-linux script 2.38 writes the pipe to the pty as it is, and loses the
same bytes). A terminal's user cannot type such a line; a pipe easily sends one.

``LineWriter`` writes input as it comes, and while the child's pty is canonical it never
lets a line grow past ``MAX_LINE_BYTES``: at that length it writes the pty's end-of-file
character (VEOF). Inside a line VEOF is no end of file: it hands the bytes so far to the
child's ``read()`` as they are (nothing added, nothing echoed), and the line discipline holds
them, taking nothing more, until the child has read them (``write`` then blocks or takes
part). The child reads the same bytes in more than one ``read()``, as from a pipe. In raw
mode (a line editor, a TUI) nothing is added: there is no line to end.
"""

from __future__ import annotations

import os
import termios

__all__ = ["MAX_LINE_BYTES", "LineWriter"]

MAX_LINE_BYTES = 4095
"""The longest line n_tty keeps in canonical mode (N_TTY_BUF_SIZE - 1)."""

_LINE_ENDS = (b"\n", b"\r")  # \r ends a line too under ICRNL, the default


class LineWriter:
    """Write input to a pty master, cutting lines over ``MAX_LINE_BYTES`` with VEOF in canonical mode.

    ``line_bytes`` is how much of the current line the pty holds: bytes written since the
    last line end or VEOF.
    """

    def __init__(self, master: int) -> None:
        self.master = master
        self.line_bytes = 0

    def write(self, pending: bytearray) -> None:
        """Write what the pty takes of ``pending`` and remove it from the front.

        Does not block when the master is non-blocking; raises what ``os.write`` raises
        (BlockingIOError once nothing was taken, OSError).
        """
        veof = self._veof_if_canonical()
        while pending:
            if veof is None:
                n = os.write(self.master, pending)
                self._count(pending[:n])
                del pending[:n]
                return
            room = MAX_LINE_BYTES - self.line_bytes
            end = _line_end(pending, room + 1)
            if end >= 0 or len(pending) <= room:
                piece = bytes(pending[: end + 1]) if end >= 0 else bytes(pending)
                n = os.write(self.master, piece)
                self._count(piece[:n])
                del pending[:n]
                if n < len(piece):
                    return
                continue
            # The line would grow past what n_tty keeps: hand it over so far.
            n = os.write(self.master, bytes(pending[:room]) + veof)
            if n <= room:
                self.line_bytes += n
                del pending[:n]
                return
            del pending[:room]
            self.line_bytes = 0

    def _count(self, written: bytes | bytearray) -> None:
        last = max(written.rfind(end) for end in _LINE_ENDS)
        self.line_bytes = len(written) - last - 1 if last >= 0 else self.line_bytes + len(written)

    def _veof_if_canonical(self) -> bytes | None:
        try:
            attrs = termios.tcgetattr(self.master)
        except termios.error:
            return None
        if not attrs[3] & termios.ICANON:
            return None
        veof = attrs[6][termios.VEOF]
        veof = veof if isinstance(veof, bytes) else bytes([veof])
        return veof if veof != b"\x00" else None  # _POSIX_VDISABLE: no character to push with


def _line_end(data: bytearray, within: int) -> int:
    """Return the index of the first line end in ``data[:within]``, or -1."""
    found = [i for i in (data.find(end, 0, within) for end in _LINE_ENDS) if i >= 0]
    return min(found) if found else -1
