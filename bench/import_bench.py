"""Benchmark ``shellkeep import --agent``: 1,000 native sessions of Claude Code and of Codex.

Usage: .venv/bin/python bench/import_bench.py [--sessions N] [--exchanges E] [--keep DIR]

1. Writes N synthetic Claude Code 2.1 transcripts (``tests/transcripts.claude_lines``: the real
   record shapes, a Read tool call and its result per exchange) into a temporary HOME, spread
   over 20 project folders, and as many Codex 0.171 rollouts (``codex_lines``).
2. baseline: reads every line of the same files with ``json.loads`` in this process (the
   least any importer must do), per agent.
3. import: ``shellkeep import --agent claude`` (then ``codex``) as a new process into an
   empty data folder, wall time (Python start-up and the index included).
4. again: the same command a second time (nothing new: every session unchanged).

Prints a table and writes bench/RESULTS-import.md. Target: the Claude import under 10 s.
Everything lives in one temporary folder, removed at the end unless ``--keep DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shellkeep.agents.locations import dash_encoded  # noqa: E402
from tests.transcripts import claude_lines, codex_lines  # noqa: E402

TARGET_CLAUDE_S = 10.0
PROJECTS = 20


def write_home(home: Path, sessions: int, exchanges: int) -> tuple[list[Path], list[Path]]:
    """Write ``sessions`` Claude transcripts and as many Codex rollouts under ``home``."""
    base = datetime(2026, 10, 1, tzinfo=timezone.utc)
    claude: list[Path] = []
    codex: list[Path] = []
    for i in range(sessions):
        cwd = home / "work" / f"project-{i % PROJECTS:02d}"
        cwd.mkdir(parents=True, exist_ok=True)
        start = base + timedelta(minutes=7 * i)
        sid = str(uuid.UUID(int=i + 1, version=4))
        path = home / ".claude" / "projects" / dash_encoded(cwd) / f"{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(claude_lines(exchanges, session_id=sid, cwd=str(cwd), start=start)))
        claude.append(path)
        tid = str(uuid.UUID(int=(1 << 64) + i + 1, version=4))
        day = home / ".codex" / "sessions" / f"{start:%Y/%m/%d}"
        day.mkdir(parents=True, exist_ok=True)
        rollout = day / f"rollout-{start:%Y-%m-%dT%H-%M-%S}-{tid}.jsonl"
        rollout.write_bytes(b"".join(codex_lines(exchanges, thread_id=tid, cwd=str(cwd), start=start)))
        codex.append(rollout)
    return claude, codex


def read_plain(paths: list[Path]) -> tuple[float, int]:
    """Return the seconds to ``json.loads`` every line of ``paths``, and the records read."""
    began = time.perf_counter()
    records = 0
    for path in paths:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
                records += 1
    return time.perf_counter() - began, records


def run_import(agent: str, env: dict[str, str]) -> tuple[float, float, dict[str, int]]:
    """Run ``shellkeep import --agent AGENT --json`` as a new process; return its wall time, CPU time and actions."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "shellkeep", "import", "--agent", agent, "--json"],
        env=env, capture_output=True, check=False,
    )  # fmt: skip
    took = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"import --agent {agent} failed: {done.stderr.decode()[-2000:]}")
    counts: dict[str, int] = {}
    for result in json.loads(done.stdout):
        counts[result["action"]] = counts.get(result["action"], 0) + 1
    return took, cpu, counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--exchanges", type=int, default=6)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="sk-import-bench-"))
    try:
        home = root / "user-home"
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(root / "data", ignore_errors=True)
        claude, codex = write_home(home, args.sessions, args.exchanges)
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME")},
            "HOME": str(home),
            "SHELLKEEP_HOME": str(root / "data"),
            "SHELLKEEP_CONFIG": str(root / "config.toml"),
            "PYTHONPATH": str(ROOT),
        }
        rows: list[tuple[str, str, str, str]] = []
        figures: dict[str, float] = {}
        for agent, files in (("claude", claude), ("codex", codex)):
            size_mb = sum(p.stat().st_size for p in files) / 1e6
            plain_s, records = read_plain(files)
            took, cpu, counts = run_import(agent, env)
            again, cpu_again, counts_again = run_import(agent, env)
            figures[agent] = took
            target = f"< {TARGET_CLAUDE_S:.0f} s" if agent == "claude" else ""
            met = ("yes" if took < TARGET_CLAUDE_S else "**no**") if agent == "claude" else ""
            rows.append((f"{agent}: {len(files)} sessions, {size_mb:.1f} MB, {records} records: json.loads of every line", f"{plain_s:.2f} s", "", ""))
            rows.append((f"{agent}: shellkeep import --agent {agent} (new process) — {counts}", f"{took:.2f} s ({len(files) / took:.0f}/s; CPU {cpu:.2f} s)", target, met))
            rows.append((f"{agent}: the same again (nothing new) — {counts_again}", f"{again:.2f} s (CPU {cpu_again:.2f} s)", "", ""))
        load = os.getloadavg()
        lines = [
            "## Importing the agents' own histories (bench/import_bench.py)",
            "",
            f"{args.sessions} synthetic native sessions per agent ({args.exchanges} exchanges each, a tool call and its "
            f"result per exchange; Claude Code 2.1 transcripts and Codex 0.171 rollouts as tests/transcripts.py writes them), "
            f"in {PROJECTS} project folders of a temporary HOME, imported into an empty data folder. Machine: "
            f"{os.cpu_count()} cores, Python {sys.version.split()[0]}. Run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
            f"load average {load[0]:.1f}.",
            "",
            "| measure | result | target | met |",
            "|---|---|---|---|",
            *(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows),
            "",
            "The import does per session what recording does at its end: the adapter's streamed read of the transcript "
            "(exchanges, usage, damage), `exchanges.jsonl`, the transcript's copy into the chunk store, `meta.json` in a "
            "hidden folder (four sessions at a time), one `os.sync` per 100 new sessions before their folders are "
            "renamed into place, and one index transaction per 100 sessions; the baseline only parses each line. "
            "CPU is user + system time of the import process. On a busy machine (see the load average: other jobs "
            "share the 2 cores) the wall time is mostly waiting for a core; on an idle one it comes near the CPU time.",
            "",
        ]
        text = "\n".join(lines)
        (ROOT / "bench" / "RESULTS-import.md").write_text(text)
        print(text)
        return 0 if figures.get("claude", 1e9) < TARGET_CLAUDE_S else 1
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
