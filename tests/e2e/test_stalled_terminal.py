"""The user's side of the relay misbehaving: a terminal that stops reading, closed std fds.

A terminal that stops reading (XOFF, a stalled ssh, ``shellkeep ... | cat`` with ``cat``
stopped) must not keep shellkeep from acting on SIGTERM and SIGHUP: the child gets the
signal, shellkeep ends and stores the final metadata. Each case starts a child that floods
its terminal, stops reading shellkeep's stdout (a pty's master side, or a pipe), waits
until the child is blocked writing, and signals shellkeep.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, load_session, output_text, session_folders, wait_until

PY = sys.executable
SK_CMD = " ".join(shlex.quote(a) for a in SK)

# The child floods its terminal. A helper in its process group stops itself first, as a
# job left stopped with ^Z would: it writes the signal that ends it to the file argv[1],
# so only a SIGHUP *and* a SIGCONT sent to the group reach it.
FLOOD = r"""
import os, signal, sys
helper = os.fork()
if helper == 0:
    def hung_up(sig, frame):
        with open(sys.argv[1], "w") as f:
            f.write(str(sig))
        os._exit(0)
    signal.signal(signal.SIGHUP, hung_up)
    os.kill(os.getpid(), signal.SIGSTOP)
    os._exit(3)
os.waitpid(helper, os.WUNTRACED)
os.write(1, b"flood started, helper %d\n" % helper)
line = b"0123456789" * 7 + b"abcdefghi\n"
while True:
    os.write(1, line * 100)
"""

_STARTED = re.compile(rb"flood started, helper (\d+)\r?\n")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "gone"


def _alive(pid: int) -> bool:
    return _state(pid) not in ("gone", "Z", "X")


def _blocked(pid: int, polls: int = 5) -> Callable[[], bool]:
    """Return a condition: ``pid`` (which only ever writes) sleeps, on ``polls`` polls in a row."""
    seen = [0]

    def condition() -> bool:
        seen[0] = seen[0] + 1 if _state(pid) == "S" else 0
        return seen[0] >= polls

    return condition


def _exited(pid: int, into: dict[str, int]) -> Callable[[], bool]:
    def condition() -> bool:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            into["code"] = os.waitstatus_to_exitcode(status)
        return bool(done)

    return condition


def _nonblocking(pid: int, fd: int) -> bool:
    """Whether O_NONBLOCK is set on the open file description of ``pid``'s ``fd``."""
    for row in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines():
        if row.startswith("flags:"):
            return bool(int(row.split()[1], 8) & os.O_NONBLOCK)
    raise AssertionError(f"no flags in /proc/{pid}/fdinfo/{fd}")


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids to kill -9 at the end, whatever the outcome (a stuck shellkeep, a stopped helper)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


_SIGNALS = [
    pytest.param(signal.SIGTERM, 143, "killed", id="term"),
    pytest.param(signal.SIGHUP, 129, "hangup", id="hup"),
]


@pytest.mark.parametrize(("sig", "code", "status"), _SIGNALS)
def test_a_signal_ends_shellkeep_while_its_terminal_stops_reading(
    home: Paths, tmp_path: Path, leftovers: list[int], sig: int, code: int, status: str
) -> None:
    mark = tmp_path / "helper-signal"
    h = PtyHarness.start([*SK, "run", "--", PY, "-c", FLOOD, str(mark)])
    leftovers.append(h.pid)
    h.expect(b"flood started")
    found = wait_until(lambda: h.read_some() is not None and _STARTED.search(h.output))
    # From here on nobody reads the terminal.
    helper = int(found.group(1))  # type: ignore[attr-defined]
    leftovers.append(helper)
    meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
    meta = json.loads(meta_path.read_text())
    sk_pid, child = meta["pid"], meta["child_pid"]
    leftovers.append(child)
    wait_until(_blocked(child))  # the terminal is full, and so is shellkeep's backlog
    assert not _nonblocking(sk_pid, 1)  # the terminal's description keeps its flags

    os.kill(sk_pid, sig)
    ended: dict[str, int] = {}
    wait_until(_exited(h.pid, ended), timeout_s=30)
    os.close(h.fd)

    assert ended["code"] == code
    meta, _, events = load_session(meta_path.parent)
    assert (meta["status"], meta["exit_code"], meta["signal"]) == (status, code, sig)
    assert meta["ended_at"] is not None
    assert "flood started" in output_text(events)
    assert not _alive(child)
    if sig == signal.SIGHUP:
        _assert_hung_up(mark, helper)


