"""Files snapshotted at each exchange boundary while the agent runs; after a kill -9 they come back.

The agent is a scripted ``claude`` on PATH (``EDITING_CLAUDE``): shellkeep takes it for Claude
Code (it pre-assigns ``--session-id``), and it writes a Claude Code 2.1 transcript under
``$CLAUDE_CONFIG_DIR`` as it acts out each prompt: ``write PATH TEXT`` appends TEXT to PATH
through a ``Write`` tool call and answers; ``say TEXT`` answers without touching a file;
``hang PATH TEXT`` appends through an ``Edit`` call, then works forever (no answer). Between
answers it waits at a ``> `` prompt, as an agent waits for its user. Git and the files are real;
shellkeep runs in a real pty and is killed with a real SIGKILL, with the agent.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

from shellkeep.store.checkpoints import Checkpoint, read_checkpoints
from shellkeep.store.paths import Paths
from shellkeep.store.retention import remove_session
from shellkeep.store.session import read_meta
from tests.helpers import SK, PtyHarness, git, git_init, process_gone, run_sk, session_folders, wait_until

EDITING_CLAUDE = r'''#!/usr/bin/env python3
import json, os, re, sys, time, uuid
from datetime import datetime, timezone
args = sys.argv[1:]
sid = args[args.index("--session-id") + 1]
folder = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "projects", re.sub(r"[^a-zA-Z0-9]", "-", os.getcwd()))
os.makedirs(folder, exist_ok=True)
path = os.path.join(folder, sid + ".jsonl")
parent = None
def record(kind, message):
    global parent
    u = str(uuid.uuid4())
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    with open(path, "a") as fh:
        fh.write(json.dumps({"parentUuid": parent, "type": kind, "uuid": u, "timestamp": at, "sessionId": sid,
                             "cwd": os.getcwd(), "message": message}) + "\n")
    parent = u
n = 0
while True:
    sys.stdout.write("> ")
    sys.stdout.flush()
    words = sys.stdin.readline().split()
    if not words or words[0] == "quit":
        break
    n += 1
    record("user", {"role": "user", "content": " ".join(words)})
    if words[0] in ("write", "hang"):
        tool = "Write" if words[0] == "write" else "Edit"
        record("assistant", {"id": "m%da" % n, "role": "assistant", "model": "x", "content": [
            {"type": "tool_use", "id": "t%d" % n, "name": tool, "input": {"file_path": os.path.join(os.getcwd(), words[1])}}]})
        with open(words[1], "a") as fh:
            fh.write(" ".join(words[2:]) + "\n")
        record("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t%d" % n, "content": "ok"}]})
        if words[0] == "hang":
            sys.stdout.write("working on %s\n" % words[1])
            sys.stdout.flush()
            time.sleep(3600)
    record("assistant", {"id": "m%db" % n, "role": "assistant", "model": "x", "content": [{"type": "text", "text": "answer %d" % n}]})
    sys.stdout.write("answer %d\n" % n)
'''


def _repo(repo: Path) -> None:
    git_init(repo)
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")


def _start(tmp_path: Path, **extra: str) -> PtyHarness:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(EDITING_CLAUDE)
    (bin_dir / "claude").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), **extra}
    h = PtyHarness.start([*SK, "claude"], env=env)
    h.expect(b"> ")
    return h


def _folder(home: Paths) -> Path:
    wait_until(lambda: len(session_folders(home)) == 1)
    return session_folders(home)[0].parent


def _boundary(folder: Path, exchange: int) -> Checkpoint:
    """Wait for the checkpoint of exchange ``exchange`` (0: the session's start) and return it."""
    def found() -> Checkpoint | None:
        return next((c for c in read_checkpoints(folder) if c.auto and c.exchange == exchange), None)

    wait_until(found, 30)
    checkpoint = found()
    assert checkpoint is not None
    return checkpoint


def _ask(h: PtyHarness, prompt: str, answer: bytes) -> None:
    h.write(prompt.encode() + b"\r")
    h.expect(answer)


def test_snapshots_while_running_survive_a_kill_9_and_restore_files_puts_back_any_exchange(home: Paths, tmp_path: Path) -> None:
    repo = Path.cwd()
    _repo(repo)
    h = _start(tmp_path)
    folder = _folder(home)
    start = _boundary(folder, 0)  # the files as the session found them: before exchange 1
    assert start.label == "session start" and start.has_snapshot
    _ask(h, "write a.txt first edit", b"answer 1")
    first = _boundary(folder, 1)
    _ask(h, "write b.txt new file", b"answer 2")
    second = _boundary(folder, 2)
    # Taken while the agent runs, each holds the files as that answer left them.
    assert git(repo, "show", f"{first.snapshot}:a.txt") == "one\nfirst edit\n"
    assert git(repo, "ls-tree", "--name-only", str(first.snapshot)).split() == ["a.txt"]
    assert git(repo, "show", f"{second.snapshot}:b.txt") == "new file\n"
    assert [(c.label, c.exchange) for c in read_checkpoints(folder)] == [("session start", 0), ("exchange 1", 1), ("exchange 2", 2)]
    assert first.ref == f"refs/shellkeep/{folder.name}/{first.n}"

    h.write(b"hang a.txt in flight\r")
    h.expect(b"working on a.txt")
    agent_pid = json.loads((folder / "meta.json").read_text())["child_pid"]
    for pid in (h.pid, agent_pid):  # shellkeep and the agent together
        os.kill(pid, signal.SIGKILL)
    h.finish()
    wait_until(lambda: process_gone(agent_pid))

    # After the crash: the snapshots are there; the exchange cut short is in flight. (The
    # exchanges are not collected yet: they are read from the agent's transcript, found
    # where CLAUDE_CONFIG_DIR says, as in the terminal the user ran the agent from.)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}
    shown = run_sk("show", folder.name, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["status"] == "interrupted"
    assert document["in_flight"] == {
        "since_exchange": 2,
        "checkpoint": second.n,
        "files": [{"path": "a.txt", "status": "M", "tools": ["Edit"]}],
    }
    text = run_sk("show", folder.name, env=env).stdout.decode()
    assert "files in flight (changed since exchange 2" in text and "  M a.txt  (Edit)" in text
    patch = run_sk("diff", folder.name, "--in-flight")
    assert patch.returncode == 0, patch.stderr
    assert "+in flight" in patch.stdout.decode() and "b.txt" not in patch.stdout.decode()
    assert patch.stderr.decode() == f"checkpoint {second.n} 'exchange 2' -> now\n"
    resumed = run_sk("resume", folder.name, "--dry-run", "--no-screen", env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert "files in flight: a.txt (1 changed since the last answer)" in resumed.stderr.decode().splitlines()

    # Before exchange 2 is the checkpoint of exchange 1; before exchange 1, the session's start.
    back = run_sk("restore-files", folder.name, "--before-exchange", "2", "--yes")
    assert back.returncode == 0, back.stderr
    assert f"to checkpoint {first.n};".encode() in back.stdout
    assert (repo / "a.txt").read_text() == "one\nfirst edit\n" and not (repo / "b.txt").exists()
    back = run_sk("restore-files", folder.name, "--checkpoint", str(start.n), "--yes")
    assert back.returncode == 0, back.stderr
    assert (repo / "a.txt").read_text() == "one\n"
    # Exchange 3 was cut short: no checkpoint of its own (its files are in flight), so no
    # snapshot after it; an unknown exchange is one line naming the values the option takes, exit 2.
    assert [c.exchange for c in read_checkpoints(folder) if c.auto] == [0, 1, 2]
    missing = run_sk("restore-files", folder.name, "--before-exchange", "9", "--yes")
    assert missing.returncode == 2 and missing.stderr.decode().splitlines() == [
        f"shellkeep: session {folder.name} has no snapshot of the files before exchange 9; --before-exchange takes 1-3 here;"
        f" see 'shellkeep show {folder.name}'"
    ]
    for wrong, says in (("abc", "'abc' is not a whole number; it takes one from 1 to"), ("0", "0 is not in the range")):
        refused = run_sk("restore-files", folder.name, "--before-exchange", wrong, "--yes")
        assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert f"invalid value for '--before-exchange': {says}".encode() in refused.stderr
    both = run_sk("restore-files", folder.name, "--before-exchange", "2", "--checkpoint", "1")
    assert both.returncode == 2 and b"give one of --checkpoint N and --before-exchange K, not both" in both.stderr
    neither = run_sk("restore-files", folder.name)
    assert neither.returncode == 2 and b"give --checkpoint N or --before-exchange K" in neither.stderr


def test_restore_files_while_the_agent_runs_warns_and_asks(home: Paths, tmp_path: Path) -> None:
    repo = Path.cwd()
    _repo(repo)
    h = _start(tmp_path)
    folder = _folder(home)
    _boundary(folder, 0)
    _ask(h, "write b.txt the agent's file", b"answer 1")
    _boundary(folder, 1)
    warning = f"shellkeep: session {folder.name} is still running: its agent may write these files again after the restore"

    declined = run_sk("restore-files", "--last", "--before-exchange", "1", input_bytes=b"n\n")
    assert declined.returncode == 1
    said = declined.stderr.decode().splitlines()
    assert said[0] == warning and "  delete b.txt" in said  # the files it would change, before the question
    assert "to checkpoint 1? [y/N]: shellkeep: not restored; the files are as they were" in said[-1]
    assert (repo / "b.txt").read_text() == "the agent's file\n"

    done = run_sk("restore-files", "--last", "--before-exchange", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stderr.decode().splitlines() == [warning]
    assert not (repo / "b.txt").exists()
    [safety] = [c for c in read_checkpoints(folder) if c.label.startswith("before restore-files")]
    assert safety.label == "before restore-files --before-exchange 1" and safety.has_snapshot

    h.write(b"quit\r")
    assert h.finish() == 0
    undo = run_sk("restore-files", "--last", "--checkpoint", str(safety.n), "--yes")  # ended: no warning
    assert undo.returncode == 0 and undo.stderr == b"", undo.stderr
    assert (repo / "b.txt").read_text() == "the agent's file\n"


def test_a_snapshot_is_skipped_when_nothing_changed(home: Paths, tmp_path: Path) -> None:
    repo = Path.cwd()
    _repo(repo)
    h = _start(tmp_path)
    folder = _folder(home)
    start = _boundary(folder, 0)
    _ask(h, "say nothing changes", b"answer 1")
    first = _boundary(folder, 1)
    _ask(h, "write a.txt changed", b"answer 2")
    second = _boundary(folder, 2)
    _ask(h, "say still nothing", b"answer 3")
    third = _boundary(folder, 3)
    h.write(b"quit\r")
    assert h.finish() == 0
    # Unchanged: no new commit nor ref, the checkpoint names the snapshot before it.
    assert (first.snapshot, first.ref) == (start.snapshot, start.ref)
    assert second.snapshot != start.snapshot and second.ref == f"refs/shellkeep/{folder.name}/{second.n}"
    assert (third.snapshot, third.ref) == (second.snapshot, second.ref)
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/shellkeep").split()
    assert sorted(refs) == sorted({str(start.ref), str(second.ref)})
    # The checkpoints after the run found every exchange done: none added twice.
    assert [c.exchange for c in read_checkpoints(folder)] == [0, 1, 2, 3]
    # Removing the session drops its refs, those its checkpoints share included.
    remove_session(home, read_meta(folder))
    assert git(repo, "for-each-ref", "refs/shellkeep") == ""


def test_record_snapshots_off_takes_none(home: Paths, tmp_path: Path) -> None:
    repo = Path.cwd()
    _repo(repo)
    h = _start(tmp_path, SHELLKEEP_RECORD_SNAPSHOTS="false")
    folder = _folder(home)
    _ask(h, "write a.txt edit", b"answer 1")
    h.write(b"quit\r")
    assert h.finish() == 0
    # Only the checkpoint the end of the run adds for its last exchange.
    assert [(c.label, c.exchange) for c in read_checkpoints(folder)] == [("exchange 1", 1)]


def test_a_snapshot_that_fails_never_harms_the_session(home: Paths, tmp_path: Path) -> None:
    repo = Path.cwd()
    _repo(repo)
    (repo / ".git" / "refs" / "shellkeep").write_text("a file where git wants a folder\n")  # update-ref fails
    h = _start(tmp_path)
    folder = _folder(home)
    _ask(h, "write a.txt edit", b"answer 1")
    _ask(h, "say more", b"answer 2")
    h.write(b"quit\r")
    assert h.finish() == 0
    assert b"Traceback" not in h.output
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "finished" and meta["exchange_count"] == 2
    assert (repo / "a.txt").read_text() == "one\nedit\n"
    assert not [c for c in read_checkpoints(folder) if c.has_snapshot]
