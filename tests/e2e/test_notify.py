"""Notifications (app/notify.py, app/notifiers.py) from real recordings in real ptys.

A real ``http.server`` on 127.0.0.1 receives the POSTs; the programs are small python3
scripts that print a prompt and wait, or end. Every wait is on an event (a request
received, a file written, text on the screen), never a sleep; the waiting delay is set tiny.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import PtyHarness, SK, invoke_sk, run_sk, session_folders, wait_for_background, wait_until
from tests.receiver import Receiver, configure_notify as _configure

PY = sys.executable
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token the built-in rules catch
# A line read after a prompt that holds a secret: canonical mode with a prompt, so waiting.
PROMPT = (
    "import sys; sys.stdout.write('working on it\\ntoken " + SECRET + " ok? '); "
    "sys.stdout.flush(); sys.stdin.readline(); print('bye')"
)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as server:
        yield server


def _named(home: Paths, name: str) -> dict[str, object]:
    for folder in session_folders(home):
        meta = json.loads(folder.read_text())
        if meta["name"] == name:
            return meta  # type: ignore[no-any-return]
    return {}


def _meta(home: Paths) -> dict[str, object]:
    [meta_file] = wait_until(lambda: session_folders(home), 20)  # type: ignore[misc]
    return json.loads(meta_file.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize("fmt", ["text", "json"], ids=str)
def test_a_program_waiting_at_a_prompt_is_posted_once_with_its_secret_redacted(
    home: Paths, receiver: Receiver, fmt: str
) -> None:
    _configure(home, url=receiver.url, format=fmt, waiting_delay_s=0.2, events=["waiting"])
    harness = PtyHarness.start([*SK, "run", "--name", "asks", "--", PY, "-c", PROMPT])
    try:
        harness.expect(b"ok? ")
        [request] = receiver.wait_for(1)
        meta = _meta(home)
        assert request.path == "/topic"
        if fmt == "text":
            assert request.headers["content-type"].startswith("text/plain")
            assert request.headers["title"] == f"{meta['agent']} is waiting for you (asks)"
            assert request.headers["tags"] == "bell,shellkeep"
            line, facts = request.body.decode().split("\n")
            assert facts == f"session {meta['id']}"
        else:
            assert request.headers["content-type"] == "application/json"
            body = json.loads(request.body)
            assert set(body) == {"session", "name", "project", "project_root", "agent", "state", "hint", "last_line",
                                 "exit_code", "signal", "title"}
            assert (body["exit_code"], body["signal"]) == (None, None)  # still running
            assert (body["session"], body["name"], body["project"]) == (meta["id"], "asks", meta["project"])
            assert (body["agent"], body["state"], body["hint"]) == (meta["agent"], "waiting", None)
            assert body["project_root"] == meta["project_root"]
            line = body["last_line"]
        assert line.startswith("token [REDACTED") and line.endswith("ok?")
        assert SECRET not in request.body.decode() and SECRET[:12] not in request.body.decode()
    finally:
        harness.write(b"\r")
        assert harness.finish() == 0
    wait_for_background(home)
    assert len(receiver.requests) == 1  # once per waiting spell; "finished" is not among the events


def test_finished_and_killed_sessions_are_posted(home: Paths, receiver: Receiver) -> None:
    _configure(home, url=receiver.url, format="json", events=["finished", "killed"])
    assert run_sk("run", "--name", "done", "--", PY, "-c", "print('all good'); raise SystemExit(3)").returncode == 3
    [finished] = receiver.wait_for(1)
    body = json.loads(finished.body)
    assert (body["name"], body["state"], body["last_line"]) == ("done", "finished", "all good")
    assert (body["session"], body["exit_code"], body["signal"]) == (_named(home, "done")["id"], 3, None)

    harness = PtyHarness.start([*SK, "run", "--name", "cut", "--", PY, "-c", "print('started', flush=True); input()"])
    harness.expect(b"started")
    child = wait_until(lambda: _named(home, "cut").get("child_pid"), 20)
    os.kill(int(child), signal.SIGKILL)  # type: ignore[call-overload]
    assert harness.finish() == 128 + signal.SIGKILL
    requests = receiver.wait_for(2)
    killed = json.loads(requests[1].body)
    assert (killed["name"], killed["state"]) == ("cut", "killed")
    assert (killed["session"], killed["exit_code"], killed["signal"]) == (_named(home, "cut")["id"], 137, 9)
    wait_for_background(home)


def test_a_text_post_of_a_killed_session_says_its_session_and_signal(home: Paths, receiver: Receiver) -> None:
    _configure(home, url=receiver.url, format="text", events=["killed"])
    harness = PtyHarness.start([*SK, "run", "--name", "cut", "--", PY, "-c", "print('started', flush=True); input()"])
    harness.expect(b"started")
    child = wait_until(lambda: _named(home, "cut").get("child_pid"), 20)
    os.kill(int(child), signal.SIGKILL)  # type: ignore[call-overload]
    assert harness.finish() == 128 + signal.SIGKILL
    [request] = receiver.wait_for(1)
    assert request.headers["title"].endswith("was killed (cut)")
    assert request.body.decode() == f"started\nsession {_named(home, 'cut')['id']}, killed by signal 9 (SIGKILL)"
    wait_for_background(home)


def test_the_command_notifier_gets_the_facts_in_its_environment(home: Paths, tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    script = tmp_path / "record-env"
    script.write_text(
        f"#!{PY}\nimport json, os, sys\n"
        f"json.dump({{k: v for k, v in os.environ.items() if k.startswith('SHELLKEEP_')}} | {{'argv': sys.argv[1:]}}, "
        f"open({str(out)!r} + '.tmp', 'w'))\nos.replace({str(out)!r} + '.tmp', {str(out)!r})\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    _configure(home, command=f"{script} --from shellkeep", events=["finished"])
    assert run_sk("run", "--name", "cmd", "--", PY, "-c", f"print('key {SECRET}'); raise SystemExit(5)").returncode == 5
    wait_until(out.exists, 30)
    env = json.loads(out.read_text())
    meta = _meta(home)
    assert env["argv"] == ["--from", "shellkeep"]  # split like a shell's words, no shell
    assert env["SHELLKEEP_SESSION"] == meta["id"]
    assert env["SHELLKEEP_PROJECT"] == meta["project_root"]
    assert env["SHELLKEEP_AGENT"] == meta["agent"]
    assert env["SHELLKEEP_STATE"] == "finished"
    assert (env["SHELLKEEP_NAME"], env["SHELLKEEP_EXIT_CODE"], env["SHELLKEEP_SIGNAL"]) == ("cmd", "5", "")
    assert env["SHELLKEEP_LAST_LINE"].startswith("key [REDACTED") and SECRET not in json.dumps(env)
    assert "SHELLKEEP_NOTIFICATION" not in env
    wait_for_background(home)


def test_the_desktop_notifier_runs_notify_send_from_path(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    out = tmp_path / "argv.json"
    fake = bin_dir / "notify-send"
    fake.write_text(
        f"#!{PY}\nimport json, os, sys\njson.dump(sys.argv[1:], open({str(out)!r} + '.tmp', 'w'))\n"
        f"os.replace({str(out)!r} + '.tmp', {str(out)!r})\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    _configure(home, desktop=True, events=["finished"])
    assert run_sk("run", "--name", "desk", "--", PY, "-c", "print('the end')").returncode == 0
    wait_until(out.exists, 30)
    meta = _meta(home)
    assert json.loads(out.read_text()) == [
        "--app-name=shellkeep", f"{meta['agent']} finished (desk)", f"the end\nsession {meta['id']}, exit code 0"
    ]
    wait_for_background(home)


def test_a_failing_url_is_logged_in_one_line_and_the_command_still_runs(home: Paths, tmp_path: Path) -> None:
    out = tmp_path / "ran"
    # Port 9 (discard) on loopback: nothing listens, the POST is refused at once.
    _configure(home, url="http://127.0.0.1:9/x", command=f"touch {out}", events=["finished"])
    assert run_sk("run", "--", "true").returncode == 0
    wait_until(out.exists, 30)  # "touch" runs with no shell: no shell syntax in it
    log_file = home.logs / "notify.log"
    # The file appears before its line is written: wait for the whole line, not the file.
    wait_until(lambda: log_file.exists() and log_file.read_text().endswith("\n"), 30)
    [line] = log_file.read_text().splitlines()
    assert " finished: url: " in line and "refused" in line.lower()
    assert stat.S_IMODE(log_file.stat().st_mode) == 0o600
    wait_for_background(home)


def test_no_notifier_configured_spawns_nothing(home: Paths) -> None:
    """Events alone (no desktop, url or command) load no notify module in the recording
    process, so nothing can be spawned; one notifier on loads it."""
    _configure(home, events=["waiting", "finished"], waiting_delay_s=0)
    assert _notify_modules() == []
    _configure(home, events=["finished"], command="true")
    assert _notify_modules() == ["shellkeep.app.notify"]
    wait_for_background(home)
    assert not (home.logs / "notify.log").exists()


def _notify_modules() -> list[str]:
    """Return the notification modules a recording of ``true`` loads (the notifiers run in a
    process of their own, whose imports are not seen here)."""
    import subprocess

    found = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "shellkeep", "run", "--", "true"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert found.returncode == 0
    names = [line.rsplit("|", 1)[1].strip() for line in found.stderr.decode().splitlines() if line.startswith("import time:")]
    return sorted(n for n in names if n.startswith("shellkeep.app.notif"))


@pytest.mark.parametrize(
    ("setting", "expected"),
    [({"url": "ftp://host/x"}, "notify.url must be an http:// or https:// URL"), ({"command": "  "}, "notify.command must be a command line")],
    ids=["url-scheme", "blank-command"],
)
def test_a_bad_notifier_setting_is_one_line_at_the_start_and_the_program_still_runs(
    home: Paths, setting: dict[str, object], expected: str
) -> None:
    _configure(home, events=["finished"], **setting)
    result = run_sk("run", "--", PY, "-c", "print('ran'); raise SystemExit(4)")
    assert result.returncode == 4  # the program's own status: a recording never refuses it
    [line] = result.stderr.decode().splitlines()
    assert line.startswith("shellkeep: invalid config in ") and expected in line and "Traceback" not in line
    assert b"ran" in result.stdout
    wait_for_background(home)
    assert not (home.logs / "notify.log").exists()  # no notifier ran with the bad setting


@pytest.mark.parametrize("shell", [["bash", "--norc", "--noprofile"], ["dash"]], ids=["bash-readline", "dash-canonical"])
def test_a_plain_shell_at_its_prompt_is_not_notified_but_a_question_it_asks_is(home: Paths, receiver: Receiver, shell: list[str]) -> None:
    # dash has no line editor: at its own prompt it reads in canonical mode, as its read -p does.
    _configure(home, url=receiver.url, format="json", waiting_delay_s=0.2, events=["waiting"])
    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color"}
    harness = PtyHarness.start([*SK, "run", "--name", "sh", "--", *shell], env=env)
    try:
        harness.expect(b"$ ")
        harness.write(b"echo done-$((6*7))\r")
        harness.expect(b"done-42")
        harness.expect(b"$ ", times=2)  # back at its own prompt: idle, not a waiting spell
        wait_until(lambda: _states_of(home).get("sh") == "idle", 30)
        harness.write(b"read -p 'your name? ' answer\r")
        harness.expect(b"your name? ")
        [request] = receiver.wait_for(1)  # the first notification is the question, not the prompt
        body = json.loads(request.body)
        assert (body["state"], body["last_line"]) == ("waiting", "your name?")
        harness.write(b"bob\r")
        harness.expect(b"$ ", times=3)
    finally:
        harness.write(b"exit\r")
        harness.finish()
    wait_for_background(home)


def _states_of(home: Paths) -> dict[str, object]:
    result = invoke_sk("ps", "--json")
    return {s["name"]: s["state"] for s in json.loads(result.stdout)} if result.returncode == 0 else {}
