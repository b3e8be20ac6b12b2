"""``shellkeep ps`` against real recordings in real ptys: live sessions and what each is doing.

Each program is a small python3 script that puts its pty in the mode it needs (a line read
after a prompt, key-by-key reads, a silent wait, a steady output) and is left running while
``ps`` is asked, until the state it should show appears (a wait on an event, never a sleep).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import PtyHarness, SK, invoke_sk, session_folders, wait_for_background, wait_until

PY = sys.executable

PROGRAMS = {
    # A line read after a prompt, canonical mode with echo: waiting.
    "prompt": "import sys; sys.stdout.write('ready\\nname? '); sys.stdout.flush(); sys.stdin.readline()",
    # Keys read one by one (cbreak: not canonical), as agent TUIs read them: waiting.
    "keys": "import sys, tty; tty.setcbreak(0); sys.stdout.write('press a key'); sys.stdout.flush(); sys.stdin.read(1)",
    # A silent wait in canonical mode, no prompt left: idle.
    "silent": "import sys; print('started', flush=True); sys.stdin.readline()",
    # Output every 0.2 s: working.
    "ticking": "import sys, time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.2)",
}
EXPECTED = {"prompt": "waiting", "keys": "waiting", "silent": "idle", "ticking": "working"}
FIRST_OUTPUT = {"prompt": b"name? ", "keys": b"press a key", "silent": b"started", "ticking": b"tick"}


def _ps() -> list[dict[str, object]]:
    result = invoke_sk("ps", "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert isinstance(listed, list)
    return listed


def _states() -> dict[str, object]:
    return {s["name"]: s["state"] for s in _ps()}


def test_ps_lists_live_sessions_with_what_each_is_doing(home: Paths) -> None:
    harnesses = {}
    try:
        for name, code in PROGRAMS.items():
            harnesses[name] = PtyHarness.start([*SK, "run", "--name", name, "--", PY, "-c", code])
            harnesses[name].expect(FIRST_OUTPUT[name])

        def settled() -> bool:
            for harness in harnesses.values():
                harness.read_some(0.01)  # keep the ticking one's pty drained
            return _states() == EXPECTED

        wait_until(settled, 30)
        listed = {s["name"]: s for s in _ps()}
        prompt = listed["prompt"]
        meta = json.loads(next(f for f in session_folders(home) if json.loads(f.read_text())["name"] == "prompt").read_text())
        assert prompt["id"] == meta["id"] and prompt["pid"] == meta["pid"] and prompt["child_pid"] == meta["child_pid"]
        assert prompt["agent"] == meta["agent"]
        assert prompt["project"] == meta["project"] and prompt["cwd"] == meta["cwd"]
        assert (prompt["canonical"], prompt["echo"], prompt["prompt"]) == (True, True, True)
        assert listed["keys"]["canonical"] is False
        assert (listed["silent"]["canonical"], listed["silent"]["prompt"]) == (True, False)
        assert isinstance(prompt["duration"], float) and prompt["duration"] >= 0
        cast = Path(str(meta["cast"]))
        assert 0 < int(prompt["size_bytes"]) <= cast.stat().st_size  # the recording only grows
        assert prompt["output_bytes"] == len(b"ready\r\nname? ")
        table = invoke_sk("ps")
        assert table.returncode == 0
        lines = table.stdout.decode().splitlines()
        assert lines[0].split() == ["ID", "AGENT", "PROJECT", "PID", "STATE", "DURATION", "SIZE", "TITLE", "PLAN"]
        assert prompt["title"] == " ".join([PY, "-c", *PROGRAMS["prompt"].split()])  # no prompt, no title: the command
        assert any(line.startswith(str(prompt["id"])) and " waiting " in line for line in lines[1:])
    finally:
        for harness in harnesses.values():
            try:
                os.kill(harness.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            harness.finish()
    wait_for_background(home)
    assert _ps() == []
    assert not list(home.projects.glob("*/*/live.json"))  # removed when each session ended


def test_a_recording_killed_with_kill_9_is_not_live(home: Paths) -> None:
    harness = PtyHarness.start([*SK, "run", "--name", "cut", "--", PY, "-c", PROGRAMS["prompt"]])
    harness.expect(b"name? ")
    wait_until(lambda: [s for s in _ps() if s["name"] == "cut"], 20)
    [meta_file] = session_folders(home)
    meta = json.loads(meta_file.read_text())
    wait_until((meta_file.parent / "live.json").exists, 20)  # written just after the session shows in ps
    os.kill(int(meta["pid"]), signal.SIGKILL)
    harness.finish()
    assert _ps() == []
    assert json.loads(meta_file.read_text())["status"] == "interrupted"  # recovered on the way
    assert not (meta_file.parent / "live.json").exists()  # the dead recorder's status went with it


def test_a_reused_pid_is_not_taken_for_the_recorder(home: Paths) -> None:
    """A live process of the recorded pid that started at another time is not the recorder,
    even when its command line says shellkeep."""
    harness = PtyHarness.start([*SK, "run", "--name", "real", "--", PY, "-c", PROGRAMS["prompt"]])
    harness.expect(b"name? ")
    [meta_file] = wait_until(lambda: session_folders(home), 20)  # type: ignore[misc]
    meta = json.loads(meta_file.read_text())
    impostor = subprocess.Popen([PY, "-c", "import sys; sys.stdin.read()", "shellkeep"], stdin=subprocess.PIPE)
    try:
        wait_until(lambda: b"shellkeep" in Path(f"/proc/{impostor.pid}/cmdline").read_bytes(), 10)
        fake = meta_file.parent.parent / "20200101-000000-000aa"
        fake.mkdir()
        (fake / "session.cast").write_bytes(b'{"version": 2, "width": 80, "height": 24}\n[0.1, "o", "hi"]\n')
        (fake / "meta.json").write_text(
            json.dumps({**meta, "id": fake.name, "name": "reused", "pid": impostor.pid, "cast": str(fake / "session.cast")})
        )
        names = [s["name"] for s in _ps()]
        assert names == ["real"]  # same pid start time recorded as the real recorder's: not the impostor's
        assert json.loads((fake / "meta.json").read_text())["status"] == "interrupted"
    finally:
        impostor.communicate(b"")
        harness.write(b"x\r")
        assert harness.finish() == 0
    wait_for_background(home)


def test_ps_with_no_live_session_says_so_on_stderr(home: Paths) -> None:
    result = invoke_sk("ps")
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr == b"no live sessions; run 'shellkeep ls --all' for past ones\n"
    assert json.loads(invoke_sk("ps", "--json").stdout) == []


@pytest.mark.parametrize("extra", [["--bogus"], ["SESSION"]], ids=["unknown-option", "extra-argument"])
def test_ps_refuses_bad_arguments_in_one_line(extra: list[str]) -> None:
    result = invoke_sk("ps", *extra)
    assert result.returncode == 2
    assert result.stderr.startswith(b"shellkeep: ") and result.stderr.count(b"\n") == 1


def test_a_shell_at_its_own_prompt_is_idle_and_what_it_runs_is_judged_as_a_program(home: Paths) -> None:
    # bash's readline reads key by key like an agent's TUI, but a shell at its own prompt asks
    # nothing: idle. A program it runs in the foreground, or its own read -p, is judged as
    # any program: a question waits, cat reading lines is idle.
    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color"}
    harness = PtyHarness.start([*SK, "run", "--name", "sh", "--", "bash", "--norc", "--noprofile"], env=env)
    try:
        harness.expect(b"$ ")
        # Keys read one by one, the terminal's modes put back after (bash leaves them as found).
        keys = (
            "import sys, termios, tty; saved = termios.tcgetattr(0); tty.setcbreak(0); "
            "sys.stdout.write('press a key'); sys.stdout.flush(); sys.stdin.read(1); "
            "termios.tcsetattr(0, termios.TCSADRAIN, saved)"
        )
        for command, shown, state in [
            (b"echo done-$((6*7))\r", b"done-42", "idle"),
            (f'{PY} -c "{keys}"\r'.encode(), b"press a key", "waiting"),
            (b"x", b"$ ", "idle"),  # the key the program reads: back at the shell's prompt
            (b"read -p 'name? ' answer\r", b"name? ", "waiting"),
            (b"bob\r", b"$ ", "idle"),
            (b"cat\r", b"cat\r\n", "idle"),
        ]:
            seen = harness.output.count(shown)
            harness.write(command)
            harness.expect(shown, times=seen + 1)
            wait_until(lambda: _states().get("sh") == state, 30)
    finally:
        harness.write(b"\x04exit\r")
        harness.finish()
    wait_for_background(home)
