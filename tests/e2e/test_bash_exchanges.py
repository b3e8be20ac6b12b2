"""A real bash in a real pty: its txt export and the exchanges rebuilt from its screen.

The txt export keeps each line the terminal showed, a command run again included; the
exchanges rebuilt from bash's screen (show, search) never hold a secret's marker cut short
or a key's escape sequence, and a secret has the name it has in the recording.
"""

from __future__ import annotations

import json
import os

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, wait_for_background, wait_until


def _bash() -> PtyHarness:
    env = dict(os.environ, PS1="$ ", INPUTRC="/etc/inputrc", TERM="xterm-256color")  # Home is \e[1~ there
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


TOKEN = "ghp_R7kQ2mZx9LpV4nWbQQ8TcY3sHd6FgJ1aEu5oKi"
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"


def test_exchanges_rebuilt_from_bash_keep_markers_whole_no_key_codes_and_one_name(home: Paths) -> None:
    harness = _bash()
    _run(harness, [b"echo ", *[c.encode() for c in TOKEN], *[b"\x1b[D"] * 21, b"\x7f", b"\x7f", b"\r"])
    _run(harness, [*[c.encode() for c in 'password = "hunter2hunter2"'], b"\x1b[1~\x0b", *[c.encode() for c in "echo cleared"], b"\r"])
    _run(harness, [*[c.encode() for c in f"echo aws_secret_access_key={AWS}"], b"\r"])
    harness.write(b"exit\r")
    assert harness.finish(60) == 0
    wait_for_background(home)
    exported = invoke_sk("export", "--last", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    got = [(e["prompt"], e["answer"]) for e in json.loads(exported.stdout)["exchanges"]]
    aws = "aws_secret_access_key=[REDACTED:aws-secret-access-key]"  # the name the recording gives it
    assert got == [
        ("echo [REDACTED:github-token]", "[REDACTED:github-token]"),  # the marker whole, the answer kept
        ("echo cleared", "cleared"),  # Home and Ctrl-K applied, no key's escape sequence left
        (f"echo {aws}", aws),
        ("exit", "exit"),
    ], got
    cast = invoke_sk("export", "--last", "--format", "cast").stdout.decode()
    assert aws in cast and "[REDACTED:secret]" not in cast
    shown = invoke_sk("show", "--last").stdout.decode()
    assert "> echo cleared" in shown and f"< {aws}" in shown and "[REDACTED:secret]" not in shown, shown
