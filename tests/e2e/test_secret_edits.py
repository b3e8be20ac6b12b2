"""A token typed and edited in a real pty never reaches the stored session, not even in pieces.

A line editor or a TUI's input box draws a typed token in growing prefixes, each erased or
drawn over, and an edit inside the token redraws its tail after a cursor move: the stored
output then held pieces of the token, each too short for its rule. A leak here is any 12
characters of the 40-character token stored in clear (its literal ``ghp_`` and 8 random
characters: 48 bits, far past guessing; shorter starts are kept, see docs/security.md).

Real bash and python3 (readline), and a small program drawing an input box as Ink does
(the box erased and redrawn on every key) and as prompt_toolkit does (each key between its
own mode and colour sequences: 37 characters written per character shown).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.e2e.test_secrets import stored_views
from tests.helpers import SK, PtyHarness, invoke_sk, wait_until

TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ROUTER = "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"  # OpenRouter's format
LEAK = 12
LEFT, RIGHT, HOME, ERASE = b"\x1b[D", b"\x1b[C", b"\x1b[H", b"\x7f"

_BOX = r"""
import sys, termios, tty
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
out = sys.stdout
def box(text, first):
    if not first:
        out.write("\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[G")  # Ink's eraseLines(3)
    out.write("\u256d" + "\u2500" * 50 + "\u256e\r\n\u2502 > " + text.ljust(46) + " \u2502\r\n\u2570" + "\u2500" * 50 + "\u256f")
    out.flush()
text, mode = "", sys.argv[1]
out.write("box-ready\r\n")
box(text, True) if mode == "ink" else out.write("key> ")
out.flush()
while True:
    ch = sys.stdin.read(1)
    if ch == "\r":
        break
    text = text[:-1] if ch == "\x7f" else text + ch
    if mode == "ink":
        box(text, False)
    elif ch == "\x7f":
        out.write("\x1b[?25l\x1b[?7l\x1b[0m\x1b[1D\x1b[K\x1b[?7h\x1b[0m\x1b[?12l\x1b[?25h")
    else:  # prompt_toolkit's per-key output
        out.write("\x1b[?25l\x1b[?7l\x1b[0m" + ch + "\x1b[?7h\x1b[0m\x1b[?12l\x1b[?25h")
    out.flush()
