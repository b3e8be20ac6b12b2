"""``shellkeep run`` with real interactive programs in real ptys: bash, python3, vi, getpass.

Each program runs under ``shellkeep run --`` inside a ``ScreenDriver`` (a pexpect pty of a
fixed size whose output is rendered by shellkeep's terminal emulator). The test types as a
user would, waits for the rendered screen, and then plays the recording (``session.cast``)
into a terminal of the header's size, applying its resize events, to check that it shows
what the user saw.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from shellkeep.asciicast.model import Event, Header, TermSize
from shellkeep.store.paths import Paths
from shellkeep.terminal.emulator import Terminal
from shellkeep.terminal.snapshot import Cell, ScreenSnapshot
from tests.agents.screen_driver import ScreenDriver, replay_screens, screen_text
from tests.helpers import SK, PtyHarness, only_session, output_text

pytestmark = pytest.mark.timeout(120)

PROMPT = "sk$ "
SIZE = TermSize(cols=80, rows=24)
WAIT_S = 20.0
RED, BLUE = 1, 4  # xterm palette indices (SGR 31, 34)

Start = Callable[..., ScreenDriver]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Yield a factory that runs ``shellkeep run [OPTIONS] -- ARGV`` under a ``ScreenDriver``.

    Call it as ``start(argv, sk_options=(...), size=...)``. The child gets
    the test's environment (SHELLKEEP_HOME from the ``home`` fixture) with a private HOME,
    a plain bash prompt ``sk$ `` and no history or startup files of the user's.
    """
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    env = dict(os.environ)
    for var in ("PROMPT_COMMAND", "BASH_ENV", "ENV", "PYTHONSTARTUP", "LS_COLORS", "VIMINIT", "EXINIT"):
        env.pop(var, None)
    env.update(
        HOME=str(user_home),
        TERM="xterm-256color",
        LANG="C.UTF-8",
        PS1=PROMPT,
        HISTFILE=str(user_home / ".bash_history"),
        INPUTRC="/dev/null",
        # The start line is on the user's screen but never in the recording (tests/e2e/test_run.py):
        # off here, where the screen the user saw is compared with the recorded one line for line.
        SHELLKEEP_RECORD_BANNER="false",
    )
    drivers: list[ScreenDriver] = []

    def _start(
        argv: Sequence[str],
        *,
        sk_options: Sequence[str] = (),
        size: TermSize = SIZE,
    ) -> ScreenDriver:
        driver = ScreenDriver(
            [*SK, "run", *sk_options, "--", *argv],
            env=env,
            cwd=Path.cwd(),
            size=size,
            log_path=tmp_path / f"screen-{len(drivers)}.log",
            echo=True,
        )
        drivers.append(driver)
        return driver

    yield _start
    for driver in drivers:
        driver.close()


def rendered_recording(header: Header, events: Sequence[Event]) -> list[str]:
    """Return the screen text after each event of a recording, played through the terminal."""
    return [screen_text(terminal) for _, terminal in replay_screens(header.size, events)]


def final_screen(header: Header, events: Sequence[Event]) -> Terminal:
    """Return the terminal a recording leaves behind."""
    terminal: Terminal | None = None
    for _, terminal in replay_screens(header.size, events):
        pass
    assert terminal is not None, "the recording holds no events"
    return terminal


def typed_text(events: Sequence[Event]) -> str:
    """Return the concatenated data of the input events."""
    return "".join(e.data for e in events if e.code == "i")


def cell_at(screen: ScreenSnapshot, text: str) -> Cell:
    """Return the first cell of the first place *text* shows on *screen*."""
    for y, line in enumerate(screen.to_text().splitlines()):
        x = line.find(text)
        if x >= 0:
            return screen.lines[y][x]
    raise AssertionError(f"{text!r} not on screen:\n{screen.to_text()}")


def enter(driver: ScreenDriver, line: str) -> None:
    """Type *line* at a shell or REPL prompt, wait until it is echoed, press Enter."""
    driver.type(line)
    driver.wait_for_screen(line, WAIT_S)
    driver.press("enter")


