"""Benchmark shellkeep against script(1), asciinema 2.4 and no recorder, side by side.

Usage: .venv/bin/python bench/run.py [--quick] [--only NAME[,NAME]] [--recorders NAME[,NAME]]

Every measurement runs the recorder inside an outer pseudo-terminal that this process
reads as fast as it can (see ``outer.py``); recorders take turns within each repeat, in a
rotating order, so load on the machine spreads over all of them. Five benchmarks:

throughput  base64 text through ``cat``: time from spawn to end of output and exit
latency     one keystroke written to the outer pty until its echo comes back, via ``cat``
startup     ``true`` under the recorder, spawn to exit
memory      peak RSS (VmHWM, polled) of the recorder process alone, relaying ~300 MB
idle        the recorder's CPU while the program is quiet, and echo of keys typed after pauses

Writes bench/RESULTS.md and bench/results.json. All data (the input file, recordings,
SHELLKEEP_HOME, asciinema's config folder) lives in one temporary folder that is removed
on every exit path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import outer  # noqa: E402
import report  # noqa: E402
from recorders import Recorder, install_shellkeep, recorder_env, shellkeep_home, tool_versions  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
ALL_RECORDERS = ("direct", "script", "shellkeep", "asciinema")
ALL_BENCHMARKS = ("throughput", "latency", "startup", "memory", "idle")


@dataclass(frozen=True)
class Plan:
    """Sizes and repeat counts of one run (full or --quick)."""

    mode: str
    random_mib: int  # /dev/urandom MiB base64-encoded into the input file
    throughput_repeats: int
    keystrokes: int
    latency_repeats: int
    keystroke_gap_s: float
    startup_runs: int
    memory_copies: int  # the input file is cat'ed this many times for the memory benchmark
    memory_repeats: int
    # A run still going after this long is stopped and counted as "more than the limit";
    # that recorder then skips the benchmark's remaining repeats (keeps the total bounded).
    throughput_timeout_s: float
    memory_timeout_s: float
    idle_s: float  # the idle benchmark's quiet phase; then idle_keys keystrokes idle_key_gap_s apart
    idle_keys: int
    idle_key_gap_s: float = 0.3


FULL = Plan(
    mode="full", random_mib=60, throughput_repeats=5, keystrokes=500, latency_repeats=5,
    keystroke_gap_s=0.002, startup_runs=20, memory_copies=4,
    memory_repeats=1,  # peak RSS varied by < 3 MB between repeats; one keeps the run under 5 min
    throughput_timeout_s=40, memory_timeout_s=90, idle_s=2.0, idle_keys=20,
)
QUICK = Plan(
    mode="quick", random_mib=12, throughput_repeats=2, keystrokes=150, latency_repeats=2,
    keystroke_gap_s=0.002, startup_runs=6, memory_copies=4, memory_repeats=1,
    throughput_timeout_s=15, memory_timeout_s=30, idle_s=1.0, idle_keys=4,
)


class Bench:
    """State shared by the benchmarks: the temporary folder, env, recorders, input file."""

    def __init__(self, workdir: Path, plan: Plan, names: Sequence[str]) -> None:
        self.workdir = workdir
        self.plan = plan
        self.env = recorder_env(workdir)
        self.cwd = workdir / "cwd"  # not a git work tree: the project is this folder
        self.cwd.mkdir()
        shellkeep_home(workdir).mkdir()
        self.recorders = [Recorder(name, workdir) for name in names]
        self.data = workdir / "data.b64"
        self.data_bytes = 0
        self.data_lines = 0
        self.current: outer.Outer | None = None

    def make_data(self) -> None:
        """Write ``random_mib`` MiB of random bytes, base64-encoded (76-column lines)."""
        subprocess.run(
            f"head -c {self.plan.random_mib}M /dev/urandom | base64 > {self.data}",
            shell=True,
            check=True,
        )
        self.data_bytes = self.data.stat().st_size
        with open(self.data, "rb") as f:
            self.data_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))

    def spawn(self, rec: Recorder, command: list[str]) -> outer.Outer:
        """Start ``command`` under ``rec`` in a fresh outer pty.

        The previous run's recording is removed and the disk cache written back first: the
        kernel's writeback of ~90 MB would otherwise take CPU from whichever run comes next.
        """
        rec.clean()
        os.sync()
        self.current = outer.spawn(rec.argv(command), env=self.env, cwd=str(self.cwd))
        return self.current

    def run_once(
        self,
        rec: Recorder,
        command: list[str],
        timeout_s: float,
        tick: Callable[[], None] | None = None,
    ) -> tuple[outer.Outer, outer.Drained | None]:
        """Run ``command`` under ``rec`` to its end; the result is None when it timed out."""
        o = self.spawn(rec, command)
        try:
            return o, outer.drain(o, timeout_s=timeout_s, tick=tick)
        except outer.Timeout:
            return o, None
        finally:
            self.finish()

    def finish(self) -> None:
        """Make sure the current program is gone and its pty closed."""
        if self.current is not None:
            self.current.close()
            self.current = None

    def warm_up(self) -> None:
        """Run ``true`` once under each recorder, untimed: fills the bytecode and page caches."""
        for rec in self.recorders:
            for _ in range(2):
                o = self.spawn(rec, ["true"])
                try:
                    outer.drain(o, timeout_s=60)
                finally:
                    self.finish()
                rec.clean()

    def rounds(self, repeats: int) -> list[list[Recorder]]:
        """Return the recorder order of each repeat, rotated so no one always goes first."""
        recs = self.recorders
        return [recs[i % len(recs):] + recs[: i % len(recs)] for i in range(repeats)]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _check_exit(rec: Recorder, drained: outer.Drained, o: outer.Outer, what: str) -> None:
    if drained.exit_code != 0:
        raise outer.OuterPtyError(
            f"{rec.name} {what}: exit {drained.exit_code}; last output {bytes(o.tail[-400:])!r}"
        )


def _plain_size(path: Path) -> int:
    """Return the size of a recording as asciicast text: zstd-compressed ones are decompressed."""
    with open(path, "rb") as f:
        if f.read(4) != b"\x28\xb5\x2f\xfd":  # the zstd frame magic (RFC 8878)
            return path.stat().st_size
        f.seek(0)
        import zstandard  # a shellkeep dependency, so it is in the venv

        total = 0
        with zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as reader:
            for block in iter(lambda: reader.read(1 << 20), b""):
                total += len(block)
        return total


def _shellkeep_meta(bench: Bench) -> dict[str, Any]:
    metas = sorted(shellkeep_home(bench.workdir).glob("projects/*/*/meta.json"))
    if not metas:
        return {}
    try:
        return json.loads(metas[-1].read_text())
    except (OSError, ValueError):
        return {}


# -- the benchmarks ------------------------------------------------------------------


def bench_throughput(bench: Bench) -> dict[str, Any]:
    """Time ``cat`` of the base64 file under each recorder; check the recordings' sizes."""
    runs: dict[str, list[dict[str, Any]]] = {r.name: [] for r in bench.recorders}
    timed_out: set[str] = set()
    limit = bench.plan.throughput_timeout_s
    # What cat writes reaches the recorder as this many bytes: ONLCR turns \n into \r\n.
    expected = bench.data_bytes + bench.data_lines
    for i, order in enumerate(bench.rounds(bench.plan.throughput_repeats)):
        for rec in order:
            if rec.name in timed_out:
                continue
            o, d = bench.run_once(rec, ["cat", str(bench.data)], limit)
            last_s = (o.last_output_ns - o.started_ns) / 1e9
            if d is None:
                timed_out.add(rec.name)
                run: dict[str, Any] = {"elapsed_s": limit, "timed_out": True, "last_output_s": last_s,
                                          "bytes_read": o.bytes_read}
                _say(f"  throughput #{i + 1} {rec.name:<10} > {limit:.0f} s: stopped (last output at {last_s:.3f} s)")
            else:
                _check_exit(rec, d, o, "throughput")
                run = {"elapsed_s": d.elapsed_s, "last_output_s": d.last_output_s, "bytes_read": d.bytes_read,
                       "cpu_s": d.cpu_s}
                _say(f"  throughput #{i + 1} {rec.name:<10} {d.elapsed_s:7.3f} s  (last output {last_s:.3f} s)")
            cast = rec.recording()
            if cast is not None:
                run["recording_bytes"] = cast.stat().st_size
                run["recording_plain_bytes"] = plain = _plain_size(cast)
            if rec.name == "shellkeep":
                meta = _shellkeep_meta(bench)
                run["recorded_output_bytes"] = meta.get("output_bytes")
                run["recording_error"] = meta.get("recording_error")
                run["complete"] = (
                    cast is not None
                    and plain > bench.data_bytes
                    and meta.get("output_bytes") == expected
                )
            rec.clean()
            runs[rec.name].append(run)
    return {
        "input_bytes": bench.data_bytes,
        "expected_output_bytes": expected,
        "repeats": bench.plan.throughput_repeats,
        "timeout_s": limit,
        "recorders": {name: _run_summary(rs, "elapsed_s") for name, rs in runs.items()},
    }


