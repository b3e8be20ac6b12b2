"""Markers on the screen and across streams: a marker narrower than its secret is never drawn
over, and the same secret gets the same name typed and shown, also shown bare later.

Real bash and a real python3 REPL in a real pty, recorded by a real ``shellkeep``; then the
screen rebuilt from the recording (terminal/) and the txt export are read.
"""

from __future__ import annotations

import json
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


LEFT, HOME, DELETE, BACKSPACE = b"\x1b[D", b"\x1b[H", b"\x1b[3~", b"\x7f"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_an_edit_after_a_marker_on_its_line_never_lands_inside_it(home: Paths) -> None:
    # The marker is wider than the secret (19 columns for 14): readline's edits after it (a
    # backspace, CSI P and the tail redrawn, CSI @, cursor moves) count the secret's columns.
    from tests.e2e.test_secret_edits import _keys, _leaks, _type

    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color", "INPUTRC": "/dev/null", "HISTFILE": "/dev/null"}
    harness = PtyHarness.start([*SK, "run", "--", "bash", "--norc", "-i"], cols=100, rows=40, env=env)
    harness.expect(b"$ ", 30)
    lines = {  # keys typed -> the row the screen must show for them
        "left-backspace-char": (
            [*_keys('password = "hunter2hunter2"'), *[LEFT] * 3, BACKSPACE, b"w"],
            '$ password = "[REDACTED:password]"',
        ),
        "token": ([*_keys('token = "tok3nValue99x"'), *[LEFT] * 3, BACKSPACE, b"w"], '$ token = "[REDACTED:token]"'),
        "deep-inside": (
            [*_keys('password = "hunter2hunter2"'), *[LEFT] * 6, BACKSPACE, b"Q"],
            '$ password = "[REDACTED:password]"',
        ),
        "delete-key": (
            [*_keys('password = "hunter2hunter2"'), *[LEFT] * 5, DELETE, b"y"],
            '$ password = "[REDACTED:password]"',
        ),
        "ctrl-a-before": ([*_keys('password = "hunter2hunter2"'), b"\x01", *_keys("echo ")], '$ echo password = "[REDACTED:password]"'),
        "home-before": ([*_keys('password = "hunter2hunter2"'), HOME, b"x"], '$ xpassword = "[REDACTED:password]"'),
        "between-two": (  # the edit lands between the markers: their columns differ from bash's
            [*_keys('password = "hunter2hunter2" token = "tok3nValue99x"'), *[LEFT] * 20, BACKSPACE, BACKSPACE, b"q"],
            '$ password = "[REDACTED:password]" tqen = "[REDACTED:token]"',
        ),
        "far-after": (
            [*_keys('password = "hunter2hunter2" and more text here'), *[LEFT] * 4, BACKSPACE, b"X"],
            '$ password = "[REDACTED:password]" and more textXhere',
        ),
    }
    for keys, _row in lines.values():
        _type(harness, keys)
        since = len(harness.output)
        harness.write(b"\r")
        harness.expect(b"$ ", 30, since=since)  # the next prompt, after the command's output
    harness.write(b"exit 0\r")
    assert harness.finish(60) == 0

    rows = _replayed_rows()
    text = "\n".join(rows)
    for name, (_keys_typed, row) in lines.items():
        assert row in rows, (name, text)
    assert "password = [REDACTED:password]" in rows, text  # echo's output
    for marker in re.findall(r"\[REDACTED:[^\]\n]*\]?", text):  # every marker whole
        assert marker in ("[REDACTED:password]", "[REDACTED:token]"), (marker, text)
    for secret in ("hunter2hunter2", "hunter2huntwr2", "hunter2hQnter2", "hunter2hunyer2", "tok3nValue99x", "tok3nValuew9x"):
        assert not (found := _leaks(home, secret)), "\n".join(found)


CTRL_A, ALT_D = b"\x01", b"\x1bd"
WIDE = 'password = "Xy7Kq9hunter2hunter2zz"'  # the secret (22 columns) wider than its marker (19)


def _replayed_rows() -> list[str]:
    """Return the rows of the screen rebuilt from the last session's exported cast."""
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    cast = invoke_sk("export", "--last", "--format", "cast")
    assert cast.returncode == 0, cast.stderr.decode()
    header, *events = (json.loads(row) for row in cast.stdout.decode().splitlines())
    terminal = Terminal(TermSize(header["width"], header["height"]))
    for _at, code, data in events:
        if code == "o":
            terminal.feed(data)
    return [row.rstrip() for row in terminal.text_lines()]


def _edit_lines(argv: list[str], prompt: bytes, lines: dict[str, tuple[list[bytes], str]], end: bytes) -> list[str]:
    """Run ``argv`` in a real pty under shellkeep, type each entry of ``lines`` (keys, then
    Enter, then wait for ``prompt``), end with ``end``; return the replayed rows."""
    from tests.e2e.test_secret_edits import _type

    env = {**os.environ, "PS1": "$ ", "TERM": "xterm-256color", "INPUTRC": "/dev/null", "HISTFILE": "/dev/null"}
    harness = PtyHarness.start([*SK, "run", "--", *argv], cols=100, rows=40, env=env)
    harness.expect(prompt, 30)
    for keys, _row in lines.values():
        _type(harness, keys)
        since = len(harness.output)
        harness.write(b"\r")
        harness.expect(prompt, 30, since=since)
    harness.write(end)
    assert harness.finish(60) == 0
    return _replayed_rows()


