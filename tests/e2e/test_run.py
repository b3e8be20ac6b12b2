"""``shellkeep run`` in real ptys: every case of ../shared/reference/pty-cases.md, and more."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from tests.recordings import open_binary
from shellkeep.store.paths import Paths
from tests.helpers import BANNER, PtyHarness, SK, invoke_sk, load_session, only_session, output_text, recording_of, run_sk, session_folders, wait_for_background, wait_until, without_banner

PY = sys.executable
SK_CMD = " ".join(shlex.quote(a) for a in SK)


def _sh(script: str) -> list[str]:
    return ["/bin/sh", "-c", script]


# -- 1: exit status ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "code", "sig"),
    [
        (["sh", "-c", "exit 3"], 3, None),
        (["sh", "-c", "kill -TERM $$"], 143, 15),
        (["true"], 0, None),
    ],
    ids=["exit-3", "self-sigterm", "true"],
)
def test_exit_status_is_the_childs(home: Paths, argv: list[str], code: int, sig: int | None) -> None:
    result = run_sk("run", "--", *argv)
    assert result.returncode == code
    meta, _, _ = only_session(home)
    assert meta["exit_code"] == code
    assert meta["signal"] == sig
    assert meta["status"] == ("killed" if sig else "finished")


# -- 2: all output drained after exit -----------------------------------------------------


def test_every_byte_is_drained_after_the_child_exits(home: Paths) -> None:
    script = "import sys; sys.stdout.write('x' * 200000 + 'END'); sys.stdout.flush()"
    for _ in range(50):
        result = run_sk("run", "--", PY, "-c", script)
        assert result.returncode == 0
        assert result.stdout.endswith(b"END")
        assert result.stdout.count(b"x") == 200000
    folders = session_folders(home)
    assert len(folders) == 50
    for meta_path in folders:
        _, _, events = load_session(meta_path.parent)
        text = output_text(events)
        assert text.count("x") == 200000 and text.endswith("END")


# -- 5: a quick command --------------------------------------------------------------------


def test_a_quick_command_leaves_its_output(home: Paths) -> None:
    result = run_sk("run", "--", "echo", "hi")
    assert result.returncode == 0
    assert result.stdout == b"hi\r\n"
    _, header, events = only_session(home)
    assert "hi" in output_text(events)
    assert header.command == "echo hi"


# -- 7 and 8: sizes ---------------------------------------------------------------------------


def test_resize_reaches_the_child_and_is_recorded(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", "sh", "-c", "echo ready; read x; stty size"], cols=80, rows=24)
    h.expect(b"ready")
    h.resize(100, 30)
    h.write(b"\r")
    h.expect(b"30 100")
    assert h.finish() == 0
    _, header, events = only_session(home)
    assert (header.size.cols, header.size.rows) == (80, 24)
    resizes = [(i, e) for i, e in enumerate(events) if e.code == "r"]
    assert [e.data for _, e in resizes] == ["100x30"]
    answer = next(i for i, e in enumerate(events) if e.code == "o" and "30 100" in e.data)
    assert resizes[0][0] < answer


@pytest.mark.parametrize("stdin_null", [False, True], ids=["tty-stdin", "devnull-stdin"])
def test_child_starts_at_the_real_size(home: Paths, stdin_null: bool) -> None:
    redirect = " </dev/null" if stdin_null else ""
    h = PtyHarness.start(_sh(f"exec {SK_CMD} run -- stty size{redirect}"), cols=132, rows=43)
    assert h.finish() == 0
    assert b"43 132" in h.output
    _, header, _ = only_session(home)
    assert (header.size.cols, header.size.rows) == (132, 43)


# -- 9: a large paste does not deadlock -------------------------------------------------------


def test_large_paste_is_echoed_without_hanging(home: Paths) -> None:
    lines = [f"line {n:06d} " + "p" * 60 for n in range(2400)]  # about 170 KB
    payload = ("\n".join(lines) + "\n").encode()
    # The kernel's own echo may drop characters when its echo buffer overflows under a burst
    # (n_tty behaviour, the same under script(1)), so echo is off and cat's copy is checked.
    h = PtyHarness.start([*SK, "run", "--", "sh", "-c", "stty -echo; echo ready; exec cat"], cols=120, rows=40)
    h.expect(b"ready")  # raw mode is on before the child starts
    import threading

    writer = threading.Thread(target=h.write, args=(payload,))
    writer.start()
    expected = len(b"ready\r\n") + len(payload) + payload.count(b"\n")  # \n became \r\n
    wait_until(lambda: h.read_some(0.05) is not None and len(without_banner(h.output)) >= expected, timeout_s=60)
    writer.join(30)
    assert not writer.is_alive()
    h.write(b"\x04")
    assert h.finish() == 0
    assert without_banner(h.output) == b"ready\r\n" + payload.replace(b"\n", b"\r\n")


# -- 12: kill -9 of the wrapper -------------------------------------------------------------


def test_kill_9_keeps_what_was_printed_and_marks_the_session_interrupted(home: Paths) -> None:
    script = "import time,sys\nfor n in range(1000):\n print(f'tick {n}', flush=True); time.sleep(0.2)"
    h = PtyHarness.start([*SK, "run", "--", PY, "-c", script])
    h.expect(b"tick 12")
    wait_until(lambda: bool(session_folders(home)))
    folder = session_folders(home)[0].parent
    live = folder / "session.cast"
    # On disk, the whole line the assertion below needs: "tick 12" and its "\r\n" can be two
    # reads of the pty (the tty appends the CR LF after the text), so two events written apart.
    wait_until(lambda: live.exists() and "tick 12\r\n" in output_text(load_session(folder)[2]), 60)
    os.kill(h.pid, signal.SIGKILL)
    h.finish()
    _, _, events = load_session(folder)  # a cut last line is accepted by the reader
    recorded = output_text(events)
    assert all(f"tick {n}\r\n" in recorded for n in range(13))  # nothing on disk lost by the kill
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "running"
    child = meta["child_pid"]
    wait_until(lambda: not _alive(child))  # the child got SIGHUP when the pty closed
    listed = json.loads(invoke_sk("ls", "--json").stdout)
    assert listed[0]["status"] == "interrupted"
    assert listed[0]["duration"] > 2
    assert json.loads((folder / "meta.json").read_text())["status"] == "interrupted"
    assert (folder / "session.cast").read_bytes().endswith(b"\n")


def test_a_quiet_program_whose_recorder_is_killed_stays_listed_with_a_lower_bound_duration(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", "sleep", "300"])
    meta_file = wait_until(lambda: next(iter(session_folders(home)), None))
    assert isinstance(meta_file, Path)
    child = wait_until(lambda: json.loads(meta_file.read_text()).get("child_pid"))
    os.kill(h.pid, signal.SIGKILL)  # no output ever: no event tells when it stopped
    h.finish()
    wait_until(lambda: not _alive(int(child)))  # type: ignore[call-overload]
    cast = meta_file.parent / "session.cast"
    started = json.loads(meta_file.read_text())["started_at"]
    later = datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp() + 42
    os.utime(cast, (later, later))  # the recording was last changed 42 s after the start: evidence
    listed = invoke_sk("ls")
    assert listed.returncode == 0, listed.stderr
    assert meta_file.parent.name in listed.stdout.decode() and b"hidden" not in listed.stderr  # never hidden
    shown = invoke_sk("show", meta_file.parent.name).stdout.decode()
    assert "at least 42.0s (the recorder died; when exactly is not known)" in shown


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie still answers kill(0); /proc tells it apart
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


# -- 13: SIGTERM and SIGHUP to the wrapper ----------------------------------------------------


@pytest.mark.parametrize(("sig", "code", "status"), [(signal.SIGTERM, 143, "killed"), (signal.SIGHUP, 129, "hangup")], ids=["term", "hup"])
def test_signals_to_the_wrapper_reach_the_child(home: Paths, sig: int, code: int, status: str) -> None:
    h = PtyHarness.start(_sh(f"stty -g; {SK_CMD} run -- sh -c 'echo started; sleep 30'; echo \"rc=$?\"; stty -g"))
    h.expect(b"started")
    meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
    sk_pid = json.loads(meta_path.read_text())["pid"]
    os.kill(sk_pid, sig)
    h.expect(b"rc=", timeout_s=10)
    h.finish()
    assert f"rc={code}".encode() in h.output
    before, after = _stty_lines(h.output)
    assert before == after
    meta, _, events = load_session(meta_path.parent)
    assert meta["exit_code"] == code
    assert meta["signal"] == sig
    assert meta["status"] == status
    assert "started" in output_text(events)


_SURVIVOR = """
import os, signal, sys, time
if os.fork() == 0:  # a helper that ignores the hangup, as an agent's relaunched node process may
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    open(sys.argv[1] + ".tmp", "w").write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(1)
print("started", flush=True)
while True:
    time.sleep(1)
