"""The asciicast tail reader (shellkeep/asciicast/tail.py): event lines read backwards over bytes,
searched without decoding, a cut last line taken as the end and a bad line elsewhere refused."""

from __future__ import annotations

import pytest

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Event, Header
from shellkeep.asciicast.tail import TailReader, decode_line
from shellkeep.errors import DataError
from shellkeep.termsize import TermSize

SIZE = TermSize(40, 10)


def recording(events: list[tuple[float, str, str]], *, tail: bytes = b"") -> bytes:
    body = b"".join(encode_event(t, code, data) for t, code, data in events)
    return encode_header(Header(size=SIZE)) + body + tail


def test_lines_come_last_first_with_their_offsets() -> None:
    data = recording([(0.5, "o", "one"), (1.0, "r", "50x12"), (1.5, "o", "two")])
    reader = TailReader(data, 2, "t.cast")
    lines = list(reader.lines_backwards())
    assert [decode_line(line) for _, line in lines] == [
        Event(1.5, "o", "two"),
        Event(1.0, "r", "50x12"),
        Event(0.5, "o", "one"),
    ]
    for offset, line in lines:
        assert data[offset : offset + len(line)] == line


def test_v3_comment_lines_and_blank_lines_are_skipped() -> None:
    data = b'{"version": 3, "term": {"cols": 40, "rows": 10}}\n[0.5, "o", "a"]\n\n# a comment\n[0.25, "o", "b"]\n'
    lines = [line for _, line in TailReader(data, 3, "t.cast").lines_backwards()]
    assert lines == [b'[0.25, "o", "b"]', b'[0.5, "o", "a"]']


def test_a_cut_last_line_is_the_end_and_a_bad_line_before_it_is_an_error() -> None:
    data = recording([(0.5, "o", "one")], tail=b'not json\n[1.0, "o", "tw')
    reader = TailReader(data, 2, "t.cast")
    lines = list(reader.lines_backwards())
    assert reader.decode(*lines[0]) is None  # cut mid-write: the end of the recording
    with pytest.raises(DataError, match=r"t\.cast: the line at byte \d+ is not a valid asciicast v2 event"):
        reader.decode(*lines[1])


def test_a_bad_line_that_is_not_the_last_is_an_error() -> None:
    data = recording([(0.5, "o", "one")], tail=b"not json\n" + encode_event(1.0, "o", "two"))
    reader = TailReader(data, 2, "t.cast")
    last, bad, _ = reader.lines_backwards()
    assert reader.decode(*last) == Event(1.0, "o", "two")
    with pytest.raises(DataError):
        reader.decode(*bad)


@pytest.mark.parametrize(
    ("line", "event"),
    [
        (b'[1, "o", "x"]', Event(1.0, "o", "x")),
        (b'[true, "o", "x"]', None),
        (b'[1, "o"]', None),
        (b'{"a": 1}', None),
        (b'[1, "o", 5]', None),
        (b"\xff", None),
    ],
    ids=["event", "bool-time", "two-items", "object", "data-not-text", "not-utf8"],
)
def test_decode_line(line: bytes, event: Event | None) -> None:
    assert decode_line(line) == event


def test_the_size_before_a_point_is_the_last_resize_before_it() -> None:
    events = [(0.1, "r", "50x12"), (0.2, "o", "x" * 5000), (0.3, "r", "60x20"), (0.4, "o", "after")]
    data = recording(events)
    reader = TailReader(data, 2, "t.cast")
    after_second = data.index(b'[0.4')
    before_second = data.index(b'[0.3')
    assert reader.size_before(after_second, SIZE) == TermSize(60, 20)
    assert reader.size_before(before_second, SIZE) == TermSize(50, 12)
    assert reader.size_before(data.index(b'[0.1'), SIZE) == SIZE  # none before: the fallback
    assert reader.searched > 0


def test_a_needle_across_a_search_block_boundary_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shellkeep.asciicast.tail.SEARCH_BLOCK_BYTES", 64)
    events = [(0.1, "o", "start"), (0.2, "o", "\x1b[?1049h full screen")] + [(0.3 + n, "o", "y" * 40) for n in range(20)]
    data = recording(events)
    reader = TailReader(data, 2, "t.cast")
    found = [decode_line(line) for _, line in reader.lines_holding((b"[?1049",), len(data))]
    assert found == [Event(0.2, "o", "\x1b[?1049h full screen")]
