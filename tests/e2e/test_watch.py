"""The live socket and ``shellkeep watch`` (issue 12), in real ptys with real programs.

A recorded bash runs in one pty; ``shellkeep watch`` runs in another, whose output the test
feeds to shellkeep's own terminal emulator to read the screen the viewer sees. Raw socket
clients stand in for ``serve``. Every wait is on an event (text on a screen, a file, EOF).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import sys
import termios
import threading
from pathlib import Path

import pytest

from shellkeep.capture.live import INPUT_MARKER_PREFIX, MAX_CLIENTS, LiveEnd, LiveHeader, connect_live, input_line, parse_line
from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from shellkeep.store.session import LIVE_SOCKET
from shellkeep.terminal.emulator import Terminal
from shellkeep.termsize import TermSize
from tests.e2e.test_disk import small_disk  # noqa: F401 - a fixture: a 256 KiB tmpfs as the data folder
from tests.helpers import PtyHarness, SK, invoke_sk, only_session, output_text, run_sk, wait_until

BASH = ["bash", "--norc", "--noprofile"]
SECRET = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"


WAIT_S = 120.0
"""Bound for what the viewer shows: a start-up on a machine with both cores busy took over 20 s."""


def _env() -> dict[str, str]:
    return {**os.environ, "PS1": "$ ", "TERM": "xterm-256color"}


def _record(name: str, cols: int = 80, rows: int = 24) -> PtyHarness:
    """Start a recorded bash named ``name``; return once it prompts."""
    session = PtyHarness.start([*SK, "run", "--name", name, "--", *BASH], cols=cols, rows=rows, env=_env())
    session.expect(b"$ ")
    return session


def _socket(paths: Paths) -> Path:
    return wait_until(lambda: next(iter(paths.projects.glob(f"*/*/{LIVE_SOCKET}")), None), timeout_s=WAIT_S)  # type: ignore[return-value]


class _Screen:
    """What a pty harness's terminal shows: its output so far through the emulator."""

    def __init__(self, harness: PtyHarness, size: TermSize) -> None:
        self.harness = harness
        self.terminal = Terminal(size)
        self.fed = 0

    def text(self) -> str:
        self.harness.read_some(0.05)
        new = bytes(self.harness.output[self.fed :])
        self.fed += len(new)
        self.terminal.feed(new.decode("utf-8", "replace"))
        return "\n".join(self.terminal.text_lines())

    def wait_for(self, needle: str) -> str:
        try:
            # A bound for a hung viewer, not a speed check: under load a new process may take long to draw.
            return wait_until(lambda: (lambda t: t if needle in t else None)(self.text()), timeout_s=WAIT_S)  # type: ignore[return-value]
        except TimeoutError:
            raise AssertionError(f"{needle!r} never shown; screen:\n{self.text()}") from None


def _lines(sock: socket.socket) -> list[object]:
    """Read ``sock`` to its end; return its lines parsed."""
    sock.settimeout(60)
    data = bytearray()
    while chunk := sock.recv(65536):
        data += chunk
    return [parse_line(line) for line in bytes(data).splitlines()]


