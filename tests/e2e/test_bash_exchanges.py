"""A real bash in a real pty: its txt export and the exchanges rebuilt from its screen.

The txt export keeps each line the terminal showed, a command run again included; the
exchanges rebuilt from bash's screen (show, search) never hold a secret's marker cut short
or a key's escape sequence, and a secret has the name it has in the recording.
"""

from __future__ import annotations

import os

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, wait_until


def _bash() -> PtyHarness:
    env = dict(os.environ, PS1="$ ", INPUTRC="/dev/null", TERM="xterm-256color")
    harness = PtyHarness.start([*SK, "run", "--", "bash", "--norc", "-i"], env=env)
    harness.expect(b"$ ", 30)
    return harness


def _type(harness: PtyHarness, keys: list[bytes]) -> None:
    """Type ``keys`` one at a time, each once the program has answered the one before."""
    for key in keys:
        seen = len(harness.output)
        harness.write(key)
        wait_until(lambda: harness.read_some(0.05) or len(harness.output) > seen)


def _run(harness: PtyHarness, keys: list[bytes]) -> None:
    harness.output.clear()
    _type(harness, keys)
    harness.expect(b"$ ", 30)


def test_a_command_run_three_times_is_in_the_txt_export_three_times(home: Paths) -> None:
    harness = _bash()
    for _ in range(3):
        _run(harness, [b"echo same-line\r"])
    harness.write(b"exit\r")
    assert harness.finish(60) == 0
    txt = invoke_sk("export", "--last", "--format", "txt")
    assert txt.returncode == 0, txt.stderr
    lines = txt.stdout.decode().splitlines()
    assert lines.count("$ echo same-line") == 3 and lines.count("same-line") == 3, lines
