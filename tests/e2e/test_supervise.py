"""``shellkeep run --restart`` and ``record.detail`` in real ptys (app/supervise.py, app/record.py).

The crashing programs are small shell scripts that count their starts in a file: a real
SIGSEGV (``kill -SEGV $$``) and a real non-zero exit, then a clean end. Waits are on text
on the screen and on files, never on time.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import PtyHarness, SK, invoke_sk, load_session, run_sk, session_folders, wait_for_background, wait_until

PY = sys.executable

CRASH_TWICE = (
    'n=$(cat "$1" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$1"; echo "start $n"; '
    'if [ $n -eq 1 ]; then kill -SEGV $$; fi; if [ $n -eq 2 ]; then exit 3; fi; echo "all good"'
)

QUIT_ON_CTRL_C = r"""
import signal, sys
signal.signal(signal.SIGINT, lambda *_: sys.exit(1))  # before 'ready': a Ctrl-C right after it exits 1 too
print("ready", flush=True)
sys.stdin.readline()
"""


def _metas(home: Paths) -> list[dict[str, object]]:
    return [load_session(meta.parent)[0] for meta in session_folders(home)]


def _run(*args: str, env: dict[str, str] | None = None) -> PtyHarness:
    return PtyHarness.start([*SK, "run", *args], cols=100, rows=30, env=env)


def test_a_program_that_crashes_twice_is_resumed_twice_and_show_has_the_chain(home: Paths, tmp_path: Path) -> None:
    count = tmp_path / "starts"
    harness = _run("--restart", "on-failure", "--", "sh", "-c", CRASH_TWICE, "crash", str(count))
    assert harness.finish(60) == 0
    screen = bytes(harness.output)
    assert b"crashed (signal 11 (SIGSEGV)); resuming session" in screen
    assert b"crashed (exit status 3); resuming session" in screen
    assert b"(restart 2 of 3; Ctrl-C stops)" in screen
    assert b"all good" in screen and count.read_text().strip() == "3"
    first, second, third = _metas(home)
    assert (first["signal"], first["status"], first["parent"], first["restart"]) == (11, "killed", None, 0)
    assert (second["exit_code"], second["parent"], second["restart"]) == (3, first["id"], 1)
    assert (third["exit_code"], third["parent"], third["restart"]) == (0, second["id"], 2)
    wait_for_background(home)
    shown = invoke_sk("show", str(third["id"]))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    assert re.search(rf"^resumes +{second['id']} \(supervised restart 2\)$", text, re.M)
    chain = text.split("resume chain (oldest first):\n")[1].splitlines()[:3]
    assert [line.lstrip(" *").split()[0] for line in chain] == [first["id"], second["id"], third["id"]]
    assert "restart 2" in chain[2] and "killed" in chain[0]


def test_the_number_of_restarts_is_respected(home: Paths) -> None:
    harness = _run("--restart=on-failure:2", "--", "sh", "-c", "exit 3")
    assert harness.finish(60) == 3  # the last run's own status
    assert len(_metas(home)) == 3
    assert b"crashed again (exit status 3); gave up after 2 restarts" in bytes(harness.output)


def test_record_restart_in_the_project_file_supervises_plain_runs(home: Paths, tmp_path: Path) -> None:
    (tmp_path / ".shellkeep.toml").write_text('[record]\nrestart = "on-failure:1"\n')
    command = f"cd {shlex.quote(str(tmp_path))} && exec {shlex.join(SK)} sh -c 'exit 4'"
    harness = PtyHarness.start(["sh", "-c", command], cols=100, rows=30)
    assert harness.finish(60) == 4
    assert len(_metas(home)) == 2
    assert b"(restart 1 of 1; Ctrl-C stops)" in bytes(harness.output)


def test_a_non_zero_exit_right_after_the_users_ctrl_c_is_not_restarted(home: Paths, tmp_path: Path) -> None:
    program = tmp_path / "quit.py"
    program.write_text(QUIT_ON_CTRL_C)
    harness = _run("--restart", "on-failure:3", "--", PY, str(program))
    harness.expect(b"ready")
    harness.write(b"\x03")
    assert harness.finish(60) == 1
    assert b"crashed" not in bytes(harness.output)
    [meta] = _metas(home)
    assert meta["exit_code"] == 1


def test_ctrl_c_during_the_pause_stops_supervising(home: Paths) -> None:
    harness = _run("--restart", "on-failure:5", "--", "sh", "-c", "exit 3")
    harness.expect(b"Ctrl-C stops)")
    harness.write(b"\x03")
    harness.expect(b"not restarting sh; resume it later with 'shellkeep resume ")
    assert harness.finish(60) == 3
    assert len(_metas(home)) == 1


def test_without_restart_a_crash_is_not_resumed(home: Paths) -> None:
    harness = _run("--", "sh", "-c", "kill -SEGV $$")
    assert harness.finish(60) == 139
    assert len(_metas(home)) == 1


def test_a_bad_restart_policy_is_one_line_and_exit_2(home: Paths) -> None:
    result = run_sk("run", "--restart", "always", "--", "true")
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1
    assert "--restart must be 'no', 'on-failure' or 'on-failure:N'" in result.stderr.decode()
    assert session_folders(home) == []


# -- record.detail -----------------------------------------------------------------------


NOTES = r"""
import sys
while True:
    sys.stdout.write("> ")
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    sys.stdout.write("heard: " + line)
"""


def _record_notes(home: Paths, tmp_path: Path, detail: str) -> Path:
    """Record a session of the notes program with ``record.detail = detail``; return its folder."""
    program = tmp_path / "notes.py"
    program.write_text(NOTES)
    env = {**os.environ, "SHELLKEEP_RECORD_DETAIL": detail}
    harness = _run("--", PY, str(program), env=env)
    harness.expect(b"> ")
    harness.write(b"remember apples\r")
    harness.expect(b"heard: remember apples")
    harness.write(b"\x04")
    assert harness.finish() == 0
    assert b"recording suspended" not in bytes(harness.output)  # nothing kept is not a failure
    [meta] = session_folders(home)
    return meta.parent


@pytest.mark.parametrize(
    ("detail", "files", "shown"),
    [
        ("full", {"meta.json", "session.cast.zst", "exchanges.jsonl"}, "full (recording, exchanges, metadata)"),
        ("conversation", {"meta.json", "exchanges.jsonl"}, "conversation (exchanges and metadata, no terminal recording)"),
        ("metadata", {"meta.json"}, "metadata only"),
    ],
    ids=["full", "conversation", "metadata"],
)
def test_detail_levels_store_what_they_say(home: Paths, tmp_path: Path, detail: str, files: set[str], shown: str) -> None:
    folder = _record_notes(home, tmp_path, detail)
    if detail != "metadata":
        wait_until(lambda: (folder / "exchanges.jsonl").exists(), 30)
    wait_for_background(home)
    kept = {p.name for p in folder.iterdir()}
    assert files <= kept and not ({"session.cast", "session.cast.zst", "exchanges.jsonl"} - files) & kept, kept
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["detail"] == detail and meta["output_bytes"] > 0
    show = invoke_sk("show", "--last")
    assert show.returncode == 0, show.stderr
    assert re.search(rf"^kept +{re.escape(shown)}$", show.stdout.decode(), re.M)
    if detail != "metadata":
        assert "remember apples" in show.stdout.decode()  # the exchange, kept without the recording
    listed = invoke_sk("ls").stdout.decode().splitlines()
    header, row = ([cell.strip() for cell in line.split("  ") if cell.strip()] for line in listed[:2])
    assert header[7] == "KEPT" and row[7] == detail
    as_json = json.loads(invoke_sk("ls", "--json").stdout)
    assert as_json[0]["detail"] == detail
    replay = invoke_sk("cat", "--last")
    if detail == "full":
        assert replay.returncode == 0 and b"heard: remember apples" in replay.stdout
    else:
        assert replay.returncode == 1 and replay.stderr.count(b"\n") == 1
        assert f"kept no terminal recording (record.detail = '{detail}')".encode() in replay.stderr


def test_resuming_a_session_without_recording_says_there_is_no_last_screen(home: Paths, tmp_path: Path) -> None:
    _record_notes(home, tmp_path, "metadata")
    wait_for_background(home)
    harness = PtyHarness.start([*SK, "resume", "--last"], cols=100, rows=30)
    harness.expect(b"> ")
    harness.write(b"\x04")
    assert harness.finish() == 0
    assert b"no last screen to redraw: session " in bytes(harness.output)
    assert b"kept its metadata only (record.detail)" in bytes(harness.output)
