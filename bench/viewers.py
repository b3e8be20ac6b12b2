"""Benchmark live viewers (issue 12): keystroke-to-viewer latency, and the relay with viewers.

Usage: .venv/bin/python bench/viewers.py [--quick] [--no-write]

Three ways of running the program, taking turns within each repeat, in the outer pty of
``outer.py``: ``script`` (util-linux script(1)), ``shellkeep`` with no viewer, and
``shellkeep+2`` with two viewers attached to its live socket before the measured part starts.
A viewer here is a separate Python process reading the socket as fast as it can (as ``serve``
relays it to a browser); in the latency runs one of the two is this process itself, which
also times each key's event on the socket.

throughput  base64 text through ``cat``, from the Enter that starts it to the end of output
            and exit (the viewers are attached while the program waits for that Enter)
latency     one key typed into ``cat`` until its echo comes back on the outer pty (the
            relay's figure), and, for ``shellkeep+2``, until its output event reaches the
            viewer on the socket (keystroke-to-viewer; loopback, same machine). Letters and
            spaces alternate: redaction holds a word until it ends, so the viewer's figure
            is taken on the spaces

Target: keystroke-to-viewer p50 under 20 ms. Writes bench/RESULTS-viewers.md, which
bench/report.py puts into bench/RESULTS.md as its section 8 (this script puts it there too).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import outer  # noqa: E402
from recorders import Recorder, install_shellkeep, shellkeep_home, tool_versions  # noqa: E402
from run import Bench, Plan, _check_exit, _pct, machine_facts  # noqa: E402
from sections import put_section  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
HEADING = "## 8. Live viewers (bench/viewers.py, run apart)"
VARIANTS = ("script", "shellkeep", "shellkeep+2")
TARGET_VIEWER_P50_MS = 20.0
READY = ["sh", "-c", "printf 'RE''ADY\\n'; exec cat"]

# A viewer process: connect, say so, read to the end; print the bytes read and whether the
# end line came (it does not when the recorder dropped this viewer for being slow).
_VIEWER = """
import sys
from pathlib import Path
from shellkeep.capture.live import connect_live
sock = connect_live(Path(sys.argv[1]), None)
first = b""
while not first.endswith(b"\\n"):
    first += sock.recv(1)
print("connected", flush=True)
total, tail = 0, b""
while True:
    data = sock.recv(1 << 20)
    if not data:
        break
    total += len(data)
    tail = (tail + data)[-200:]
print(total, int(b'{"end"' in tail), flush=True)
"""


def _plan(quick: bool) -> tuple[Plan, int, int, float]:
    """Return the run plan, keys per latency run, latency repeats and the gap between keys (s)."""
    plan = Plan(
        mode="quick" if quick else "full", random_mib=12 if quick else 40, throughput_repeats=2 if quick else 4,
        keystrokes=0, latency_repeats=0, keystroke_gap_s=0.0, startup_runs=0, memory_copies=0, memory_repeats=0,
        throughput_timeout_s=30, memory_timeout_s=0, idle_s=0, idle_keys=0,
    )
    return plan, (150 if quick else 400), (2 if quick else 4), 0.02


class _Viewers:
    """The viewer processes of one run, attached to the session's live socket."""

    def __init__(self, bench: Bench, count: int) -> None:
        folder = _wait_for_socket(bench)
        self.procs = [
            subprocess.Popen([sys.executable, "-c", _VIEWER, str(folder)], stdout=subprocess.PIPE, text=True)
            for _ in range(count)
        ]
        for proc in self.procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "connected":
                raise outer.OuterPtyError("a viewer could not connect")

    def finish(self) -> list[tuple[int, bool]]:
        """Wait for the viewers to end; return (bytes read, got the end line) of each."""
        out = []
        for proc in self.procs:
            text, _ = proc.communicate(timeout=60)
            total, ended = text.split()
            out.append((int(total), ended == "1"))
        return out


