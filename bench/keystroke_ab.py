"""Keystroke latency of two shellkeep trees beside script(1), taking turns in one run.

Usage: .venv/bin/python bench/keystroke_ab.py [--rounds 8] [--before REV]

``before`` is the tree at git revision REV (default: the merge base with main), checked out
into a temporary folder; ``after`` is the working tree. Both are installed as ``bench/run.py``
installs shellkeep (not editable). Each round runs script, before and after once each, in a
rotating order, with section 2's method (``run.py``: 500 keys through ``cat``, 2 ms apart,
first byte of the echo); the load average is noted with each run. The machine is shared,
so a round's three runs see much the same load, and p99 is compared within a round.
Prints a markdown table; writes nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import outer  # noqa: E402
import recorders  # noqa: E402
import run  # noqa: E402
from recorders import Recorder  # noqa: E402

_REPO = Path(__file__).resolve().parent.parent
_COMMAND = ["sh", "-c", "printf 'RE''ADY\\n'; exec cat"]


def _install(workdir: Path, name: str, src: Path) -> Path:
    sub = workdir / name
    sub.mkdir()
    recorders._REPO = src
    return recorders.install_shellkeep(sub)


def _one_run(bench: run.Bench, rec: Recorder) -> tuple[float, float]:
    """Return (p50, p99) in µs of ``run.FULL.keystrokes`` keys typed into ``cat`` under ``rec``."""
    o = bench.spawn(rec, _COMMAND)
    try:
        outer.wait_for(o, b"READY", timeout_s=30)
        run._type_line(o, 20, None, run.FULL.keystroke_gap_s)  # warm-up, not measured
        samples: list[float] = []
        left = run.FULL.keystrokes
        while left:
            n = min(50, left)
            run._type_line(o, n, samples, run.FULL.keystroke_gap_s)
            left -= n
        os.write(o.fd, b"\x04")
        outer.drain(o, timeout_s=30)
    finally:
        bench.finish()
    rec.clean()
    samples.sort()
    return run._pct(samples, 50) * 1e6, run._pct(samples, 99) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--before", default=None, help="git revision of the 'before' tree (default: merge base with main)")
    args = parser.parse_args()
    rev = args.before or subprocess.run(
        ["git", "-C", str(_REPO), "merge-base", "HEAD", "main"], capture_output=True, text=True, check=True
    ).stdout.strip()
    workdir = Path(tempfile.mkdtemp(prefix="shellkeep-ab-"))
    tree = workdir / "before-src"
    try:
        subprocess.run(["git", "-C", str(_REPO), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        bins = {"before": _install(workdir, "before", tree), "after": _install(workdir, "after", _REPO)}
        bench = run.Bench(workdir, run.FULL, ["script", "shellkeep"])
        for binary in bins.values():
            recorders._shellkeep = binary
            bench.warm_up()
        names = ["script", "before", "after"]
        res: dict[str, list[tuple[float, float, str]]] = {n: [] for n in names}
        for r in range(args.rounds):
            for name in names[r % 3 :] + names[: r % 3]:
                if name != "script":
                    recorders._shellkeep = bins[name]
                load = open("/proc/loadavg").read().split()[0]
                p50, p99 = _one_run(bench, Recorder("script" if name == "script" else "shellkeep", workdir))
                res[name].append((p50, p99, load))
                print(f"round {r + 1} {name:<7} p50 {p50:6.0f} p99 {p99:6.0f} µs  load1 {load}", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["git", "-C", str(_REPO), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"before: {rev[:7]}; after: the working tree. p50 / p99 in µs; (x) = p99 over script's in the same round.\n")
    print("| round | load1 (script/before/after) | script | before | after |")
    print("|---|---|---:|---:|---:|")
    for r in range(args.rounds):
        s, b, a = res["script"][r], res["before"][r], res["after"][r]
        print(f"| {r + 1} | {s[2]} / {b[2]} / {a[2]} | {s[0]:.0f} / {s[1]:.0f} | {b[0]:.0f} / {b[1]:.0f} ({b[1] / s[1]:.2f}x)"
              f" | {a[0]:.0f} / {a[1]:.0f} ({a[1] / s[1]:.2f}x) |")
    med = {n: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for n, v in res.items()}
    print(f"| median | | {med['script'][0]:.0f} / {med['script'][1]:.0f} | {med['before'][0]:.0f} / {med['before'][1]:.0f}"
          f" | {med['after'][0]:.0f} / {med['after'][1]:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