@pytest.mark.parametrize(("sig", "code", "status"), _SIGNALS)
def test_a_signal_ends_shellkeep_while_its_pipe_is_not_read(
    home: Paths, tmp_path: Path, leftovers: list[int], sig: int, code: int, status: str
) -> None:
    mark = tmp_path / "helper-signal"
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [*SK, "run", "--", PY, "-c", FLOOD, str(mark)],
        stdin=subprocess.DEVNULL,
        stdout=write_end,
        stderr=subprocess.DEVNULL,
    )
    leftovers.append(proc.pid)
    try:
        seen = bytearray()
        while b"\n" not in seen.partition(b"flood started")[2]:
            chunk = os.read(read_end, 4096)
            assert chunk, "shellkeep's stdout closed before the flood started"
            seen += chunk
        # From here on nobody reads the pipe.
        found = _STARTED.search(seen)
        assert found is not None
        helper = int(found.group(1))
        leftovers.append(helper)
        meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
        child = json.loads(meta_path.read_text())["child_pid"]
        leftovers.append(child)
        wait_until(_blocked(child))

        proc.send_signal(sig)
        assert proc.wait(timeout=30) == code
        assert not fcntl.fcntl(write_end, fcntl.F_GETFL) & os.O_NONBLOCK  # the pipe's flags as they were
    finally:
        os.close(read_end)
        os.close(write_end)
    meta, _, events = load_session(meta_path.parent)
    assert (meta["status"], meta["exit_code"], meta["signal"]) == (status, code, sig)
    assert "flood started" in output_text(events)
    assert not _alive(child)
    if sig == signal.SIGHUP:
        _assert_hung_up(mark, helper)


GOODBYE = r"""
import os, signal
def goodbye(sig, frame):
    os.write(1, b"goodbye after SIGTERM\n")  # blocks until shellkeep reads the pty again
    os._exit(0)
signal.signal(signal.SIGTERM, goodbye)
os.write(1, b"flood started\n")
line = b"0123456789" * 7 + b"abcdefghi\n"
while True:
    os.write(1, line * 100)
"""


def test_what_the_child_writes_after_sigterm_is_recorded(home: Paths, leftovers: list[int]) -> None:
    """The stalled terminal is given up, not the recording: the child's last words are kept."""
    h = PtyHarness.start([*SK, "run", "--", PY, "-c", GOODBYE])
    leftovers.append(h.pid)
    h.expect(b"flood started")
    meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
    meta = json.loads(meta_path.read_text())
    leftovers.append(meta["child_pid"])
    wait_until(_blocked(meta["child_pid"]))

    os.kill(meta["pid"], signal.SIGTERM)
    ended: dict[str, int] = {}
    wait_until(_exited(h.pid, ended), timeout_s=30)
    os.close(h.fd)

    assert ended["code"] == 0  # the child's own status
    meta, _, events = load_session(meta_path.parent)
    assert (meta["status"], meta["exit_code"], meta["signal"]) == ("killed", 0, None)
    assert output_text(events).endswith("goodbye after SIGTERM\r\n")


def _assert_hung_up(mark: Path, helper: int) -> None:
    """The stopped helper got SIGHUP and SIGCONT: they went to the child's whole process group."""
    wait_until(lambda: mark.exists() and mark.read_text() == str(int(signal.SIGHUP)))
    wait_until(lambda: not _alive(helper))


def test_a_slow_terminal_gets_every_byte_in_order(home: Paths) -> None:
    """Flow control loses nothing, and the mode reset comes after the last byte of output."""
    script = (
        "import sys\nsys.stdout.write('\\x1b[?2004h')\n"  # bracketed paste on, never off
        "for k in range(0, 100000, 1000):\n sys.stdout.write(''.join(f'line {n:06d}\\n' for n in range(k, k + 1000)))\n"
        "sys.stdout.write('END\\n')"
    )
    h = PtyHarness.start([*SK, "run", "--", PY, "-c", script])
    h.expect(b"line 000000")
    meta_path = wait_until(lambda: session_folders(home))[0]  # type: ignore[index]
    child = json.loads(meta_path.read_text())["child_pid"]
    wait_until(_blocked(child))  # not read: the child waits for the terminal, like on a slow one
    h.finish()
    text = bytes(h.output).replace(b"\r\n", b"\n")
    lines = text[text.index(b"line 000000") :].split(b"\n")
    assert lines == [b"line %06d" % n for n in range(100000)] + [b"END", b"\x1b[?2004l"]  # 1.2 MB
    meta, _, events = load_session(meta_path.parent)
    assert meta["status"] == "finished"
    assert output_text(events).replace("\r\n", "\n").endswith("line 099999\nEND\n")


# -- closed standard fds ---------------------------------------------------------------------


def test_closed_std_fds_are_replaced_with_dev_null(home: Paths) -> None:
    script = f"exec {SK_CMD} run -- sh -c 'echo recorded-line' <&- >&- 2>&-"
    result = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == b""
    assert result.stderr == b""
    (meta_path,) = session_folders(home)
    meta, _, events = load_session(meta_path.parent)
    assert (meta["status"], meta["exit_code"]) == ("finished", 0)
    assert output_text(events) == "recorded-line\r\n"  # the recording holds the child's output, once
