"""A child killed with terminal modes on: shellkeep switches them off on the user's terminal.

Each case runs ``shellkeep run -- python3 -c ...`` in a real pty under a shell: the child
switches modes on, prints a line, and kills itself with SIGKILL. What shellkeep writes to
the terminal between the child's last line and the shell's next one must switch those
modes off; a child that switches its modes off itself must get no extra bytes.
"""

from __future__ import annotations

import shlex
import sys

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness
from tests.mode_cases import CASES

SK_CMD = " ".join(shlex.quote(a) for a in SK)
_DONE = b"CHILD-DONE"
_AFTER = b"SHELL-AFTER"


def _child(on: bytes, off: bytes, *, kill: bool) -> str:
    code = (
        "import os, signal, sys\n"
        f"sys.stdout.buffer.write({on!r} + b'working\\r\\n' + {off!r} + b'{_DONE.decode()}\\r\\n')\n"
        "sys.stdout.flush()\n"
        + ("os.kill(os.getpid(), signal.SIGKILL)\n" if kill else "")
    )
    return shlex.join([sys.executable, "-c", code])


def _after_child(on: bytes, off: bytes, *, kill: bool) -> bytes:
    """Run the child under shellkeep in a pty; return what reached the terminal after its last line."""
    script = f"{SK_CMD} run -- {_child(on, off, kill=kill)}; echo {_AFTER.decode()} rc=$?"
    h = PtyHarness.start(["/bin/sh", "-c", script])
    h.finish()
    out = bytes(h.output)
    assert _AFTER in out, out
    tail = out[out.rindex(_DONE) + len(_DONE) : out.rindex(_AFTER)]
    assert (b"rc=137" in out) == kill, out
    return tail.replace(b"\r", b"").replace(b"\n", b"")


@pytest.mark.parametrize(("on", "off"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_modes_left_on_by_a_killed_child_are_switched_off(home: Paths, on: bytes, off: bytes) -> None:
    assert _after_child(on, b"", kill=True) == off


def test_several_modes_of_a_killed_full_screen_program_are_all_switched_off(home: Paths) -> None:
    on = b"\x1b[?1049h\x1b[?2004h\x1b[?1000;1006h\x1b[?25l\x1b=\x1b[>1u"
    tail = _after_child(on, b"", kill=True)
    for off in (b"\x1b[?1049l", b"\x1b[?2004l", b"\x1b[?1000l", b"\x1b[?1006l", b"\x1b[?25h", b"\x1b>", b"\x1b[<1u"):
        assert off in tail
    assert tail.index(b"\x1b[?1049l") < tail.index(b"\x1b[?25h")


@pytest.mark.parametrize(("on", "off"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_child_that_switches_its_modes_off_gets_no_extra_bytes(home: Paths, on: bytes, off: bytes) -> None:
    assert _after_child(on, off, kill=True) == b""
