"""Benchmark the SQLite index: build, ls, search with 10 000 sessions; memory on 100 MB.

Usage: .venv/bin/python bench/index_bench.py [--sessions N] [--big-mb M] [--quick] [--keep DIR]

1. Writes N synthetic sessions (default 10 000) into one project of a temporary
   SHELLKEEP_HOME: a v2 recording of ~40 lines of coloured shell-like output drawn from a
   5 000-word vocabulary, a marker, and three exchanges with prompts and answers.
2. build: ``rebuild`` from scratch (no index file) -> sessions a second.
3. ls: ``find_sessions`` for the project, in process (median of 7 warm runs), and the
   command ``shellkeep ls`` end to end in a fresh interpreter (median of 5; includes
   Python's start-up).
4. search: ``search`` for 20 different queries (one rare word, two words, a phrase),
   in process, median and worst; and ``shellkeep search`` end to end.
5. memory: indexing one recording of M MB (default 100) of output in a fresh process;
   peak RSS from ``getrusage(RUSAGE_CHILDREN)``.

Prints a table and writes bench/RESULTS-index.md (a section for bench/RESULTS.md).
Everything lives in one temporary folder, removed on every exit path; with ``--keep DIR``
it lives in DIR and stays: a later run with the same DIR and ``--sessions`` reuses the
built home (same sessions, same queries) and skips steps 1-2 (the build row then says so).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shellkeep.archive.index import forget_sessions  # noqa: E402
from shellkeep.archive.listing import SessionQuery, find_sessions  # noqa: E402
from shellkeep.archive.scan import rebuild  # noqa: E402
from shellkeep.archive.search import SearchRequest, search  # noqa: E402
from shellkeep.store.paths import Paths, project_key  # noqa: E402

TARGETS = {"ls_s": 0.3, "cli_s": 0.2, "search_s": 0.1, "build_per_s": 200.0, "memory_mb": 200.0}


def vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def write_sessions(paths: Paths, project: Path, count: int, rng: random.Random, words: list[str]) -> None:
    """Write ``count`` session folders as the recorder leaves them (no fsync: speed)."""
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    agents = ["claude", "codex", "bash", "aider", "gemini"]
    folder_root = paths.project_dir(project)
    folder_root.mkdir(parents=True)
    for n in range(count):
        at = base + timedelta(minutes=7 * n)
        sid = at.strftime("%Y%m%d-%H%M%S-") + f"{n % 1000:03d}{n % 256:02x}"
        folder = folder_root / sid
        folder.mkdir()
        lines = []
        t = 0.0
        header = {"version": 2, "width": 100, "height": 30, "timestamp": int(at.timestamp())}
        lines.append(json.dumps(header))
        for i in range(40):
            t += rng.random() * 0.5
            text = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
            colour = 31 + i % 6
            lines.append(json.dumps([round(t, 6), "o", f"$ \x1b[{colour}m{text}\x1b[0m\r\n"]))
            if i == 20:
                lines.append(json.dumps([round(t, 6), "m", f"step {rng.choice(words)}"]))
        (folder / "session.cast").write_text("\n".join(lines) + "\n")
        exchanges = []
        for k in range(3):
            exchanges.append(
                json.dumps(
                    {
                        "index": k,
                        "time": (at + timedelta(seconds=5 * k)).isoformat().replace("+00:00", "Z"),
                        "prompt": " ".join(rng.choice(words) for _ in range(8)),
                        "answer": " ".join(rng.choice(words) for _ in range(40)),
                        "usage": {"input": 1000 + k, "output": 200 + k, "cache_read": 0, "cache_write": 0},
                    }
                )
            )
        (folder / "exchanges.jsonl").write_text("\n".join(exchanges) + "\n")
        meta = {
            "id": sid,
            "project": project_key(project),
            "project_root": str(project),
            "cwd": str(project),
            "command": [agents[n % 5]],
            "agent": agents[n % 5],
            "started_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "name": f"task-{n}" if n % 10 == 0 else None,
            "host": "bench",
            "status": "finished",
            "ended_at": (at + timedelta(seconds=t)).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "duration": round(t, 3),
            "exit_code": 0,
            "cast": str(folder / "session.cast"),
            "exchange_count": 3,
        }
        (folder / "meta.json").write_text(json.dumps(meta, indent=2))


def timed(fn: object, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - t0)
    return out


def cli_imports(env: dict[str, str], cwd: Path, args: list[str]) -> tuple[int, float]:
    """Return the modules ``shellkeep ARGS`` imports and their time in ms (``python -X importtime``)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "shellkeep", *args], env=env, cwd=cwd, capture_output=True)
    lines = [
        line for line in done.stderr.decode().splitlines() if line.startswith("import time:") and line.split("|")[1].strip().isdigit()
    ]
    top = [line for line in lines if not line.rsplit("|", 1)[1].startswith("  ")]  # cumulative of each top-level import
    return len(lines), sum(int(line.split("|")[1]) for line in top) / 1000