# -- (a) an interactive bash ----------------------------------------------------------------


BASH = ["bash", "--norc", "--noprofile", "-i"]


def test_interactive_bash_is_shown_and_recorded(home: Paths, start: Start) -> None:
    Path("somedir").mkdir()
    Path("file.txt").write_text("x")
    driver = start(BASH)
    driver.wait_for_screen(PROMPT.strip(), WAIT_S)

    enter(driver, "echo hello-$((6*7))")
    driver.wait_for_screen("hello-42", WAIT_S)
    enter(driver, r"printf '\033[31mRED\033[0m plain\n'")
    driver.wait_for_screen("RED plain", WAIT_S)
    enter(driver, "ls --color=always")
    driver.wait_for_screen("somedir", WAIT_S)
    live = driver.snapshot()
    assert cell_at(live, "RED plain").fg == RED
    assert cell_at(live, "plain").fg is None  # the terminal's default colour
    assert (cell_at(live, "somedir").fg, cell_at(live, "somedir").bold) == (BLUE, True)
    enter(driver, "exit 7")
    assert driver.wait_exit(WAIT_S) == 7
    seen = driver.text()

    meta, header, events = only_session(home)
    assert (meta["status"], meta["exit_code"]) == ("finished", 7)
    assert meta["command"] == BASH
    assert (header.size.cols, header.size.rows) == (SIZE.cols, SIZE.rows)
    # The recording, played through the terminal, shows exactly what the user's terminal showed.
    recorded = final_screen(header, events)
    assert screen_text(recorded) == seen
    for text in ("hello-42", "RED plain", "file.txt  somedir", f"{PROMPT}exit 7"):
        assert text in seen, seen
    assert cell_at(recorded.snapshot(), "RED plain").fg == RED
    assert (cell_at(recorded.snapshot(), "somedir").fg, cell_at(recorded.snapshot(), "somedir").bold) == (BLUE, True)
    assert "\x1b[31mRED\x1b[0m" in output_text(events)
    # Every key typed is stored as input, in order.
    typed = typed_text(events)
    assert typed == "echo hello-$((6*7))\r" + "printf '\\033[31mRED\\033[0m plain\\n'\r" + "ls --color=always\r" + "exit 7\r"
    assert meta["record_input"] is True
    assert meta["input_bytes"] == len(typed.encode())


def test_no_input_stores_no_keystrokes(home: Paths, start: Start) -> None:
    driver = start(BASH, sk_options=("--no-input",))
    driver.wait_for_screen(PROMPT.strip(), WAIT_S)
    enter(driver, "echo unstored-$((2+3))")
    driver.wait_for_screen("unstored-5", WAIT_S)
    enter(driver, "exit 3")
    assert driver.wait_exit(WAIT_S) == 3

    meta, header, events = only_session(home)
    assert [e for e in events if e.code == "i"] == []
    assert meta["record_input"] is False
    assert meta["input_bytes"] == 0
    assert meta["exit_code"] == 3
    # What the shell echoed is output, and is still recorded.
    assert "unstored-5" in screen_text(final_screen(header, events))


# -- (b) the python3 REPL -------------------------------------------------------------------


def test_python_repl_is_shown_and_recorded(home: Paths, start: Start) -> None:
    driver = start([sys.executable, "-q"])
    driver.wait_for_screen(">>>", WAIT_S)
    enter(driver, "x = 6 * 7")
    enter(driver, 'print(f"answer={x}")')
    driver.wait_for_screen("answer=42", WAIT_S)
    enter(driver, "'ab' * 3")
    driver.wait_for_screen("'ababab'", WAIT_S)
    enter(driver, "exit(3)")
    assert driver.wait_exit(WAIT_S) == 3
    seen = driver.text()

    meta, header, events = only_session(home)
    assert (meta["status"], meta["exit_code"]) == ("finished", 3)
    recorded = screen_text(final_screen(header, events))
    assert recorded == seen
    for text in (">>> x = 6 * 7", '>>> print(f"answer={x}")', "answer=42", "'ababab'", ">>> exit(3)"):
        assert any(text in line for line in recorded.splitlines()), recorded
    typed = typed_text(events)
    for line in ("x = 6 * 7\r", 'print(f"answer={x}")\r', "exit(3)\r"):
        assert line in typed


