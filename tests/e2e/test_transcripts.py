"""The end of a recorded agent run, in a real pty: Ctrl-C pressed again and again while shellkeep
stores the session never loses its exchanges, and a big transcript is left to the upkeep.

The agent is a stand-in ``claude`` (``tests.transcripts.FAKE_CLAUDE``) that takes a Claude
Code transcript written in the real format as its conversation.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pexpect
import pytest

from shellkeep.store.chunks import read_ref, ref_path
from shellkeep.store.paths import Paths
from tests.helpers import default_signals, session_folders, stored_copy, wait_until
from tests.transcripts import FAKE_CLAUDE, claude_lines


@pytest.mark.parametrize(("exchanges", "filler_bytes"), [(20, 300), (420, 20_000)], ids=["small", "big-in-background"])
def test_ctrl_c_while_the_session_is_stored_never_loses_its_exchanges(
    home: Paths, tmp_path: Path, exchanges: int, filler_bytes: int
) -> None:
    bin_dir, claude_root = tmp_path / "bin", tmp_path / "claude"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(FAKE_CLAUDE)
    (bin_dir / "claude").chmod(0o755)
    source = tmp_path / "transcript.jsonl"
    start = datetime.now(timezone.utc) + timedelta(minutes=5)  # dated during the session: its own
    with source.open("wb") as fh:
        for line in claude_lines(exchanges, session_id="x", cwd=os.getcwd(), start=start, filler_bytes=filler_bytes):
            fh.write(line)
    env = {
        **os.environ, "CLAUDE_CONFIG_DIR": str(claude_root), "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "BENCH_TRANSCRIPT": str(source), "BENCH_EXIT_FILE": str(tmp_path / "exit"), "BENCH_SCREEN": "STANDIN-READY",
    }  # fmt: skip
    child = pexpect.spawn(sys.executable, ["-m", "shellkeep", "claude"], env=env, cwd=os.getcwd(), dimensions=(24, 80), preexec_fn=default_signals)
    child.expect("STANDIN-READY", timeout=30)
    child.send("\r")
    wait_until(lambda: (tmp_path / "exit").exists(), 30)  # the agent has ended
    interrupts = 0
    while child.isalive():  # Ctrl-C again and again while shellkeep stores the session
        try:
            os.kill(child.pid, signal.SIGINT)
            interrupts += 1
        except ProcessLookupError:
            break
    child.wait()
    assert interrupts > 0
    [folder] = [f.parent for f in session_folders(home)]
    meta = lambda: json.loads((folder / "meta.json").read_text())  # noqa: E731
    assert meta()["status"] in ("finished", "killed") and meta()["agent_session_id"]  # killed: a Ctrl-C reached the relay first
    wait_until(lambda: meta()["exchange_count"] == exchanges + 1 and (folder / "exchanges.jsonl").is_file(), 180)
    transcript = Path(meta()["agent_transcript"])
    wait_until(lambda: ref_path(folder, transcript.name).is_file(), 180)
    assert read_ref(ref_path(folder, transcript.name)).size == transcript.stat().st_size
    assert stored_copy(folder, transcript.name, home) == transcript.read_bytes()
