"""Benchmark how long help and completion take to start, this tree against a baseline.

Usage: .venv/bin/python bench/startup_help.py [--runs N] [--baseline REF | --baseline-tree DIR] [--no-write]

Times, in a new process each run, ``shellkeep --version``, ``shellkeep --help``,
``shellkeep ls --help``, ``shellkeep search --help`` and the completion of ``shellkeep se``
(``_SHELLKEEP_COMPLETE=bash_complete``), for this working tree and for the baseline (the
commit ``--baseline``, default ``main``, taken with ``git archive`` into a temporary
folder; or an existing checkout, ``--baseline-tree``). Both run the console script's
``entry()`` with this venv's Python and the tree's code first on ``PYTHONPATH``, so they
differ only by their code. Variants take turns within each run, so a busy moment of the
(shared) machine falls on all of them.

Target (issue 23): each help and the completion within 50 ms of ``--version`` measured in
the same run, compared by the median. Writes bench/RESULTS-help.md, which bench/report.py
puts into bench/RESULTS.md, and puts the section there too, keeping the other sections.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sections import put_section  # bench/ is the script's folder, first on sys.path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
HEADING = "## Start-up of help and completion (bench/startup_help.py)"
TARGET_MS = 50.0

ENTRY = "import sys; sys.argv[0] = 'shellkeep'; from shellkeep.cli.entry import entry; entry()"
"""What the ``shellkeep`` console script runs."""

COMPLETION = {"_SHELLKEEP_COMPLETE": "bash_complete", "COMP_WORDS": "shellkeep se", "COMP_CWORD": "1"}

CASES: tuple[tuple[str, tuple[str, ...], dict[str, str]], ...] = (
    ("shellkeep --version", ("--version",), {}),
    ("shellkeep --help", ("--help",), {}),
    ("shellkeep ls --help", ("ls", "--help"), {}),
    ("shellkeep search --help", ("search", "--help"), {}),
    ("completion of 'shellkeep se'", (), COMPLETION),
)
"""Each timed command line: its label, its arguments and the environment it adds."""


def _baseline_tree(ref: str, into: Path) -> Path:
    """Extract commit ``ref`` of this repository into ``into``; return it."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _env(tree: Path, home: Path, extra: dict[str, str]) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE off: both trees start from their .pyc files, as an install does.
    skipped = ("SHELLKEEP_", "_SHELLKEEP_", "COMP_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    env.update(PYTHONPATH=str(tree), SHELLKEEP_HOME=str(home / "data"), SHELLKEEP_CONFIG=str(home / "config.toml"))
    env.update(extra)
    return env


def _check_tree(tree: Path, home: Path) -> None:
    """Fail unless the tree's own shellkeep is the one imported with its PYTHONPATH."""
    shown = subprocess.run(
        [sys.executable, "-c", "import shellkeep; print(shellkeep.__file__)"],
        env=_env(tree, home, {}), cwd=home, capture_output=True, text=True, check=True,
    ).stdout.strip()
    if not Path(shown).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"startup_help: {tree} imports shellkeep from {shown}")


def _time_once(tree: Path, home: Path, args: tuple[str, ...], extra: dict[str, str]) -> float:
    """Run one command line in a new process; return its wall time in ms (it must succeed).

    It runs in ``home``, not in a checkout: ``python -c`` puts the working folder first on sys.path.
    """
    env = _env(tree, home, extra)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], env=env, cwd=home, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"startup_help: {' '.join(args) or extra} failed in {tree}: {done.stderr.decode()[-500:]}")
    return took


def measure(trees: dict[str, Path], runs: int) -> dict[str, dict[str, list[float]]]:
    """Return the times in ms of every case, per tree, ``runs`` of each, taking turns."""
    times: dict[str, dict[str, list[float]]] = {name: {label: [] for label, _, _ in CASES} for name in trees}
    with tempfile.TemporaryDirectory(prefix="sk-help-bench-") as tmp:
        home = Path(tmp)
        for tree in trees.values():
            _check_tree(tree, home)
            for _, args, extra in CASES:  # warm the page cache and write the .pyc files
                _time_once(tree, home, args, extra)
        for _ in range(runs):
            for name, tree in trees.items():
                for label, args, extra in CASES:
                    times[name][label].append(_time_once(tree, home, args, extra))
    return times


def render(times: dict[str, dict[str, list[float]]], runs: int, baseline: str) -> str:
    """Return the results section: best and median per case and tree, and the verdict."""
    names = list(times)
    lines = [
        HEADING,
        "",
        f"Each command line in a new process, {runs} runs per case and tree, the cases taking turns; "
        f"wall time in ms, median (best). Both trees run the console script's `entry()` with the same "
        f"Python and libraries; baseline: {baseline}; this tree: the working tree. Target: each "
        f"help and the completion within {TARGET_MS:.0f} ms of `shellkeep --version` of the same tree, "
        "by the median.",
        "",
        "| command | " + " | ".join(f"{n} median (best)" for n in names) + " | " + " | ".join(f"{n} over --version" for n in names) + " | verdict |",
        "|---|" + "---:|" * (2 * len(names)) + "---|",
    ]
    for label, _, _ in CASES:
        cells, over = [], []
        verdict = ""
        for name in names:
            values = times[name][label]
            cells.append(f"{statistics.median(values):.1f} ({min(values):.1f})")
            if label != CASES[0][0]:
                extra_ms = statistics.median(values) - statistics.median(times[name][CASES[0][0]])
                over.append(f"{extra_ms:+.1f} ms")
                if name == names[-1]:
                    verdict = "**pass**" if extra_ms <= TARGET_MS else "**FAIL**"
            else:
                over.append("—")
        lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(over) + f" | {verdict} |")
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    lines += ["", f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {os.cpu_count()} CPUs · load average at the end "
              f"{load} · Python {sys.version.split()[0]} · this tree at {head or '?'}" + (" with uncommitted changes" if dirty else "")]
    return "\n".join(lines)


def write(section: str) -> None:
    """Write bench/RESULTS-help.md and put the section into bench/RESULTS.md, replacing an older one."""
    (BENCH_DIR / "RESULTS-help.md").write_text(section + "\n")
    put_section(BENCH_DIR / "RESULTS.md", HEADING, section)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per case and tree (default 30)")
    parser.add_argument("--baseline", default="728ada8", help="the commit to compare with (default 728ada8, before help loaded lazily)")
    parser.add_argument("--baseline-tree", type=Path, help="an existing checkout to compare with, instead of --baseline")
    parser.add_argument("--no-write", action="store_true", help="print the section, leave the results files alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sk-help-baseline-") as tmp:
        if args.baseline_tree is not None:
            base, label = args.baseline_tree, str(args.baseline_tree)
        else:
            base = _baseline_tree(args.baseline, Path(tmp))
            commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.baseline],
                                    capture_output=True, text=True, check=True).stdout.strip()
            label = f"`{args.baseline}` at {commit}"
        section = render(measure({"baseline": base, "this tree": REPO}, args.runs), args.runs, label)
    print(section)
    if not args.no_write:
        write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
