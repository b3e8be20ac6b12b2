"""Measure shellkeep over a huge Claude Code transcript: end of a run, upkeep, resume, copies.

Builds a synthetic Claude Code 2.1 transcript of ``--mb`` megabytes in the real format
(``tests/transcripts.py``: uuid/parentUuid chains, tool results with ``toolUseResult``),
then records a session of a stand-in ``claude`` (a small Python program on PATH that takes
the transcript as its own, appends one exchange, draws a screen and waits) and measures:

1. the end of the run: how long shellkeep holds the terminal after the agent exited, and
   shellkeep's peak RSS (VmHWM polled every 10 ms);
2. the upkeep in the background (exchanges, damage check, redacted copy into the chunk
   store): its time and peak RSS, run again by hand from a cold chunk store;
3. ``shellkeep resume --dry-run`` and a real ``shellkeep resume`` in a pty: time until the
   last screen is drawn, and shellkeep's peak RSS, for a collected session and for one whose
   recorder was killed (kill -9: never collected, the worst case);
4. the chunk store after the resumed run (the same transcript, appended to): bytes stored
   against the transcript's size.

Usage: .venv/bin/python bench/huge_transcript.py [--mb 1024] [--keep DIR]
Prints a markdown report on stdout (bench/RESULTS-transcripts.md is made from it).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.transcripts import FAKE_CLAUDE, claude_lines  # noqa: E402

SK = [sys.executable, "-m", "shellkeep"]
MARK = "BENCH-LAST-SCREEN"



def _vmhwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class PtyRun:
    """One command in a new pty: output collected, VmHWM of the command's own process polled."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = os.openpty()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, start_new_session=True)
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.seen: dict[bytes, float] = {}
        self.peak_kb = 0
        self.ended_at: float | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            self.peak_kb = max(self.peak_kb, _vmhwm_kb(self.proc.pid))
            ready, _, _ = select.select([self.master], [], [], 0.01)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                if not data:
                    break
                self.output += data
            if self.proc.poll() is not None and not ready:
                break
        self.ended_at = time.monotonic()

    def wait_for(self, text: str, timeout_s: float = 120) -> float:
        """Return seconds from the start until ``text`` was output."""
        needle = text.encode()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if needle in self.output:
                return time.monotonic() - self.started
            time.sleep(0.002)
        raise TimeoutError(f"{text!r} not seen; output: {bytes(self.output[-2000:])!r}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout_s: float = 600) -> int:
        code = self.proc.wait(timeout_s)
        self._reader.join(5)
        return code


def _build_transcript(path: Path, mb: int, cwd: str, sid: str, start: datetime) -> tuple[int, int]:
    """Write a Claude Code transcript of about ``mb`` MB; return (bytes, exchanges)."""
    target = mb << 20
    written = 0
    exchanges = 0
    with path.open("wb", buffering=1 << 20) as fh:
        batch = 200
        while written < target:
            lines = list(claude_lines(batch, session_id=sid, cwd=cwd, start=start, filler_bytes=20_000, first=exchanges))
            for line in lines:
                fh.write(line)
                written += len(line)
            exchanges += batch
    return written, exchanges


def _wait_upkeep_done(folder: Path, timeout_s: float = 1800) -> float:
    """Wait until no upkeep process works on ``folder``; return the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        busy = False
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"shellkeep.app.housekeeping" in cmdline and str(folder).encode() in cmdline:
                busy = True
                break
        if not busy:
            return time.monotonic() - t0
        time.sleep(0.2)
    raise TimeoutError("upkeep did not finish")


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _session_folders(home: Path) -> list[Path]:
    return sorted(p.parent for p in (home / "projects").glob("*/*/meta.json"))


def _run_measured(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, int, bytes, bytes]:
    """Run a command to its end; return (seconds, peak RSS kB of it and its children by wait4, status, out, err)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = bytearray()
    err = bytearray()
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}  # type: ignore[union-attr]
    while streams:
        ready, _, _ = select.select(list(streams), [], [])
        for fd in ready:
            data = os.read(fd, 65536)
            if data:
                streams[fd] += data
            else:
                del streams[fd]
    _, status, usage = os.wait4(proc.pid, 0)
    return time.monotonic() - t0, usage.ru_maxrss, os.waitstatus_to_exitcode(status), bytes(out), bytes(err)