def bench_latency(bench: Bench) -> dict[str, Any]:
    """Type single bytes into ``cat`` under each recorder; time each until its echo arrives."""
    plan = bench.plan
    runs: dict[str, list[dict[str, Any]]] = {r.name: [] for r in bench.recorders}
    # printf prints READY once cat's shell runs; split so the argv itself never matches.
    command = ["sh", "-c", "printf 'RE''ADY\\n'; exec cat"]
    for i, order in enumerate(bench.rounds(plan.latency_repeats)):
        for rec in order:
            o = bench.spawn(rec, command)
            try:
                outer.wait_for(o, b"READY", timeout_s=30)
                _type_line(o, 20, None, plan.keystroke_gap_s)  # warm-up, not measured
                samples: list[float] = []
                resyncs = 0
                left = plan.keystrokes
                while left:
                    n = min(50, left)
                    resyncs += _type_line(o, n, samples, plan.keystroke_gap_s)
                    left -= n
                os.write(o.fd, b"\x04")  # at the start of a line: cat reads end-of-file
                d = outer.drain(o, timeout_s=30)
            finally:
                bench.finish()
            _check_exit(rec, d, o, "latency")
            rec.clean()
            samples.sort()
            run = {
                "p50_us": _pct(samples, 50) * 1e6,
                "p90_us": _pct(samples, 90) * 1e6,
                "p99_us": _pct(samples, 99) * 1e6,
                "max_us": samples[-1] * 1e6,
                "keystrokes": len(samples),
                "resyncs": resyncs,
            }
            runs[rec.name].append(run)
            _say(f"  latency #{i + 1} {rec.name:<10} p50 {run['p50_us']:7.1f} us  p99 {run['p99_us']:8.1f} us")
    result: dict[str, Any] = {"keystrokes": plan.keystrokes, "repeats": plan.latency_repeats,
                                 "gap_s": plan.keystroke_gap_s, "recorders": {}}
    for name, rs in runs.items():
        result["recorders"][name] = {
            "runs": rs,
            "p50_us": statistics.median(r["p50_us"] for r in rs),
            "p50_min_us": min(r["p50_us"] for r in rs),
            "p99_us": statistics.median(r["p99_us"] for r in rs),
            "p99_min_us": min(r["p99_us"] for r in rs),
        }
    return result