def _wait_for_socket(bench: Bench, timeout_s: float = 30.0) -> Path:
    deadline = time.monotonic() + timeout_s
    home = shellkeep_home(bench.workdir)
    while time.monotonic() < deadline:
        found = list(home.glob("projects/*/*/live.sock"))
        if found:
            return found[0].parent
        time.sleep(0.005)
    raise outer.OuterPtyError("no live socket appeared")


def _recorder(variant: str, workdir: Path) -> Recorder:
    return Recorder("script" if variant == "script" else "shellkeep", workdir)


def bench_throughput(bench: Bench) -> dict[str, Any]:
    """Time ``cat`` of the base64 file from the Enter that starts it, under each variant."""
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    command = ["sh", "-c", f"printf 'RE''ADY\\n'; read x; exec cat {bench.data}"]
    for i in range(bench.plan.throughput_repeats):
        order = VARIANTS[i % 3 :] + VARIANTS[: i % 3]
        for variant in order:
            rec = _recorder(variant, bench.workdir)
            o = bench.spawn(rec, command)
            viewers = None
            try:
                outer.wait_for(o, b"READY", timeout_s=30)
                if variant == "shellkeep+2":
                    viewers = _Viewers(bench, 2)
                started = time.perf_counter_ns()
                os.write(o.fd, b"\r")
                d = outer.drain(o, timeout_s=bench.plan.throughput_timeout_s)
            finally:
                bench.finish()
            _check_exit(rec, d, o, "throughput")
            elapsed = (o.started_ns + d.elapsed_s * 1e9 - started) / 1e9
            run: dict[str, Any] = {"elapsed_s": elapsed, "bytes_read": d.bytes_read}
            if viewers is not None:
                got = viewers.finish()
                run["viewer_bytes"] = [g[0] for g in got]
                run["viewers_dropped"] = sum(1 for g in got if not g[1])
            if variant != "script":
                meta = _meta(bench)
                run["complete"] = (meta.get("output_bytes") or 0) >= bench.data_bytes + bench.data_lines
            rec.clean()
            runs[variant].append(run)
            extra = f"  viewers dropped {run['viewers_dropped']}" if viewers is not None else ""
            print(f"  throughput #{i + 1} {variant:<12} {elapsed:7.3f} s{extra}", file=sys.stderr, flush=True)
    return {
        "input_bytes": bench.data_bytes,
        "variants": {
            v: {"runs": rs, "median_s": statistics.median(r["elapsed_s"] for r in rs),
                "min_s": min(r["elapsed_s"] for r in rs)}
            for v, rs in runs.items()
        },
    }


def _meta(bench: Bench) -> dict[str, Any]:
    metas = sorted(shellkeep_home(bench.workdir).glob("projects/*/*/meta.json"))
    try:
        return json.loads(metas[-1].read_text()) if metas else {}
    except (OSError, ValueError):
        return {}


