"""Helpers of the ``serve`` tests: a real ``shellkeep serve`` process, and sessions to show."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from shellkeep.store.paths import Paths
from tests.helpers import PtyHarness, SK, invoke_sk, run_sk, session_folders, wait_until

PY = sys.executable


@dataclass
class Served:
    """A running ``shellkeep serve``: the URL it printed and where its stderr goes."""

    process: subprocess.Popen[bytes]
    url: str
    stderr_path: Path

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT`` (the loopback address also for a 0.0.0.0 server)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    @property
    def cookie_name(self) -> str:
        return f"shellkeep_token_{self.port}"

    def client(self) -> httpx.Client:
        """Return an HTTP client that holds the token cookie, as a browser does after the first visit."""
        return httpx.Client(base_url=self.base, cookies={self.cookie_name: self.token}, timeout=30)

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def listening_addresses(self) -> set[str]:
        """Return the IPv4 addresses the server listens on (from /proc/net/tcp)."""
        found = set()
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            local, state = fields[1], fields[3]
            address, port = local.split(":")
            if state == "0A" and int(port, 16) == self.port:
                raw = bytes.fromhex(address)[::-1]
                found.add(".".join(str(b) for b in raw))
        return found


@contextlib.contextmanager
def serve(*args: str, timeout_s: float = 30.0) -> Iterator[Served]:
    """Start ``shellkeep serve --port 0 --no-open ARGS``; yield once it printed its URL; stop it."""
    with tempfile.NamedTemporaryFile(prefix="serve-", suffix=".err", delete=False) as err:
        stderr_path = Path(err.name)
    with open(stderr_path, "wb") as err_file:
        process = subprocess.Popen(
            [*SK, "serve", "--port", "0", "--no-open", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err_file,
        )
    assert process.stdout is not None
    try:
        line = b""
        deadline = time.monotonic() + timeout_s
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"serve printed no URL; stderr: {stderr_path.read_text()}")
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                raise AssertionError(f"serve ended (status {process.wait()}); stderr: {stderr_path.read_text()}")
            line += chunk
        yield Served(process, line.decode().strip(), stderr_path)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        process.stdout.close()


def record_session(home: Paths, code: str, *, name: str | None = None, expect: bytes | None = None) -> tuple[Path, str, PtyHarness]:
    """Record ``python3 -c CODE``; return its session folder, its id and the harness.

    expect: leave the program running in a pty until it printed this (a live session);
    None: run it to its end without a terminal (the harness is then a finished stand-in).
    """
    before = {p.parent for p in session_folders(home)}
    named = ["--name", name] if name else []
    if expect is None:
        done = run_sk("run", *named, "--", PY, "-c", code)
        assert done.returncode == 0, done.stderr
        harness = PtyHarness(0, -1, bytearray())
    else:
        harness = PtyHarness.start([*SK, "run", *named, "--", PY, "-c", code])
        harness.expect(expect)
    folder = wait_until(lambda: next(iter({p.parent for p in session_folders(home)} - before), None))
    assert isinstance(folder, Path)
    if expect is not None:
        # The recorder's own live socket comes a moment after the child runs: wait for it, so a
        # stand-in publisher put in its place afterwards is not replaced by it.
        wait_until(lambda: (folder / "live.sock").exists())
    meta = json.loads((folder / "meta.json").read_text())
    return folder, str(meta["id"]), harness


def import_claude_session(home: Paths, user_home: Path, prompts: tuple[str, ...]) -> str:
    """Write a Claude Code transcript asking ``prompts`` under ``user_home`` (the HOME the
    caller points at), run ``shellkeep import --agent claude``; return the new session's id."""
    from shellkeep.agents.locations import dash_encoded
    from tests.transcripts import claude_lines

    cwd = Path.cwd().resolve()
    agent_id = "6c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"
    records = [json.loads(line) for line in claude_lines(len(prompts), session_id=agent_id, cwd=str(cwd))]
    for record in records:
        message = record.get("message") or {}
        if record.get("type") == "user" and isinstance(message.get("content"), str):
            message["content"] = prompts[int(message["content"].split()[-1])]
    transcript = user_home / ".claude" / "projects" / dash_encoded(cwd) / f"{agent_id}.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    done = invoke_sk("import", "--agent", "claude", "--json")
    assert done.returncode == 0, done.stderr
    imported = [r for r in json.loads(done.stdout) if r["action"] == "imported"]
    assert len(imported) == 1, done.stdout
    return str(imported[0]["session_id"])
