"""Benchmark the snapshot of a work tree at an exchange boundary, beside ``git stash create``.

Usage: .venv/bin/python bench/snapshot_cost.py [--files N] [--runs N] [--no-write]

Builds a git repository of ``--files`` files (default 10,000, in 100 folders, about 200
bytes each, committed), then leaves it as an agent would mid-session: 10 tracked files
changed and 5 untracked files added. Each run times, in turns, on that same tree:

- ``git stash create`` (the user's index; tracked files only, untracked ones are left out);
- ``take_snapshot`` (``git.snapshot``: what ``mark``, ``diff`` and ``restore-files`` take:
  a temporary copy of the user's index, ``git add -A``, ``write-tree``, ``commit-tree``);
- ``SnapshotSeries.take`` with nothing changed since the series' last snapshot (the live
  snapshots' skip: ``add -A`` into the kept index, ``write-tree``, no commit);
- ``SnapshotSeries.take`` after one file changed (a typical exchange boundary);
- a new ``SnapshotSeries``' first ``take`` (the ``session start`` checkpoint).

Wall time of each, in ms, median and best of ``--runs``; everything runs in the same process
and the same run, so the machine's load falls on all of them. Writes
bench/RESULTS-snapshots.md, which bench/report.py puts into bench/RESULTS.md, and puts
the section there too, keeping the other sections. No target (the issue asks for the figures).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sections import put_section  # bench/ is the script's folder, first on sys.path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from shellkeep.git.snapshot import SnapshotSeries, take_snapshot  # noqa: E402 - after the path

HEADING = "## Snapshot of the files at an exchange boundary (bench/snapshot_cost.py, run apart)"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_tree(repo: Path, files: int) -> None:
    """Create a committed repository of ``files`` files, then change 10 and add 5 untracked."""
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.com")
    _git(repo, "config", "user.name", "bench")
    for i in range(files):
        folder = repo / f"d{i % 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.py").write_text(f"# file {i}\n" + "x = 1\n" * 30)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "tree")
    for i in range(10):
        with open(repo / f"d{i % 100:02d}" / f"f{i}.py", "a") as fh:
            fh.write("# changed by the agent\n")
    for i in range(5):
        (repo / f"new{i}.py").write_text(f"# untracked {i}\n")
    time.sleep(1.1)  # past git's racy-clean second: the index's stat data is trusted, as in use


def measure(repo: Path, runs: int) -> dict[str, list[float]]:
    """Return the wall times in ms of each case, ``runs`` of each, taking turns."""
    series = SnapshotSeries(repo)
    series.take("warm")
    edited = repo / "d50" / "f50.py"
    counter = [0]

    def one_changed() -> None:
        counter[0] += 1
        with open(edited, "a") as fh:
            fh.write(f"# edit {counter[0]}\n")

    def first_take() -> None:
        fresh = SnapshotSeries(repo)
        try:
            fresh.take("session start")
        finally:
            fresh.close()

    cases: dict[str, tuple[Callable[[], None] | None, Callable[[], object]]] = {
        "git stash create": (None, lambda: _git(repo, "stash", "create")),
        "take_snapshot (one-off: mark, diff, restore-files)": (None, lambda: take_snapshot(repo, "bench")),
        "SnapshotSeries.take, nothing changed (skipped: no commit)": (None, lambda: series.take("bench")),
        "SnapshotSeries.take, one file changed": (one_changed, lambda: series.take("bench")),
        "SnapshotSeries first take (session start)": (None, first_take),
    }
    times: dict[str, list[float]] = {label: [] for label in cases}
    try:
        for _ in range(runs):
            for label, (prepare, case) in cases.items():
                if prepare is not None:
                    prepare()
                started = time.perf_counter()
                case()
                times[label].append((time.perf_counter() - started) * 1000)
        skipped = series.take("check")
        assert not skipped[1], "a take with nothing changed made a commit"
    finally:
        series.close()
    return times


def render(times: dict[str, list[float]], files: int, runs: int) -> str:
    """Return the results section."""
    stash = statistics.median(times["git stash create"])
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    lines = [
        HEADING,
        "",
        f"A work tree of {files:,} committed files (100 folders, ~200 bytes each) with 10 tracked files "
        f"changed and 5 untracked files added; {runs} runs of each case, the cases taking turns in one "
        "process; wall time in ms, median (best). `git stash create` leaves untracked files out; the "
        "snapshots hold them. The live snapshots (`record.snapshots`) take a `SnapshotSeries` on a "
        "thread of their own: the relay and the agent never wait for them.",
        "",
        "| case | median (best) ms | median / stash create |",
        "|---|---:|---:|",
    ]
    for label, values in times.items():
        median = statistics.median(values)
        lines.append(f"| {label} | {median:.1f} ({min(values):.1f}) | {median / stash:.2f}x |")
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    lines += ["", f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} CPUs · load average at the end "
              f"{load} · {version} · Python {sys.version.split()[0]}"]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="files in the work tree (default 10000)")
    parser.add_argument("--runs", type=int, default=15, help="runs of each case (default 15)")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave the results files alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sk-snapshot-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        make_tree(repo, args.files)
        section = render(measure(repo, args.runs), args.files, args.runs)
    print(section)
    if not args.no_write:
        (BENCH_DIR / "RESULTS-snapshots.md").write_text(section + "\n")
        put_section(BENCH_DIR / "RESULTS.md", HEADING, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
