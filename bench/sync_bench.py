"""Benchmark ``shellkeep sync`` against a real S3 API on loopback; write bench/RESULTS-sync.md.

1. Push throughput: sessions of ``--mb`` MB in all (recordings of random base64, as a busy
   agent's output compressed at rest would be: incompressible), pushed by ``shellkeep sync
   push`` (a subprocess, encryption off and on), beside a plain upload of the same files in
   parts of the same size with the same library (obstore, one object per part, in a
   subprocess too). Target: shellkeep at least 0.8 of the plain upload's MB/s.
2. ``sync status`` and a ``sync push`` with nothing new, for 1,000 and ``--sessions``
   (10,000) small sessions already pushed: wall time of the command and the requests the
   server served. Target: under 1 s, and a request count that does not grow with the
   number of sessions.

The S3 API is moto's server (``moto[server]``) in this process, counting the requests it
serves; everything that talks to it runs in subprocesses. Run:
``.venv/bin/python bench/sync_bench.py [--mb 200] [--sessions 10000]``.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SK = [sys.executable, "-m", "shellkeep"]

PLAIN_UPLOAD = r"""
import sys, obstore
from obstore.store import from_url
url, part = sys.argv[1], int(sys.argv[2]) << 20
store = from_url(url)
n = 0
for path in sys.argv[3:]:
    with open(path, "rb") as fh:
        i = 0
        while True:
            piece = fh.read(part)
            if not piece:
                break
            obstore.put(store, f"plain/{n}-{i}", piece, use_multipart=False)
            i += 1
    n += 1