# -- (c) a curses program: vi ---------------------------------------------------------------


def _vi() -> list[str]:
    for name in ("vim", "vi"):
        found = shutil.which(name)
        if found:
            return [found, "-u", "NONE", "-N", "-i", "NONE"]
    pytest.skip("neither vim nor vi is installed")


def test_vi_edits_a_file_resizes_and_leaves_the_shell_screen(home: Paths, start: Start) -> None:
    vi = " ".join(_vi())
    big = TermSize(cols=100, rows=30)
    driver = start(BASH)
    driver.wait_for_screen(PROMPT.strip(), WAIT_S)
    enter(driver, "echo before-vi")
    enter(driver, f"{vi} notes.txt")
    driver.wait_for_screen('"notes.txt"', WAIT_S)  # vi's message line: the new file
    driver.type("i")
    driver.wait_until(lambda: driver.lines()[SIZE.rows - 1].startswith("-- INSERT --"), WAIT_S, "insert mode")
    driver.type("hello from vi")
    driver.wait_for_screen("hello from vi", WAIT_S)

    driver.resize(big)
    # vi redrew at the new size: its mode line moved to the new last row, '~' rows fill the rest.
    driver.wait_until(
        lambda: driver.lines()[big.rows - 1].startswith("-- INSERT --") and driver.lines()[SIZE.rows - 1] == "~",
        WAIT_S,
        "vi redrawn at 100x30",
    )
    at_big_size = driver.text()
    assert at_big_size.splitlines()[0] == "hello from vi"
    driver.press("escape")
    driver.type(":wq")
    driver.wait_for_screen(":wq", WAIT_S)
    driver.press("enter")
    driver.wait_until(lambda: driver.lines()[3] == PROMPT.strip(), WAIT_S, "the shell's prompt after vi")
    assert Path("notes.txt").read_text() == "hello from vi\n"
    enter(driver, "cat notes.txt")
    enter(driver, "exit")
    assert driver.wait_exit(WAIT_S) == 0
    seen = driver.text()
    assert "-- INSERT --" not in seen and "~" not in seen.splitlines()
    # shellkeep wrote nothing of its own (no warning) after vi's output: pyte's own parser
    # chokes on vim's ``ESC[?4m`` (XTQMODKEYS) unless the sequence is skipped.
    assert "shellkeep:" not in seen, seen

    meta, header, events = only_session(home)
    assert meta["exit_code"] == 0
    text = output_text(events)
    assert "\x1b[?1049h" in text and "\x1b[?1049l" in text
    resizes = [e for e in events if e.code == "r"]
    assert [e.data for e in resizes] == ["100x30"]
    # The recording shows vi redrawn at 100x30 after the resize event, as the user saw it...
    snapshots = rendered_recording(header, events)
    after_resize = [s.splitlines() for s in snapshots[events.index(resizes[0]) :]]
    assert any(
        len(lines) == big.rows
        and lines[0] == "hello from vi"
        and lines[SIZE.rows - 1] == "~"
        and lines[big.rows - 1].startswith("-- INSERT --")
        for lines in after_resize
    ), f"vi is not redrawn at 100x30 in the recording; the user saw:\n{at_big_size}"
    # ...and its last screen is the shell's, vi gone, as the user saw it.
    last = final_screen(header, events)
    assert last.size == big
    assert screen_text(last) == seen
    lines = seen.splitlines()
    assert lines[:3] == [f"{PROMPT}echo before-vi", "before-vi", f"{PROMPT}{vi} notes.txt"]
    assert f"{PROMPT}cat notes.txt" in lines and "hello from vi" in lines


