"""Measure the real Claude Code's own ``claude --resume <id>`` on a huge transcript: time and peak RSS.

The agent's figure beside shellkeep's (bench/huge_transcript.py). Claude Code runs offline
against the loopback Anthropic stand-in of tests/agents (first-run screens skipped as there),
on a synthetic transcript of ``--mb`` MB in the real format (tests/transcripts.py). Measured:
seconds from the start until its ready footer (``? for shortcuts``) is drawn after loading the
conversation (or until it gives up), and the peak RSS (VmHWM, polled every 10 ms) of the claude process.

Usage: .venv/bin/python bench/claude_resume_rss.py [--mb 1024] [--claude PATH] [--timeout 300]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.huge_transcript import PtyRun  # noqa: E402
from tests.agents.conftest import TEST_API_KEY, claude_state  # noqa: E402
from tests.agents.standin_anthropic import AnthropicStandin  # noqa: E402
from tests.transcripts import claude_lines  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--claude", default=str(Path("~/.cache/shellkeep-ci/npm/node_modules/.bin/claude").expanduser()))
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="sk-claude-rss-"))
    home, project = base / "home", base / "project"
    project.mkdir(parents=True)
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps(claude_state([project])))
    sid = str(uuid.uuid4())
    folder = home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", os.path.realpath(project))
    folder.mkdir(parents=True)
    path = folder / f"{sid}.jsonl"
    start = datetime.now(timezone.utc) - timedelta(days=1)
    n = 0
    with path.open("wb", buffering=1 << 20) as fh:
        while fh.tell() < args.mb << 20:
            for line in claude_lines(200, session_id=sid, cwd=os.path.realpath(project), start=start, filler_bytes=20_000, first=n):
                fh.write(line)
            n += 200
    size = path.stat().st_size
    with AnthropicStandin() as standin:
        env = {
            "HOME": str(home), "ANTHROPIC_API_KEY": TEST_API_KEY, "ANTHROPIC_BASE_URL": standin.base_url,
            "DISABLE_AUTOUPDATER": "1", "TERM": "xterm-256color", "LANG": "C.UTF-8",
            "PATH": f"{Path(args.claude).parent}:{os.environ['PATH']}",
        }  # fmt: skip
        run = PtyRun([args.claude, "--resume", sid], env, project)
        outcome = "timeout"
        seconds = args.timeout
        try:
            seconds = run.wait_for("shortcuts", args.timeout)  # its ready footer, "? for shortcuts"
            outcome = "ready for input (the conversation loaded)"
        except TimeoutError:
            if run.proc.poll() is not None:
                outcome = f"exited with status {run.proc.returncode}"
                seconds = (run.ended_at or time.monotonic()) - run.started
        peak = run.peak_kb
        try:
            os.killpg(run.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        run.wait(30)
    tail = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", bytes(run.output[-3000:])).decode("utf-8", "replace")
    print(f"- real Claude Code ({Path(args.claude).resolve().parent.parent.name} {args.claude}): `claude --resume` of a "
          f"{size / 2**20:.0f} MB transcript ({n} exchanges): {outcome} after {seconds:.1f} s, peak RSS {peak / 1024:.0f} MB")  # fmt: skip
    print(f"  (screen tail: {' '.join(tail.split())[-300:]!r})", file=sys.stderr)
    shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
