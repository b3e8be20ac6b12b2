"""Tests for the live status (store/live.py, capture/activity.py), the state rule of
``shellkeep ps`` (app/ps.py), the recorder's start time (store/session.py) and which sessions
``resume --all`` brings back (app/resume_all.py).

Sessions are real folders under the ``home`` fixture's ``SHELLKEEP_HOME``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from shellkeep.app.context import open_context
from shellkeep.app.ps import WORKING_WINDOW_S, LiveState, judge_state
from shellkeep.app.resume_all import plan_resume_all
from shellkeep.asciicast.model import Header
from shellkeep.capture.activity import OutputActivity, last_line, looks_like_prompt
from shellkeep.capture.recorder import Recorder
from shellkeep.store.live import LIVE_FILE, LiveStatus, read_live_status, remove_live_status, write_live_status
from shellkeep.store.paths import Paths
from shellkeep.store.session import (
    SessionMeta,
    boot_id,
    boot_time,
    host_name,
    is_interrupted,
    iso,
    process_start_ticks,
    write_meta,
)
from shellkeep.termsize import TermSize
from tests.helpers import wait_until
from tests.factory import make_session

NOW = 2_000_000_000.0


def _status(
    *,
    quiet_s: float,
    canonical: bool | None,
    echo: bool | None = True,
    prompt: bool = False,
    hint: str | None = None,
    shell: bool = False,
    shell_prompt: bool = False,
) -> LiveStatus:
    return LiveStatus(NOW - quiet_s, 10, canonical, echo, prompt, NOW, hint, shell=shell, shell_prompt=shell_prompt)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (_status(quiet_s=0.5, canonical=False), LiveState.WORKING),
        (_status(quiet_s=0.5, canonical=True, prompt=True), LiveState.WORKING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=False, echo=False), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, prompt=True), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, echo=False), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True), LiveState.IDLE),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=None, echo=None, prompt=True), LiveState.IDLE),
        (None, LiveState.IDLE),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, hint="approval"), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=None, echo=None, hint="input"), LiveState.WAITING),
        (_status(quiet_s=0.5, canonical=False, hint="approval"), LiveState.WORKING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=False, echo=False, prompt=True, shell=True), LiveState.IDLE),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, prompt=True, shell=True), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, echo=False, shell=True), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=False, shell=True, hint="input"), LiveState.WAITING),
        (_status(quiet_s=WORKING_WINDOW_S + 1, canonical=True, prompt=True, shell=True, shell_prompt=True), LiveState.IDLE),
    ],
    ids=["output-now", "output-now-at-prompt", "quiet-reading-keys", "quiet-at-prompt", "quiet-password",
         "quiet-no-prompt", "modes-unknown", "no-status", "hint-while-canonical", "hint-modes-unknown",
         "hint-output-now", "shell-at-its-prompt", "shell-read-p", "shell-read-s", "shell-hint",
         "dash-at-its-prompt"],
)  # fmt: skip
def test_the_state_rule(status: LiveStatus | None, expected: LiveState) -> None:
    assert judge_state(status, NOW) is expected


def test_without_a_status_the_recording_mtime_tells_recent_output() -> None:
    assert judge_state(None, NOW, recording_mtime=NOW - 1) is LiveState.WORKING
    assert judge_state(None, NOW, recording_mtime=NOW - WORKING_WINDOW_S - 1) is LiveState.IDLE


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("> ", True), ("user@host:~/src$ ", True), ("root# ", True), ("Password: ", True), ("Continue? ", True),
        ("Overwrite? [y/N] ", True), ("\x1b[1;32m❯\x1b[0m ", True), ("\x1b]0;title\x07>>> ", True),
        ("> \r", True), ("", False), ("   ", False), ("compiling 3 of 9", False), ("\x1b[2K\x1b[1G", False),
        ("done.", False),
    ],
    ids=["angle", "bash", "root", "password", "question", "yes-no", "coloured-starship", "osc-title-python",
         "trailing-cr", "empty", "blank", "progress", "escapes-only", "sentence"],
)  # fmt: skip
def test_looks_like_prompt(line: str, expected: bool) -> None:
    assert looks_like_prompt(line) is expected


def test_last_line_keeps_the_text_after_the_last_newline_across_reads() -> None:
    tail = last_line("", "first line\r\nsecond")
    assert tail == "second"
    assert last_line(tail, " part> ") == "second part> "
    assert last_line(tail, "x" * 1000) == "x" * 256


def test_live_status_round_trip_and_unreadable_files(tmp_path: Path) -> None:
    status = LiveStatus(NOW - 1, 42, False, False, True, NOW)
    write_live_status(tmp_path, status)
    assert read_live_status(tmp_path) == status
    hinted = dataclasses.replace(status, hint="approval", shell=True, shell_prompt=True)
    write_live_status(tmp_path, hinted)
    assert read_live_status(tmp_path) == hinted
    assert set(json.loads((tmp_path / LIVE_FILE).read_text())) == {
        "output_at", "output_bytes", "canonical", "echo", "prompt", "updated_at", "hint", "shell", "shell_prompt"
    }  # a judgement only: no recorded text
    assert oct((tmp_path / LIVE_FILE).stat().st_mode & 0o777) == "0o600"
    (tmp_path / LIVE_FILE).write_text('{"output_at": 1')  # cut mid-write by a crash
    assert read_live_status(tmp_path) is None
    remove_live_status(tmp_path)
    assert not (tmp_path / LIVE_FILE).exists() and read_live_status(tmp_path) is None


def test_the_recorder_reports_output_at_most_once_a_second_and_once_it_settles(tmp_path: Path) -> None:
    reports: list[tuple[float, OutputActivity]] = []
    lock = threading.Lock()

    def on_activity(activity: OutputActivity) -> None:
        with lock:
            reports.append((time.monotonic(), activity))

    out = open(tmp_path / "session.cast", "ab")
    recorder = Recorder(out, header=Header(size=TermSize(80, 24), timestamp=0), on_activity=on_activity)
    recorder.on_output(b"working...\r\n", 0.1)
    wait_until(lambda: reports, 10)
    recorder.on_output(b"done\r\nname? ", 0.2)
    # The second read comes within the second: it is reported once the output has settled.
    settled = wait_until(lambda: [a for _, a in reports if a.prompt], 10)
    recorder.close()
    assert reports[0][1].output_bytes == len(b"working...\r\n") and not reports[0][1].prompt
    assert settled[-1].output_bytes == len(b"working...\r\ndone\r\nname? ")  # type: ignore[index]
    # Throttled (the recorder waits a whole second between calls; a loose bound here, as a
    # slow machine may delay a call): never once per read.
    times = [t for t, _ in reports]
    assert all(b - a >= 0.5 for a, b in zip(times, times[1:]))
    assert 2 <= len(reports) <= 3


def test_the_recorder_reports_the_hint_and_last_line_of_the_recent_redacted_output(tmp_path: Path) -> None:
    from shellkeep.capture.activity import RecentOutput
    from shellkeep.capture.redaction import default_stream_redactor

    reports: list[OutputActivity] = []
    recent = RecentOutput({"approval": (r"Do you want to [^\n]+\?",)})
    out = open(tmp_path / "session.cast", "ab")
    recorder = Recorder(
        out,
        header=Header(size=TermSize(80, 24), timestamp=0),
        on_activity=reports.append,
        recent=recent,
        make_filter=default_stream_redactor,
    )
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    recorder.on_output(f"token {secret}\r\n\x1b[1mDo\x1b[5Gyou\x1b[9Gwant to proceed?\x1b[0m".encode(), 0.1)
    settled = wait_until(lambda: [a for a in reports if a.hint], 10)
    recorder.close()
    assert settled[-1].hint == "approval"  # type: ignore[index]
    assert settled[-1].last_line == "Do you want to proceed?"  # type: ignore[index]
    assert secret not in recent._text  # the text kept is the redacted text
    assert all(a.hint is None and a.last_line == "" for a in _plain_reports(tmp_path))


def _plain_reports(tmp_path: Path) -> list[OutputActivity]:
    """The reports of a recorder given no ``recent``: no hint, no line."""
    reports: list[OutputActivity] = []
    recorder = Recorder(open(tmp_path / "plain.cast", "ab"), header=Header(size=TermSize(80, 24), timestamp=0), on_activity=reports.append)
    recorder.on_output(b"Do you want to proceed?", 0.1)
    wait_until(lambda: reports, 10)
    recorder.close()
    return reports


def test_a_failing_activity_callback_never_stops_the_recording(tmp_path: Path) -> None:
    def broken(activity: OutputActivity) -> None:
        raise OSError(28, "No space left on device")

    out = open(tmp_path / "session.cast", "ab")
    recorder = Recorder(out, header=Header(size=TermSize(80, 24), timestamp=0), on_activity=broken)
    recorder.on_output(b"one\r\n", 0.1)
    recorder.on_output(b"two\r\n", 0.2)
    stats = recorder.close()
    assert stats.error is None and stats.output_bytes == 10
    assert b"two" in (tmp_path / "session.cast").read_bytes()


def test_process_start_ticks_and_boot_time_come_from_proc() -> None:
    ticks = process_start_ticks(os.getpid())
    assert isinstance(ticks, int) and ticks > 0
    assert process_start_ticks(os.getpid()) == ticks
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert (process_start_ticks(child.pid) or 0) >= ticks
    finally:
        child.communicate(b"")
    booted = boot_time()
    assert booted is not None and booted < datetime.now(timezone.utc).timestamp()


def test_a_running_session_whose_pid_started_at_another_time_is_interrupted(home: Paths) -> None:
    """This process is alive, but it is not the recorder if it started at another time
    (the positive case, a real recorder, is in tests/e2e/test_ps.py)."""
    me = os.getpid()
    ticks = process_start_ticks(me)
    assert ticks is not None
    meta = make_session(home, Path.cwd(), 1, status="running", pid=me, host=host_name())
    meta = dataclasses.replace(meta, boot_id=boot_id(), pid_start_ticks=ticks + 1)
    assert is_interrupted(meta)
    assert not is_interrupted(dataclasses.replace(meta, pid=me, status="finished"))


# -- resume --all: which sessions --------------------------------------------------------


def _session(home: Paths, project: Path, n: int, *, status: str, ended: datetime, **changes: object) -> SessionMeta:
    meta = make_session(home, project, n, status=status, host=host_name(), started=ended - timedelta(minutes=5))
    meta = dataclasses.replace(meta, **{"ended_at": iso(ended), "boot_id": boot_id(), **changes})  # type: ignore[arg-type]
    write_meta(meta)
    return meta


def test_resume_all_takes_what_was_cut_short_since_the_boot_and_not_resumed(home: Paths, tmp_path: Path) -> None:
    booted = datetime.fromtimestamp(boot_time() or 0, timezone.utc)
    web, api = tmp_path / "web", tmp_path / "api"
    web.mkdir()
    api.mkdir()
    after = booted + timedelta(seconds=1)
    taken_web = _session(home, web, 1, status="interrupted", ended=after)
    taken_api = _session(home, api, 2, status="hangup", ended=after + timedelta(minutes=1))
    _session(home, web, 3, status="finished", ended=after)  # ended by the user
    resumed = _session(home, web, 4, status="killed", ended=after)
    _session(home, web, 5, status="finished", ended=after + timedelta(minutes=2), parent=resumed.id)
    failed = _session(home, web, 6, status="interrupted", ended=after, resume_failed="exit status 1 after 0.2 s")
    _session(home, web, 7, status="interrupted", ended=after, host="elsewhere")
    old_boot = _session(home, api, 8, status="interrupted", ended=booted - timedelta(days=3), boot_id="not-a-boot")
    newer = _session(home, api, 9, status="finished", ended=booted - timedelta(hours=1), boot_id="the-boot-before")
    by_reboot = _session(home, api, 10, status="interrupted", ended=booted - timedelta(hours=1), boot_id="the-boot-before")
    _session(home, web, 11, status="killed", ended=after, signal=2, exit_code=130)  # the user's own Ctrl-C
    assert failed.parent is None and newer.status == "finished"

    plan = plan_resume_all(open_context(paths=home, cwd=web), options=("--no-screen",), env={})
    # Oldest first (by start); the reboot's own victims count, an older boot's do not.
    assert [c.session.id for c in plan.comebacks] == [by_reboot.id, taken_web.id, taken_api.id]
    assert plan.since_boot and not plan.in_tmux
    web_comeback = plan.comebacks[1]
    assert web_comeback.argv[-3:] == ("resume", taken_web.id, "--no-screen")
    assert web_comeback.cwd == web and web_comeback.window == f"web-{taken_web.agent}"
    assert old_boot.id not in {c.session.id for c in plan.comebacks}

    since = plan_resume_all(open_context(paths=home, cwd=web), since=booted - timedelta(days=4), env={"TMUX": "x"})
    assert {c.session.id for c in since.comebacks} == {old_boot.id, by_reboot.id, taken_web.id, taken_api.id}
    assert since.in_tmux and not since.since_boot
    tmux = since.comebacks[0].tmux_argv({"SHELLKEEP_HOME": str(home.home)})
    assert tmux[:4] == ("tmux", "new-window", "-n", since.comebacks[0].window)
    assert ("-e", f"SHELLKEEP_HOME={home.home}") == tmux[tmux.index("-e") : tmux.index("-e") + 2]
    assert tmux[-1].endswith(f"resume {since.comebacks[0].session.id}")


def test_live_sessions_lists_this_hosts_running_sessions_whose_recorder_lives(home: Paths) -> None:
    """This test process stands in for a recorder (its pid and start time are recorded)."""
    from shellkeep.app.ps import live_sessions

    me, ticks = os.getpid(), process_start_ticks(os.getpid())
    here = make_session(home, Path.cwd(), 1, status="running", pid=me, host=host_name())
    here = dataclasses.replace(here, boot_id=boot_id(), pid_start_ticks=ticks)
    write_meta(here)
    elsewhere = dataclasses.replace(make_session(home, Path.cwd(), 2, status="running", pid=me), pid_start_ticks=ticks)
    write_meta(elsewhere)  # synced from another machine: not judged from here, not listed
    finished = make_session(home, Path.cwd(), 3, status="finished", pid=me, host=host_name())
    write_live_status(here.folder, LiveStatus(NOW - 60, 7, True, True, True, NOW - 59))

    listed = live_sessions(open_context(paths=home), now=NOW)
    assert [s.id for s in listed] == [here.id]
    [live] = listed
    assert (live.state, live.output_bytes, live.prompt, live.canonical) == ("waiting", 7, True, True)
    assert live.output_at == iso(datetime.fromtimestamp(NOW - 60, timezone.utc))
    assert live.size_bytes == Path(here.cast).stat().st_size and live.pid == me
    assert finished.id not in {s.id for s in listed}
