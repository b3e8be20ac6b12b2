"""Markers on the screen and across streams: a marker narrower than its secret is never drawn
over, and the same secret gets the same name typed and shown, also shown bare later.

Real bash and a real python3 REPL in a real pty, recorded by a real ``shellkeep``; then the
screen rebuilt from the recording (terminal/) and the txt export are read.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, only_session

pytestmark = pytest.mark.timeout(180)

AWS = "AKIAFAKE7EXAMPLE2KEY"  # 20 columns, its marker 28
PASSWORD = "FAKEhunter2x"  # 12 columns, its marker 19


def _type_line(harness: PtyHarness, line: str, prompt: bytes) -> None:
    """Type ``line`` a key at a time (each echoed before the next), then Enter; wait for ``prompt``
    (each looked for in the output that came after the write only: an earlier prompt or the same
    character typed before is no answer, and under load the keys would run ahead)."""
    for ch in line:
        since = len(harness.output)
        harness.write(ch.encode())
        harness.expect(ch.encode(), 20, since=since)
    since = len(harness.output)
    harness.write(b"\r")
    harness.expect(prompt, 20, since=since)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_markers_in_a_typed_session_are_whole_on_the_screen_and_named_as_typed(home: Paths) -> None:
    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color", "INPUTRC": "/dev/null", "HISTFILE": "/dev/null"}
    harness = PtyHarness.start([*SK, "run", "--", "bash", "--norc", "--noprofile"], env=env)
    harness.expect(b"$ ", 20)
    _type_line(harness, 'password = "hunter2hunter2"', b"$ ")  # bash: "password: command not found"
    _type_line(harness, f"echo {AWS} aws-id", b"$ ")
    _type_line(harness, f"export DB_PASSWORD={PASSWORD}", b"$ ")
    _type_line(harness, "echo $DB_PASSWORD shown-bare", b"$ ")  # the value alone, no keyword before it
    _type_line(harness, "python3 -q", b">>> ")
    _type_line(harness, 'password = "hunter2hunter2"; print(len(password))', b">>> ")
    since = len(harness.output)
    harness.write(b"\x04")
    harness.expect(b"$ ", 20, since=since)
    harness.write(b"exit\r")
    assert harness.finish(60) == 0

    meta, _, events = only_session(home)
    typed = "".join(e.data for e in events if e.code == "i")
    shown = "".join(e.data for e in events if e.code == "o")
    for text in (typed, shown):
        assert "hunter2hunter2" not in text and AWS not in text and PASSWORD not in text
    # The same secret, the same name: typed, echoed, printed by bash, and printed bare by echo.
    assert set(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", typed)) == {"password", "aws-access-key-id"}
    assert set(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", shown)) == {"password", "aws-access-key-id"}
    assert "[REDACTED:password] shown-bare" in shown

    from shellkeep.terminal.replay import last_screen
    from tests.recordings import open_cast

    screen = [line.rstrip() for line in last_screen(open_cast(meta["cast"])).to_text().splitlines()]  # type: ignore[arg-type]
    exported = invoke_sk("export", "--last", "--format", "txt")
    assert exported.returncode == 0, exported.stderr.decode()
    for rows in (screen, exported.stdout.decode().splitlines()):
        text = "\n".join(rows)
        assert '$ password = "[REDACTED:password]"' in text, text  # not [REDACTED:pass"ord]
        assert "bash: password: [REDACTED:password] not found" in text, text
        assert f"$ echo [REDACTED:aws-access-key-id] aws-id" in text, text  # not [REDACTED:aws-access aws-id]
        assert "\n[REDACTED:aws-access-key-id] aws-id" in text, text
        assert "[REDACTED:password] shown-bare" in text, text
        assert '>>> password = "[REDACTED:password]"; print(len(password))' in text, text
        # Every marker is whole: no text drawn inside one.
        for marker in re.findall(r"\[REDACTED:[^\]\n]*\]?", text):
            assert marker in ("[REDACTED:password]", "[REDACTED:aws-access-key-id]"), (marker, text)