def cli_time(env: dict[str, str], cwd: Path, args: list[str], repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "shellkeep", *args], env=env, cwd=cwd, capture_output=True)
        runs.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise RuntimeError(f"shellkeep {' '.join(args)} failed: {done.stderr.decode()}")
    return statistics.median(runs)


_BIG_INDEXER = """
import resource, sys, time
from pathlib import Path
from shellkeep.archive.index import index_session
from shellkeep.store.paths import resolve_paths
from shellkeep.store.session import read_meta
t0 = time.perf_counter()
index_session(resolve_paths(), read_meta(Path(sys.argv[1])))
print(time.perf_counter() - t0)
"""


def big_recording(paths: Paths, project: Path, megabytes: int, rng: random.Random, words: list[str]) -> tuple[float, float]:
    """Index a recording of ``megabytes`` MB of output in a child; return (seconds, peak MB)."""
    folder = paths.project_dir(project) / "29990101-000000-00000"
    folder.mkdir(parents=True)
    target = megabytes * 1_000_000
    written = 0
    t = 0.0
    with open(folder / "session.cast", "w") as fh:
        fh.write(json.dumps({"version": 2, "width": 120, "height": 40}) + "\n")
        n = 0
        while written < target:
            n += 1
            t += 0.001
            if n % 500 == 0:
                data = "\x1b[H\x1b[2J"  # a TUI-style full redraw now and then
            else:
                data = "".join(
                    f"\x1b[3{i % 7}m{' '.join(rng.choice(words) for _ in range(12))}\x1b[0m {n}-{i}\r\n" for i in range(20)
                )
            written += len(data)
            fh.write(json.dumps([round(t, 6), "o", data]) + "\n")
    meta = {
        "id": folder.name,
        "project": project_key(project),
        "project_root": str(project),
        "cwd": str(project),
        "command": ["cat"],
        "agent": "cat",
        "started_at": "2999-01-01T00:00:00.000Z",
        "status": "finished",
        "duration": t,
        "cast": str(folder / "session.cast"),
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    env = {**os.environ, "SHELLKEEP_HOME": str(paths.home), "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, "-c", _BIG_INDEXER, str(folder)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak_kb < before:
        peak_kb = before
    return float(done.stdout.strip().splitlines()[-1]), peak_kb / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="1 000 sessions and a 10 MB recording")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="build the home in DIR and keep it; reuse it when DIR holds one")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.big_mb = 1000, 10
    args.load_at_start = os.getloadavg()[0]
    rng = random.Random(42)
    words = vocabulary(rng)
    if args.keep is not None:
        work = args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="shellkeep-index-bench-"))
    # The random state after the sessions were written: a reused home gets the same queries.
    built = work / f"built-{args.sessions}.json"
    try:
        paths = Paths(home=work / "home", config_file=work / "config.toml")
        project = work / "project"
        big = paths.project_dir(project) / "29990101-000000-00000"
        shutil.rmtree(big, ignore_errors=True)  # a kept home's big recording from the last run
        build_rate: float | None = None
        if built.exists():
            state = json.loads(built.read_text())
            rng.setstate((state[0], tuple(state[1]), state[2]))
            index_mb = paths.index.stat().st_size / 1e6
            print(f"reusing the home built in {work}", file=sys.stderr)
        else:
            shutil.rmtree(paths.home, ignore_errors=True)
            shutil.rmtree(project, ignore_errors=True)
            project.mkdir()
            t0 = time.perf_counter()
            write_sessions(paths, project, args.sessions, rng, words)
            print(f"wrote {args.sessions} sessions in {time.perf_counter() - t0:.1f}s", file=sys.stderr)

            t0 = time.perf_counter()
            result = rebuild(paths)
            build_s = time.perf_counter() - t0
            build_rate = result.sessions / build_s
            index_mb = paths.index.stat().st_size / 1e6
            print(f"built in {build_s:.1f}s", file=sys.stderr)
            if args.keep is not None:
                built.write_text(json.dumps(rng.getstate()))

        key = project_key(project)
        ls_runs = timed(lambda: find_sessions(paths, SessionQuery(project=key)), 7)
        ls_limit_runs = timed(lambda: find_sessions(paths, SessionQuery(project=key, limit=20, agents=("claude",))), 7)
        queries = [rng.choice(words) for _ in range(10)]
        queries += [f"{rng.choice(words)} {rng.choice(words)}" for _ in range(5)]
        queries += [f'"{rng.choice(words)} {rng.choice(words)}"' for _ in range(5)]
        search_runs = []
        hits = 0
        for q in queries:
            t0 = time.perf_counter()
            hits += len(search(paths, SearchRequest(q, project=key)))
            search_runs.append(time.perf_counter() - t0)
        env = {**os.environ, "SHELLKEEP_HOME": str(paths.home), "SHELLKEEP_CONFIG": str(paths.config_file), "PYTHONPATH": str(ROOT)}
        # Bytecode as an install leaves it (pip compiles every module): without it, an editable
        # checkout run with PYTHONDONTWRITEBYTECODE=1 compiles ~100 modules on every start.
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "shellkeep")], check=True, capture_output=True)
        ls_cli = cli_time(env, project, ["ls"], 5)
        search_cli = cli_time(env, project, ["search", queries[0], "--json"], 5)
        start_cli = cli_time(env, project, ["--version"], 5)
        ls_modules, ls_import_ms = cli_imports(env, project, ["ls"])
        search_modules, search_import_ms = cli_imports(env, project, ["search", queries[0], "--json"])
        big_s, big_mb = big_recording(paths, project, args.big_mb, rng, words)
        if args.keep is not None:  # leave the kept home as it was built
            forget_sessions(paths, [big.name])
            shutil.rmtree(big, ignore_errors=True)

        build_row = (
            ("index build from scratch", f"{build_rate:.0f} sessions/s ({build_s:.1f} s, {index_mb:.0f} MB)", f"> {TARGETS['build_per_s']:.0f}/s", build_rate > TARGETS["build_per_s"])
            if build_rate is not None
            else ("index build from scratch", f"not run: home reused ({index_mb:.0f} MB)", f"> {TARGETS['build_per_s']:.0f}/s", None)
        )
        rows = [
            build_row,
            (f"ls, {args.sessions} sessions (in process, median)", f"{statistics.median(ls_runs) * 1000:.0f} ms", "< 300 ms", statistics.median(ls_runs) < TARGETS["ls_s"]),
            ("ls --agent claude --limit 20 (in process)", f"{statistics.median(ls_limit_runs) * 1000:.0f} ms", "", None),
            ("shellkeep ls (new process, median)", f"{ls_cli * 1000:.0f} ms", "< 200 ms", ls_cli < TARGETS["cli_s"]),
            ("shellkeep ls: imports (python -X importtime)", f"{ls_modules} modules, {ls_import_ms:.0f} ms", "", None),
            ("search (in process, median of 20)", f"{statistics.median(search_runs) * 1000:.1f} ms", "< 100 ms", statistics.median(search_runs) < TARGETS["search_s"]),
            ("search (in process, worst of 20)", f"{max(search_runs) * 1000:.1f} ms", "< 100 ms", max(search_runs) < TARGETS["search_s"]),
            ("shellkeep search --json (new process)", f"{search_cli * 1000:.0f} ms", "< 200 ms", search_cli < TARGETS["cli_s"]),
            ("shellkeep search: imports (python -X importtime)", f"{search_modules} modules, {search_import_ms:.0f} ms", "", None),
            ("shellkeep --version (Python start-up)", f"{start_cli * 1000:.0f} ms", "", None),
            (f"index a {args.big_mb} MB recording: peak RSS", f"{big_mb:.0f} MB ({big_s:.0f} s)", "< 200 MB", big_mb < TARGETS["memory_mb"]),
        ]
        width = max(len(r[0]) for r in rows)
        print(f"{'measure':<{width}}  {'result':<32}  {'target':<10}  ok")
        for name, value, target, ok in rows:
            mark = "" if ok is None else ("yes" if ok else "NO")
            print(f"{name:<{width}}  {value:<32}  {target:<10}  {mark}")
        write_results(rows, args, hits, len(queries))
        return 0 if all(ok is not False for *_, ok in rows) else 1
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def write_results(rows: list[tuple[str, str, str, bool | None]], args: argparse.Namespace, hits: int, queries: int) -> None:
    import sqlite3

    from sections import machine, table

    lines = [
        "## Index, search and listing (bench/index_bench.py)",
        "",
        f"{args.sessions} synthetic sessions in one project (40 coloured lines, a marker and 3 exchanges each); "
        f"{queries} search queries returned {hits} hits in all. " + machine(args.load_at_start, f"SQLite {sqlite3.sqlite_version}"),
        "",
        *table(("measure", "result", "target", "met"), ((n, v, t, "" if ok is None else ("yes" if ok else "no")) for n, v, t, ok in rows)),
    ]
    lines += [
        "",
        "In process means the layer call alone (`find_sessions`, `search`), index warm, as the command "
        "runs it after start-up; new process adds the interpreter's start-up (the `--version` row) "
        "and the imports (`python -X importtime`, bytecode compiled first, as an install does). "
        "The big recording is read whole, in a fresh process; its transcript is indexed up to "
        "`MAX_TRANSCRIPT_CHARS` (16 million characters) and the rest is scanned for markers only.",
        "",
    ]
    (Path(__file__).resolve().parent / "RESULTS-index.md").write_text("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