def _type_line(o: outer.Outer, count: int, samples: list[float] | None, gap_s: float) -> int:
    """Type ``count`` letters one by one (timing each echo), then Enter; return resyncs needed."""
    resyncs = 0
    fd = o.fd
    for k in range(count):
        key = bytes([97 + k % 26])
        t0 = time.perf_counter_ns()
        os.write(fd, key)
        got = len(os.read(fd, 4096))  # blocks until the first echo arrives
        t1 = time.perf_counter_ns()
        if samples is not None:
            samples.append((t1 - t0) / 1e9)
        if got != 1 and outer.read_exactly(o, 1 - got, 1.0) != 1 - got:
            resyncs += 1
        if gap_s:
            time.sleep(gap_s)
    # Enter: the tty echoes \r\n, then cat writes the line and \r\n.
    os.write(fd, b"\r")
    want = 2 + count + 2
    if outer.read_exactly(o, want, 2.0) != want:
        resyncs += 1
    return resyncs


def bench_startup(bench: Bench) -> dict[str, Any]:
    """Time ``true`` under each recorder, spawn to exit."""
    runs: dict[str, list[float]] = {r.name: [] for r in bench.recorders}
    for order in bench.rounds(bench.plan.startup_runs):
        for rec in order:
            o = bench.spawn(rec, ["true"])
            try:
                d = outer.drain(o, timeout_s=30)
            finally:
                bench.finish()
            _check_exit(rec, d, o, "startup")
            rec.clean()
            runs[rec.name].append(d.elapsed_s)
    for name, rs in runs.items():
        _say(f"  startup {name:<10} median {statistics.median(rs) * 1000:7.1f} ms  min {min(rs) * 1000:7.1f} ms")
    return {"runs_each": bench.plan.startup_runs,
            "recorders": {name: {"runs": rs, **_summary(rs)} for name, rs in runs.items()}}