"""


class Server:
    """moto's S3 on 127.0.0.1 in a thread, counting requests."""

    def __init__(self) -> None:
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        app = DomainDispatcherApplication(create_backend_app)
        self.requests = 0

        def counted(environ: dict[str, object], start_response: object) -> object:
            self.requests += 1
            return app(environ, start_response)  # type: ignore[arg-type]

        self.httpd = make_server("127.0.0.1", 0, counted, threaded=True)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_port}"

    def bucket(self, name: str) -> str:
        urllib.request.urlopen(urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")).close()
        return f"s3://{name}/team"


def make_sessions(home: Path, count: int, cast_bytes: int) -> list[Path]:
    """Write ``count`` finished sessions into ``home`` directly (meta.json + session.cast)."""
    from shellkeep.store.session import SessionMeta, write_meta

    project = home / "projects" / "bench-00000000"
    project.mkdir(parents=True, exist_ok=True)
    casts = []
    line_raw = os.urandom(3 << 14)
    for i in range(count):
        sid = f"20260101-{i // 3600:02d}{i // 60 % 60:02d}{i % 60:02d}-{i % 1000:03d}{i % 256:02x}"
        folder = project / sid
        folder.mkdir()
        cast = folder / "session.cast"
        with open(cast, "wb") as fh:
            fh.write(b'{"version": 2, "width": 80, "height": 24}\n')
            written = 0
            n = 0
            while written < cast_bytes:
                data = base64.b64encode(os.urandom(len(line_raw)) if cast_bytes > 1 << 20 else line_raw[: max(16, cast_bytes // 2)]).decode()
                line = json.dumps([n * 0.01, "o", data]).encode() + b"\n"
                fh.write(line)
                written += len(line)
                n += 1
        meta = SessionMeta(
            id=sid, project="bench-00000000", project_root="/bench", cwd="/bench", command=["bench"], agent="bench",
            started_at="2026-01-01T00:00:00.000Z", host=platform.node(), status="finished", cast=str(cast),
            ended_at="2026-01-01T00:01:00.000Z", duration=60.0, exit_code=0,
        )
        write_meta(meta)
        casts.append(cast)
    return casts


def env_for(server: Server, home: Path, *, encrypt: bool = False) -> dict[str, str]:
    env = {
        **os.environ,
        "SHELLKEEP_HOME": str(home),
        "SHELLKEEP_CONFIG": str(home / "config.toml"),
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": server.endpoint,
        "AWS_ALLOW_HTTP": "true",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }
    if encrypt:
        subprocess.run([*SK, "key", "init"], env=env, check=True, capture_output=True)
        subprocess.run([*SK, "config", "set", "encryption.encrypt", "true"], env=env, check=True, capture_output=True)
    return env


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, capture_output=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr.decode()}")
    return took


def throughput(server: Server, work: Path, mb: int) -> dict[str, float]:
    per_session = 10 << 20
    count = max(1, (mb << 20) // per_session)
    home = work / "tp"
    casts = make_sessions(home, count, per_session)
    total = sum(c.stat().st_size + (c.parent / "meta.json").stat().st_size for c in casts)
    files = [str(p) for c in casts for p in (c, c.parent / "meta.json")]
    env = env_for(server, home)
    url = server.bucket("plain")
    plain_s = timed([sys.executable, "-c", PLAIN_UPLOAD, url, "8", *files], env)  # the whole process, as for push
    push_s = timed([*SK, "sync", "push", "--remote", server.bucket("push")], env)
    sealed_env = env_for(server, home, encrypt=True)
    sealed_s = timed([*SK, "sync", "push", "--remote", server.bucket("sealed")], sealed_env)
    shutil.rmtree(home)
    return {"mb": total / 1e6, "plain_s": plain_s, "push_s": push_s, "sealed_s": sealed_s}


def nothing_new(server: Server, work: Path, sessions: int) -> dict[str, float]:
    home = work / f"n{sessions}"
    make_sessions(home, sessions, 400)
    env = env_for(server, home)
    url = server.bucket(f"many{sessions}")
    first_s = timed([*SK, "sync", "push", "--remote", url], env)
    before = server.requests
    status_s = min(timed([*SK, "sync", "status", "--remote", url], env) for _ in range(3))
    status_requests = (server.requests - before) / 3
    before = server.requests
    push_s = min(timed([*SK, "sync", "push", "--remote", url], env) for _ in range(3))
    push_requests = (server.requests - before) / 3
    start_s = min(timed([*SK, "--version"], env) for _ in range(3))
    shutil.rmtree(home)
    return {
        "sessions": sessions, "first_push_s": first_s, "status_s": status_s, "status_requests": status_requests,
        "push_s": push_s, "push_requests": push_requests, "startup_s": start_s,
    }


def render(tp: dict[str, float], rows: list[dict[str, float]], note: str) -> str:
    plain = tp["mb"] / tp["plain_s"]
    push = tp["mb"] / tp["push_s"]
    sealed = tp["mb"] / tp["sealed_s"]
    verdict = "**pass**" if push / plain >= 0.8 else "**fail**"
    sealed_verdict = "**pass**" if sealed / plain >= 0.8 else "**fail**"
    lines = [
        "## 9. Sync to object storage (bench/sync_bench.py, run apart)",
        "",
        f"moto's S3 server on loopback, in the benchmark's process; every client in its own process. {note}",
        "",
        f"Push throughput, {tp['mb']:.0f} MB of sessions (10 MB recordings of random base64, parts of 8 MiB). "
        "Target: shellkeep push at least 0.8 of a plain upload of the same files in the same parts with the same library (obstore). "
        "Both are timed as whole processes (Python start-up and imports included). The plain upload sends one part at a time, "
        "shellkeep up to 4 at once while it seals and hashes the next; moto, one Python process, bounds both on loopback.",
        "",
        "| upload | seconds | MB/s | of plain | verdict |",
        "|---|---:|---:|---:|---|",
        f"| plain obstore.put, part by part | {tp['plain_s']:.2f} | {plain:.1f} | 1.00 | |",
        f"| shellkeep sync push (plaintext) | {tp['push_s']:.2f} | {push:.1f} | {push / plain:.2f} | {verdict} |",
        f"| shellkeep sync push (sealed) | {tp['sealed_s']:.2f} | {sealed:.1f} | {sealed / plain:.2f} | {sealed_verdict} |",
        "",
        "Nothing new to push, every session pushed before: wall time of the whole command (Python start-up included; "
        "best of 3) and the requests the server served per run. Target: under 1 s, requests not growing with the sessions.",
        "",
        "| sessions | first push s | sync status s | its requests | sync push s | its requests | `shellkeep --version` s | verdict |",
        "|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    base = rows[0]
    for r in rows:
        flat = r["status_requests"] <= base["status_requests"] and r["push_requests"] <= base["push_requests"]
        ok = r["status_s"] < 1 and r["push_s"] < 1 and flat
        lines.append(
            f"| {int(r['sessions'])} | {r['first_push_s']:.1f} | {r['status_s']:.2f} | {r['status_requests']:.0f} | "
            f"{r['push_s']:.2f} | {r['push_requests']:.0f} | {r['startup_s']:.2f} | {'**pass**' if ok else '**fail**'} |"
        )
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    lines += ["", f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · {os.cpu_count()} CPUs · load average at the end {load}"]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="MB of sessions for the throughput run (the target names 1 GB)")
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    server = Server()
    with tempfile.TemporaryDirectory(prefix="sync-bench-") as tmp:
        work = Path(tmp)
        tp = throughput(server, work, args.mb)
        print("throughput", tp, flush=True)
        rows = []
        for n in (1000, args.sessions):
            rows.append(nothing_new(server, work, n))
            print("nothing new", rows[-1], flush=True)
    out = ROOT / "bench" / "RESULTS-sync.md"
    out.write_text(render(tp, rows, args.note))
    print(out.read_text())


if __name__ == "__main__":
    main()