class _Reader(threading.Thread):
    """A viewer that keeps reading its socket, on a thread, while the test drives the session."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.lines: list[object] = []
        self.start()

    def run(self) -> None:
        self.lines = _lines(self.sock)


def _finish(session: PtyHarness) -> None:
    session.write(b"exit\r")
    assert session.finish() == 0


def test_watch_draws_the_screen_at_once_then_follows_output_and_resizes_and_q_leaves(home: Paths) -> None:
    session = _record("watched")
    session.write(b"echo before-$((6*7))\r")
    session.expect(b"before-42")
    _socket(home)
    viewer = PtyHarness.start([*SK, "watch", "watched"], cols=120, rows=30, env=_env())
    screen = _Screen(viewer, TermSize(120, 30))
    shown = screen.wait_for("before-42")  # typed before watch started: the screen is rebuilt
    assert "watching " in shown and "q leaves" in shown
    assert not termios.tcgetattr(viewer.fd)[3] & termios.ICANON  # raw while watching

    session.write(b"echo after-$((7*8))\r")
    screen.wait_for("after-56")

    session.resize(100, 24)  # the session's terminal: the relay passes it on as an r event
    session.write(b"printf 'x%.0s' {1..95}; echo ' wide'\r")
    session.expect(b" wide\r\n")
    shown = screen.wait_for("x" * 95 + " wide")  # one row: the viewer follows the new width

    viewer.resize(60, 20)  # the viewer's own terminal, now smaller than the session's
    screen.terminal.resize(TermSize(60, 20))
    shown = screen.wait_for("cropped: session 100x24, terminal 60x20")
    assert "x" * 60 in shown and "x" * 61 not in shown

    viewer.write(b"q")
    wait_until(lambda: termios.tcgetattr(viewer.fd)[3] & termios.ICANON)  # raw mode undone
    assert viewer.finish() == 0
    assert viewer.output.endswith(b"\x1b[?1049l")  # its own screen given back
    _finish(session)


def test_watch_says_when_the_session_ends(home: Paths) -> None:
    session = _record("ending")
    session.write(b"echo ready-$((1+1))\r")
    session.expect(b"ready-2")
    _socket(home)
    viewer = PtyHarness.start([*SK, "watch", "ending"], cols=80, rows=24, env=_env())
    _Screen(viewer, TermSize(80, 24)).wait_for("ready-2")
    _finish(session)
    assert viewer.finish() == 0
    assert b"has ended (finished, exit code 0); replay it with: shellkeep replay " in viewer.output
    meta = json.loads(invoke_sk("show", "ending", "--json").stdout)
    watched = [(e.command, e.detail) for e in read_entries(home) if e.session == meta["id"] and e.command != "show"]
    assert watched == [("watch", "live")]  # one entry, as serve's live view leaves


def test_watch_crops_a_session_bigger_than_the_terminal_and_says_so(home: Paths) -> None:
    session = _record("big", cols=120, rows=40)
    session.write(b"printf 'y%.0s' {1..110}; echo\r")
    session.expect(b"y" * 110)
    _socket(home)
    viewer = PtyHarness.start([*SK, "watch", "big"], cols=60, rows=20, env=_env())
    screen = _Screen(viewer, TermSize(60, 20))
    screen.wait_for("cropped")
    shown = screen.wait_for("y" * 60)  # the session's output may follow the first frame as a live event
    assert "y" * 61 not in shown and "cropped: session 120x40, terminal 60x20" in shown
    viewer.write(b"\x03")  # Ctrl-C leaves too
    assert viewer.finish() == 0
    _finish(session)


def test_watch_an_ended_session_offers_replay(home: Paths) -> None:
    assert run_sk("run", "--name", "gone", "--", "true").returncode == 0
    meta = json.loads(invoke_sk("show", "gone", "--json").stdout)
    result = run_sk("watch", "gone")
    assert result.returncode == 1
    assert result.stderr == f"shellkeep: session {meta['id']} has ended; replay it with: shellkeep replay {meta['id']}\n".encode()


def test_watch_from_inside_the_session_itself_is_refused(home: Paths) -> None:
    session = _record("self")
    folder = _socket(home).parent
    result = run_sk("watch", "self", env={**os.environ, "SHELLKEEP_SESSION": folder.name})
    assert result.returncode == 2
    assert result.stderr == f"shellkeep: this terminal is session {folder.name} itself; watch it from another terminal\n".encode()
    _finish(session)


def test_the_socket_is_owner_only_and_gone_when_the_session_ends(home: Paths) -> None:
    session = _record("perm")
    path = _socket(home)
    mode = os.stat(path).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    client = connect_live(path.parent)
    _finish(session)
    lines = _lines(client)
    assert isinstance(lines[0], LiveHeader) and lines[-1] == LiveEnd("finished", 0)
    assert not path.exists()


def test_a_long_session_folder_path_still_works(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long_home = tmp_path / ("h" * 120)
    monkeypatch.setenv("SHELLKEEP_HOME", str(long_home))
    session = _record("long")
    path = _socket(Paths(home=long_home, config_file=home.config_file))
    assert len(os.fsencode(path)) > 108
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    client = connect_live(path.parent)
    session.write(b"echo long-$((3*4))\r")
    session.expect(b"long-12")
    _finish(session)
    lines = _lines(client)
    assert "long-12" in "".join(e.data for e in lines if getattr(e, "code", "") == "o")  # type: ignore[attr-defined]
    assert not path.exists()


def _backlog_text(folder: Path) -> str:
    """Connect to the live socket in ``folder``; return the output text of its backlog."""
    sock = connect_live(folder, timeout_s=30)
    file = sock.makefile("rb")
    header = parse_line(file.readline())
    assert isinstance(header, LiveHeader)
    events = [parse_line(file.readline()) for _ in range(header.backlog)]
    sock.close()
    return "".join(e.data for e in events if getattr(e, "code", "") == "o")  # type: ignore[attr-defined]


def test_a_viewer_joining_after_a_screen_or_tmux_clear_gets_no_stale_backlog(home: Paths, tmp_path: Path) -> None:
    # TERM=screen (shellkeep inside tmux or screen): clear(1) sends ESC[H ESC[J, not ESC[2J.
    env = {**_env(), "TERM": "screen"}
    session = PtyHarness.start([*SK, "run", "--name", "tmuxed", "--", *BASH], cols=80, rows=24, env=env)
    session.expect(b"$ ")
    session.write(b"for i in $(seq 200); do echo stale-$i; done; clear; echo fresh-$((6*7))\r")
    session.expect(b"fresh-42")
    folder = _socket(home).parent
    text = wait_until(lambda: (lambda t: t if "fresh-42" in t else None)(_backlog_text(folder)))
    assert "stale-" not in text
    # tmux run inside the session draws on the alternate screen: the ring restarts there and
    # keeps the main screen aside, which comes back, without tmux's drawing, once tmux exits.
    tmux = f"tmux -S {tmp_path}/tmux.sock -f /dev/null new-session {' '.join(BASH)}"
    session.write(f"PS1='$ ' {tmux}\r".encode())
    session.expect(b"0:bash")  # tmux's status line: it runs
    # clear(1) in a tmux pane: tmux scrolls the pane away above its status line, no ESC[J.
    session.write(b"for i in $(seq 60); do echo stale-in-tmux-$i; done; clear; echo inside-$((7*8))\r")
    session.expect(b"inside-56")
    text = wait_until(lambda: (lambda t: t if "inside-56" in t else None)(_backlog_text(folder)))
    assert "stale-" not in text and "fresh-42" in text and "\x1b[?1049h" in text
    session.write(b"exit\r")
    session.expect(b"[exited]")
    session.write(b"echo back-$((8*9))\r")
    session.expect(b"back-72")
    text = wait_until(lambda: (lambda t: t if "back-72" in t else None)(_backlog_text(folder)))
    assert "fresh-42" in text and "inside-56" not in text and "stale-" not in text
    _finish(session)


def test_a_secret_reaches_the_viewer_redacted(home: Paths) -> None:
    session = _record("secret")
    client = connect_live(_socket(home).parent)
    session.write(f"echo {SECRET[:20]}''{SECRET[20:]}\r".encode())  # whole only in the output
    session.expect(SECRET[20:].encode() + b"\r\n")
    _finish(session)
    received = "".join(e.data for e in _lines(client) if getattr(e, "code", "") == "o")  # type: ignore[attr-defined]
    assert SECRET not in received and "[REDACTED:" in received


def test_a_secret_typed_across_the_right_margin_reaches_no_viewer_and_no_recording_in_pieces(home: Paths) -> None:
    # readline draws the 80th column's character, then " \r" (xterm's delayed wrap), then the
    # rest: the part of the key on the second row must not be left in clear.
    secret = "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "-FAKEAA"
    session = _record("margin")
    client = _Reader(connect_live(_socket(home).parent))
    for ch in f"echo {secret} done":
        session.write(ch.encode())
        session.read_some(0.01)  # typed key by key: readline echoes each one
    session.write(b"\r")
    session.expect(b"done\r\n")
    session.expect(b"$ ", times=2)
    _finish(session)
    client.join(30)
    viewed = "".join(e.data for e in client.lines if getattr(e, "code", "") == "o")  # type: ignore[attr-defined]
    _, header, events = only_session(home)
    recorded = output_text(events)
    for text in (viewed, recorded):
        assert "A1b2C3d4E5" not in text and "FAKEAA" not in text and "[REDACTED:anthropic-key]" in text
    screen = Terminal(TermSize(80, 24))
    screen.feed(recorded)
    rows = screen.text_lines()
    echoed = next(i for i, row in enumerate(rows) if row.startswith("$ echo [REDACTED:anthropic-key]"))
    assert rows[echoed + 1].strip() == "done"  # the command line keeps its two rows, the key blanked
    assert rows[echoed + 2].startswith("[REDACTED:anthropic-key]")  # echo's own output


def test_input_from_a_viewer_reaches_the_program_and_is_recorded_with_a_marker(home: Paths) -> None:
    session = _record("typed")
    client = connect_live(_socket(home).parent)
    client.sendall(input_line("echo remote-$((2+3))\r", "bob\x1b[31m"))
    session.expect(b"remote-5")
    _finish(session)
    lines = _lines(client)
    assert not [e for e in lines if getattr(e, "code", "") == "i"]  # input is never published
    _, _, events = only_session(home)
    marker = next(i for i, e in enumerate(events) if e.code == "m" and e.data.startswith(INPUT_MARKER_PREFIX))
    assert events[marker].data == INPUT_MARKER_PREFIX + "bob[31m"  # control characters dropped
    typed = next(e for e in events[marker:] if e.code == "i")
    assert typed.data.startswith("echo remote-")


def test_a_stuck_reader_is_dropped_while_the_output_flows_on(home: Paths) -> None:
    session = _record("flood")
    path = _socket(home)
    stuck = connect_live(path.parent)  # connects and never reads
    total = 20 << 20
    program = f"import sys; sys.stdout.write(('z' * 99 + chr(10)) * {total // 100}); print('flood-' + 'done')"
    session.write(f"{sys.executable} -c \"{program}\"\r".encode())
    session.expect(b"flood-done", timeout_s=180)
    # Dropped while the session still runs: reading what it was sent ends in EOF.
    received = sum(len(chunk) for chunk in iter(lambda: stuck.recv(1 << 20), b""))
    assert 0 < received < total
    late = connect_live(path.parent)  # the socket still serves others
    late.settimeout(30)
    assert isinstance(parse_line(late.makefile("rb").readline()), LiveHeader)
    _finish(session)
    _, _, events = only_session(home)
    text = output_text(events)
    assert text.count("z" * 99) == total // 100 and "flood-done" in text


FLOOD_AFTER_ENTER = """
import sys
print("rea" + "dy", flush=True)
sys.stdin.readline()
for i in range(6000):
    sys.stdout.write(f"line {i:05d} " + "x" * 100 + "\\n")