def bench_latency(bench: Bench, keys: int, repeats: int, gap_s: float) -> dict[str, Any]:
    """Type keys into ``cat`` (no Enter between them); time each echo and, with viewers, its event."""
    from shellkeep.capture.live import connect_live

    echo: dict[str, list[float]] = {v: [] for v in VARIANTS}
    viewer: list[float] = []
    per_run: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for i in range(repeats):
        order = VARIANTS[i % 3 :] + VARIANTS[: i % 3]
        for variant in order:
            rec = _recorder(variant, bench.workdir)
            o = bench.spawn(rec, READY)
            viewers = sock = None
            run_echo: list[float] = []
            run_viewer: list[float] = []
            try:
                outer.wait_for(o, b"READY", timeout_s=30)
                if variant == "shellkeep+2":
                    viewers = _Viewers(bench, 1)
                    sock = connect_live(_wait_for_socket(bench), 30)
                    reader = _EventReader(sock)
                    reader.skip_backlog()
                for k in range(20 + keys):  # the first 20: warm-up, not measured
                    # A letter, then a space that ends its word: redaction holds a word until
                    # it ends (a secret may still be arriving), so the space is what a viewer sees.
                    key = b" " if k % 2 else bytes([97 + k // 2 % 26])
                    t0 = time.perf_counter_ns()
                    os.write(o.fd, key)
                    got = len(os.read(o.fd, 4096))
                    t1 = time.perf_counter_ns()
                    if got != 1:
                        outer.read_exactly(o, 1 - got, 1.0)
                    if sock is not None and key == b" ":
                        reader.wait_for(" ")
                        t2 = time.perf_counter_ns()
                        if k >= 20:
                            run_viewer.append((t2 - t0) / 1e9)
                    if k >= 20:
                        run_echo.append((t1 - t0) / 1e9)
                    time.sleep(gap_s)
                os.write(o.fd, b"\r\x04")
                d = outer.drain(o, timeout_s=30)
            finally:
                if sock is not None:
                    sock.close()
                bench.finish()
            _check_exit(rec, d, o, "latency")
            if viewers is not None:
                viewers.finish()
            rec.clean()
            echo[variant] += run_echo
            viewer += run_viewer
            run_echo.sort()
            row = {"p50_us": _pct(run_echo, 50) * 1e6, "p99_us": _pct(run_echo, 99) * 1e6}
            if run_viewer:
                run_viewer.sort()
                row.update(viewer_p50_ms=_pct(run_viewer, 50) * 1e3, viewer_p99_ms=_pct(run_viewer, 99) * 1e3)
            per_run[variant].append(row)
            more = f"  viewer p50 {row['viewer_p50_ms']:.1f} ms p99 {row['viewer_p99_ms']:.1f} ms" if run_viewer else ""
            print(f"  latency #{i + 1} {variant:<12} p50 {row['p50_us']:7.1f} us  p99 {row['p99_us']:8.1f} us{more}",
                  file=sys.stderr, flush=True)
    result: dict[str, Any] = {"keys": keys, "repeats": repeats, "gap_s": gap_s, "variants": {}}
    for variant, samples in echo.items():
        samples.sort()
        result["variants"][variant] = {
            "runs": per_run[variant], "p50_us": _pct(samples, 50) * 1e6, "p99_us": _pct(samples, 99) * 1e6,
            "worst_run_p99_us": max(r["p99_us"] for r in per_run[variant]),
        }
    viewer.sort()
    result["viewer"] = {"p50_ms": _pct(viewer, 50) * 1e3, "p99_ms": _pct(viewer, 99) * 1e3,
                        "max_ms": viewer[-1] * 1e3, "samples": len(viewer)}
    return result


class _EventReader:
    """Read a live socket's event lines in this process."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.buf = b""

    def _line(self) -> bytes:
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.sock], [], [], 10)
            if not ready:
                raise outer.OuterPtyError("no event on the live socket within 10 s")
            data = self.sock.recv(65536)
            if not data:
                raise outer.OuterPtyError("the live socket closed")
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def skip_backlog(self) -> None:
        header = json.loads(self._line())
        for _ in range(header["shellkeep"]["backlog"]):
            self._line()

    def wait_for(self, char: str) -> None:
        """Read events until an output event holding ``char`` arrives."""
        while True:
            event = json.loads(self._line())
            if isinstance(event, list) and event[1] == "o" and char in event[2]:
                return


def render(doc: dict[str, Any]) -> str:
    t, lat = doc["throughput"], doc["latency"]
    m = doc["machine"]
    v = lat["viewer"]
    verdict = "**pass**" if v["p50_ms"] < TARGET_VIEWER_P50_MS else "**fail**"
    lines = [
        HEADING,
        "",
        f"{doc['mode']} settings. Variants take turns in each repeat: script(1); shellkeep with no viewer; "
        "shellkeep with two viewers on its live socket (separate processes reading as fast as they can; in the "
        "latency runs this process is one of them and times each key's event on the socket). Keys are typed "
        f"{lat['gap_s'] * 1000:.0f} ms apart into `cat`, {lat['keys']} per run, {lat['repeats']} runs each: a letter, "
        "then a space. Events are published after redaction, and the output's redaction filter holds a word "
        "until it ends (a secret may still be arriving), so a viewer sees typing word by word: keystroke to "
        "viewer is timed on the spaces, from the key to its output event read on the socket.",
        "",
        f"Keystroke to viewer (loopback): p50 {v['p50_ms']:.1f} ms, p99 {v['p99_ms']:.1f} ms, max {v['max_ms']:.1f} ms "
        f"over {v['samples']} keys; target p50 < {TARGET_VIEWER_P50_MS:.0f} ms: {verdict}.",
        "",
        "| variant | throughput median (min) | keystroke echo p50 | p99 (all runs) | worst run's p99 | p99 vs script |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    script_p99 = lat["variants"]["script"]["p99_us"]
    for name in VARIANTS:
        tv, lv = t["variants"][name], lat["variants"][name]
        lines.append(
            f"| {name} | {tv['median_s']:.3f} s ({tv['min_s']:.3f} s) | {lv['p50_us']:.0f} µs | {lv['p99_us']:.0f} µs | "
            f"{lv['worst_run_p99_us']:.0f} µs | {lv['p99_us'] / script_p99:.2f}x |"
        )
    dropped = [r.get("viewers_dropped", 0) for r in t["variants"]["shellkeep+2"]["runs"]]
    complete = all(r.get("complete") for n in ("shellkeep", "shellkeep+2") for r in t["variants"][n]["runs"])
    lines += [
        "",
        f"Throughput input: {t['input_bytes'] / 1e6:.1f} MB of base64; every shellkeep recording complete: "
        f"{'yes' if complete else 'NO'}; viewers dropped for not keeping up, per run: {dropped}.",
        "",
        f"{m['date']} · {m['cpu_count']} CPUs · load average at the end "
        f"{' '.join(f'{x:.2f}' for x in m['loadavg_end'])} · {m['versions'].get('script', '')} · "
        f"shellkeep {m['shellkeep_commit']}",
    ]
    return "\n".join(lines) + "\n"


def _write(section: str) -> None:
    """Write bench/RESULTS-viewers.md and put the section into bench/RESULTS.md, replacing an older one."""
    (BENCH_DIR / "RESULTS-viewers.md").write_text(section)
    put_section(BENCH_DIR / "RESULTS.md", HEADING, section)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--no-write", action="store_true", help="print results, leave the files alone")
    args = parser.parse_args()
    plan, keys, repeats, gap_s = _plan(args.quick)
    workdir = Path(tempfile.mkdtemp(prefix="shellkeep-bench-viewers-"))
    started = time.monotonic()
    try:
        print(f"installing shellkeep (not editable) into {workdir / 'venv'}", file=sys.stderr, flush=True)
        install_shellkeep(workdir)
        facts = machine_facts()
        facts["versions"] = tool_versions()
        bench = Bench(workdir, plan, ["script", "shellkeep"])
        bench.make_data()
        bench.warm_up()
        print("throughput:", file=sys.stderr, flush=True)
        throughput = bench_throughput(bench)
        print("latency:", file=sys.stderr, flush=True)
        latency = bench_latency(bench, keys, repeats, gap_s)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    facts["loadavg_end"] = list(os.getloadavg())
    facts["total_s"] = round(time.monotonic() - started, 1)
    doc = {"mode": plan.mode, "machine": facts, "throughput": throughput, "latency": latency}
    section = render(doc)
    if args.no_write:
        print(section)
    else:
        (BENCH_DIR / "results-viewers.json").write_text(json.dumps(doc, indent=2) + "\n")
        _write(section)
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