"""


def test_a_closed_terminal_ends_the_child_s_whole_process_group(home: Paths, tmp_path: Path) -> None:
    pid_file = tmp_path / "survivor.pid"
    h = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", _SURVIVOR, str(pid_file)])
    h.expect(b"started")
    survivor = int(wait_until(lambda: pid_file.exists() and pid_file.read_text()) or 0)  # type: ignore[arg-type]
    meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
    os.kill(json.loads(meta_path.read_text())["pid"], signal.SIGHUP)
    h.finish()
    try:
        wait_until(lambda: not _alive(survivor), timeout_s=30)  # not left running on the pty, re-parented to 1
    finally:
        if _alive(survivor):
            os.kill(survivor, signal.SIGKILL)
    assert json.loads(meta_path.read_text())["status"] == "hangup"


def _stty_lines(output: bytes) -> tuple[bytes, bytes]:
    found = [line.strip() for line in output.splitlines() if line.count(b":") > 30]
    assert len(found) == 2, output
    return found[0], found[1]


# -- 14: the terminal is restored -------------------------------------------------------------


@pytest.mark.parametrize(
    "child",
    [
        "echo normal",
        "stty -echo -icanon raw; exit 1",
        "kill -KILL $$",
    ],
    ids=["normal", "child-changes-modes", "child-sigkill"],
)
def test_terminal_modes_are_restored(home: Paths, child: str) -> None:
    h = PtyHarness.start(_sh(f"stty -g; {SK_CMD} run -- sh -c {shlex.quote(child)}; stty -g"))
    h.finish()
    before, after = _stty_lines(h.output)
    assert before == after


# -- 15 and 16: no terminal, pipes ------------------------------------------------------------


def test_no_terminal_at_all(home: Paths, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    cmd = f"setsid {SK_CMD} run -- echo hi </dev/null >{shlex.quote(str(out))}"
    result = subprocess.run(["sh", "-c", cmd], timeout=30)
    assert result.returncode == 0
    assert b"hi" in out.read_bytes()
    _, header, events = only_session(home)
    assert "hi" in output_text(events)
    assert (header.size.cols, header.size.rows) == (80, 24)


@pytest.mark.parametrize(
    ("stdin", "argv", "expect"),
    [
        (b"echo hhh\nexit\n", ["sh"], b"hhh"),
        (b"abc", ["cat"], b"abc"),
        (b"line one\nline two\n", ["cat"], b"line two"),
        (b"", ["bash", "--norc", "--noprofile", "-i"], b""),
        (b"echo hhh\n", ["bash", "--norc", "--noprofile", "-i"], b"hhh"),
        (b"print(6 * 7)\n", [PY, "-q", "-i"], b"42"),
    ],
    ids=["sh-script", "cat-no-newline", "cat-lines", "bash-readline-empty", "bash-readline", "python-repl"],
)
def test_piped_stdin_ends_with_eof(home: Paths, stdin: bytes, argv: list[str], expect: bytes) -> None:
    result = run_sk("run", "--", *argv, input_bytes=stdin, timeout_s=30)
    assert result.returncode == 0
    assert expect in result.stdout



_LONG_LINES = b"x" * 5000 + b"\n" + b"y" * 9000 + b"\n" + b"z" * 4095 + b"\nshort\n" + b"w" * 4097  # no newline at the end


@pytest.mark.parametrize(
    ("stdin", "argv", "expect"),
    [
        (b"x" * 5000 + b"\n", ["wc", "-c"], b"5001"),
        (_LONG_LINES, [PY, "-c", "import sys, hashlib; d = sys.stdin.buffer.read(); print('got', len(d), hashlib.sha256(d).hexdigest())"],
         f"got {len(_LONG_LINES)} {hashlib.sha256(_LONG_LINES).hexdigest()}".encode()),
    ],
    ids=["wc-5000", "lines-over-4095"],
)
def test_piped_lines_longer_than_a_pty_line_reach_the_program_whole(home: Paths, stdin: bytes, argv: list[str], expect: bytes) -> None:
    # A canonical pty keeps 4095 bytes of a line and drops the rest (script(1) loses them).
    result = run_sk("run", "--", *argv, input_bytes=stdin, timeout_s=60)
    assert result.returncode == 0
    assert expect in result.stdout

# -- 18: ending while input is still arriving -------------------------------------------------


def test_child_exit_while_the_user_types_ends_the_run(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", "sh", "-c", "echo go; sleep 0.5"])
    h.expect(b"go")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(h.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            break
        h.write(b"typing ")
        h.read_some(0.01)
    else:
        pytest.fail("shellkeep did not end while input kept arriving")


# -- 21: bracketed paste passes through -----------------------------------------------------


PASTE_CHILD = r"""
import os, sys, tty
tty.setraw(0)  # before announcing the mode, so the paste never meets a cooked tty
sys.stdout.write('\x1b[?2004h'); sys.stdout.flush()
data = b''
while not data.endswith(b'\x1b[201~'):
    data += os.read(0, 1024)
