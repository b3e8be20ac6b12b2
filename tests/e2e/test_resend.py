"""The unanswered prompt of a program without a transcript, put back by re-injection.

The program (``hold.py``, written by the tests) prints ``> ``, reads a line, logs it to a
JSONL file and prints ``heard: <line>``, except for a line starting with ``hold``: it is
logged and never answered (the program prints nothing more and stops reading). The session is killed with kill -9
(shellkeep and the program together) while that prompt waits; ``shellkeep resume`` builds the
exchanges from the recording, names the prompt, and re-injects the answered exchanges:

- with ``--resend`` the held prompt is the last item of the block, typed once;
- with ``--no-resend`` it is not in the block at all;
- ``--dry-run`` shows what would be typed and changes nothing, deciding as the run would
  (no terminal and no flag: not sent; a terminal and no flag: it would ask);
- ``--resend`` with nothing unanswered says so and resumes;
- a held prompt holding a secret is stored redacted and never sent again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.agents.generic import TypedLine, typed_lines
from shellkeep.app.unanswered import RESEND_INTRO
from shellkeep.errors import DataError
from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, load_session, meta_of, process_gone, program_runs, session_folders, wait_until

PY = sys.executable

HOLD = r'''
import json, sys, time
log_path = sys.argv[1]
sys.stdout.write("\x1b[?2004h" if len(sys.argv) > 2 else "")
with open(log_path, "a", encoding="utf-8") as log:
    log.write(json.dumps({"start": True}) + "\n")
    log.flush()
    while True:
        sys.stdout.write("> ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            break
        text = line.rstrip("\n")
        log.write(json.dumps({"line": text}) + "\n")
        log.flush()
        if text.startswith("hold"):
            sys.stdin.close()
            while True:
                time.sleep(3600)  # never answers: the test kills it
        sys.stdout.write("heard: " + text + "\n")
'''

ANSWERED = "remember apples"
HELD = "hold the figs please"
SECRET = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"


@pytest.fixture
def hold(tmp_path: Path) -> Path:
    """Return the path of the holding program."""
    path = tmp_path / "hold.py"
    path.write_text(HOLD)
    return path


def _killed_mid_turn(home: Paths, hold: Path, log: Path, held: str | None) -> Path:
    """Record one answered prompt and one held one (None: none), then kill -9 shellkeep and the
    program; return the folder."""
    harness = PtyHarness.start([*SK, "run", "--", PY, str(hold), str(log)], cols=100, rows=30)
    harness.expect(b"> ")
    harness.write(ANSWERED.encode() + b"\r")
    harness.expect(f"heard: {ANSWERED}\r\n> ".encode())
    if held is not None:
        harness.write(held.encode() + b"\r")
    wait_until(lambda: program_runs(log)[-1][-1:] == [held or ANSWERED], 20)  # the program has it
    wait_until(lambda: session_folders(home), 20)
    folder = session_folders(home)[0].parent
    # What was typed reaches the disk within about a second (redacted where it holds a secret).
    last = "hold" if held is not None else ANSWERED
    wait_until(lambda: any(line.text.startswith(last) for line in _typed(folder)), 20)
    wait_until(lambda: meta_of(folder).get("child_pid"), 20)
    meta = meta_of(folder)
    os.kill(meta["pid"], signal.SIGKILL)
    os.kill(meta["child_pid"], signal.SIGKILL)
    harness.finish()
    wait_until(lambda: process_gone(meta["child_pid"]), 20)
    return folder


def _typed(folder: Path) -> list[TypedLine]:
    """Return the lines typed in the recording on disk so far (none before its header is written)."""
    try:
        return typed_lines(load_session(folder)[2])
    except DataError:
        return []


def _resume(*args: str) -> PtyHarness:
    return PtyHarness.start([*SK, "resume", *args], cols=200, rows=30)


@pytest.mark.parametrize("resend", [True, False], ids=["resend", "no-resend"])
def test_the_held_prompt_is_the_last_item_of_the_block_only_with_resend(
    home: Paths, hold: Path, tmp_path: Path, resend: bool
) -> None:
    log = tmp_path / "hold.jsonl"
    folder = _killed_mid_turn(home, hold, log, HELD)

    harness = _resume("--resend" if resend else "--no-resend")
    harness.expect(b"heard: " + INJECTED_CONTEXT_PREFIX.encode(), timeout_s=30)
    harness.write(b"\x04")
    harness.finish()
    out = bytes(harness.output).decode(errors="replace")
    assert f'prompt never answered: "{HELD}"' in out
    assert ("sending it again once the agent is ready" in out) is resend
    assert ("not sent again: --no-resend" in out) is not resend

    [typed] = program_runs(log)[1]  # the block, typed as one line
    assert f"User: {ANSWERED} | Assistant: heard: {ANSWERED}" in typed
    if resend:
        assert typed.endswith(f" | {RESEND_INTRO} | User: {HELD}") and typed.count(HELD) == 1
    else:
        assert HELD not in typed
    old = meta_of(folder)
    assert old["status"] == "interrupted" and old["unanswered_prompt"]["index"] == 1


def test_dry_run_says_it_would_send_it_and_changes_nothing(home: Paths, hold: Path, tmp_path: Path) -> None:
    log = tmp_path / "hold.jsonl"
    folder = _killed_mid_turn(home, hold, log, HELD)
    harness = _resume("--dry-run", "--resend")
    assert harness.finish() == 0
    out = bytes(harness.output).decode(errors="replace")
    assert f'prompt never answered: "{HELD}" (would send it again)' in out
    assert "mode: inject" in out and out.rstrip().endswith(f"{RESEND_INTRO}\r\nUser: {HELD}")
    assert [p.parent for p in session_folders(home)] == [folder]
    assert len(program_runs(log)) == 1  # not started again


def test_a_held_prompt_with_a_secret_is_never_sent_again(home: Paths, hold: Path, tmp_path: Path) -> None:
    log = tmp_path / "hold.jsonl"
    _killed_mid_turn(home, hold, log, f"hold this token {SECRET}")
    harness = _resume("--resend")
    harness.expect(b"heard: " + INJECTED_CONTEXT_PREFIX.encode(), timeout_s=30)
    harness.write(b"\x04")
    harness.finish()
    out = bytes(harness.output).decode(errors="replace")
    assert 'prompt never answered: "hold this token [REDACTED:github-token]"' in out
    assert "not sent again: it holds a redacted secret; type it again yourself" in out
    [typed] = program_runs(log)[1]
    assert "hold this token" not in typed and SECRET not in typed


def test_without_a_terminal_or_a_flag_it_is_not_sent_and_the_banner_says_how(
    home: Paths, hold: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hold.jsonl"
    _killed_mid_turn(home, hold, log, HELD)
    done = subprocess.run([*SK, "resume"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert f'prompt never answered: "{HELD}" (not sent again; pass --resend to send it)' in done.stderr
    assert "send it again once the agent is ready?" not in done.stderr  # nothing asked
    assert all(HELD not in line for line in program_runs(log)[1])


def test_dry_run_says_what_the_run_would_do_with_no_flag_with_and_without_a_terminal(
    home: Paths, hold: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hold.jsonl"
    _killed_mid_turn(home, hold, log, HELD)
    piped = subprocess.run([*SK, "resume", "--dry-run"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert f'prompt never answered: "{HELD}" (not sent again; pass --resend to send it)' in piped.stderr
    assert "mode: inject" in piped.stdout and HELD not in piped.stdout and "send again" not in piped.stdout

    harness = _resume("--dry-run")  # on a terminal the run asks first
    assert harness.finish() == 0
    out = bytes(harness.output).decode(errors="replace")
    assert f'prompt never answered: "{HELD}" (would ask to send it again; --resend sends it, --no-resend never)' in out
    assert out.rstrip().endswith(f"would ask first whether to send again: {HELD}") and out.count(HELD) == 2
    assert "would send again" not in out and RESEND_INTRO not in out
    assert len(program_runs(log)) == 1  # not started again


def test_resend_on_a_session_with_nothing_unanswered_says_so_and_resumes(home: Paths, hold: Path, tmp_path: Path) -> None:
    log = tmp_path / "hold.jsonl"
    folder = _killed_mid_turn(home, hold, log, None)
    harness = _resume("--resend")
    harness.expect(f"nothing to send again: session {folder.name} has no unanswered prompt".encode(), timeout_s=30)
    harness.expect(b"heard: " + INJECTED_CONTEXT_PREFIX.encode(), timeout_s=30)
    harness.write(b"\x04")
    assert harness.finish() == 0
    assert "prompt never answered" not in bytes(harness.output).decode(errors="replace")
    [typed] = program_runs(log)[1]
    assert f"User: {ANSWERED} | Assistant: heard: {ANSWERED}" in typed and RESEND_INTRO not in typed