# -- (d) a password prompt ------------------------------------------------------------------


SECRET = "hunter2-S3cr3t-Zq"
GETPASS_CHILD = """
import getpass
name = input("name: ")
secret = getpass.getpass("password: ")
after = input("after: ")
print(f"name={name} length={len(secret)} after={after}")
"""


def test_a_password_typed_at_a_prompt_is_not_stored(home: Paths, start: Start) -> None:
    driver = start([sys.executable, "-c", GETPASS_CHILD])
    driver.wait_for_screen("name:", WAIT_S)
    enter(driver, "alice")
    driver.wait_for_screen("password:", WAIT_S)  # getpass turns echo off before its prompt
    driver.type(SECRET)
    driver.press("enter")
    driver.wait_for_screen("after:", WAIT_S)
    enter(driver, "bob")
    driver.wait_for_screen(f"name=alice length={len(SECRET)} after=bob", WAIT_S)
    assert driver.wait_exit(WAIT_S) == 0
    assert SECRET not in driver.text()

    meta, _, events = only_session(home)
    folder = Path(str(meta["cast"])).parent
    for path in [folder, *folder.rglob("*")]:
        assert SECRET not in path.name
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    for path in home.home.rglob("*"):  # nor anywhere else shellkeep keeps data
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    markers = [(i, e.data) for i, e in enumerate(events) if e.code == "m"]
    assert [data for _, data in markers] == ["input hidden"]
    typed = typed_text(events)
    assert typed == "alice\rbob\r"
    # The marker stands where the password was typed: after "alice", before "bob".
    marker_at = markers[0][0]
    assert (typed_text(events[:marker_at]), typed_text(events[marker_at:])) == ("alice\r", "bob\r")
    assert meta["hidden_input"] is True
    assert meta["input_bytes"] == len(typed)


# -- (e) the terminal's answers -------------------------------------------------------------


CPR_CHILD = r"""
import os, sys, termios, tty
old = termios.tcgetattr(0)
tty.setraw(0)
os.write(1, b"\x1b[6n")
reply = b""
while not reply.endswith(b"R"):
    reply += os.read(0, 64)
    os.write(1, b"PART " + reply.hex().encode() + b"\r\n")
termios.tcsetattr(0, termios.TCSADRAIN, old)
os.write(1, b"REPLY " + reply.hex().encode() + b"\r\n")
print("TYPED", input("type: "))
"""

CPR_REPLY = b"\x1b[12;34R"


def _answer_and_type(h: PtyHarness, reply_parts: Sequence[bytes]) -> None:
    h.expect(b"\x1b[6n")
    sent = b""
    for part in reply_parts:
        h.write(part)
        sent += part
        h.expect(b"PART " + sent.hex().encode())  # the child has read this part on its own
    h.expect(b"REPLY " + CPR_REPLY.hex().encode())
    h.expect(b"type: ")
    h.write(b"typed-after\r")
    h.expect(b"TYPED typed-after")
    assert h.finish() == 0


def test_a_terminal_answer_reaches_the_child_but_is_not_stored_as_input(home: Paths) -> None:
    h = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", CPR_CHILD], cols=SIZE.cols, rows=SIZE.rows)
    _answer_and_type(h, [CPR_REPLY])
    meta, _, events = only_session(home)
    assert "\x1b[6n" in output_text(events)
    assert typed_text(events) == "typed-after\r"
    assert meta["input_bytes"] == len("typed-after\r")


def test_a_terminal_answer_split_across_two_reads_is_not_stored_as_input(home: Paths) -> None:
    # A reply can arrive in two reads (a slow link, ssh); it was still never typed.
    # Fails while capture/recorder.py strips replies from each read on its own.
    h = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", CPR_CHILD], cols=SIZE.cols, rows=SIZE.rows)
    _answer_and_type(h, [CPR_REPLY[:5], CPR_REPLY[5:]])
    _, _, events = only_session(home)
    assert typed_text(events) == "typed-after\r"
