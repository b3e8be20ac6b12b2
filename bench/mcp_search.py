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
4. Adds one big session (200 exchanges of 2,000-character prompts and 8,000-character
   answers, a 1 MB recording) and calls every tool through the client: the largest response
   in characters (the JSON text an agent reads), the time of a call, and how many calls
   reading the whole session takes with the cursor. Every response must stay bounded.

Writes bench/RESULTS-mcp.md and puts it into bench/RESULTS.md as its own section (the
runner, bench/report.py, keeps it there). Everything lives in one temporary folder,
removed on every exit path.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from index_bench import vocabulary, write_sessions  # noqa: E402
from sections import machine, put_section, table  # noqa: E402

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
        big_id = _big_session(ctx.paths, project, rng, words)
        rebuild(ctx.paths)
        sizes = anyio.run(_tool_sizes, server, big_id, queries[0])
        rows = [(name, statistics.median(runs) * 1000, _p95(runs) * 1000, hits[name] // args.repeats) for name, runs in timings.items()]
        audit_lines = sum(1 for _ in open(ctx.paths.audit_log, "rb"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    call_p95 = rows[-1][2]
    verdict = f"target < {TARGET_MS:.0f} ms"
    lines = [
        HEADING,
        "",
        f"{args.sessions} synthetic sessions in one project (bench/index_bench.py's: 40 coloured lines, a marker and "
        f"3 exchanges each), index built and warm; {len(queries)} queries (10 rare words, 5 pairs, 5 phrases), "
        f"{args.repeats} runs each, taking turns; limit 20. Wall time in ms. The tool body adds the scope, the audit "
        f"log's append (one entry per session hit, one fsync; {audit_lines} entries written in all) and the quoting and "
        "paging; the tool call adds the MCP SDK (validation, JSON) through its client connected in process. " + machine(load_start),
        "",
        *table(
            ("way", "median ms", "p95 ms", "hits per round", "verdict"),
            (
                (name, f"{median:.1f}", f"{p95:.1f}", found, f"**{'pass' if p95 < TARGET_MS else 'FAIL'}** ({verdict})" if name.startswith("tool call") else "")
                for name, median, p95, found in rows
            ),
            "lrrrl",
        ),
        "",
        "Response size per tool (characters of the JSON text the agent reads), on the same archive plus one big "
        "session (200 exchanges of 2,000 + 8,000 characters, a 1 MB recording), through the SDK client:",
        "",
        *table(
            ("call", "largest response, chars", "median ms", "calls to read it all"),
            ((name, f"{largest:,}", f"{median:.1f}", calls) for name, largest, median, calls in sizes),
            "lrrr",
        ),
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    (ROOT / "bench" / "RESULTS-mcp.md").write_text(section)
    put_section(ROOT / "bench" / "RESULTS.md", HEADING, section)
    return 0 if call_p95 < TARGET_MS else 1


def _big_session(paths: object, project: Path, rng: random.Random, words: list[str]) -> str:
    """Write one big session folder beside the others; return its id."""
    import json

    from shellkeep.store.paths import Paths, project_key

    assert isinstance(paths, Paths)
    sid = "20300101-000000-big00"
    folder = paths.project_dir(project) / sid
    folder.mkdir()
    header = {"version": 2, "width": 100, "height": 30, "timestamp": 1893456000}
    lines = [json.dumps(header)]
    line = " ".join(rng.choice(words) for _ in range(14))
    for i in range(12_000):  # about 1 MB of output
        lines.append(json.dumps([round(i * 0.01, 6), "o", f"{i} {line}\r\n"]))
    (folder / "session.cast").write_text("\n".join(lines) + "\n")
    exchanges = [
        json.dumps({"index": k, "time": f"2030-01-01T00:{k // 60:02d}:{k % 60:02d}Z", "prompt": _text(rng, words, 2000), "answer": _text(rng, words, 8000)})
        for k in range(200)
    ]
    (folder / "exchanges.jsonl").write_text("\n".join(exchanges) + "\n")
    meta = {
        "id": sid,
        "project": project_key(project),
        "project_root": str(project),
        "cwd": str(project),
        "command": ["claude"],
        "agent": "claude",
        "started_at": "2030-01-01T00:00:00.000Z",
        "ended_at": "2030-01-01T03:20:00.000Z",
        "status": "finished",
        "exit_code": 0,
        "exchange_count": 200,
    }
    (folder / "meta.json").write_text(json.dumps(meta))
    return sid


def _text(rng: random.Random, words: list[str], chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(words)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


async def _tool_sizes(server: object, big_id: str, word: str) -> list[tuple[str, int, float, int]]:
    """Call each tool through the SDK client; return (call, largest response, median ms, calls to the end)."""
    from mcp import Client
    from mcp_types import Implementation

    calls: list[tuple[str, str, dict[str, object], bool]] = [
        ("search_sessions, limit 50, a common word", "search_sessions", {"query": word, "limit": 50}, True),
        ("list_sessions, limit 50", "list_sessions", {"limit": 50}, False),
        ("get_session of the big session", "get_session", {"id": big_id}, True),
        ("get_screen, its last screen", "get_screen", {"id": big_id}, True),
    ]
    rows: list[tuple[str, int, float, int]] = []
    async with Client(server, client_info=Implementation(name="bench", version="1")) as client:  # type: ignore[arg-type]
        for name, tool, arguments, pages in calls:
            largest, times, count, cursor = 0, [], 0, None
            while True:
                t0 = time.perf_counter()
                result = await client.call_tool(tool, {**arguments, **({"cursor": cursor} if cursor else {})})
                times.append(time.perf_counter() - t0)
                assert not result.is_error, result.content
                text = "".join(getattr(part, "text", "") for part in result.content)
                largest = max(largest, len(text))
                count += 1
                cursor = (result.structured_content or {}).get("next_cursor") if pages else None
                if not cursor or count >= 500:
                    break
            rows.append((name, largest, statistics.median(times) * 1000, count))
    return rows


def _timed(fn: Callable[[str], None], q: str) -> float:
    t0 = time.perf_counter()
    fn(q)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