print("CHILD" + "-DONE", flush=True)
"""


def test_viewers_still_follow_when_the_disk_is_full_and_the_socket_goes_at_the_end(small_disk: Path, home: Paths) -> None:
    session = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", FLOOD_AFTER_ENTER], env=_env())
    session.expect(b"ready")
    path = _socket(Paths(small_disk / "home", home.config_file))
    reader = _Reader(connect_live(path.parent))
    session.write(b"\r")
    assert session.finish(60) == 0
    assert b"recording suspended: disk full" in session.output
    reader.join(60)
    lines = reader.lines
    received = "".join(e.data for e in lines if getattr(e, "code", "") == "o")  # type: ignore[attr-defined]
    assert "CHILD-DONE" in received and received.count("line ") == 6000  # more than the disk took
    assert lines[-1] == LiveEnd("finished", 0)
    assert not path.exists()


def test_the_viewer_past_the_limit_is_told_the_session_is_full(home: Paths) -> None:
    session = _record("crowded")
    folder = _socket(home).parent
    viewers = [connect_live(folder, timeout_s=30) for _ in range(MAX_CLIENTS)]
    try:
        for viewer in viewers:  # each one served: its header came
            assert isinstance(parse_line(viewer.makefile("rb").readline()), LiveHeader)
        result = run_sk("watch", "crowded")
        assert result.returncode == 1
        assert result.stderr == f"shellkeep: session {folder.name} has {MAX_CLIENTS} viewers already; try again later\n".encode()
    finally:
        for viewer in viewers:
            viewer.close()
    _finish(session)


def test_watch_says_the_recorder_stopped_when_it_is_killed(home: Paths) -> None:
    session = _record("doomed")
    session.write(b"echo alive-$((2+3))\r")
    session.expect(b"alive-5")
    folder = _socket(home).parent
    viewer = PtyHarness.start([*SK, "watch", "doomed"], cols=80, rows=24, env=_env())
    _Screen(viewer, TermSize(80, 24)).wait_for("alive-5")
    os.kill(session.pid, signal.SIGKILL)  # the recorder: no end line is ever sent
    assert viewer.finish() == 0
    said = bytes(viewer.output)
    assert f"the recorder of session {folder.name} stopped (interrupted); replay what it recorded with: shellkeep replay {folder.name}".encode() in said
    assert b"has ended (running)" not in said
    session.finish()
