"""The live socket's server (``capture.live.LivePublisher``) over real Unix sockets.

Events are handed to the publisher as the writer thread hands them; clients are plain
sockets. The backlog ring, its restart at a full clear, the client limit, the drop of a
reader that does not keep up, malformed lines and viewers' input.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.asciicast.encoder import encode_event
from shellkeep.capture import live
from shellkeep.capture.live import (
    BACKLOG_BYTES,
    CLIENT_BUFFER_BYTES,
    MAX_CLIENTS,
    LiveEnd,
    LiveHeader,
    LivePublisher,
    LiveRefused,
    connect_live,
    input_line,
    parse_line,
    viewer_label,
)
from shellkeep.asciicast.model import Event
from shellkeep.store.session import LIVE_SOCKET
from shellkeep.termsize import TermSize
from tests.helpers import wait_until


@pytest.fixture
def publisher(tmp_path: Path) -> Iterator[LivePublisher]:
    folder = tmp_path / "s"
    folder.mkdir(mode=0o700)
    pub = LivePublisher(folder, session_id="sid", size=TermSize(80, 24), timestamp=1, env={"TERM": "xterm"})
    yield pub
    pub.close()


def _events(*items: tuple[float, str, str]) -> list[tuple[str, str, bytes]]:
    return [(code, text, encode_event(at, code, text)) for at, code, text in items]


class _Client:
    """A viewer: a socket and a line reader over it."""

    def __init__(self, folder: Path) -> None:
        self.sock = connect_live(folder, timeout_s=30)
        self.file = self.sock.makefile("rb")

    def line(self) -> object:
        raw = self.file.readline()
        return parse_line(raw) if raw else None

    def header_and_backlog(self) -> tuple[LiveHeader, list[Event]]:
        header = self.line()
        assert isinstance(header, LiveHeader)
        backlog = [self.line() for _ in range(header.backlog)]
        return header, backlog  # type: ignore[return-value]


def test_the_protocol_constant_is_the_store_s() -> None:
    assert live.LIVE_SOCKET == LIVE_SOCKET


def test_a_client_gets_header_backlog_live_events_and_the_end(publisher: LivePublisher, tmp_path: Path) -> None:
    publisher.publish(_events((0.1, "o", "hello "), (0.2, "m", "mark"), (0.3, "i", "typed")))
    first = _Client(publisher.path.parent)
    header, backlog = first.header_and_backlog()
    assert header == LiveHeader(TermSize(80, 24), 1, "sid", 2)
    assert backlog == [Event(0.1, "o", "hello "), Event(0.2, "m", "mark")]  # never input
    publisher.publish(_events((0.4, "r", "100x30"), (0.5, "o", "world")))
    assert first.line() == Event(0.4, "r", "100x30")
    assert first.line() == Event(0.5, "o", "world")
    second = _Client(publisher.path.parent)
    header, _ = second.header_and_backlog()
    assert header.size == TermSize(100, 30)  # the size now
    publisher.close(LiveEnd("finished", 3))
    assert first.line() == LiveEnd("finished", 3) and first.line() is None
    assert not publisher.path.exists()


def test_the_backlog_restarts_at_a_full_clear_on_the_main_screen_only(publisher: LivePublisher) -> None:
    publisher.publish(_events((1, "o", "old"), (2, "o", "\x1b[H\x1b[2Jnew"), (3, "o", "more")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == ["\x1b[H\x1b[2Jnew", "more"]
    publisher.publish(_events((4, "o", "\x1b[?1049h"), (5, "o", "\x1b[H\x1b[2Jtui")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog][-2:] == ["\x1b[?1049h", "\x1b[H\x1b[2Jtui"]  # the switch is kept
    assert backlog[0].data == "\x1b[H\x1b[2Jnew"


@pytest.mark.parametrize(
    "clear",
    [
        "\x1b[H\x1b[J",  # screen's and tmux's terminfo clear
        "\x1b[H\x1b[2J",
        "\x1b[H\x1b[2J\x1b[3J",  # xterm's, with the scrollback erase
        "\x1b[3J\x1b[H\x1b[2J",
        "\x1b[1;1H\x1b[0J",
        "\x1b[2J\x1b[H",
        "\x1bc",
        "\x1b[2;23r\x1b[22S",  # tmux clearing a pane above its status line (24 rows)
        "\x1b[1;23r\x1b[1;1H\x1b[23S",
    ],
    ids=["screen", "home-2J", "xterm-E3", "E3-first", "1;1H-0J", "2J-home", "RIS", "tmux-scroll", "tmux-scroll-home"],
)
def test_the_backlog_restarts_at_each_kind_of_clear(publisher: LivePublisher, clear: str) -> None:
    publisher.publish(_events((1, "o", "stale\r\n"), (2, "o", f"gone{clear}new"), (3, "o", "more")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == [f"{clear}new", "more"]  # the event is cut at the clear


@pytest.mark.parametrize("scroll", ["\x1b[5;10r\x1b[6S", "\x1b[1;23r\x1b[3S", "\x1b[1;12r\x1b[12S"], ids=["region", "few-lines", "half-screen"])
def test_a_scroll_that_leaves_part_of_the_screen_does_not_restart_the_backlog(publisher: LivePublisher, scroll: str) -> None:
    publisher.publish(_events((1, "o", "kept\r\n"), (2, "o", f"{scroll}more")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == ["kept\r\n", f"{scroll}more"]


@pytest.mark.parametrize("cut", [1, 2, 3, 4, 5], ids=lambda n: f"cut-at-{n}")
def test_a_clear_split_across_two_events_restarts_at_the_second_with_the_whole_sequence(
    publisher: LivePublisher, cut: int
) -> None:
    clear = "\x1b[H\x1b[J"
    publisher.publish(_events((1, "o", "stale"), (2, "o", "old" + clear[:cut]), (3, "o", clear[cut:] + "new")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == [clear + "new"]
    assert backlog[0].time == 3


def test_home_without_an_erase_or_scrollback_erase_alone_keeps_the_backlog(publisher: LivePublisher) -> None:
    # ESC[H alone moves the cursor, ESC[3J alone erases only the scrollback: the screen stays.
    publisher.publish(_events((1, "o", "keep"), (2, "o", "\x1b[Hredraw"), (3, "o", "\x1b[3J"), (4, "o", "\x1b[J")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == ["keep", "\x1b[Hredraw", "\x1b[3J", "\x1b[J"]


def test_the_alternate_screen_restarts_the_backlog_and_leaving_it_brings_the_main_screen_back(
    publisher: LivePublisher,
) -> None:
    publisher.publish(_events((1, "o", "$ ls\r\n"), (2, "o", "file\r\n\x1b[?1049h\x1b[H\x1b[2Jtmux 1")))
    publisher.publish(_events(*[(3 + i, "o", f"\x1b[H\x1b[Jtmux {i}") for i in range(2, 50)]))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    # The main screen's ring, the switch, then only the alternate screen's last redraw.
    assert [e.data for e in backlog] == ["$ ls\r\n", "file\r\n", "\x1b[?1049h", "\x1b[H\x1b[Jtmux 49"]
    publisher.publish(_events((60, "r", "100x30"), (61, "o", "bye\x1b[?1049l$ ")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [(e.code, e.data) for e in backlog] == [
        ("r", "80x24"),  # the size the main screen was drawn at
        ("o", "$ ls\r\n"),
        ("o", "file\r\n"),
        ("r", "100x30"),
        ("o", "\x1b[?1049h"),  # what came before the switch back is drawn on the alternate screen
        ("o", "bye\x1b[?1049l$ "),
    ]
    publisher.publish(_events((70, "o", "\x1b[?1049h"), (71, "o", "vim\x1bc"), (72, "o", "fresh")))
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == ["\x1bc", "fresh"]  # a reset leaves the alternate screen too
    publisher.publish(_events((80, "o", "\x1b[?1049h\x1b[?10"), (81, "o", "49lback")))  # the way out split
    _, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert [e.data for e in backlog] == ["\x1bc", "fresh", "\x1b[?1049h", "\x1b[?1049lback"]


def test_a_trimmed_backlog_starts_with_the_size_it_was_drawn_at(publisher: LivePublisher) -> None:
    chunk = "x" * 60000
    publisher.publish(_events(*[(float(i), "o", chunk) for i in range(30)]))  # about 1.8 MB: trimmed
    publisher.publish(_events((40.0, "r", "100x30"), (41.0, "o", "after")))
    header, backlog = _Client(publisher.path.parent).header_and_backlog()
    assert header.size == TermSize(100, 30)
    assert backlog[0].code == "r" and backlog[0].data == "80x24"  # the size the first kept output had
    assert backlog[-2:] == [Event(40.0, "r", "100x30"), Event(41.0, "o", "after")]
    assert sum(len(e.data) for e in backlog) <= BACKLOG_BYTES


def test_more_clients_than_the_limit_are_refused(publisher: LivePublisher) -> None:
    clients = [_Client(publisher.path.parent) for _ in range(MAX_CLIENTS)]
    for client in clients:
        client.header_and_backlog()
    extra = connect_live(publisher.path.parent, timeout_s=30).makefile("rb")
    refused = extra.readline()
    assert json.loads(refused) == {"refused": f"{MAX_CLIENTS} viewers already"}
    assert parse_line(refused) == LiveRefused(f"{MAX_CLIENTS} viewers already")
    assert extra.read() == b""  # then closed at once
    clients[0].file.close()
    clients[0].sock.close()
    wait_until(lambda: len(publisher._clients) < MAX_CLIENTS)
    _Client(publisher.path.parent).header_and_backlog()  # room again


def test_a_reader_that_does_not_keep_up_is_dropped_and_publishing_never_waits(publisher: LivePublisher) -> None:
    stuck = connect_live(publisher.path.parent, timeout_s=30)
    assert stuck.recv(1)  # accepted: its header is on the way; from now on it reads nothing
    total = 3 * CLIENT_BUFFER_BYTES
    chunk = "y" * 65000
    for i in range(total // len(chunk)):
        publisher.publish(_events((float(i), "o", chunk)))  # returns at once, reader or not
    wait_until(lambda: not publisher._clients)
    received = sum(len(part) for part in iter(lambda: stuck.recv(1 << 20), b""))
    assert 0 < received < total


def test_a_malformed_line_ends_that_client_only(publisher: LivePublisher) -> None:
    bad, good = _Client(publisher.path.parent), _Client(publisher.path.parent)
    bad.header_and_backlog()
    good.header_and_backlog()
    good.sock.sendall(b'{"something": "else"}\n[1, 2]\n')  # other JSON: ignored
    bad.sock.sendall(b"not json\n")
    assert bad.line() is None
    publisher.publish(_events((1.0, "o", "still")))
    assert good.line() == Event(1.0, "o", "still")


def test_input_lines_reach_the_handler_with_a_clean_viewer_name(publisher: LivePublisher) -> None:
    got: list[tuple[str, str]] = []
    done = threading.Event()

    def handler(text: str, viewer: str) -> None:
        got.append((text, viewer))
        done.set()

    publisher.set_input_handler(handler)
    client = _Client(publisher.path.parent)
    client.header_and_backlog()
    client.sock.sendall(input_line("ls\r", "eve\x07\x1b" + "n" * 100))
    assert done.wait(30)
    assert got == [("ls\r", "eve" + "n" * 61)]


@pytest.mark.parametrize(
    ("name", "label"),
    [("bob", "bob"), ("", "remote"), (None, "remote"), ("a\nb\tc", "abc"), ("z" * 80, "z" * 64)],
    ids=["plain", "empty", "none", "controls", "long"],
)
def test_viewer_label(name: object, label: str) -> None:
    assert viewer_label(name) == "input from viewer " + label


def test_a_socket_that_cannot_be_made_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        LivePublisher(tmp_path / "missing", session_id="x", size=TermSize(80, 24), timestamp=None, env={})


def test_parse_line_shapes() -> None:
    assert parse_line(b'[1.5, "o", "x"]') == Event(1.5, "o", "x")
    assert parse_line(b'{"end": {"status": "killed", "exit_code": 130}}') == LiveEnd("killed", 130)
    assert parse_line(b'{"other": 1}') is None
    with pytest.raises(ValueError):
        parse_line(b"{cut")
    assert json.loads(input_line("a", "b")) == {"input": "a", "viewer": "b"}


def test_connect_to_a_folder_without_a_socket_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        connect_live(tmp_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(tmp_path / LIVE_SOCKET))  # left by a recorder that died: bound, not listening
    sock.close()
    with pytest.raises(ConnectionRefusedError):
        connect_live(tmp_path)


def test_the_recorder_hands_on_exactly_the_recorded_events_but_input(tmp_path: Path) -> None:
    from shellkeep.asciicast.model import Header
    from shellkeep.capture.recorder import Recorder
    from shellkeep.capture.redaction import StreamRedactor, redactor_for

    handed: list[tuple[str, str, bytes]] = []
    secret = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
    cast = tmp_path / "session.cast"
    recorder = Recorder(
        open(cast, "ab"),
        header=Header(size=TermSize(80, 24), timestamp=0),
        make_filter=lambda screen: StreamRedactor(redactor_for(None), keep_columns=screen),
        on_events=handed.extend,
    )
    recorder.on_output(f"token {secret[:12]}".encode(), 0.1)  # a secret split across two reads
    recorder.on_input(b"typed\r", 0.2, False)
    recorder.on_output(f"{secret[12:]} done\r\n".encode(), 0.3)
    recorder.on_resize(TermSize(100, 30), 0.4)
    recorder.add_marker("mark", 0.5)
    recorder.close()
    recorded = cast.read_bytes().splitlines(keepends=True)[1:]
    assert [line for _, _, line in handed] == [line for line in recorded if b'"i"' not in line]
    assert {code for code, _, _ in handed} == {"o", "r", "m"}
    assert secret not in "".join(text for _, text, _ in handed) and "[REDACTED:" in "".join(t for _, t, _ in handed)
