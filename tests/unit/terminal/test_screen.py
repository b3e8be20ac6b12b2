"""Test the terminal package: emulation (emulator, syntax, sgr), renderings (snapshot, render), replays and the fast last screen (replay, tail)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Event, Header
from shellkeep.errors import DataError
from shellkeep.terminal.emulator import Terminal
from shellkeep.terminal.replay import render_events
from shellkeep.terminal.snapshot import Cell, ScreenSnapshot
from tests.recordings import iter_screens, last_screen, read_tail, screen_at
from shellkeep.termsize import TermSize

SIZE = TermSize(40, 10)
CLEAR = "\x1b[H\x1b[2J"


def write_cast(path: Path, size: TermSize, events: Sequence[tuple[str, str]], *, tail: bytes = b"") -> Path:
    """Write an asciicast v2 file with events 10 ms apart; ``tail`` is appended raw."""
    with open(path, "wb") as fh:
        fh.write(encode_header(Header(size=size)))
        for n, (code, data) in enumerate(events):
            fh.write(encode_event(n * 0.01, code, data))
        fh.write(tail)
    return path


def render(text: str, size: TermSize = SIZE) -> ScreenSnapshot:
    return render_events([Event(0.0, "o", text)], size)


def full_render(path: Path) -> ScreenSnapshot:
    return screen_at(path, math.inf)


# --------------------------------------------------------------------------------------------
# Renderings


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


# --------------------------------------------------------------------------------------------
# Sequences modern TUIs send


@pytest.mark.parametrize(
    "sequence",
    [
        "\x1b[>1u",  # kitty keyboard: push flags
        "\x1b[<u",  # kitty keyboard: pop
        "\x1b[=1;1u",  # kitty keyboard: set
        "\x1b[?u",  # kitty keyboard: query
        "\x1b[>4;2m",  # modifyOtherKeys
        "\x1b[>4m",
        "\x1b[?2026h",  # synchronized output
        "\x1b[?2026l",
        "\x1b[?2026$p",  # DECRQM
        "\x1b[?1004h",  # focus events
        "\x1b[?2004h",  # bracketed paste
        "\x1b[?25l\x1b[?25h",
        "\x1b]8;id=1;https://example.com/a?b=c\x1b\\",  # OSC 8 hyperlink, ST
        "\x1b]8;;\x07",  # OSC 8 end, BEL
        "\x1b]11;?\x07",  # OSC colour query
        "\x1b]10;?\x1b\\",
        "\x1b]52;c;aGVsbG8=\x07",  # clipboard
        "\x1b]133;A\x07",  # prompt marks
        "\x1b]0;title\x07",
        "\x1bP+q544e\x1b\\",  # XTGETTCAP (DCS)
        "\x1b_Gf=100,a=T;iVBORw0KGgo=\x1b\\",  # kitty graphics (APC)
        "\x1b[!p",  # DECSTR
        "\x1b[2 q",  # DECSCUSR
        "\x1b[c",  # DA1
        "\x1b[>c",  # DA2
        "\x1b[>0q",  # XTVERSION
        "\x1b[6n",  # DSR
        "\x1b[14t",  # XTWINOPS
        "\x1b[?3h",  # DECCOLM, ignored as xterm does by default
        "\x1b[38:2::255:0:0m",  # colon truecolour
        "\x1b[4:3m\x1b[4:0m",  # curly underline on and off
        "\x1b=\x1b>",  # keypad modes
        "\x07\x00\x7f",
    ],
    ids=lambda seq: repr(seq)[1:-1][:40],
)
def test_tui_sequences_leave_no_stray_characters(sequence: str) -> None:
    expected = render("ab")
    snap = render(f"a{sequence}b")
    assert snap.to_text() == "ab"
    assert snap.size == SIZE
    assert snap.cursor == expected.cursor
    assert snap.lines[0][0] == Cell("a")


@pytest.mark.parametrize(
    "sequence",
    ["\x1b[>1u", "\x1b[38:2::255:0:0m", "\x1b]8;;https://x.y/z\x1b\\", "\x1bP+q544e\x1b\\", "\x1b[?1049h"],
    ids=["kitty", "colon-sgr", "osc8", "dcs", "alt-enter"],
)
def test_a_sequence_cut_between_events_is_finished_by_the_next(sequence: str) -> None:
    whole = render(f"a{sequence}b")
    for cut in range(1, len(sequence)):
        events = [Event(0.0, "o", "a" + sequence[:cut]), Event(0.1, "o", sequence[cut:] + "b")]
        assert render_events(events, SIZE) == whole, cut


def test_modify_other_keys_does_not_set_attributes() -> None:
    # pyte's own parser reads ESC[>4;2m as SGR 4;2 (underline).
    assert render("\x1b[>4;2mX").lines[0][0] == Cell("X")


def test_long_unterminated_string_is_dropped_across_events() -> None:
    payload = "A" * 20_000
    events = [Event(0.0, "o", "a\x1b_G" + payload), Event(0.1, "o", payload), Event(0.2, "o", payload + "\x1b\\b")]
    assert render_events(events, SIZE).to_text() == "ab"


def test_dec_line_drawing_charset_is_honoured() -> None:
    assert render("\x1b(0lqk\x1b(Bx").to_text() == "┌─┐x"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ab\x1b[3bc", "abbbbc"),  # REP
        ("1\r\n2\r\n3\x1b[S", "2\n3"),  # SU
        ("1\r\n2\x1b[T", "\n1\n2"),  # SD
        ("abcdef\x1b[3G\x1b[2P", "abef"),  # DCH
        ("abc\x1b[1;2H\x1b[5K", "abc"),  # an EL parameter pyte rejects
        ("abc\x1b[s\x1b[2;1Hx\x1b[uy", "abcy\nx"),  # SCOSC / SCORC
        ("abc\x1b[3J", "abc"),  # ED 3 clears scrollback only
    ],
    ids=["rep", "scroll-up", "scroll-down", "dch", "bad-el", "save-restore", "ed3"],
)
def test_editing_sequences(text: str, expected: str) -> None:
    assert render(text).to_text() == expected


# --------------------------------------------------------------------------------------------
# The bulk drawing path against pyte's own draw


ALPHABETS = {
    "mixed": "abc XYZ~é─│⣿" + "日本" + "\u0301" + "\ufe0f\u200d" + "🚀" + "\ue0b0",
    "mostly-narrow": "abcdefghij klmnop─│" * 5 + "日\u0301",
    "mostly-wide": "日本語中文한국어ｱｲ" * 5 + "a \u0301",
}


@pytest.mark.parametrize("autowrap", [True, False], ids=["autowrap", "no-autowrap"])
@pytest.mark.parametrize("alphabet", list(ALPHABETS), ids=list(ALPHABETS))
@pytest.mark.parametrize("seed", [1, 2])
def test_bulk_drawing_matches_pyte_draw(seed: int, alphabet: str, autowrap: bool) -> None:
    import pyte

    rng = random.Random(seed)
    chars = ALPHABETS[alphabet]
    size = TermSize(13, 5)
    reference = pyte.Screen(columns=size.cols, lines=size.rows)
    terminal = Terminal(size)
    if not autowrap:
        reference.reset_mode(7, private=True)
        terminal.feed("\x1b[?7l")
    for _ in range(200):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(1, 40)))
        for ch in text:
            reference.draw(ch)
        terminal.feed(text)
        if rng.random() < 0.3:
            reference.carriage_return()
            reference.linefeed()
            terminal.feed("\r\n")
    snap = terminal.snapshot()
    assert [[cell.char for cell in row] for row in snap.lines] == [
        [reference.buffer[y][x].data for x in range(size.cols)] for y in range(size.rows)
    ]
    assert (snap.cursor.x, snap.cursor.y) == (min(reference.cursor.x, size.cols - 1), reference.cursor.y)


# --------------------------------------------------------------------------------------------
# Hooks: lines scrolling off, the screen lost, answers to queries


@pytest.mark.parametrize(
    ("text", "scrolled"),
    [
        ("one\r\ntwo\r\nthree\r\nfour", ["one"]),
        ("a\r\nb\r\nc\x1b[2S", ["a", "b"]),
        ("\x1b[1;2rtop\r\nmid\r\nlow", ["top"]),  # a region from the top: the top line leaves
        ("x\x1b[2;3r\x1b[2;1Hp\r\nq\r\nr", []),  # a region below the top: nothing leaves the screen
        ("a\r\nb\r\nc\x1bD\x1bE", ["a", "b"]),  # IND, NEL
    ],
    ids=["line-feed", "scroll-up", "region-at-top", "region-below-top", "index"],
)
def test_lines_scrolling_off_the_top_are_reported(text: str, scrolled: list[str]) -> None:
    seen: list[str] = []
    terminal = Terminal(TermSize(10, 3), on_scroll_off=seen.append)
    terminal.feed(text)
    assert seen == scrolled


@pytest.mark.parametrize(
    ("text", "lost"),
    [
        ("kept\x1b[2J", ["kept"]),
        ("kept\x1b[H\x1b[J", ["kept"]),
        ("kept\x1b[2;1H\x1b[J", []),  # an erase below the top left corner keeps the first line
        ("kept\x1bc", ["kept"]),
        ("main\x1b[?1049hfull\x1b[?1049l", ["full"]),
        ("kept\x1b[3J", []),  # the scrollback only
    ],
    ids=["ed2", "ed0-home", "ed0-below", "reset", "leave-alternate", "ed3"],
)
def test_the_screen_lost_is_reported_while_it_still_shows(text: str, lost: list[str]) -> None:
    seen: list[str] = []
    terminal = Terminal(SIZE, on_screen_lost=lambda: seen.append("\n".join(terminal.text_lines()).strip()))
    terminal.feed(text)
    assert seen == lost


def test_queries_are_answered_only_to_a_listener() -> None:
    replies: list[str] = []
    terminal = Terminal(SIZE, on_reply=replies.append)
    terminal.feed("ab\x1b[3;5H\x1b[6n\x1b[5n\x1b[c\x1b[0c\x1b[>c\x1b[?6n")
    assert replies == ["\x1b[3;5R", "\x1b[0n", "\x1b[?6c", "\x1b[?6c"]
    silent = Terminal(SIZE)
    silent.feed("\x1b[6n\x1b[c")
    assert silent.text_lines() == [""] * SIZE.rows


def test_text_lines_and_cursor_read_the_screen_as_the_snapshot_does() -> None:
    terminal = Terminal(SIZE)
    terminal.feed("\x1b[31mred\x1b[0m  \r\n\r\n  wide 日本 end   \x1b[2;4H")
    assert terminal.text_lines() == terminal.snapshot().to_text().split("\n") + [""] * (SIZE.rows - 3)
    assert terminal.text_lines()[2] == "  wide 日本 end"
    assert terminal.cursor == terminal.snapshot().cursor


# --------------------------------------------------------------------------------------------
# The alternate screen and resizes


@pytest.mark.parametrize("mode", ["1049", "1047", "47"])
def test_alternate_screen_shows_the_tui_then_gives_back_the_main_screen(mode: str) -> None:
    terminal = Terminal(SIZE)
    terminal.feed("$ vim notes\r\n")
    terminal.feed(f"\x1b[?{mode}h\x1b[H\x1b[2JTUI line 1\x1b[5;3HTUI line 5")
    inside = terminal.snapshot()
    assert inside.alternate
    assert inside.to_text() == "TUI line 1\n\n\n\n  TUI line 5"
    terminal.feed(f"\x1b[?{mode}l")
    after = terminal.snapshot()
    assert not after.alternate
    assert after.to_text() == "$ vim notes"


def test_leaving_1049_restores_the_cursor() -> None:
    terminal = Terminal(SIZE)
    terminal.feed("$ top\r\n$ ")
    before = terminal.snapshot().cursor
    terminal.feed("\x1b[?1049h\x1b[8;20Hx\x1b[?1049l")
    assert terminal.snapshot().cursor == before


def test_resize_on_the_alternate_screen_resizes_the_saved_main_screen() -> None:
    terminal = Terminal(TermSize(20, 5))
    terminal.feed("a" * 20 + "\r\nsecond")
    terminal.feed("\x1b[?1049hfull screen")
    terminal.resize(TermSize(10, 5))
    terminal.feed("\x1b[?1049l")
    snap = terminal.snapshot()
    assert snap.size == TermSize(10, 5)
    assert snap.to_text() == "a" * 10 + "\nsecond"


def test_reset_on_the_alternate_screen_returns_to_a_blank_main_screen() -> None:
    snap = render("main\x1b[?1049halt\x1bcafter")
    assert not snap.alternate
    assert snap.to_text() == "after"


def test_resize_events_change_the_size_and_keep_the_cursor_line() -> None:
    events = [Event(0.0, "o", "\r\n".join(f"line {n}" for n in range(10))), Event(1.0, "r", "20x4")]
    snap = render_events(events, SIZE)
    assert snap.size == TermSize(20, 4)
    assert snap.to_text() == "line 6\nline 7\nline 8\nline 9"
    assert snap.cursor == type(snap.cursor)(6, 3)
    wider = render_events([*events, Event(2.0, "r", "60x6"), Event(3.0, "o", "\t|")], SIZE)
    assert wider.size == TermSize(60, 6)
    assert wider.to_text().split("\n")[3] == "line 9  |"


def test_a_bad_resize_event_is_ignored() -> None:
    assert render_events([Event(0.0, "r", "0x0"), Event(0.1, "o", "x")], SIZE).size == SIZE


# --------------------------------------------------------------------------------------------
# Screens over time


def test_iter_screens_gives_the_screen_at_each_time(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "s.cast", SIZE, [("o", "one "), ("o", "two "), ("o", "three")])
    texts = [snap.to_text() for snap in iter_screens(path, [0.0, 0.005, 0.01, 0.02, 5.0])]
    assert texts == ["one", "one", "one two", "one two three", "one two three"]
    assert screen_at(path, 0.01).to_text() == "one two"


def test_iter_screens_rejects_decreasing_times(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "s.cast", SIZE, [("o", "x")])
    with pytest.raises(ValueError):
        list(iter_screens(path, [1.0, 0.5]))


# --------------------------------------------------------------------------------------------
# The last screen, read from the end


def _junk(rng: random.Random, lines: int) -> str:
    return "".join(
        f"\x1b[{rng.randint(1, 10)};{rng.randint(1, 30)}H\x1b[3{rng.randint(0, 7)}mjunk {rng.random():.6f}\x1b[0m\r\n"
        for _ in range(lines)
    )


def _clear_long_before_end(rng: random.Random) -> list[tuple[str, str]]:
    """A full redraw, then ~200 KB of in-place status updates: the top lines come from the redraw."""
    events = [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", CLEAR + "\x1b[1;34mHeader drawn once\x1b[0m\r\nbody line\r\n"))
    for n in range(4000):
        events.append(("o", f"\x1b[7;1H\x1b[2Kprogress {n} \x1b[32m{'#' * (n % 30)}\x1b[0m"))
        if n % 50 == 0:
            events.append(("i", "k"))
    return events


def _resize_long_before_end(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 20)), ("r", "30x8")]
    events += [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", "\x1b[2J\x1b[Hafter the clear, at 30 columns wide: " + "w" * 40))
    events += [("o", f"\r\x1b[Kstatus {n}") for n in range(2000)]
    return events


def _scrolling_shell(rng: random.Random) -> list[tuple[str, str]]:
    return [("o", f"$ make\r\n{'compiling module %d ' % n * 2}\r\n") for n in range(30000)]


def _ends_in_alternate_screen(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", "$ ls\r\nfile\r\n$ htop\r\n"), ("o", "\x1b[?1049h\x1b[22;0;0t")]
    for frame in range(3000):
        events.append(("o", f"\x1b[H\x1b[2J\x1b[1;1HCPU {frame % 97}%\x1b[3;5H\x1b[7mtasks {frame}\x1b[0m"))
    events.append(("o", "\x1b[10;1Hlast line"))
    return events


def _alternate_screen_left(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 40)) for _ in range(600)]
    events.append(("o", CLEAR + "$ prompt drawn after a clear\r\n$ less big.txt\r\n"))
    events.append(("o", "\x1b[?1049h"))
    events += [("o", CLEAR + _junk(rng, 9)) for _ in range(300)]
    events.append(("o", "\x1b[?1049l\r$ echo done\r\ndone\r\n$ "))
    return events


def _reset_near_end(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 50)) for _ in range(200)]
    events.append(("o", "\x1b[?1049h" + _junk(rng, 5) + "\x1bc$ after reset\r\n"))
    events += [("o", f"line {n}\r\n") for n in range(3)]
    return events


def _alternate_switch_split_between_events(rng: random.Random) -> list[tuple[str, str]]:
    events = [("o", _junk(rng, 30)) for _ in range(400)]
    # Unseen, the cut switch would make the TUI's clear look like a main screen one.
    events += [("o", CLEAR + "$ prompt\r\n\x1b[?10"), ("o", "49h"), ("o", CLEAR + "in the tui")]
    events += [("o", f"\x1b[5;1Htick {n}") for n in range(3000)]
    events += [("o", "\x1b[?1049"), ("o", "l$ back\r\n")]
    return events


def _clear_inside_tui_only(rng: random.Random) -> list[tuple[str, str]]:
    # No clear on the main screen at all: the main screen needs the whole recording.
    events = [("o", f"shell line {n}\r\n") for n in range(12)]
    events.append(("o", "\x1b[?1049h"))
    events += [("o", CLEAR + _junk(rng, 9)) for _ in range(500)]
    events.append(("o", "\x1b[?1049lback\r\n"))
    return events


RECORDINGS: dict[str, tuple[Callable[[random.Random], list[tuple[str, str]]], str]] = {
    "clear-long-before-end": (_clear_long_before_end, "clear"),
    "resize-long-before-end": (_resize_long_before_end, "clear"),
    "scrolling-shell-no-clear": (_scrolling_shell, "budget"),
    "ends-in-alternate-screen": (_ends_in_alternate_screen, "clear"),
    "alternate-screen-left": (_alternate_screen_left, "clear"),
    "reset-near-end": (_reset_near_end, "reset"),
    "alternate-switch-split": (_alternate_switch_split_between_events, "clear"),
    "clear-inside-tui-only": (_clear_inside_tui_only, "start"),
}


@pytest.mark.parametrize("name", list(RECORDINGS), ids=list(RECORDINGS))
def test_last_screen_equals_a_full_render(tmp_path: Path, name: str) -> None:
    build, reason = RECORDINGS[name]
    path = write_cast(tmp_path / f"{name}.cast", SIZE, build(random.Random(name)))
    tail = read_tail(path)
    assert tail.reason == reason
    assert last_screen(path) == full_render(path)
    if reason not in ("start", "budget"):
        assert tail.bytes_read < path.stat().st_size / 2


def test_the_size_comes_from_a_resize_long_before_the_start(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "r.cast", SIZE, _resize_long_before_end(random.Random(5)))
    tail = read_tail(path)
    assert tail.size == TermSize(30, 8)
    assert last_screen(path).size == TermSize(30, 8)


def test_size_hint_replaces_the_header_size(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "h.cast", SIZE, [("o", "hello")])
    assert last_screen(path, size_hint=TermSize(50, 3)).size == TermSize(50, 3)


def test_last_screen_ignores_a_cut_last_line(tmp_path: Path) -> None:
    events = _clear_long_before_end(random.Random(3))
    cut = encode_event(99.0, "o", "\x1b[1;1HNOT SHOWN")[:-9]
    path = write_cast(tmp_path / "cut.cast", SIZE, events, tail=cut)
    assert last_screen(path) == full_render(path)
    assert "NOT SHOWN" not in last_screen(path).to_text()


def test_last_screen_of_a_cut_multibyte_character(tmp_path: Path) -> None:
    cut = encode_event(99.0, "o", "日本語")[:-6]
    path = write_cast(tmp_path / "cut.cast", SIZE, [("o", "shown")], tail=cut)
    assert last_screen(path).to_text() == "shown"


def test_last_screen_raises_on_a_corrupt_line_before_the_last(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "bad.cast", SIZE, [("o", "a")], tail=b"not json\n" + encode_event(1.0, "o", "b"))
    with pytest.raises(DataError):
        last_screen(path)
    with pytest.raises(DataError):
        full_render(path)


def test_last_screen_of_a_header_only_recording_is_blank(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "empty.cast", SIZE, [])
    snap = last_screen(path)
    assert snap == full_render(path)
    assert snap.to_text() == "" and snap.size == SIZE


def test_last_screen_of_a_v3_recording(tmp_path: Path) -> None:
    path = tmp_path / "v3.cast"
    lines = [json.dumps({"version": 3, "term": {"cols": 30, "rows": 6}})]
    lines += ["# a comment", json.dumps([0.5, "o", "first\r\n"]), json.dumps([0.1, "r", "20x4"])]
    lines += [json.dumps([0.1, "o", f"{CLEAR}line {n}\r\n"]) for n in range(3)]
    lines += [json.dumps([0.2, "x", "0"])]
    path.write_text("\n".join(lines) + "\n")
    assert last_screen(path) == full_render(path)
    assert last_screen(path).to_text() == "line 2"


@pytest.mark.parametrize("name", ["clear-long-before-end", "alternate-screen-left"], ids=["clear", "alternate"])
def test_last_screen_of_a_zstd_recording(tmp_path: Path, name: str) -> None:
    import zstandard

    build, _ = RECORDINGS[name]
    plain = write_cast(tmp_path / "plain.cast", SIZE, build(random.Random(name)))
    packed = tmp_path / "packed.cast"
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    expected = full_render(plain)
    assert full_render(packed) == expected
    assert last_screen(packed) == expected
    tail = read_tail(packed)
    assert tail.reason == read_tail(plain).reason == "clear"
    assert tail.bytes_read == tail.bytes_total  # compressed files are streamed whole
    assert render_events(tail.events, tail.size, alternate=tail.alternate) == expected


@pytest.mark.parametrize("name", list(RECORDINGS), ids=list(RECORDINGS))
def test_tail_with_a_small_budget_still_matches_when_a_clear_is_within_it(tmp_path: Path, name: str) -> None:
    build, reason = RECORDINGS[name]
    path = write_cast(tmp_path / f"{name}.cast", SIZE, build(random.Random(name)))
    tail = read_tail(path, budget_bytes=16 << 10)
    rendered = render_events(tail.events, tail.size, alternate=tail.alternate)
    if tail.reason != "budget":
        assert rendered == full_render(path)
    assert tail.bytes_read < 2 * (16 << 10)


def test_last_screen_of_a_100_mb_recording_reads_only_its_end(tmp_path: Path) -> None:
    """The prefix is 100 MB: screens of junk at two sizes between 1 MB typed pastes."""
    rng = random.Random(100)
    path = tmp_path / "big.cast"
    paste = "x" * (1 << 20)
    with open(path, "wb") as fh:
        fh.write(encode_header(Header(size=TermSize(80, 24))))
        fh.write(encode_event(0.0, "r", "100x30"))
        now = 0.0
        while fh.tell() < 100_000_000:
            now += 1.0
            fh.write(encode_event(now, "o", _junk(rng, 40) + "\x1b[?1049h" + _junk(rng, 5) + "\x1b[?1049l"))
            fh.write(encode_event(now + 0.5, "i", paste))
        fh.write(encode_event(now + 1, "o", "$ claude\r\n\x1b[2J\x1b[3J\x1b[H\x1b[1mWelcome\x1b[0m\r\n"))
        for n in range(5000):
            status = f"\x1b[3;1H\x1b[2K\x1b[38;5;{n % 256}m⠋ working {n}\x1b[0m"
            fh.write(encode_event(now + 2 + n * 0.01, "o", status))
        fh.write(encode_event(now + 100, "o", "\x1b[5;1H$ "))
    total = path.stat().st_size
    assert total > 100_000_000

    tail = read_tail(path)
    assert tail.reason == "clear"
    assert tail.size == TermSize(100, 30)
    assert tail.bytes_read < total / 100
    snap = last_screen(path)
    assert snap.to_text() == "Welcome\n\n⠋ working 4999\n\n$"
    assert snap == full_render(path)


def test_importing_the_module_does_not_import_pyte() -> None:
    code = "import sys, shellkeep.terminal.replay, shellkeep.terminal.transcript; print('pyte' in sys.modules, 'wcwidth' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
