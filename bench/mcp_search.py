"""Benchmark the MCP server's ``search_sessions`` over 10,000 sessions, in process.

Usage: .venv/bin/python bench/mcp_search.py [--sessions N] [--repeats R]

1. Writes N synthetic sessions (default 10,000) into one project of a temporary
   SHELLKEEP_HOME, as bench/index_bench.py does (40 coloured lines, a marker and 3
   exchanges each, words from a 5,000-word vocabulary), and builds the index.
2. For 20 queries (10 rare words, 5 pairs of words, 5 phrases), each run R times
   (default 5), the queries taking turns, times three ways of answering the same search:
   - ``shellkeep search``'s app function (``archive.search.search``, limit 20): the reference;
   - the tool's body (``shellkeep.mcp.tools.search_sessions``): scope, search, the audit
     log's append (one entry per session hit, fsynced), quoting and paging;
   - the whole tool call through the MCP SDK's client connected in process to the server
     ``shellkeep mcp`` runs (``build_server``): argument validation, JSON, the SDK.
3. Reports the median and p95 in ms of each; target: the tool call under 200 ms.

Writes bench/RESULTS-mcp.md and puts it into bench/RESULTS.md as its own section (the
runner, bench/report.py, keeps it there). Everything lives in one temporary folder,
removed on every exit path.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from index_bench import vocabulary, write_sessions  # noqa: E402
from sections import put_section  # noqa: E402

HEADING = "## MCP search_sessions over 10,000 sessions (bench/mcp_search.py)"
TARGET_MS = 200.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="shellkeep-mcp-bench-"))
    try:
        os.environ["SHELLKEEP_HOME"] = str(work / "home")
        os.environ["SHELLKEEP_CONFIG"] = str(work / "config.toml")
        import anyio
        from mcp import Client
        from mcp_types import Implementation

        from shellkeep.app.archive_scope import open_scope
        from shellkeep.app.context import open_context
        from shellkeep.archive.scan import rebuild
        from shellkeep.archive.search import SearchRequest, search
        from shellkeep.mcp import tools
        from shellkeep.mcp.server import build_server
        from shellkeep.store.paths import project_key

        rng = random.Random(42)
        words = vocabulary(rng)
        project = work / "project"
        project.mkdir()
        ctx = open_context(cwd=project)
        t0 = time.perf_counter()
        write_sessions(ctx.paths, project, args.sessions, rng, words)
        rebuild(ctx.paths)
        print(f"wrote and indexed {args.sessions} sessions in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        queries = [rng.choice(words) for _ in range(10)]
        queries += [f"{rng.choice(words)} {rng.choice(words)}" for _ in range(5)]
        queries += [f'"{rng.choice(words)} {rng.choice(words)}"' for _ in range(5)]

        scope = open_scope(ctx)
        reader = tools.Reader(ctx, scope, "mcp:bench 1")
        key = project_key(project)
        server = build_server(lambda client: tools.Reader(ctx, scope, client))
        hits = {"reference": 0, "tool body": 0, "tool call (SDK client)": 0}

        def reference(q: str) -> None:
            hits["reference"] += len(search(ctx.paths, SearchRequest(q, project=key, limit=20), vault=ctx.vault, recover=ctx.recover))

        def body(q: str) -> None:
            found = tools.search_sessions(reader, q, None, None, 20, None)["hits"]
            hits["tool body"] += len(found) if isinstance(found, list) else 0

        timings: dict[str, list[float]] = {name: [] for name in hits}

        async def run_all() -> None:
            async with Client(server, client_info=Implementation(name="bench", version="1")) as client:
                for _ in range(args.repeats):
                    for q in queries:
                        for name, fn in (("reference", reference), ("tool body", body)):
                            timings[name].append(_timed(fn, q))
                        t0 = time.perf_counter()
                        result = await client.call_tool("search_sessions", {"query": q})
                        timings["tool call (SDK client)"].append(time.perf_counter() - t0)
                        assert not result.is_error, result.content
                        found = (result.structured_content or {}).get("hits")
                        hits["tool call (SDK client)"] += len(found) if isinstance(found, list) else 0

        anyio.run(run_all)
        rows = [(name, statistics.median(runs) * 1000, _p95(runs) * 1000, hits[name] // args.repeats) for name, runs in timings.items()]
        audit_lines = sum(1 for _ in open(ctx.paths.audit_log, "rb"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    call_p95 = rows[-1][2]
    lines = [
        HEADING,
        "",
        f"{args.sessions} synthetic sessions in one project (bench/index_bench.py's: 40 coloured lines, a marker and "
        f"3 exchanges each), index built and warm; {len(queries)} queries (10 rare words, 5 pairs, 5 phrases), "
        f"{args.repeats} runs each, taking turns; limit 20. Wall time in ms. The tool body adds the scope, the audit "
        f"log's append (one entry per session hit, one fsync; {audit_lines} entries written in all) and the quoting and "
        "paging; the tool call adds the MCP SDK (validation, JSON) through its client connected in process.",
        "",
        "| way | median ms | p95 ms | hits per round | verdict |",
        "|---|---:|---:|---:|---|",
    ]
    for name, median, p95, found in rows:
        verdict = ""
        if name.startswith("tool call"):
            verdict = f"**{'pass' if p95 < TARGET_MS else 'FAIL'}** (target < {TARGET_MS:.0f} ms)"
        lines.append(f"| {name} | {median:.1f} | {p95:.1f} | {found} | {verdict} |")
    lines += [
        "",
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {os.cpu_count()} CPUs · load average {load_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end · Python {platform.python_version()}",
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    (ROOT / "bench" / "RESULTS-mcp.md").write_text(section)
    put_section(ROOT / "bench" / "RESULTS.md", HEADING, section)
    return 0 if call_p95 < TARGET_MS else 1


def _timed(fn: Callable[[str], None], q: str) -> float:
    t0 = time.perf_counter()
    fn(q)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