def _measure_resume(session: str, label: str, env: dict[str, str], project: Path) -> str:
    """Time ``resume --dry-run`` and a real resume in a pty (last screen, agent up); return the report."""
    seconds, rss_kb, code, _, _ = _run_measured([*SK, "resume", session, "--dry-run"], env, project)
    screen = f"BENCH-RESUMED-{session}"
    resume = PtyRun([*SK, "resume", session], {**env, "BENCH_SCREEN": screen}, project)
    shown = resume.wait_for(MARK)
    agent_up = resume.wait_for(screen)
    peak_at_screen = resume.peak_kb
    resume.send(b"\r")
    resume.wait()
    return (
        f"resume ({label}): --dry-run {seconds * 1000:.0f} ms, peak RSS {rss_kb / 1024:.0f} MB, exit {code}; in a pty: "
        f"last screen after {shown * 1000:.0f} ms, agent started after {agent_up * 1000:.0f} ms; shellkeep peak RSS "
        f"{peak_at_screen / 1024:.0f} MB at the screen, {resume.peak_kb / 1024:.0f} MB to its end"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="sk-huge-"))
    base.mkdir(parents=True, exist_ok=True)
    home, project, claude_root, bin_dir = base / "home", base / "project", base / "claude", base / "bin"
    for folder in (home, project, claude_root, bin_dir):
        folder.mkdir(exist_ok=True)
    fake = bin_dir / "claude"
    fake.write_text(FAKE_CLAUDE)
    fake.chmod(0o755)
    env = {
        **os.environ, "SHELLKEEP_HOME": str(home), "SHELLKEEP_CONFIG": str(base / "config.toml"),
        "CLAUDE_CONFIG_DIR": str(claude_root), "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "BENCH_EXIT_FILE": str(base / "exit"), "BENCH_SCREEN": MARK, "TERM": "xterm-256color",
        "PYTHONPATH": str(ROOT),
    }  # fmt: skip
    report: list[str] = []

    def note(line: str = "") -> None:
        report.append(line)
        print(line, file=sys.stderr, flush=True)

    # The transcript's exchanges are dated after the session's start: they are its own.
    start = datetime.now(timezone.utc) + timedelta(minutes=5)
    source = base / "transcript.jsonl"
    t0 = time.monotonic()
    size, exchanges = _build_transcript(source, args.mb, str(project), "bench", start)
    note(f"built a {size / 2**20:.0f} MB Claude Code transcript ({exchanges} exchanges, {exchanges * 4} records) in {time.monotonic() - t0:.0f} s")

    # 1. A recorded run ends: how long is the terminal held?
    run = PtyRun([*SK, "claude"], {**env, "BENCH_TRANSCRIPT": str(source)}, project)
    run.wait_for(MARK)
    run.send(b"\r")
    run.wait()
    exited = float((base / "exit").read_text())
    held = time.time() - exited - (time.monotonic() - (run.ended_at or time.monotonic()))
    [folder] = _session_folders(home)
    transcript = Path(json.loads((folder / "meta.json").read_text())["agent_transcript"])
    note(f"end of run: terminal held {held * 1000:.0f} ms after the agent exited; shellkeep peak RSS {run.peak_kb / 1024:.0f} MB")

    waited = _wait_upkeep_done(folder)
    meta = json.loads((folder / "meta.json").read_text())
    note(f"background upkeep finished {waited:.1f} s after the run; exchanges stored: {meta['exchange_count']}")
    # 2. The upkeep again, by hand, from a cold chunk store.
    for path in [folder / "exchanges.jsonl", *(folder / "agent").glob("*")]:
        path.unlink()
    shutil.rmtree(home / "copies")
    seconds, rss_kb, code, _, err = _run_measured(
        [sys.executable, "-m", "shellkeep.app.housekeeping", str(folder)], env, project
    )
    meta = json.loads((folder / "meta.json").read_text())
    stored = _du(home / "copies")
    note(f"upkeep by hand (cold store): {seconds:.1f} s, peak RSS {rss_kb / 1024:.0f} MB, exit {code}, "
         f"{meta['exchange_count']} exchanges, copy {stored / 2**20:.0f} MB in the chunk store")  # fmt: skip
    if err:
        note(f"upkeep stderr: {err[-500:]!r}")

    # 3. Resume: dry run, then for real in a pty (last screen), collected session.
    sid = meta["id"]
    note(_measure_resume(sid, "collected", env, project))
    _wait_upkeep_done(_session_folders(home)[-1])
    copies = _du(home / "copies")
    size_now = transcript.stat().st_size
    note(f"copies after the resumed run (same transcript, appended): {copies / 2**20:.0f} MB stored for "
         f"2 sessions over a {size_now / 2**20:.0f} MB transcript ({len(list((home / 'copies').rglob('*'))) - 1} files)")  # fmt: skip

    # 3b. A session whose recorder was killed: never collected, resumed at once.
    run = PtyRun([*SK, "claude", "--resume", transcript.stem], env, project)
    run.wait_for(MARK)
    killed_folder = next(f for f in _session_folders(home) if json.loads((f / "meta.json").read_text()).get("status") == "running")
    while MARK.encode() not in (killed_folder / "session.cast").read_bytes():  # on disk within the flush interval
        time.sleep(0.05)
    os.kill(run.proc.pid, signal.SIGKILL)
    run.wait()
    note(_measure_resume(killed_folder.name, "killed, never collected", env, project))
    for f in _session_folders(home):
        _wait_upkeep_done(f)
    note(f"chunk store at the end: {_du(home / 'copies') / 2**20:.0f} MB for {len(_session_folders(home))} sessions, "
         f"transcript {transcript.stat().st_size / 2**20:.0f} MB")  # fmt: skip
    print("\n".join(f"- {line}" for line in report))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