sys.stdout.write('\x1b[?2004l' + 'GOT ' + data.hex() + '\r\n'); sys.stdout.flush()
"""


def test_bracketed_paste_passes_through(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", PY, "-c", PASTE_CHILD])
    h.expect(b"\x1b[?2004h")
    paste = b"\x1b[200~a\nb \x1b[201~"
    h.write(paste)
    h.expect(b"GOT ")
    assert h.finish() == 0
    assert b"GOT " + paste.hex().encode() in h.output


# -- 24: UTF-8 split across reads ----------------------------------------------------------


def test_utf8_split_across_reads_joins(home: Paths) -> None:
    script = (
        "import os,time; os.write(1, b'A\\xe2\\x82'); time.sleep(0.3); os.write(1, b'\\xacB\\xff\\xfeC')"
    )
    result = run_sk("run", "--", PY, "-c", script)
    assert result.returncode == 0
    folder = session_folders(home)[0].parent
    with open_binary(Path(json.loads((folder / "meta.json").read_text())["cast"])) as fh:
        for line in fh.read().decode("utf-8").splitlines():
            json.loads(line)  # every line valid JSON
    _, _, events = load_session(folder)
    assert output_text(events) == "A€B\ufffd\ufffdC"


def test_nul_and_control_bytes_stay_valid_json(home: Paths) -> None:
    script = "import os; os.write(1, bytes(range(0, 32)) + b'\\x7f end')"
    assert run_sk("run", "--", PY, "-c", script).returncode == 0
    _, _, events = only_session(home)
    text = output_text(events)
    assert "\x00" in text and "\x1b" in text and text.endswith("\x7f end")


# -- 28: quick exit, EIO ---------------------------------------------------------------------


def test_true_ends_and_leaves_the_terminal_intact(home: Paths) -> None:
    h = PtyHarness.start(_sh(f"stty -g; {SK_CMD} run -- true; echo rc=$?; stty -g"))
    assert h.finish(timeout_s=10) == 0
    assert b"rc=0" in h.output
    before, after = _stty_lines(h.output)
    assert before == after


# -- 30: two runs never glue into one recording ---------------------------------------------


def test_two_runs_with_a_resize_between_are_two_ordered_recordings(home: Paths) -> None:
    h = PtyHarness.start(_sh(f"{SK_CMD} run -- echo one; echo between; read x; {SK_CMD} run -- echo two"), cols=80, rows=24)
    h.expect(b"between")
    h.resize(90, 33)
    h.write(b"\r")
    assert h.finish() == 0
    folders = [p.parent for p in session_folders(home)]
    assert len(folders) == 2
    (_, first, ev1), (_, second, ev2) = (load_session(f) for f in folders)
    assert (first.size.cols, first.size.rows) == (80, 24)
    assert (second.size.cols, second.size.rows) == (90, 33)
    for events in (ev1, ev2):
        times = [e.time for e in events]
        assert times == sorted(times)


# -- metadata, env, nesting, missing programs ---------------------------------------------------


def test_metadata_is_complete(home: Paths, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], check=True)
    Path("f.txt").write_text("x")
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "c", "--allow-empty"], check=True)
    result = run_sk("run", "--name", "first", "--title", "T", "--", "sh", "-c", "echo out; echo $SHELLKEEP_SESSION $SHELLKEEP_PROJECT")
    assert result.returncode == 0
    meta, header, _ = only_session(home)
    for key in (
        "id", "name", "command", "agent", "cwd", "project_root", "host", "user", "pid", "term", "colorterm",
        "shell", "lang", "cols", "rows", "started_at", "ended_at", "duration", "exit_code", "signal", "status",
        "cast", "output_bytes", "input_bytes", "git_start", "git_end", "shellkeep_version",
    ):
        assert key in meta, key
    assert meta["name"] == "first" and header.title == "T"
    assert meta["command"] == ["sh", "-c", "echo out; echo $SHELLKEEP_SESSION $SHELLKEEP_PROJECT"]
    assert meta["agent"] == "sh"
    assert meta["git_start"]["branch"] == "main" and meta["git_start"]["dirty"] is False
    assert len(meta["git_start"]["commit"]) == 40
    assert meta["output_bytes"] > 0
    assert meta["started_at"].endswith("Z") and meta["ended_at"] >= meta["started_at"]
    assert f"{meta['id']} {Path.cwd().resolve()}".encode() in result.stdout
    assert header.env.get("SHELL") == os.environ.get("SHELL")


def test_files_and_folders_are_private(home: Paths) -> None:
    run_sk("run", "--", "true")
    folder = session_folders(home)[0].parent
    for path in (folder, folder.parent, home.projects):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_missing_program_is_command_not_found(home: Paths) -> None:
    result = run_sk("nosuchagent", "--flag")
    assert result.returncode == 127
    assert result.stderr == b"shellkeep: nosuchagent: command not found\n"
    assert not home.projects.exists() or not list(home.projects.glob("*/*"))


def test_a_script_whose_interpreter_is_missing_says_so(home: Paths, tmp_path: Path) -> None:
    script = tmp_path / "bad.sh"
    script.write_text("#!/nonexistent/interpreter\necho hi\n")
    script.chmod(0o755)
    result = run_sk(str(script))
    assert result.returncode == 127
    assert result.stderr == f"shellkeep: {script}: cannot execute: required file not found (check the interpreter on its #! line)\n".encode()
    assert not home.projects.exists() or not list(home.projects.glob("*/*"))


def test_arguments_pass_to_the_program_untouched(home: Paths) -> None:
    result = run_sk(PY, "-c", "import sys; print(sys.argv[1:])", "--model", "x", "-c", "--name", "--help")
    assert result.returncode == 0
    assert b"['--model', 'x', '-c', '--name', '--help']" in result.stdout


def test_nested_run_does_not_record_twice(home: Paths) -> None:
    result = run_sk("run", "--", *SK, "run", "--", "sh", "-c", "echo inner $SHELLKEEP_SESSION")
    assert result.returncode == 0
    # The inner shellkeep's stderr is the outer child's terminal, so its note is recorded too.
    assert b"without a second recording" in result.stdout
    assert len(session_folders(home)) == 1


def test_shellkeep_alone_records_the_shell(home: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")
    result = run_sk(input_bytes=b"echo from-shell\nexit 4\n")
    assert result.returncode == 4
    meta, _, events = only_session(home)
    assert meta["command"] == ["/bin/sh"]
    assert "from-shell" in output_text(events)


def test_unwritable_home_runs_the_program_unrecorded(home: Paths) -> None:
    home.home.parent.mkdir(parents=True, exist_ok=True)
    home.home.write_text("a file where the data folder should be")
    result = run_sk("run", "--", "sh", "-c", "echo still-here; exit 5")
    assert result.returncode == 5
    assert b"still-here" in result.stdout
    assert result.stderr.count(b"\n") == 1 and b"unrecorded" in result.stderr


# -- the recording plays in asciinema ------------------------------------------------------


def test_asciinema_play_plays_the_recording(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recording is plain asciicast v2 while it is written (here: compression off) and after
    ``export --format cast`` (compressed by default once the session ends)."""
    asciinema = Path(sys.executable).with_name("asciinema")
    monkeypatch.setenv("SHELLKEEP_RECORD_COMPRESS", "0")
    assert run_sk("run", "--", "printf", "plain \\033[1mbold\\033[0m\\n").returncode == 0
    monkeypatch.delenv("SHELLKEEP_RECORD_COMPRESS")
    assert run_sk("run", "--name", "packed", "--", "printf", "packed text\\n").returncode == 0
    exported = tmp_path / "packed.cast"
    assert invoke_sk("export", "packed", "--format", "cast", "-o", str(exported)).returncode == 0
    wait_for_background(home)
    plain, packed = (p.parent for p in session_folders(home))
    assert sorted(p.name for p in plain.iterdir() if "cast" in p.name) == ["session.cast"]
    assert sorted(p.name for p in packed.iterdir() if "cast" in p.name) == ["session.cast.zst"]
    for path, text in ((plain / "session.cast", b"plain \x1b[1mbold"), (exported, b"packed text")):
        played = subprocess.run(
            ["setsid", str(asciinema), "play", "-s", "20", str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        assert played.returncode == 0, played.stderr
        assert text in played.stdout


def _record_with_every_event(name: str) -> None:
    """Record a session with output, typed input, a marker (``shellkeep mark``) and a resize."""
    script = f"echo ready; read x; {SK_CMD} mark first-mark; echo typed=$x; read y; stty size"
    h = PtyHarness.start([*SK, "run", "--name", name, "--", "sh", "-c", script], cols=80, rows=24)
    h.expect(b"ready")
    h.write(b"hello-input\r")
    h.expect(b"typed=hello-input")
    h.resize(100, 30)
    h.write(b"\r")
    h.expect(b"30 100")
    assert h.finish() == 0


@pytest.mark.parametrize("compress", [False, True], ids=["plain-session-cast", "exported-from-zst"])
def test_asciinema_plays_a_recording_with_input_markers_and_resizes(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compress: bool
) -> None:
    """``asciinema cat`` and ``play`` take every plain .cast shellkeep writes, whatever events it holds."""
    asciinema = Path(sys.executable).with_name("asciinema")
    monkeypatch.setenv("SHELLKEEP_RECORD_COMPRESS", "1" if compress else "0")
    _record_with_every_event("events")
    wait_for_background(home)
    folder = session_folders(home)[0].parent
    stored = recording_of(folder)
    assert stored.name == ("session.cast.zst" if compress else "session.cast")
    if compress:
        path = tmp_path / "events.cast"
        assert invoke_sk("export", "events", "--format", "cast", "-o", str(path)).returncode == 0
    else:
        path = stored
    codes = {json.loads(line)[1] for line in path.read_text().splitlines()[1:]}
    assert codes >= {"o", "i", "m", "r"}, codes
    shown = subprocess.run([str(asciinema), "cat", str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert b"typed=hello-input" in shown.stdout and b"30 100" in shown.stdout
    played = subprocess.run(
        ["setsid", str(asciinema), "play", "-s", "100", str(path)], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
    )
    assert played.returncode == 0, played.stderr
    assert b"typed=hello-input" in played.stdout and b"30 100" in played.stdout


def test_a_moved_data_folder_still_reads(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_sk("run", "--name", "moving", "--", "echo", "moved-text").returncode == 0
    wait_for_background(home)
    moved = tmp_path / "restored-home"
    home.home.rename(moved)
    monkeypatch.setenv("SHELLKEEP_HOME", str(moved))
    result = invoke_sk("export", "moving", "--format", "txt")
    assert result.returncode == 0, result.stderr
    assert b"moved-text" in result.stdout
    assert not home.home.exists()  # nothing written to the old place


def test_a_corrupt_meta_json_names_the_recording(home: Paths) -> None:
    assert run_sk("run", "--", "echo", "x").returncode == 0
    wait_for_background(home)  # the upkeep writes meta.json when it compresses
    folder = session_folders(home)[0].parent
    (folder / "meta.json").write_text('{"id": broken')
    result = invoke_sk("show", folder.name)
    assert result.returncode == 3
    last = result.stderr.strip().splitlines()[-1]
    assert b"is not valid JSON" in last and str(folder / "session.cast.zst").encode() in last


# -- argv, directory and name that are not UTF-8 ------------------------------------------------


def test_argv_cwd_and_name_that_are_not_utf8_are_recorded_readably_and_resumed_exactly(home: Paths, tmp_path: Path) -> None:
    import base64

    odd_dir = os.fsencode(tmp_path) + b"/dir\xfe"
    os.mkdir(odd_dir)
    calls = tmp_path / "calls.log"
    prog = os.fsencode(tmp_path) + b"/prog\xff"
    with open(prog, "w") as fh:
        fh.write(f"#!/bin/sh\nprintf '%s|%s\\n' \"$1\" \"$(pwd)\" >> {shlex.quote(str(calls))}\necho done\n")
    os.chmod(prog, 0o755)
    result = run_sk("run", "--name", os.fsdecode(b"n\xff"), "--", os.fsdecode(prog), os.fsdecode(b"arg\xfd"), cwd=odd_dir)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    meta, header, events = only_session(home)
    assert meta["command"] == [f"{tmp_path}/prog\\xff", "arg\\xfd"]
    assert (meta["cwd"], meta["name"], meta["agent"]) == (f"{tmp_path}/dir\\xfe", "n\\xff", "prog\\xff")
    raw = meta["raw"]
    assert isinstance(raw, dict)
    assert [base64.b64decode(c) for c in raw["command"]] == [prog, b"arg\xfd"]
    assert base64.b64decode(raw["cwd"]) == odd_dir
    assert header.command == shlex.join(meta["command"]) and "done" in output_text(events)
    assert invoke_sk("show", os.fsdecode(b"n\xff"), "--json").returncode == 0  # found by the name as typed
    wait_for_background(home)
    resumed = run_sk("resume", "--last", cwd=odd_dir)
    assert resumed.returncode == 0, resumed.stderr
    assert calls.read_bytes() == b"arg\xfd|" + odd_dir + b"\n" + b"arg\xfd|" + odd_dir + b"\n"


# -- the start line -----------------------------------------------------------------------


def test_a_recording_in_a_terminal_says_its_session_id_first_and_keeps_it_out_of_the_cast(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", "sh", "-c", "echo child-started"])
    assert h.finish() == 0
    out = bytes(h.output)
    found = BANNER.search(out)
    assert found is not None, out
    assert found.end() <= out.index(b"child-started")  # said before the child runs
    meta, _, events = only_session(home)
    assert found.group(1).decode() == meta["id"]
    assert "shellkeep: recording" not in output_text(events)


@pytest.mark.parametrize(
    ("args", "env"),
    [(["-q", "run", "--"], {}), (["run", "--"], {"SHELLKEEP_RECORD_BANNER": "false"})],
    ids=["quiet", "record.banner-false"],
)
def test_no_start_line_with_q_or_record_banner_false(home: Paths, args: list[str], env: dict[str, str]) -> None:
    h = PtyHarness.start([*SK, *args, "sh", "-c", "echo child-started"], env={**os.environ, **env})
    assert h.finish() == 0
    assert b"child-started" in h.output and BANNER.search(bytes(h.output)) is None
    assert session_folders(home)  # still recorded


def test_no_start_line_when_stdout_is_not_a_terminal(home: Paths) -> None:
    result = run_sk("run", "--", "sh", "-c", "echo child-started")
    assert result.returncode == 0 and b"shellkeep: recording" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "name, said",
    [
        ("", "a session name cannot be empty; give --name a word, e.g. --name fix-login"),
        ("  ", "a session name cannot be empty; give --name a word, e.g. --name fix-login"),
        ("20261206-031505-0886a", "session name '20261206-031505-0886a' looks like a session id"),
        ("20261206-031505", "session name '20261206-031505' looks like a session id"),
    ],
    ids=["empty", "blank", "an-id", "an-id-prefix"],
)
def test_a_name_no_command_could_find_the_session_by_is_refused(home: Paths, name: str, said: str) -> None:
    """``--name ''`` or an id-shaped name was stored, and 'show NAME' never found it (trial)."""
    done = run_sk("run", "--name", name, "--", "true")
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"shellkeep: {said}") and done.stderr.count(b"\n") == 1
    assert session_folders(home) == []  # refused before anything is stored


def test_a_name_made_of_an_id_and_a_word_is_kept(home: Paths) -> None:
    assert run_sk("run", "--name", "20261206-fix", "--", "true").returncode == 0
    meta, _, _ = only_session(home)
    assert meta["name"] == "20261206-fix"
