"""LineRepair (redaction/line_repair.py): a line whose marker a line editor's edit broke is
redrawn, never inside an escape sequence, never over a column not known; zsh's prompt."""

from __future__ import annotations

from shellkeep.capture.redaction import Redactor, StreamRedactor

REDACTOR = Redactor()


def test_a_redraw_is_never_put_inside_an_escape_sequence_cut_between_two_written_pieces() -> None:
    # bash's Ctrl-A after a secret wider than its marker: "\r" and a CSI C per prompt column,
    # the last one cut by the stream (the redraw went between "\x1b[" and "C": a stray '"').
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    reads = ["$ ", *'password = "Xy7Kq9hunter2hunter2zz"', "\r\x1b[C\x1b[C", "\r\n"]
    s = StreamRedactor(REDACTOR, keep_columns=True)
    pieces = [s.feed(read) for read in reads] + [s.flush()]
    screen = Terminal(TermSize(60, 4))
    screen.feed("".join(pieces))
    assert screen.text_lines()[0].rstrip() == '$ password = "[REDACTED:password]"', repr(pieces)
    assert "Xy7Kq9hunter" not in "".join(pieces)


def test_a_redraw_never_draws_over_a_column_not_drawn_since_the_line_start() -> None:
    # fish draws each piece from "\r" and a CSI C to its column: the columns it jumps over are
    # not known (the row is pre-filled with dots here). Redrawing the edited line would draw
    # over them (the marker is wider than the secret): the line is left as written instead.
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    known: dict[str, str] = {}
    typed = StreamRedactor(REDACTOR, known=known)
    typed.feed('password = "FAKEhunter2x"\r')
    typed.flush()
    reads = ["$ ", 'password = "FAKEhunter2x"', "\r\x1b[36C", "more", "\r\x1b[24C", "\x08\x1b[1P", "w\r\x1b[24C", "\r\n"]
    s = StreamRedactor(REDACTOR, keep_columns=True, known=known)
    out = "".join(s.feed(read) for read in reads) + s.flush()
    screen = Terminal(TermSize(60, 3))
    screen.feed("." * 60 + "\r" + out)
    row = screen.text_lines()[0]
    assert row.startswith('$ password = "[REDACTED') and '"..more' in row, (row, out)  # the dots kept
    assert "FAKEhunter" not in out


def test_an_edit_inside_a_marker_after_zsh_s_prompt_is_redrawn() -> None:
    # zle writes CSI J (erase below) before each prompt: on the one row modelled, an erase to
    # the line's end. zsh's output for Left x3, BackSpace, "w" after a typed password.
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    prompt = "\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m" + " " * 59 + "\r \r\r\x1b[0m\x1b[27m\x1b[24m\x1b[J$ \x1b[K\x1b[?2004h"
    typed = [prompt, *'password = "FAKEhunter2x"', "\b", "\b", "\b", '\br2" \b\b\b\b', 'wr2"\b\b\b', "\x1b[?2004l\r\r\nnext\r\n"]
    s = StreamRedactor(REDACTOR, keep_columns=True)
    out = "".join(s.feed(read) for read in typed) + s.flush()
    screen = Terminal(TermSize(60, 4))
    screen.feed(out)
    assert [row.rstrip() for row in screen.text_lines()[:2]] == ['$ password = "[REDACTED:password]"', "next"], repr(out)
    assert "hunter" not in out
