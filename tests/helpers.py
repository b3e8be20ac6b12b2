"""Helpers for tests that run shellkeep as a user would: a real process, often in a real pty."""

from __future__ import annotations

import json
from typing import Any
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import fcntl
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.recordings import open_cast
from shellkeep.asciicast.model import Event, Header
from shellkeep.store.paths import Paths
from tests.conftest import REAL_CASTS, needs_shared

SK: tuple[str, ...] = (sys.executable, "-m", "shellkeep")

CASTS = Path(__file__).resolve().parent / "data" / "casts"
"""tests/data/casts: small recordings written for these tests; the ``invalid-*`` ones must be refused."""


def local_recordings() -> tuple[list[Path], list[Path]]:
    """Return the (valid, invalid) recordings of tests/data/casts, sorted by name."""
    paths = sorted(p for p in CASTS.iterdir() if p.suffix in (".cast", ".json"))
    return [p for p in paths if not p.name.startswith("invalid-")], [p for p in paths if p.name.startswith("invalid-")]


def corpus_recordings() -> tuple[list[Path], list[Path]]:
    """Return the (valid, INVALID) recordings the optional corpus lists in its SOURCES.md;
    two empty lists when the corpus is absent."""
    listing = REAL_CASTS / "SOURCES.md"
    if not listing.is_file():
        return [], []
    valid: list[Path] = []
    invalid: list[Path] = []
    for row in listing.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| v\d \| `([^`]+)` \|", row)
        if m:
            (invalid if "| INVALID" in row else valid).append(REAL_CASTS / m.group(1))
    return valid, invalid


def corpus_param(relative: str, *values: object) -> object:
    """Return a ``pytest.param`` of the corpus recording ``relative`` (then ``values``), marked
    ``needs_shared``: left out of the run when the corpus is absent."""
    return pytest.param(REAL_CASTS / relative, *values, marks=needs_shared(REAL_CASTS), id=f"real-casts/{relative}")


def recording_params(*, invalid: bool) -> list[object]:
    """Return the valid (or the invalid) recordings as ``pytest.param``s: every one of
    tests/data/casts, then those of the optional corpus when it is there."""
    local = local_recordings()[invalid]
    corpus = corpus_recordings()[invalid]
    return [pytest.param(p, id=f"data/{p.name}") for p in local] + [
        corpus_param(str(p.relative_to(REAL_CASTS))) for p in corpus
    ]


def wait_until(condition: Callable[[], object], timeout_s: float = 20.0, interval_s: float = 0.02) -> object:
    """Poll ``condition`` until it returns something truthy; return it or raise TimeoutError."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout_s}s")
        time.sleep(interval_s)


def run_sk(*args: str, input_bytes: bytes | None = None, timeout_s: float = 60, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    """Run ``shellkeep ARGS`` without a terminal (pipes on every side)."""
    result: subprocess.CompletedProcess[bytes] = subprocess.run(
        [*SK, *args],
        input=input_bytes,
        stdin=None if input_bytes is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout_s,
        **kw,
    )
    return result


def invoke_sk(
    *args: str,
    input_bytes: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | str | None = None,
    timeout_s: float | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``shellkeep ARGS`` in this process through click's ``CliRunner``, as ``run_sk`` would.

    For the commands that need no terminal and start nothing that outlives them (ls, show,
    search, export, config, stats, key, gc, doctor...): no new interpreter, so a test pays
    milliseconds, not the start-up. Same result shape as ``run_sk``: the exit status the
    console script would give (errors as one line on stderr), stdout and stderr kept apart,
    as bytes; ``env`` replaces the environment, as ``subprocess.run`` does. ``timeout_s`` is
    accepted for ``run_sk``'s callers and not enforced (pytest-timeout ends a stuck test).
    """
    from click.testing import CliRunner

    from shellkeep.cli.entry import guarded
    from shellkeep.cli.main import run_click
    from shellkeep.vault.keys import forget_cached_keys

    overlay: dict[str, str | None] | None = None
    if env is not None:
        overlay = {name: None for name in os.environ if name not in env}
        overlay.update(env)
    argv, here = sys.argv, Path.cwd()
    forget_cached_keys()  # a new process starts with no key found yet, and so does each call
    with CliRunner().isolation(input=input_bytes, env=overlay) as (stdout, stderr, _):
        sys.argv = ["shellkeep", *args]
        try:
            if cwd is not None:
                os.chdir(cwd)
            code = guarded(run_click)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.argv = argv
            os.chdir(here)
            forget_cached_keys()
            sys.stdout.flush()
            sys.stderr.flush()
        out, err = stdout.getvalue(), stderr.getvalue()
    return subprocess.CompletedProcess(["shellkeep", *args], code, out, err)


BANNER = re.compile(rb"shellkeep: recording (\S+) \('shellkeep show \1' later\)\r*\n")
"""The start line a recording in a terminal prints on stderr (``record.banner``)."""


def without_banner(data: bytes | bytearray) -> bytes:
    """Return ``data`` (what reached a terminal) with the recording's start lines taken out."""
    return BANNER.sub(b"", bytes(data))


def session_folders(paths: Paths) -> list[Path]:
    """Return every session folder under the home, oldest first."""
    return sorted(paths.projects.glob("*/*/meta.json"), key=lambda p: p.parent.name)


def recording_of(folder: Path) -> Path:
    """Return the recording of the session in ``folder`` as ``meta.json`` names it:
    ``session.cast``, or ``session.cast.zst`` once the upkeep compressed it."""
    from shellkeep.store.session import read_meta

    return Path(read_meta(folder).cast)


def only_session(paths: Paths) -> tuple[dict[str, object], Header, list[Event]]:
    """Return (meta, header, events) of the one session recorded; fails if not exactly one."""
    metas = session_folders(paths)
    assert len(metas) == 1, f"expected one session, found {[str(m) for m in metas]}"
    return load_session(metas[0].parent)


def load_session(folder: Path) -> tuple[dict[str, object], Header, list[Event]]:
    """Return (meta, header, events) of the session in ``folder``."""
    meta = json.loads((folder / "meta.json").read_text())
    cast = open_cast(Path(meta["cast"]))
    return meta, cast.header, list(cast.events())


def output_text(events: Sequence[Event]) -> str:
    """Return the concatenated data of the output events."""
    return "".join(e.data for e in events if e.code == "o")


def default_signals() -> None:
    """In a child about to exec: SIGHUP, SIGINT and SIGQUIT back to their default action, as a
    terminal emulator starts its shell. A suite started under ``nohup``, or as a background job of
    a script (which ignores SIGINT and SIGQUIT), would pass the ignoring on through exec, and a
    closed pty or a typed Ctrl-C would then end nothing (9 such failures in one run so started)."""
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


@dataclass
class PtyHarness:
    """H from pty-cases.md: runs a command in its own pty, reads until EOF, can resize."""

    pid: int
    fd: int
    output: bytearray

    @classmethod
    def start(cls, argv: Sequence[str], *, cols: int = 80, rows: int = 24, env: dict[str, str] | None = None) -> PtyHarness:
        """Fork ``argv`` in a new pty of ``cols`` x ``rows``."""
        pid, fd = pty.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
                default_signals()
                os.execvpe(argv[0], list(argv), env if env is not None else dict(os.environ))
            finally:
                os._exit(127)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        return cls(pid, fd, bytearray())

    def resize(self, cols: int, rows: int) -> None:
        """Resize the harness's terminal (the kernel sends SIGWINCH to its foreground group)."""
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def write(self, data: bytes) -> None:
        """Write all of ``data`` to the terminal, as typed or pasted."""
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def read_some(self, timeout_s: float = 0.1) -> bytes:
        """Read what is available within ``timeout_s``; b"" at EOF or when nothing came."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return b""
        self.output += data
        return data

    def expect(self, needle: bytes, timeout_s: float = 20.0, times: int = 1, since: int = 0) -> None:
        """Read until ``needle`` has appeared ``times`` times in the output from offset ``since``
        on (``len(self.output)`` taken before a write: only what answers it); raise TimeoutError otherwise."""
        deadline = time.monotonic() + timeout_s
        found, start = 0, since  # searched from ``start`` on only: a flood of output stays linear
        while True:
            at = self.output.find(needle, start)
            while at != -1:
                found, start = found + 1, at + len(needle)
                if found >= times:
                    return
                at = self.output.find(needle, start)
            start = max(start, len(self.output) - len(needle) + 1)
            if time.monotonic() > deadline:
                raise TimeoutError(f"{needle!r} not seen; output so far: {bytes(self.output[-2000:])!r}")
            self.read_some(0.05)

    def finish(self, timeout_s: float = 30.0) -> int:
        """Read until EOF and return the exit status (shell convention)."""
        deadline = time.monotonic() + timeout_s
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                self.output += data
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._drain()
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise TimeoutError(f"no EOF within {timeout_s}s; output: {bytes(self.output[-2000:])!r}")
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

    def _drain(self) -> None:
        while self.read_some(0.05):
            pass


def meta_of(folder: Path) -> dict[str, Any]:
    """Return a session folder's ``meta.json`` as a dict."""
    meta: dict[str, Any] = json.loads((folder / "meta.json").read_text())
    return meta


def exchanges_of(folder: Path) -> list[dict[str, Any]]:
    """Return a session folder's ``exchanges.jsonl`` (plain, not sealed) as one dict a line."""
    return [json.loads(line) for line in (folder / "exchanges.jsonl").read_text().splitlines()]


def git(repo: Path, *args: str) -> str:
    """Run ``git -C repo ARGS`` (raises ``CalledProcessError`` on failure); return its stdout."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def git_init(repo: Path) -> None:
    """Make *repo* an empty git repository on branch ``main`` with a test author configured."""
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")


def program_runs(log: Path) -> list[list[str]]:
    """Return the lines a test program logged, one list per start (none while *log* does not exist).

    *log* is JSON lines: ``{"start": true}`` when the program starts, ``{"line": text}`` per line read.
    """
    runs: list[list[str]] = []
    if not log.exists():
        return runs
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if "start" in entry:
            runs.append([])
        else:
            runs[-1].append(entry["line"])
    return runs


def process_gone(pid: int) -> bool:
    """Tell whether process ``pid`` has exited: no ``/proc`` entry, or a zombie (``Z``, ``X``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_for_background(paths: Paths, timeout_s: float = 60.0) -> None:
    """Wait until no process works on ``paths.home`` any more (the detached compression and
    indexing that follow each session)."""
    needle = f"SHELLKEEP_HOME={paths.home}".encode()

    def idle() -> bool:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    return False
            except OSError:
                continue
        return True

    # Idle on two looks in a row: a process caught in the middle of its exec (the upkeep
    # posix_spawn starts) can show an empty environment for an instant.
    seen_idle = [False]

    def idle_twice() -> bool:
        now = idle()
        settled, seen_idle[0] = now and seen_idle[0], now
        return settled

    wait_until(idle_twice, timeout_s, interval_s=0.05)


def stored_copy(folder: Path, name: str, paths: Paths | None = None) -> bytes | None:
    """Return the plaintext of a session's copy of the agent transcript ``name`` (None: no copy).

    Follows the reference into the chunk store (``vault.copies``); paths: the data folder
    (default: ``SHELLKEEP_HOME``, with the key file the tests use).
    """
    from shellkeep.store.paths import resolve_paths
    from shellkeep.vault.access import Vault
    from shellkeep.vault.copies import open_copy

    try:
        with open_copy(Vault(paths or resolve_paths()), folder, name) as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def damage_compressed(cast: Path, keep_lines: int) -> int:
    """Compress ``cast`` as two zstd frames and flip 16 bytes in the middle of the second.

    The first frame holds the header and the first ``keep_lines`` event lines, whole; the
    second, the rest (long enough that the flip lands inside it). Returns the byte offset
    where the second frame starts: the damaged frame a reader names.
    """
    import zstandard

    lines = cast.read_bytes().splitlines(keepends=True)
    rest = b"".join(lines[1 + keep_lines :]) + b"".join(b'[99.0, "o", "padding %d\\r\\n"]\n' % i for i in range(2000))
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    one, two = compressor.compress(b"".join(lines[: 1 + keep_lines])), compressor.compress(rest)
    mid = len(two) // 2
    cast.write_bytes(one + two[:mid] + bytes(b ^ 0xFF for b in two[mid : mid + 16]) + two[mid + 16 :])
    return len(one)
