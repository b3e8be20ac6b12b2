"""Renderings of a screen snapshot (shellkeep/terminal/snapshot.py, render.py): text, ANSI, HTML."""

from __future__ import annotations

import pytest

from shellkeep.terminal.snapshot import Cell
from tests.unit.terminal.helpers import render


def test_to_text_strips_trailing_spaces_and_blank_lines() -> None:
    snap = render("one  \r\n\r\n  three\x1b[5;1H   ")
    assert snap.to_text() == "one\n\n  three"


def test_to_text_of_an_empty_screen_is_empty() -> None:
    assert render("").to_text() == ""


def test_wide_characters_take_two_cells() -> None:
    snap = render("日本x")
    assert [cell.char for cell in snap.lines[0][:5]] == ["日", "", "本", "", "x"]
    assert snap.to_text() == "日本x"
    assert snap.cursor.x == 5


@pytest.mark.parametrize(
    ("sgr", "cell", "ansi"),
    [
        ("31", Cell("X", fg=1), "\x1b[0;31mX\x1b[0m"),
        ("91", Cell("X", fg=9), "\x1b[0;91mX\x1b[0m"),
        ("42", Cell("X", bg=2), "\x1b[0;42mX\x1b[0m"),
        ("103", Cell("X", bg=11), "\x1b[0;103mX\x1b[0m"),
        ("38;5;196", Cell("X", fg=196), "\x1b[0;38;5;196mX\x1b[0m"),
        ("48;5;17", Cell("X", bg=17), "\x1b[0;48;5;17mX\x1b[0m"),
        ("38;2;255;128;0", Cell("X", fg="#ff8000"), "\x1b[0;38;2;255;128;0mX\x1b[0m"),
        ("48;2;1;2;3", Cell("X", bg="#010203"), "\x1b[0;48;2;1;2;3mX\x1b[0m"),
        ("38:2::255:0:0", Cell("X", fg="#ff0000"), "\x1b[0;38;2;255;0;0mX\x1b[0m"),
        ("38:2:0:255:0", Cell("X", fg="#00ff00"), "\x1b[0;38;2;0;255;0mX\x1b[0m"),
        ("38:5:200", Cell("X", fg=200), "\x1b[0;38;5;200mX\x1b[0m"),
        ("1", Cell("X", bold=True), "\x1b[0;1mX\x1b[0m"),
        ("3", Cell("X", italic=True), "\x1b[0;3mX\x1b[0m"),
        ("4", Cell("X", underline=True), "\x1b[0;4mX\x1b[0m"),
        ("4:3", Cell("X", underline=True), "\x1b[0;4mX\x1b[0m"),
        ("7", Cell("X", reverse=True), "\x1b[0;7mX\x1b[0m"),
        ("9", Cell("X", strikethrough=True), "\x1b[0;9mX\x1b[0m"),
        ("1;4;31;44", Cell("X", fg=1, bg=4, bold=True, underline=True), "\x1b[0;1;4;31;44mX\x1b[0m"),
        ("1;22", Cell("X"), "X"),
        ("4;4:0", Cell("X"), "X"),
        ("31;39", Cell("X"), "X"),
        ("58:2::1:2:3", Cell("X"), "X"),
        ("58;5;3;1", Cell("X", bold=True), "\x1b[0;1mX\x1b[0m"),
    ],
    ids=lambda value: value if isinstance(value, str) and "\x1b" not in value else None,
)
def test_sgr_sets_cell_attributes_and_ansi_redraws_them(sgr: str, cell: Cell, ansi: str) -> None:
    snap = render(f"\x1b[{sgr}mX\x1b[0m ")
    assert snap.lines[0][0] == cell
    assert snap.to_ansi() == ansi


def test_to_ansi_resets_at_each_line_end_and_keeps_plain_text_plain() -> None:
    snap = render("\x1b[31mred\r\nstill red\x1b[0m plain\r\nplain")
    assert snap.to_ansi().split("\n") == ["\x1b[0;31mred\x1b[0m", "\x1b[0;31mstill red\x1b[0m plain", "plain"]


def test_to_ansi_keeps_coloured_spaces_and_drops_plain_trailing_ones() -> None:
    snap = render("a\x1b[44m  \x1b[0m   ")
    assert snap.to_ansi() == "a\x1b[0;44m  \x1b[0m"


def test_to_html_is_escaped_and_styled_inline() -> None:
    snap = render("<b>&\x1b[1;31mred\x1b[0m \x1b[7mrev\x1b[0m \x1b[38;2;1;2;3mtc")
    out = snap.to_html()
    assert out.startswith("<pre ") and out.endswith("</pre>")
    assert "&lt;b&gt;&amp;" in out
    assert '<span style="color:#cd0000;font-weight:bold">red</span>' in out
    assert '<span style="color:#000000;background:#e5e5e5">rev</span>' in out
    assert '<span style="color:#010203">tc</span>' in out
    assert "\x1b" not in out


def test_to_html_uses_the_xterm_palette_for_256_colours() -> None:
    out = render("\x1b[38;5;196mA\x1b[48;5;244mB").to_html()
    assert "color:#ff0000" in out and "background:#808080" in out
