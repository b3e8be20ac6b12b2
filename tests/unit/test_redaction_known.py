"""The secrets a session has redacted (capture/redaction/known.py): one name per secret in
every stream of a session, also where the secret is shown bare later."""

from __future__ import annotations

import pytest

from shellkeep.capture.redaction import Redactor, StreamRedactor

REDACTOR = Redactor()


def streams() -> tuple[StreamRedactor, StreamRedactor]:
    """Return a session's (input, output) streams, sharing what they redacted."""
    known: dict[str, str] = {}
    return StreamRedactor(REDACTOR, known=known), StreamRedactor(REDACTOR, keep_columns=True, known=known)


def test_a_value_typed_in_an_assignment_is_redacted_when_shown_bare_under_the_same_name() -> None:
    typed, shown = streams()
    assert typed.feed("export DB_PASSWORD=FAKEhunter2x\r") == "export DB_PASSWORD=[REDACTED:password]\r"
    out = shown.feed("$ echo $DB_PASSWORD\r\nFAKEhunter2x\r\n") + shown.flush()
    assert out == "$ echo $DB_PASSWORD\r\n[REDACTED:password]\x1b[7D\r\n"
    # Without the shared memory the value shown bare is stored as it is.
    assert "FAKEhunter2x" in StreamRedactor(REDACTOR, keep_columns=True).feed("FAKEhunter2x\r\n")


def test_the_same_secret_gets_the_first_name_in_another_context_and_stream() -> None:
    typed, shown = streams()
    assert typed.feed('password = "FAKEs3cretValue9"\r') == 'password = "[REDACTED:password]"\r'
    out = shown.feed("token: FAKEs3cretValue9\r\n") + shown.flush()
    assert out == "token: [REDACTED:password]\x1b[3D\r\n"  # not [REDACTED:token]: one secret, one name


@pytest.mark.parametrize("split", range(1, 12))
def test_a_known_secret_split_across_two_reads_is_still_caught(split: int) -> None:
    typed, shown = streams()
    typed.feed("export DB_PASSWORD=FAKEhunter2x\r")
    text = "value FAKEhunter2x done\r\n"
    at = len("value ") + split
    out = shown.feed(text[:at]) + shown.feed(text[at:]) + shown.flush()
    assert "FAKE" not in out and "[REDACTED:password]" in out


def test_a_short_or_plain_word_value_is_not_learned() -> None:
    typed, shown = streams()
    typed.feed("password=hunter2\r")  # 7 characters
    typed.feed("password=correcthorsebattery\r")  # letters only: a word
    out = shown.feed("hunter2 correcthorsebattery\r\n") + shown.flush()
    assert out == "hunter2 correcthorsebattery\r\n"


def test_no_two_rule_examples_share_a_secret() -> None:
    # In a session one secret keeps one name: two rules' examples with the same secret would
    # be redacted under one name (the corpus tests print every example in one session).
    from shellkeep.capture.redaction import RULES

    engine = REDACTOR._compiled()
    names: dict[str, set[str]] = {}
    for rule in RULES:
        for start, end, _priority, name in engine.spans(rule.example, engine.hits(rule.example), 0, len(rule.example)):
            names.setdefault(rule.example[start:end], set()).add(name)
    assert {secret: found for secret, found in names.items() if len(found) > 1} == {}


TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _fish_suggestions(typed: int) -> list[str]:
    """fish's output while the token is typed again with its history's suggestion: per key, the
    key and the rest of the token, then a carriage return and a CSI C back to the next column
    (the prompt "$ echo " is 7 columns)."""
    return [TOKEN[k:] + f"\r\x1b[{7 + k + 1}C" for k in range(typed)]


def test_pieces_of_a_known_secret_redrawn_after_its_start_are_drawn_as_the_same_marker() -> None:
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    _typed, shown = streams()
    out = shown.feed(f"$ echo {TOKEN}\r\n{TOKEN}\r\n$ echo ")
    out += "".join(shown.feed(piece) for piece in _fish_suggestions(len(TOKEN) - 3)) + shown.flush()
    for i in range(len(TOKEN) - 3):  # the last 3 characters may be drawn alone: too short to tell
        assert TOKEN[i : i + 4] not in out, TOKEN[i : i + 4]
    screen = Terminal(TermSize(80, 5))
    screen.feed(out)
    # Every piece became the columns of the marker it stands for: the line shows it whole.
    assert screen.text_lines()[2].rstrip() == "$ echo [REDACTED:github-token]"
    assert "\x1b[16" + "D" not in out  # no piece starts inside the CSI C before it


def test_a_piece_drawn_after_a_cursor_move_is_redacted_and_not_learned() -> None:
    known: dict[str, str] = {}
    shown = StreamRedactor(REDACTOR, keep_columns=True, known=known)
    shown.feed(f"{TOKEN}\r\n")
    assert shown.feed("C3d4 and 2M3n4 \r\n") == "C3d4 and 2M3n4 \r\n"  # under 8 characters
    out = shown.feed("x\x1b[3D5f6\x1b[2mG7h8I9 y\r\n")  # 9 of its characters, a colour inside, after a CSI D
    assert out == "x\x1b[3D" + "[REDACTED:github-token]".ljust(40)[13:22] + " y\r\n"
    # Printed on its own, not drawn again over the secret's start, a piece is left as it is.
    assert shown.feed("x 5f6G7h8I9 y\r\n") == "x 5f6G7h8I9 y\r\n"
    assert list(known) == [TOKEN]


def test_fishs_moves_to_the_column_the_cursor_is_at_are_dropped() -> None:
    from shellkeep.capture.redaction.noop_moves import NoOpMoves

    moves = NoOpMoves()
    keys = ["\r\x1b[7Cg", "\r\x1b[8Ch", "\r\x1b[9C\x1b[31mp\x1b[m", "\r\x1b[10C_", "\r\x1b[11C\x08_"]
    assert [moves.feed(key) for key in keys] == ["\r\x1b[7Cg", "h", "\x1b[31mp\x1b[m", "_", "\x08_"]
    # A move it cannot follow forgets the column: the next one is kept.
    assert moves.feed("\x1b[2A") == "\x1b[2A" and moves.feed("\r\x1b[12Cx") == "\r\x1b[12Cx"
    assert moves.feed("\n") == "\n" and moves.feed("\r\x1b[13Cy") == "\r\x1b[13Cy"


def test_a_move_cut_by_a_read_is_held_until_its_rest_comes() -> None:
    from shellkeep.capture.redaction.noop_moves import NoOpMoves

    moves = NoOpMoves()
    assert moves.feed("\r\x1b[7Cg\r\x1b[") == "\r\x1b[7Cg" and moves.pending == 3
    assert moves.feed("8Ch") == "h" and moves.pending == 0  # idle once whole: dropped
    assert moves.feed("\r") == "" and moves.take() == "\r" and moves.feed("\r\x1b[9Cp") == "\r\x1b[9Cp"
    stream = StreamRedactor(REDACTOR, keep_columns=True)
    typed = "".join(stream.feed(piece) for piece in ["$ echo \r\x1b[7Cg\r\x1b[", "8Ch\r", "\x1b[9Cp"])
    assert stream.held and typed + stream.release() + stream.flush() == "$ echo \r\x1b[7Cghp"
