"""The terminal modes a program can leave switched on: (id, bytes that switch it on, bytes that
switch it off), from xterm's ctlseqs and the kitty keyboard protocol.

Shared by the unit tests of ``pty/modes.py`` and the e2e tests that leave each mode on in a
real pty (tests/e2e/test_terminal_modes.py).
"""

from __future__ import annotations

CASES = [
    ("alt-screen-1049", b"\x1b[?1049h", b"\x1b[?1049l"),
    ("alt-screen-47", b"\x1b[?47h", b"\x1b[?47l"),
    ("alt-screen-1047", b"\x1b[?1047h", b"\x1b[?1047l"),
    ("bracketed-paste", b"\x1b[?2004h", b"\x1b[?2004l"),
    ("mouse-1000", b"\x1b[?1000h", b"\x1b[?1000l"),
    ("mouse-1002", b"\x1b[?1002h", b"\x1b[?1002l"),
    ("mouse-1003", b"\x1b[?1003h", b"\x1b[?1003l"),
    ("mouse-sgr-1006", b"\x1b[?1006h", b"\x1b[?1006l"),
    ("mouse-urxvt-1015", b"\x1b[?1015h", b"\x1b[?1015l"),
    ("hidden-cursor", b"\x1b[?25l", b"\x1b[?25h"),
    ("app-keypad", b"\x1b=", b"\x1b>"),
    ("app-cursor-keys", b"\x1b[?1h", b"\x1b[?1l"),
    ("focus-events", b"\x1b[?1004h", b"\x1b[?1004l"),
    ("kitty-push", b"\x1b[>1u", b"\x1b[<1u"),
    ("kitty-push-twice", b"\x1b[>1u\x1b[>31u", b"\x1b[<2u"),
    ("kitty-set", b"\x1b[=5;1u", b"\x1b[=0;1u"),
    ("modify-other-keys", b"\x1b[>4;2m", b"\x1b[>4m"),
]
