"""``shellkeep resume --agent codex`` in a real pty, when the other agent's own resume fails to start.

A stand-in ``codex`` on PATH (written by the test) fails ``codex resume <id>`` as Codex 0.171.0
does (``ERROR: No saved session found with ID <id>``, exit status 1) and otherwise reads lines
like the notes program of test_resume.py. The hand-off writes the rollout, the native resume
fails, and the same command starts ``codex`` anew with the exchanges re-injected.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, load_session, program_runs, session_folders, wait_until

from .test_resume import _recorded

FAKE_CODEX = r'''#!PYTHON
import json, os, sys
log_path = os.environ["FAKE_CODEX_LOG"]
with open(log_path, "a", encoding="utf-8") as log:
    log.write(json.dumps({"start": sys.argv[1:]}) + "\n")
if "resume" in sys.argv:
    print("ERROR: No saved session found with ID " + sys.argv[-1] + ". Run `codex resume` to pick one.")
    sys.exit(1)
sys.stdout.write("fake codex ready\n")
with open(log_path, "a", encoding="utf-8") as log:
    while True:
        sys.stdout.write("> ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            break
        log.write(json.dumps({"line": line.rstrip("\n")}) + "\n")
        log.flush()
        sys.stdout.write("heard\n")
'''


def test_a_failed_native_resume_of_the_other_agent_falls_back_to_re_injecting_it(home: Paths, tmp_path: Path) -> None:
    notes = tmp_path / "notes.py"
    from .test_resume import NOTES

    notes.write_text(NOTES)
    old = _recorded(notes, tmp_path / "notes.jsonl", home)
    bin_dir, log = tmp_path / "bin", tmp_path / "codex.jsonl"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text(FAKE_CODEX.replace("PYTHON", sys.executable))
    (bin_dir / "codex").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_CODEX_LOG": str(log)}

    harness = PtyHarness.start([*SK, "resume", "--yes", "--env", "current", str(old["id"]), "--agent", "codex"], cols=200, rows=30, env=env)
    try:
        wait_until(lambda: len(program_runs(log)) == 2 and program_runs(log)[1], 30)
    except TimeoutError:
        harness.read_some(1)
        raise AssertionError(harness.output.decode("utf-8", "replace")) from None
    harness.expect(b"\r\n> ")
    harness.write(b"\x04")
    harness.finish()
    said = harness.output.decode("utf-8", "replace")

    [rollout] = (Path(os.environ["HOME"]) / ".codex" / "sessions").rglob("rollout-*.jsonl")
    thread_id = rollout.name[-len("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.jsonl") : -len(".jsonl")]
    assert f"handed off 3 exchanges into codex's own history: {rollout}" in said, said
    assert f"the agent's own resume failed (it said: No saved session found with ID {thread_id}); re-injecting the last 3 exchanges" in said
    starts = [json.loads(line)["start"] for line in log.read_text().splitlines() if "start" in json.loads(line)]
    assert starts == [["resume", thread_id], []]
    [block] = program_runs(log)[1][:1]
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {old['id']} ") and "remember plums" in block
    runs = [load_session(f.parent)[0] for f in session_folders(home) if load_session(f.parent)[0]["id"] != old["id"]]
    assert sorted((r["command"][:2], bool(r.get("resume_failed"))) for r in runs) == [(["codex"], False), (["codex", "resume"], True)]
    assert all(r["parent"] == old["id"] for r in runs)


def test_a_failed_writing_is_one_line_in_words_and_re_injects(home: Paths, tmp_path: Path) -> None:
    """CODEX_HOME is a file: the rollout cannot be written; one line says so without an errno,
    and codex is started anew with the exchanges re-injected."""
    notes = tmp_path / "notes.py"
    from .test_resume import NOTES

    notes.write_text(NOTES)
    old = _recorded(notes, tmp_path / "notes.jsonl", home)
    bin_dir, log, codex_home = tmp_path / "bin", tmp_path / "codex.jsonl", tmp_path / "codex-home"
    bin_dir.mkdir()
    codex_home.write_text("not a folder")
    (bin_dir / "codex").write_text(FAKE_CODEX.replace("PYTHON", sys.executable))
    (bin_dir / "codex").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_CODEX_LOG": str(log), "CODEX_HOME": str(codex_home)}

    harness = PtyHarness.start([*SK, "resume", "--yes", "--env", "current", str(old["id"]), "--agent", "codex"], cols=200, rows=30, env=env)
    wait_until(lambda: len(program_runs(log)) == 1 and program_runs(log)[0], 30)
    harness.expect(b"\r\n> ")
    harness.write(b"\x04")
    harness.finish()
    said = harness.output.decode("utf-8", "replace")

    lines = [line for line in said.splitlines() if "codex-home" in line]
    assert len(lines) == 1 and "Errno" not in said, said
    assert lines[0].startswith(f"shellkeep: no hand-off into codex's own history (could not write its transcript, not a directory: {codex_home}/sessions/")
    assert lines[0].endswith("); re-injecting 3 exchanges"), lines[0]
    starts = [json.loads(line)["start"] for line in log.read_text().splitlines() if "start" in json.loads(line)]
    assert starts == [[]]
