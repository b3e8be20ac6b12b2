"""``shellkeep cat``: the raw output, or the plain-text transcript."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from tests.helpers import invoke_sk
from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from tests.factory import make_session

EVENTS = [(0.1, "o", "\x1b[31mred\x1b[0m line\r\n"), (0.2, "i", "typed"), (0.3, "o", "\x1b[H\x1b[2Jafter clear\r\n")]


def test_cat_prints_the_output_as_recorded(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, events=EVENTS)
    result = CliRunner().invoke(main, ["cat", meta.id])
    assert result.exit_code == 0
    assert result.stdout_bytes == "\x1b[31mred\x1b[0m line\r\n\x1b[H\x1b[2Jafter clear\r\n".encode()


def test_cat_text_prints_what_the_screen_showed(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, events=EVENTS)
    result = CliRunner().invoke(main, ["cat", "--last", "--text"])
    assert result.exit_code == 0
    assert result.stdout == "red line\nafter clear\n"
    assert [(e.command, e.session, e.detail) for e in audit.read_entries(home)] == [("cat", meta.id, "text")]


def test_cat_of_a_corrupt_recording_is_one_line_exit_3(home: Paths) -> None:
    from tests.helpers import run_sk

    meta = make_session(home, Path.cwd(), 1)
    with open(meta.cast, "a") as fh:
        fh.write("garbage\n[1.0, \"o\", \"x\"]\n")
    result = invoke_sk("cat", meta.id)
    assert result.returncode == 3
    assert result.stderr.count(b"\n") == 1 and b"is not a valid asciicast v2 event" in result.stderr


def test_cat_of_a_damaged_compressed_recording_shows_what_came_before_then_one_line_exit_3(home: Paths) -> None:
    from tests.helpers import damage_compressed, run_sk

    events = [(0.1 * n, "o", f"line {n}\r\n") for n in range(1, 6)]
    meta = make_session(home, Path.cwd(), 1, events=events)
    at = damage_compressed(Path(meta.cast), keep_lines=5)
    result = invoke_sk("cat", meta.id)
    assert result.returncode == 3
    assert result.stdout.startswith(b"line 1\r\nline 2\r\nline 3\r\nline 4\r\n")
    assert result.stderr.count(b"\n") == 1
    assert b"recording is damaged at byte " in result.stderr and f"in the zstd frame from byte {at})".encode() in result.stderr
