"""pty/stdout.py: the relay's private, non-blocking way to stdout, over real pipes and files."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.pty.stdout import MAX_BACKLOG_BYTES, StdoutWriter


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    """A pipe (read end, write end), both closed at the end."""
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        try:
            os.close(fd)
        except OSError:
            pass


def _fill(fd: int) -> int:
    """Write to ``fd`` (set non-blocking for this) until the pipe is full; return the bytes written."""
    os.set_blocking(fd, False)
    total = 0
    try:
        while True:
            total += os.write(fd, b"f" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(fd, True)
    return total


def _read_all(fd: int) -> bytes:
    os.set_blocking(fd, False)
    got = bytearray()
    try:
        while chunk := os.read(fd, 65536):
            got += chunk
    except BlockingIOError:
        pass
    return bytes(got)


@pytest.mark.parametrize("kind", ["pipe", "pty"])
def test_stdout_gets_a_private_description_and_keeps_its_flags(pipe: tuple[int, int], kind: str) -> None:
    if kind == "pty":
        master, write_end = os.openpty()
        opened: tuple[int, ...] = (master, write_end)
    else:
        write_end, opened = pipe[1], ()
    writer = StdoutWriter.open(write_end)
    try:
        assert writer.fd != write_end
        assert os.fstat(writer.fd).st_ino == os.fstat(write_end).st_ino
        assert fcntl.fcntl(writer.fd, fcntl.F_GETFL) & os.O_NONBLOCK
        assert not fcntl.fcntl(write_end, fcntl.F_GETFL) & os.O_NONBLOCK
    finally:
        writer.close()
    assert not fcntl.fcntl(write_end, fcntl.F_GETFL) & os.O_NONBLOCK
    os.fstat(write_end)  # still open: closing the writer closes only its own description
    for fd in opened:
        os.close(fd)


def test_a_full_pipe_queues_in_order_and_flush_catches_up(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    filler = _fill(write_end)
    writer = StdoutWriter.open(write_end)
    try:
        writer.write(b"one,")  # returns at once: the pipe is full
        writer.write(b"two")
        assert bytes(writer.backlog) == b"one,two"
        assert _read_all(read_end) == b"f" * filler
        writer.flush()
        assert not writer.backlog
        assert _read_all(read_end) == b"one,two"
    finally:
        writer.close()


def test_a_regular_file_is_written_through_stdout_itself(tmp_path: Path) -> None:
    """A file's offset is shared with the user's shell: a second description would write over it."""
    path = tmp_path / "out.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, b"before ")
        writer = StdoutWriter.open(fd)
        assert writer.fd == fd
        writer.write(b"relayed")
        writer.close()
        os.write(fd, b" after")
    finally:
        os.close(fd)
    assert path.read_bytes() == b"before relayed after"


def test_a_reader_gone_closes_the_writer_without_raising(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    writer = StdoutWriter.open(write_end)
    os.close(read_end)
    writer.write(b"x")  # EPIPE (Python ignores SIGPIPE)
    assert not writer.is_open
    writer.write(b"dropped")
    assert not writer.backlog
    writer.close()


def test_a_closed_stdout_is_not_written(pipe: tuple[int, int]) -> None:
    _, write_end = pipe
    os.close(write_end)
    writer = StdoutWriter.open(write_end)
    assert not writer.is_open
    writer.write(b"x")
    assert not writer.backlog


def test_a_stalled_stdout_is_given_up_only_when_asked(pipe: tuple[int, int]) -> None:
    _, write_end = pipe
    _fill(write_end)
    writer = StdoutWriter.open(write_end)
    try:
        writer.write(b"x" * MAX_BACKLOG_BYTES)
        assert writer.grace_left() is None  # no SIGTERM yet: wait for the terminal as long as it takes
        writer.give_up_when_stalled(3600.0)
        left = writer.grace_left()
        assert left is not None and 0.0 < left <= 3600.0
        writer.give_up_when_stalled(0.0)
        assert writer.grace_left() == 0.0
        writer.give_up()
        assert not writer.backlog and not writer.is_open
        assert writer.grace_left() is None
    finally:
        writer.close()


def test_drain_gives_a_stalled_stdout_up(pipe: tuple[int, int]) -> None:
    _, write_end = pipe
    _fill(write_end)
    writer = StdoutWriter.open(write_end)
    try:
        writer.write(b"\x1b[?2004l")
        writer.drain(0.0)
        assert not writer.is_open and not writer.backlog
    finally:
        writer.close()