def _check_rows(home: Paths, rows: list[str], lines: dict[str, tuple[list[bytes], str]], secrets: tuple[str, ...]) -> None:
    """Assert each expected row is shown, every marker whole, and no secret stored in clear."""
    from tests.e2e.test_secret_edits import _leaks

    text = "\n".join(rows)
    for name, (_keys_typed, row) in lines.items():
        assert row in rows, (name, text)
    for marker in re.findall(r"\[REDACTED:[^\]\n]*\]?", text):
        assert marker == "[REDACTED:password]", (marker, text)
    for secret in secrets:
        assert not (found := _leaks(home, secret)), "\n".join(found)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_move_to_the_line_start_over_a_wider_secret_leaves_no_stray_character_in_bash(home: Paths) -> None:
    # readline's Ctrl-A and Home write "\r" and a CSI C per prompt column; the redraw after them
    # is never put inside a CSI C cut between two written pieces (it printed "C" or a '"').
    from tests.e2e.test_secret_edits import _keys

    lines = {
        "ctrl-a": ([*_keys(WIDE), CTRL_A], '$ password = "[REDACTED:password]"'),
        "home": ([*_keys(WIDE), HOME], '$ password = "[REDACTED:password]"'),
        "ctrl-a-delete-y": ([*_keys(WIDE), CTRL_A, *[DELETE] * 8, b"y"], '$ y = "[REDACTED:password]"'),
    }
    rows = _edit_lines(["bash", "--norc", "-i"], b"$ ", lines, b"exit 0\r")
    _check_rows(home, rows, lines, ("Xy7Kq9hunter2hunter2zz", "Xy7Kq9hunter2hunter2"))


@pytest.mark.skipif(shutil.which("python3") is None, reason="needs python3")
def test_a_move_to_the_line_start_over_a_wider_secret_leaves_no_stray_character_in_python(home: Paths) -> None:
    from tests.e2e.test_secret_edits import _keys

    lines = {
        "ctrl-a": ([*_keys(WIDE), CTRL_A], '>>> password = "[REDACTED:password]"'),
        "home": ([*_keys(WIDE), HOME], '>>> password = "[REDACTED:password]"'),
        "ctrl-a-alt-d-x": ([*_keys(WIDE), CTRL_A, ALT_D, b"x"], '>>> x = "[REDACTED:password]"'),
    }
    rows = _edit_lines(["python3", "-q"], b">>> ", lines, b"\x04")
    _check_rows(home, rows, lines, ("Xy7Kq9hunter2hunter2zz", "Xy7Kq9hunter2hunter2"))


FISH_PROMPT = 'function fish_prompt; echo -n "\\$ "; end'


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_an_edit_inside_a_marker_in_fish_never_blanks_the_prompt(home: Paths) -> None:
    # fish starts every piece it draws with "\r" and a CSI C to its column: the columns before
    # it, not drawn since, are never drawn over by a redraw (it wrote spaces over "$ password =").
    from tests.e2e.test_secret_edits import _keys

    lines = {
        "left-backspace-char": (
            [*_keys('password = "hunter2hunter2"'), *[LEFT] * 3, BACKSPACE, b"w"],
            '$ password = "[REDACTED:password]"',
        ),
    }
    rows = _edit_lines(["fish", "--no-config", "-C", FISH_PROMPT], b"$ ", lines, b"exit 0\r")
    text = "\n".join(rows)
    assert any(row.startswith('$ password = "[REDACTED:') for row in rows), text  # the prompt and text kept
    for marker in re.findall(r"\[REDACTED:[^\]\n]*\]?", text):
        assert marker == "[REDACTED:password]" or marker.startswith("[REDACTED:p"), (marker, text)
    from tests.e2e.test_secret_edits import _leaks

    for secret in ("hunter2hunter2", "hunter2huntwr2"):
        assert not (found := _leaks(home, secret)), "\n".join(found)


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_an_edit_inside_a_marker_in_zsh_is_redrawn(home: Paths) -> None:
    # zle writes CSI J after each prompt: on the one row modelled, an erase to the line's end.
    from tests.e2e.test_secret_edits import _keys

    lines = {
        "left-backspace-char": (
            [*_keys('password = "hunter2hunter2"'), *[LEFT] * 3, BACKSPACE, b"w"],
            '$ password = "[REDACTED:password]"',
        ),
        "ctrl-a": ([*_keys(WIDE), CTRL_A], '$ password = "[REDACTED:password]"'),
    }
    rows = _edit_lines(["zsh", "-f", "-i"], b"$ ", lines, b"exit 0\r")
    _check_rows(home, rows, lines, ("hunter2hunter2", "hunter2huntwr2", "Xy7Kq9hunter2hunter2zz"))