def bench_idle(bench: Bench) -> dict[str, Any]:
    """Measure the recorder's own CPU while ``cat`` waits, then the echo of keys typed after pauses.

    CPU comes from /proc/<pid>/stat (utime + stime of the recorder process alone, 10 ms
    ticks) over a quiet phase of ``idle_s``; each key is typed ``idle_key_gap_s`` after the
    last, longer than a 250 ms flush interval, as a person types after reading the screen.
    """
    plan = bench.plan
    command = ["sh", "-c", "printf 'RE''ADY\\n'; exec cat"]
    result: dict[str, Any] = {"idle_s": plan.idle_s, "keys": plan.idle_keys, "key_gap_s": plan.idle_key_gap_s,
                                 "recorders": {}}
    tick_s = 1 / os.sysconf("SC_CLK_TCK")
    for rec in bench.recorders:
        o = bench.spawn(rec, command)
        try:
            outer.wait_for(o, b"READY", timeout_s=30)
            time.sleep(0.3)  # let start-up work (meta.json, git) finish
            cpu0, t0 = _proc_cpu_ticks(o.pid), time.monotonic()
            time.sleep(plan.idle_s)
            cpu1, t1 = _proc_cpu_ticks(o.pid), time.monotonic()
            samples: list[float] = []
            for k in range(plan.idle_keys):
                time.sleep(plan.idle_key_gap_s)
                ts = time.perf_counter_ns()
                os.write(o.fd, bytes([97 + k % 26]))
                os.read(o.fd, 4096)
                samples.append((time.perf_counter_ns() - ts) / 1e9)
            os.write(o.fd, b"\r\x04")
            d = outer.drain(o, timeout_s=30)
        finally:
            bench.finish()
        _check_exit(rec, d, o, "idle")
        rec.clean()
        samples.sort()
        cpu_pct = 100 * (cpu1 - cpu0) * tick_s / (t1 - t0)
        row = {"idle_cpu_pct": cpu_pct, "key_p50_us": _pct(samples, 50) * 1e6, "key_max_us": samples[-1] * 1e6}
        result["recorders"][rec.name] = row
        _say(f"  idle {rec.name:<10} CPU {cpu_pct:5.1f} % of a core;  keys after a pause: "
             f"p50 {row['key_p50_us']:.0f} us, max {row['key_max_us']:.0f} us")
    return result


def _proc_cpu_ticks(pid: int) -> int:
    """Return utime + stime of one process (not its children), in clock ticks."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5), counted after "comm)"


def bench_memory(bench: Bench) -> dict[str, Any]:
    """Poll the recorder's VmHWM while it relays ``cat`` of the input file several times."""
    copies = bench.plan.memory_copies
    limit = bench.plan.memory_timeout_s
    command = ["cat", *[str(bench.data)] * copies]
    timed_out: set[str] = set()
    runs: dict[str, list[dict[str, Any]]] = {r.name: [] for r in bench.recorders if r.name != "direct"}
    recs = [r for r in bench.recorders if r.name != "direct"]
    for i in range(bench.plan.memory_repeats):
        order = recs[i % len(recs):] + recs[: i % len(recs)]
        for rec in order:
            if rec.name in timed_out:
                continue
            peak = {"hwm_kb": 0, "rss_kb": 0}

            def poll(peak: dict[str, int] = peak) -> None:
                if bench.current is None:
                    return
                try:
                    with open(f"/proc/{bench.current.pid}/status", "rb") as f:
                        text = f.read()
                except OSError:
                    return
                for line in text.split(b"\n"):
                    if line.startswith(b"VmHWM:"):
                        peak["hwm_kb"] = max(peak["hwm_kb"], int(line.split()[1]))
                    elif line.startswith(b"VmRSS:"):
                        peak["rss_kb"] = max(peak["rss_kb"], int(line.split()[1]))

            o, d = bench.run_once(rec, command, limit, tick=poll)
            if d is None:
                timed_out.add(rec.name)
            else:
                _check_exit(rec, d, o, "memory")
            rec.clean()
            run = {
                "peak_mb": peak["hwm_kb"] / 1024,
                "peak_rss_sampled_mb": peak["rss_kb"] / 1024,
                "wait4_maxrss_mb": d.maxrss_kb / 1024 if d else None,
                "elapsed_s": d.elapsed_s if d else limit,
                "last_output_s": (o.last_output_ns - o.started_ns) / 1e9,
                "timed_out": d is None,
            }
            runs[rec.name].append(run)
            took = f"{d.elapsed_s:.2f} s" if d else f"> {limit:.0f} s: stopped"
            _say(f"  memory #{i + 1} {rec.name:<10} peak {run['peak_mb']:7.1f} MB  ({took})")
    return {
        "relayed_bytes": (bench.data_bytes + bench.data_lines) * copies,
        "repeats": bench.plan.memory_repeats,
        "timeout_s": limit,
        "recorders": {
            name: {"runs": rs, "peak_mb": max(r["peak_mb"] for r in rs),
                   "median_mb": statistics.median(r["peak_mb"] for r in rs),
                   "timed_out": any(r["timed_out"] for r in rs)}
            for name, rs in runs.items()
        },
    }


