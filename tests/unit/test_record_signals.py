"""While an ended session is stored, SIGTERM is held and delivered afterwards, never lost or fatal early."""

from __future__ import annotations

import signal
import subprocess
import sys

PROGRAM = r"""
import os, signal, sys
from shellkeep.app import after_run
old = after_run.shield_from_interrupts()
os.kill(os.getpid(), signal.SIGTERM)     # arrives while the session is being stored
os.kill(os.getpid(), signal.SIGINT)      # a second Ctrl-C: ignored
sys.stdout.write("stored\n"); sys.stdout.flush()
after_run.restore_signals(old)             # the held SIGTERM is delivered now
sys.stdout.write("not reached\n")
"""


def test_sigterm_while_storing_is_delivered_after_the_session_is_stored() -> None:
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, timeout=60)
    assert done.stdout == b"stored\n", done.stderr
    assert done.returncode == -signal.SIGTERM


def test_no_sigterm_while_storing_leaves_the_default_handler() -> None:
    program = (
        "import signal; from shellkeep.app import after_run; old = after_run.shield_from_interrupts(); "
        "after_run.restore_signals(old); print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stdout == b"True\n", done.stderr
