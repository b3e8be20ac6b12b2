"""Track the terminal modes a child switches on, and give the bytes that switch them off.

A program that dies (kill -9, a crash) while it has the user's terminal in the alternate
screen, with mouse reporting or bracketed paste on, or the cursor hidden, leaves the shell
after it unusable. ``ModeTracker`` watches the child's output for the sequences that switch
these modes on and off and, at the end, ``reset_bytes`` gives the sequences that switch off
what was left on, and nothing else (as asciinema does, only what was seen is undone).

Tracked (xterm's ctlseqs, invisible-island.net/xterm/ctlseqs/ctlseqs.html, and the kitty
keyboard protocol, sw.kovidgoyal.net/kitty/keyboard-protocol):

- DEC private modes ``CSI ? Pm h`` / ``CSI ? Pm l``, several ``Pm`` allowed: alternate
  screen 1049, 1047, 47; bracketed paste 2004; mouse 9, 1000, 1001, 1002, 1003, 1005, 1006,
  1015, 1016; focus events 1004; cursor keys 1 (DECCKM); synchronized output 2026; hidden
  cursor 25 (``l`` is the "on" state here: it is undone with ``CSI ? 25 h``);
- application keypad ``ESC =`` (undone by ``ESC >``);
- kitty keyboard flags: ``CSI > N u`` pushes, ``CSI < N u`` pops N (1 when absent); what is
  still pushed is popped; ``CSI = N ; M u`` setting flags without a push is undone with
  ``CSI = 0 ; 1 u``;
- xterm modifyOtherKeys ``CSI > 4 ; N m`` with N > 0 (undone by ``CSI > 4 m``, the
  terminal's own default).

Cost: a read without ESC is one ``bytes.find``; with ESC, one regex scan in C. A sequence
cut between two reads is carried over (at most ``_MAX_CARRY`` bytes).
"""

from __future__ import annotations

import re

_DEC_MODES = (1, 9, 25, 47, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 1047, 1049, 2004, 2026)
_OFF_LAST = (1049, 1047, 47, 25)  # leave the alternate screen, then show the cursor, after the rest
_INVERTED = frozenset({25})  # "on" (hidden) is ``l``
_MAX_CARRY = 32

# One of: CSI ? Pm h|l · ESC = · ESC > · CSI > N u · CSI < N u · CSI = N ; M u · CSI > 4 ; N m
_SEQUENCE = rb"\x1b(?:\[(?:\?([\d;]*)([hl])|([<>=])([\d;]*)([um]))|([=>]))"
_SEQUENCE_WHOLE = rb"\x1b(?:\[(?:\?[\d;]*[hl]|[<>=][\d;]*[um])|[=>])"  # the same, without groups

_compiled: tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]] | None = None


def _patterns() -> tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]]:
    """Return (finder of whole sequences, parser of one, start of one cut at a read's end)."""
    global _compiled
    if _compiled is None:
        _compiled = (
            re.compile(_SEQUENCE_WHOLE),
            re.compile(_SEQUENCE),
            re.compile(rb"\x1b(?:\[(?:[?<>=][\d;]*)?)?"),
        )
    return _compiled


class ModeTracker:
    """Follow the modes switched by a stream of terminal output; see the module doc.

    ``feed`` takes every read in order (it never raises); ``reset_bytes`` returns the
    sequences that switch off what is still on (b"" when nothing is).
    """

    __slots__ = ("_dec", "_keypad", "_kitty_pushed", "_kitty_set", "_other_keys", "_carry")

    def __init__(self) -> None:
        self._dec: dict[int, bool] = {}
        self._keypad = False
        self._kitty_pushed = 0
        self._kitty_set = False
        self._other_keys = False
        self._carry = b""

    def feed(self, raw: bytes) -> None:
        """Take one read of the child's output."""
        if self._carry:
            raw = self._carry + raw
            self._carry = b""
        elif raw.find(b"\x1b") < 0:
            return
        finder, pattern, partial = _patterns()
        found = finder.findall(raw)
        if len(found) > 1:
            # Only the last of each distinct setter counts (kitty pushes and pops count up and
            # down, so those are taken one by one, in order): a TUI that toggles
            # synchronized output and the cursor every frame costs one pass in C.
            last = dict(zip(found, range(len(found))))
            if len(last) < len(found) and not any(seq[2:3] in (b"<", b">") and seq[-1:] == b"u" for seq in last):
                found = sorted(last, key=last.__getitem__)
        for seq in found:
            match = pattern.fullmatch(seq)
            if match is not None:
                self._apply(match)
        tail = raw.rfind(b"\x1b", max(0, len(raw) - _MAX_CARRY))
        if tail >= 0 and partial.fullmatch(raw, tail):
            self._carry = raw[tail:]

    def _apply(self, m: re.Match[bytes]) -> None:
        params, final, lead, numbers, letter, keypad = m.groups()
        if keypad is not None:
            self._keypad = keypad == b"="
        elif final is not None:
            on = final == b"h"
            for part in params.split(b";"):
                if part.isdigit() and int(part) in _DEC_MODES:
                    mode = int(part)
                    self._dec[mode] = on != (mode in _INVERTED)
        elif letter == b"u":
            first = numbers.split(b";")[0]
            count = int(first) if first.isdigit() else (0 if lead == b">" else 1)
            if lead == b">":
                self._kitty_pushed += 1
            elif lead == b"<":
                self._kitty_pushed = max(0, self._kitty_pushed - max(count, 1))
            else:
                self._kitty_set = count != 0
        elif lead == b">":  # CSI > Pp ; Pv m: xterm's key modifier options
            parts = numbers.split(b";")
            if parts[0] == b"4":
                self._other_keys = len(parts) > 1 and parts[1].isdigit() and int(parts[1]) > 0

    def reset_bytes(self) -> bytes:
        """Return the sequences that switch off every tracked mode still on."""
        out: list[bytes] = []
        if self._kitty_pushed:
            out.append(b"\x1b[<%du" % self._kitty_pushed)
        if self._kitty_set:
            out.append(b"\x1b[=0;1u")
        if self._other_keys:
            out.append(b"\x1b[>4m")
        if self._keypad:
            out.append(b"\x1b>")
        on = [mode for mode, is_on in self._dec.items() if is_on]
        for mode in sorted(on, key=lambda m: (m in _OFF_LAST, _OFF_LAST.index(m) if m in _OFF_LAST else m)):
            out.append(b"\x1b[?%d%s" % (mode, b"h" if mode in _INVERTED else b"l"))
        return b"".join(out)