termios.tcsetattr(fd, termios.TCSADRAIN, old)
print("\r\ngot", len(text))
"""


def _keys(text: str) -> list[bytes]:
    return [ch.encode() for ch in text]


def _type(harness: PtyHarness, keys: list[bytes]) -> None:
    """Type ``keys`` one at a time, each once the program has answered the one before."""
    for key in keys:
        seen = len(harness.output)
        harness.write(key)
        wait_until(lambda: harness.read_some(0.05) or len(harness.output) > seen)


def _leaks(home: Paths, token: str = TOKEN) -> list[str]:
    """Return the stored files (and views of them) holding 12 characters of ``token`` in clear."""
    pieces = {token[i : i + LEAK] for i in range(len(token) - LEAK + 1)}
    found = []
    for path, text in stored_views(home.home):
        shown = re.sub(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[()][0-~]|\x1b.", "", text)  # ESC ( B: a character set
        found += [f"{path.name}: {p!r}" for p in sorted(pieces) if p in text or p in shown]
    return found


def _finish(harness: PtyHarness, home: Paths) -> str:
    assert harness.finish(60) == 0
    cast = invoke_sk("export", "--last", "--format", "cast")
    assert cast.returncode == 0, cast.stderr
    text = cast.stdout.decode()
    assert "[REDACTED:github-token]" in text
    return text


def test_readline_edits_inside_a_token_in_bash_and_python_store_no_piece_of_it(home: Paths) -> None:
    env = dict(os.environ, PS1="$ ", INPUTRC="/dev/null", TERM="xterm-256color")
    # Wide enough for a 73-character key on one line (wrapped, bash redraws differently).
    harness = PtyHarness.start([*SK, "run", "--", "bash", "--norc", "-i"], cols=160, env=env)
    harness.expect(b"$ ", 30)
    harness.output.clear()
    missing = TOKEN[:20] + TOKEN[21:]
    edits = [
        # The token without one character, the cursor moved back with arrows, then it is inserted:
        # bash redraws the tail after it, then moves back with backspaces and a carriage return.
        [b"echo ", *_keys(missing), *[LEFT] * 19, TOKEN[20].encode(), b"\r"],
        # The same with Ctrl-B, and a stray character deleted in the middle with DEL.
        [b"echo ", *_keys(missing), *[b"\x02"] * 19, TOKEN[20].encode(), b"\r"],
        [b"echo ", *_keys(TOKEN[:20] + "X" + TOKEN[20:]), *[LEFT] * 20, ERASE, b"\r"],
        # A typo fixed with DEL and with Ctrl-H, and a start erased with Ctrl-W and typed again.
        [b"echo ", *_keys(TOKEN[:20]), b"X", ERASE, *_keys(TOKEN[20:]), b"\r"],
        [b"echo ", *_keys(TOKEN[:20]), b"X", b"\x08", *_keys(TOKEN[20:]), b"\r"],
        [b"echo ", *_keys(TOKEN[:15]), b"\x17", *_keys(TOKEN), b"\r"],
        # Edits in the middle with text after the token: bash deletes with CSI P and redraws the
        # tail, which holds no ``ghp_``. Two stray characters erased with Backspace, one deleted
        # under the cursor with the Delete key, junk killed to the line end with Ctrl-K, and
        # junk before the token killed with Ctrl-U (the line redrawn after it).
        [b"echo '", *_keys(TOKEN[:20] + "QQ" + TOKEN[20:]), b"' done", *[LEFT] * 26, ERASE, ERASE, b"\r"],
        [b"echo '", *_keys(TOKEN[:20] + "Q" + TOKEN[20:]), b"' done", *[LEFT] * 27, b"\x1b[3~", b"\r"],
        [b"echo ", *_keys(TOKEN[:20]), b" junk", *[LEFT] * 5, b"\x0b", *_keys(TOKEN[20:]), b" done\r"],
        [b"junk echo ", *_keys(TOKEN), b" done", *[LEFT] * 50, b"\x15", b"\r"],
        # A stray character typed inside the token, then erased: drawn (and typed) whole with it,
        # the key matches no rule.
        [b"echo ", *_keys(ROUTER[:40] + "Z" + ROUTER[40:]), *[LEFT] * 33, ERASE, b"\r"],
    ]
    for keys in edits:
        _type(harness, keys)
        harness.expect(b"\r\n", 30, times=2)  # the command line, then its output
        harness.expect(b"$ ", 30)
        harness.output.clear()
    # python3's input() with readline: the same insertion inside the token.
    harness.write(f"{sys.executable} -c \"import readline; print(len(input('ke' 'y> ')))\"\r".encode())
    harness.expect(b"key> ", 30)
    _type(harness, [*_keys(missing), *[LEFT] * 19, TOKEN[20].encode(), b"\r"])
    harness.expect(b"40", 30)
    # Each command typed once bash's prompt after the answer is drawn, not an earlier one: keys
    # typed before bash reads them are echoed by the tty, then redrawn by readline, so the key's
    # echo would be cut in two by the prompt.
    harness.expect(b"$ ", 30, since=harness.output.rfind(b"40"))
    harness.output.clear()
    harness.write(f"{sys.executable} -c \"import readline; print(len(input('ke' 'y> ')))\"\r".encode())
    harness.expect(b"key> ", 30)
    _type(harness, [*_keys(TOKEN[:20] + "QQ" + TOKEN[20:] + " x"), *[LEFT] * 22, ERASE, ERASE, b"\r"])
    harness.expect(b"42", 30)
    harness.expect(b"$ ", 30, since=harness.output.rfind(b"42"))
    # The key's end typed first, then its start before it (Home, Right x5): the start is typed
    # after a cursor move's ``ESC [ C`` and without its end. Typed into ``read`` (no line editor:
    # the tty echoes ``^[[C``), as readline's redraw of such an insertion is a leak of its own
    # (see docs/security.md); the keys are the same.
    harness.write(b"read -r x; echo ${#x}\r")
    harness.expect(b"read -r x; echo ${#x}\r\n", 30)
    _type(harness, [b"echo ", *_keys(ROUTER[-7:]), HOME, *[RIGHT] * 5, *_keys(ROUTER[:-7]), b"\r"])
    harness.expect(b"96", 30)  # what read took: the keys, escape sequences and all
    harness.write(b"exit\r")
    cast = _finish(harness, home)
    assert not (found := _leaks(home) + _leaks(home, ROUTER)), "\n".join(found) + "\n" + cast
    assert "[REDACTED:openrouter-key]" in cast


def test_a_token_typed_into_a_tui_input_box_stores_no_prefix_of_it(home: Paths) -> None:
    for mode in ("ink", "prompt_toolkit"):
        harness = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", _BOX, mode])
        harness.expect(b"box-ready", 30)
        harness.expect("\u256f".encode() if mode == "ink" else b"key> ", 30)
        _type(harness, [*_keys(TOKEN[:20]), b"X", ERASE, *_keys(TOKEN[20:]), b"\r"])
        harness.expect(b"got 40", 30)
        _finish(harness, home)
    assert _leaks(home) == []


def test_a_token_format_literal_inside_base64_or_a_word_is_not_a_start_cut_short() -> None:
    # In process: no terminal is needed to show that plain output stays as it is.
    from shellkeep.capture.redaction.redactor import Redactor, StreamRedactor

    lines = (
        "JiCchdDp25EIm/YC5kyGWGm40a58fskSUFIL56FaIY+rOjc4ybXNuTo036w45kNUhnWlQJK+ZHco\r\n",  # Yandex's YC
        "The task-management dashboard uses 1.2k tokens\r\n",  # OpenAI's sk-
        "see ghp_XXXXXXXXXXXX, ghp_abcdefghijkl and AKIAEXAMPLEKEYS.\r\n",  # punctuation after: not a redraw
        "npm_installation_notes-v2 and ghp_abcdefghijkl-notes\r\n",  # a word before a character ghp_ lacks: no typo
    )
    for line in lines:
        stream = StreamRedactor(Redactor(), keep_columns=True)
        assert stream.feed(line) + stream.flush() == line
    stream = StreamRedactor(Redactor(), keep_columns=True)
    redrawn = stream.feed("$ ghp_A1b2C3d4E5f6 \r\n") + stream.flush()  # a start a redraw left: cut short
    assert redrawn.startswith("$ [REDACTED:github-token]") and "A1b2" not in redrawn
    stream = StreamRedactor(Redactor(), keep_columns=True)
    typo = stream.feed("$ ghp_A1b2C3d4E5f6-G7h8 \r\n") + stream.flush()  # a character ghp_ lacks, typed inside
    assert typo.startswith("$ [REDACTED:github-token]") and "G7h8" not in typo


def test_a_tail_redrawn_after_a_delete_inside_a_token_is_redacted() -> None:
    # In process: the fresh-user trial's stream, where readline deleted a typo with CSI P and
    # redrew the token's tail (no ``ghp_`` in it) after the token's start had been written.
    from shellkeep.capture.redaction.redactor import default_stream_redactor

    typed = "s='" + TOKEN[:20] + "QQ" + TOKEN[20:] + "'"
    chunks = ["$ ", *typed, *["\b"] * 21, "\b\x1b[1P", "\b\x1b[1P" + TOKEN[20:] + "'" + "\b" * 21, "\r\n$ "]
    stream = default_stream_redactor(screen=True)
    out = "".join(stream.feed(chunk) for chunk in chunks) + stream.flush()
    assert [TOKEN[i : i + LEAK] for i in range(len(TOKEN) - LEAK + 1) if TOKEN[i : i + LEAK] in out] == []
    assert "[REDACTED:github-token]'" + "\b" * 21 in out and out.endswith("\r\n$ ")
    # The tail's marker was drawn where readline's backspaces put it, inside the first marker
    # (23 columns for 42): the line is redrawn, so the screen shows one whole marker.
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    screen = Terminal(TermSize(80, 5))
    screen.feed(out)
    assert screen.text_lines()[0] == "$ s='[REDACTED:github-token]'"


@pytest.mark.parametrize("config", [["--no-config"], []], ids=["plain", "coloured"])
def test_a_token_typed_at_fishs_prompt_is_stored_redacted(home: Paths, tmp_path: Path, config: list[str]) -> None:
    # fish draws each key at its column: "\r", a CSI C to the column, the character (coloured,
    # each between its own colour sequences, with its own config); typed again, it suggests the
    # rest of the line from its history after each key, then moves back. The command lines,
    # typed and edited, are stored with the token's marker, no piece of it in clear; so is a
    # later session's, where the first key brings the token back from the history.
    import shutil

    if shutil.which("fish") is None:
        pytest.skip("needs fish")
    # Its own history and universal variables: a fish running at the same time in another test
    # would otherwise share them, and fish repaints its command line when they change.
    env = dict(os.environ, TERM="xterm-256color", XDG_DATA_HOME=str(tmp_path / "fish-data"), XDG_CONFIG_HOME=str(tmp_path / "fish-config"))
    prompt = 'function fish_prompt; echo -n "\\$ "; end'
    sessions = (
        [
            [b"echo ", *_keys(TOKEN)],
            [b"echo ", *_keys(TOKEN[:20]), b"X", ERASE, *_keys(TOKEN[20:])],  # a typo erased inside it
            [b"echo ", *_keys(TOKEN[:30]), *[LEFT] * 10, *_keys("x"), ERASE, RIGHT * 10, *_keys(TOKEN[30:])],
        ],
        [[b"echo ", *_keys(TOKEN)]],  # the next day: suggested from the first key on
    )
    for lines in sessions:
        harness = PtyHarness.start([*SK, "run", "--", "fish", *config, "-C", prompt], cols=120, env=env)
        harness.expect(b"$ ", 30)
        for keys in lines:
            _type(harness, keys)
            since = len(harness.output)
            harness.write(b"\r")
            harness.expect(b"$ ", 30, since=since)
        harness.write(b"exit\r")
        cast = _finish(harness, home)
        assert not (found := _leaks(home)), "\n".join(found) + "\n" + cast