# -- helpers -------------------------------------------------------------------------


def _run_summary(rs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """Summarise runs by ``key``; a timed-out run counts as its limit (a lower bound)."""
    values = [float(r[key]) for r in rs]
    return {"runs": rs, **_summary(values), "timed_out": any(r.get("timed_out") for r in rs)}


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _pct(sorted_values: Sequence[float], p: float) -> float:
    """Return the nearest-rank ``p``-th percentile of already sorted values."""
    k = max(0, min(len(sorted_values) - 1, int(round(p / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def machine_facts() -> dict[str, Any]:
    """Return what the figures depend on: CPUs, Python, kernel, load, versions, commit."""
    import platform

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    repo = BENCH_DIR.parent
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "shellkeep"],
                           capture_output=True, text=True).stdout.strip()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "cpu_count": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadavg_start": list(os.getloadavg()),
        "versions": tool_versions(),
        "shellkeep_commit": commit + (" (shellkeep/ has uncommitted changes)" if dirty else ""),
    }


def _raise_exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--only", default=",".join(ALL_BENCHMARKS), help="benchmarks to run, comma-separated")
    parser.add_argument("--recorders", default=",".join(ALL_RECORDERS), help="recorders, comma-separated")
    parser.add_argument("--no-write", action="store_true", help="print results, leave RESULTS.md alone")
    args = parser.parse_args(argv)
    only = [b for b in args.only.split(",") if b]
    names = [r for r in args.recorders.split(",") if r]
    for b in only:
        if b not in ALL_BENCHMARKS:
            parser.error(f"unknown benchmark {b!r}; choose from {', '.join(ALL_BENCHMARKS)}")
    for r in names:
        if r not in ALL_RECORDERS:
            parser.error(f"unknown recorder {r!r}; choose from {', '.join(ALL_RECORDERS)}")
    plan = QUICK if args.quick else FULL

    # SIGTERM and SIGHUP end the run through the finally below, which removes the temp folder.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_exit)
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="shellkeep-bench-"))
    if "shellkeep" in names:
        _say(f"installing shellkeep (not editable) into {workdir / 'venv'}")
        try:
            install_shellkeep(workdir)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
    facts = machine_facts()
    bench = Bench(workdir, plan, names)
    results: dict[str, Any] = {}
    runners: dict[str, Callable[[Bench], dict[str, Any]]] = {
        "throughput": bench_throughput,
        "latency": bench_latency,
        "startup": bench_startup,
        "memory": bench_memory,
        "idle": bench_idle,
    }
    try:
        if "throughput" in only or "memory" in only:
            bench.make_data()
            _say(f"input: {bench.data_bytes / 1e6:.1f} MB of base64 ({plan.random_mib} MiB random)")
        bench.warm_up()
        for name in ALL_BENCHMARKS:
            if name in only:
                _say(f"{name}:")
                results[name] = runners[name](bench)
    finally:
        bench.finish()
        shutil.rmtree(workdir, ignore_errors=True)
    facts["loadavg_end"] = list(os.getloadavg())
    facts["total_s"] = round(time.monotonic() - started, 1)
    verdicts = report.targets(results)
    doc: dict[str, Any] = {"mode": plan.mode, "plan": plan.__dict__, "machine": facts, "results": results,
                           "targets": verdicts}
    markdown = report.render(doc)
    if args.no_write:
        print(markdown)
    else:
        (BENCH_DIR / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
        (BENCH_DIR / "RESULTS.md").write_text(markdown)
        _say(f"wrote {BENCH_DIR / 'RESULTS.md'} and results.json in {facts['total_s']} s")
    print(report.render_targets(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
