"""The terminal emulator (shellkeep/terminal/emulator.py, syntax.py, sgr.py): sequences modern TUIs
send, bulk drawing against pyte's own, hooks, the alternate screen and resizes."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from shellkeep.asciicast.model import Event
from shellkeep.terminal.emulator import Terminal
from shellkeep.terminal.replay import render_events
from shellkeep.terminal.snapshot import Cell
from shellkeep.termsize import TermSize
from tests.unit.terminal.helpers import SIZE, render


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


def test_importing_the_module_does_not_import_pyte() -> None:
    code = "import sys, shellkeep.terminal.replay, shellkeep.terminal.transcript; print('pyte' in sys.modules, 'wcwidth' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
