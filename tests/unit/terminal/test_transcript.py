"""The transcript: what the screen showed, each line once, in order of first appearance."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.asciicast.model import Event
from shellkeep.terminal.transcript import iter_transcript
from tests.recordings import read_transcript
from shellkeep.termsize import TermSize
from tests.helpers import CASTS, corpus_param


def texts(events: list[Event], size: TermSize = TermSize(40, 5)) -> list[str]:
    return [line.text for line in iter_transcript(events, size)]


def test_scrolled_lines_come_out_in_order_with_escape_codes_gone() -> None:
    out = "".join(f"\x1b[1;3{i % 8}mline {i}\x1b[0m\r\n" for i in range(12))
    assert texts([Event(0.1, "o", out)]) == [f"line {i}" for i in range(12)]


def test_a_tui_redrawing_the_same_screen_adds_its_text_once() -> None:
    frame = "\x1b[H\x1b[2J" + "\r\n".join(["header", "row a", "row b", "footer"])
    events = [Event(i * 0.1, "o", frame) for i in range(300)]
    assert texts(events) == ["header", "row a", "row b", "footer"]


def test_a_line_redrawn_in_place_keeps_its_final_text_only() -> None:
    events = [Event(i * 0.1, "o", f"\rprogress {i * 10}%") for i in range(11)]
    events.append(Event(2.0, "o", "\r\ndone\r\n"))
    assert texts(events) == ["progress 100%", "done"]


def test_each_line_carries_the_time_it_was_first_drawn() -> None:
    events = [Event(1.0, "o", "first\r\n"), Event(5.0, "o", "second\r\n"), Event(9.0, "o", "third")]
    lines = list(iter_transcript(events, TermSize(40, 5)))
    assert [(line.time_s, line.text) for line in lines] == [(1.0, "first"), (5.0, "second"), (9.0, "third")]


def test_the_alternate_screen_is_kept_and_the_main_screen_comes_back() -> None:
    events = [
        Event(0.0, "o", "$ vim notes\r\n"),
        Event(1.0, "o", "\x1b[?1049h\x1b[Hediting notes\r\n~\r\n~"),
        Event(2.0, "o", "\x1b[?1049l$ echo after\r\nafter"),
    ]
    assert texts(events) == ["$ vim notes", "editing notes", "~", "$ echo after", "after"]


def test_a_clear_keeps_what_was_cleared() -> None:
    events = [Event(0.0, "o", "before clear\r\n"), Event(1.0, "o", "\x1b[2J\x1b[Hafter clear")]
    assert texts(events) == ["before clear", "after clear"]


def test_a_resize_keeps_the_lines_it_cuts() -> None:
    events = [Event(0.0, "o", "a line far to the right of column 20"), Event(1.0, "r", "20x5"), Event(2.0, "o", "\r\nnext")]
    lines = texts(events, TermSize(60, 5))
    assert lines[0] == "a line far to the right of column 20"
    assert lines[-1] == "next"


def test_wide_and_combining_characters_survive() -> None:
    assert texts([Event(0.0, "o", "日本語 e\u0301 🍺 ok")]) == ["日本語 é 🍺 ok"]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(CASTS / "top-v2.cast", id="data/top-v2.cast"),  # a TUI redrawing in place
        pytest.param(CASTS / "repl-v2.cast", id="data/repl-v2.cast"),  # a line editor, per key
        pytest.param(CASTS / "typing-v1.json", id="data/typing-v1.json"),  # v1 delays, emoji
        pytest.param(CASTS / "full-v3.cast", id="data/full-v3.cast"),  # v3 intervals, a resize
        pytest.param(CASTS / "vim-v1.json", id="data/vim-v1.json"),  # the alternate screen
        pytest.param(CASTS / "shell-v2.cast", id="data/shell-v2.cast"),  # a shell, an editor, a paste
        corpus_param("v2/termtosvg__htop.cast"),
        corpus_param("v2/termtosvg__ipython.cast"),
        corpus_param("v1/asciinema-server__welcome.json"),
        corpus_param("v3/asciinema__full-v3.cast"),
    ],
)
def test_recordings_render_without_repeats(path: Path) -> None:
    lines = [line.text for line in read_transcript(path)]
    assert lines
    assert len(lines) == len(set(lines))
    assert all("\x1b" not in line for line in lines)


@pytest.mark.parametrize(
    ("path", "banner", "inputs"),
    [
        pytest.param(
            CASTS / "repl-v2.cast",
            "Python 3.12.3",
            ["In [1]: import math", "In [2]: for i in range(3):", "In [3]: exit"],
            id="data/repl-v2.cast",
        ),
        corpus_param(
            "v2/termtosvg__ipython.cast",
            "Python 3.7.1",
            ["In [1]: import time", "In [2]: for i in range(40):", "In [3]: exit"],
        ),
    ],
)
def test_a_repl_transcript_is_in_order_of_appearance(path: Path, banner: str, inputs: list[str]) -> None:
    lines = [line.text for line in read_transcript(path)]
    assert lines[0].startswith(banner)
    assert [lines.index(text) for text in inputs] == sorted(lines.index(text) for text in inputs)
    times = [line.time_s for line in read_transcript(path)]
    assert times == sorted(times)


def test_a_line_output_again_is_kept_each_time_a_redraw_is_not() -> None:
    # A shell: the same command run three times shows its command and output three times,
    # on screen at the end or scrolled off; a TUI's frame redrawn over itself stays once.
    typed = "".join(f"$ echo same-line\r\nsame-line\r\n" for _ in range(3)) + "$ "
    assert texts([Event(0.1, "o", typed)], TermSize(40, 24)) == ["$ echo same-line", "same-line"] * 3 + ["$"]
    assert texts([Event(0.1, "o", typed)], TermSize(40, 3)) == ["$ echo same-line", "same-line"] * 3 + ["$"]
    frame = "\x1b[H\x1b[2J" + "\r\n".join(["header", "row", "footer"])
    assert texts([Event(i * 0.1, "o", frame) for i in range(50)], TermSize(40, 10)) == ["header", "row", "footer"]
