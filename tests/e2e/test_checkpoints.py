"""``shellkeep mark``, ``diff`` and ``restore-files``: checkpoints with git snapshots in a real repo.

A real session (PtyHarness) runs ``shellkeep mark`` inside itself; git is the real git. The
user's index, branch, stash and HEAD are compared byte for byte before and after.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from click.testing import CliRunner

from shellkeep.app.checkpoints import add_exchange_checkpoints
from shellkeep.app.context import open_context
from shellkeep.archive.timeline import read_session_markers, start_time
from shellkeep.agents.base import Exchange
from shellkeep.cli.main import main
from shellkeep.store.checkpoints import CHECKPOINTS_FILE, read_checkpoints
from shellkeep.store.paths import Paths
from shellkeep.store.retention import remove_session
from shellkeep.store.session import read_meta
from tests.helpers import PtyHarness, SK, git, git_init, invoke_sk, only_session, run_sk, session_folders
from tests.factory import make_session

SK_CMD = " ".join(shlex.quote(a) for a in SK)


def _make_repo(repo: Path) -> None:
    git_init(repo)
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "a.txt").write_text("one\n")
    (repo / "b.txt").write_text("bee\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    (repo / "a.txt").write_text("one\nstashed\n")
    git(repo, "stash", "-q")
    (repo / "staged.txt").write_text("in the index\n")
    git(repo, "add", "staged.txt")  # the user's index differs from HEAD: it must stay so
    (repo / "old.log").write_text("ignored\n")


def _user_state(repo: Path) -> dict[str, object]:
    """The user's git state, read without writing the index (--no-optional-locks)."""
    return {
        "index": (repo / ".git" / "index").read_bytes(),
        "status": git(repo, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"),
        "stash": git(repo, "stash", "list"),
        "head": git(repo, "rev-parse", "HEAD"),
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/stash", "refs/tags"),
    }


def _record(script: str) -> PtyHarness:
    h = PtyHarness.start([*SK, "run", "--", "sh", "-c", script])
    assert h.finish() == 0, bytes(h.output[-2000:])
    return h


def test_mark_diff_and_restore_files_leave_the_users_git_state_alone(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    before = _user_state(repo)
    script = (
        f'{SK_CMD} mark "before edit"; '
        "echo two >> a.txt; echo new > u.txt; echo junk > x.log; rm b.txt; "
        f"{SK_CMD} mark after"
    )
    h = _record(script)
    assert b"checkpoint 1 of session" in h.output and b"checkpoint 2 of session" in h.output
    meta, _, events = only_session(home)
    sid = str(meta["id"])
    # The snapshots changed nothing of the user's: index bytes, branch, stash, HEAD, refs.
    after_marks = _user_state(repo)
    assert after_marks["index"] == before["index"]
    assert {k: after_marks[k] for k in ("stash", "head", "branch", "refs")} == {
        k: before[k] for k in ("stash", "head", "branch", "refs")
    }
    checkpoints = read_checkpoints(Path(session_folders(home)[0].parent))
    assert [(c.n, c.label, c.branch, c.ref) for c in checkpoints] == [
        (1, "before edit", "main", f"refs/shellkeep/{sid}/1"),
        (2, "after", "main", f"refs/shellkeep/{sid}/2"),
    ]
    assert all(c.head == str(before["head"]).strip() for c in checkpoints)
    # The live recorder wrote each checkpoint into the recording as a marker.
    assert [e.data for e in events if e.code == "m"] == ["checkpoint 1: before edit", "checkpoint 2: after"]
    # The snapshot of checkpoint 1 holds the staged and untracked files, not the ignored one.
    listed = git(repo, "ls-tree", "-r", "--name-only", f"refs/shellkeep/{sid}/1").split()
    assert listed == [".gitignore", "a.txt", "b.txt", "staged.txt"]

    diff = invoke_sk("diff", sid)
    assert diff.returncode == 0, diff.stderr
    out = diff.stdout.decode()
    assert "+two" in out and "b/u.txt" in out and "deleted file" in out and "x.log" not in out
    assert b"checkpoint 1 'before edit' -> checkpoint 2 'after'" in diff.stderr
    assert invoke_sk("diff", sid, "--from", "1", "--to", "2").stdout.decode() == out
    assert invoke_sk("diff", sid, "--from", "2", "--to", "2").stderr.endswith(b": no change\n")

    # git gc keeps the snapshots: they are reachable from refs/shellkeep/...
    git(repo, "gc", "-q", "--prune=now")
    for c in checkpoints:
        assert git(repo, "rev-parse", f"refs/shellkeep/{sid}/{c.n}").strip() == c.snapshot
        git(repo, "cat-file", "-e", f"{c.snapshot}^{{tree}}")

    # Without --yes a "no" changes nothing.
    refused = invoke_sk("restore-files", sid, "--checkpoint", "1", input_bytes=b"n\n")
    assert refused.returncode != 0 and (repo / "u.txt").exists()
    listed_changes = [line.strip() for line in refused.stderr.decode().splitlines() if line.startswith("  ")]
    assert "restore b.txt" in listed_changes and "delete u.txt" in listed_changes, listed_changes  # b.txt was deleted
    assert "change b.txt" not in listed_changes and b"restore 1 deleted since" in refused.stderr

    index_before_restore = (repo / ".git" / "index").read_bytes()
    restored = invoke_sk("restore-files", sid, "--checkpoint", "1", "--yes")
    assert restored.returncode == 0, restored.stderr
    assert b"the files before are checkpoint 3" in restored.stdout
    assert (repo / "a.txt").read_text() == "one\n"
    assert (repo / "b.txt").read_text() == "bee\n"
    assert not (repo / "u.txt").exists()
    assert (repo / "x.log").read_text() == "junk\n" and (repo / "old.log").exists()  # ignored: untouched
    assert (repo / ".git" / "index").read_bytes() == index_before_restore
    assert _user_state(repo) == {**before, "index": before["index"]}
    # The state before the restore is checkpoint 3: the edits can be had back from it.
    third = read_checkpoints(session_folders(home)[0].parent)[2]
    assert third.label == "before restore-files --checkpoint 1"
    assert git(repo, "show", f"{third.snapshot}:u.txt") == "new\n"
    again = invoke_sk("diff", sid, "--from", "1", "--to", "3")
    assert b"+two" in again.stdout


def test_mark_after_the_session_and_in_exports_and_show(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f"{SK_CMD} mark first")
    meta, _, _ = only_session(home)
    later = invoke_sk("mark", "--session", str(meta["id"]), "later")
    assert later.returncode == 0, later.stderr
    assert b"checkpoint 2 of session" in later.stdout
    for args in (("--last",), ("--session", "--last")):  # as the other commands take --last
        newest = invoke_sk("mark", "newest", *args)
        assert newest.returncode == 0, newest.stderr
        assert f"of session {meta['id']}".encode() in newest.stdout
    both = invoke_sk("mark", "x", "--session", str(meta["id"]), "--last")
    assert both.returncode == 2 and b"not both" in both.stderr
    document = json.loads(invoke_sk("export", str(meta["id"]), "--format", "json").stdout)
    assert [m["label"] for m in document["markers"]][:2] == ["checkpoint 1: first", "checkpoint 2: later"]
    assert [c["label"] for c in document["checkpoints"]] == ["first", "later", "newest", "newest"]
    shown = invoke_sk("show", str(meta["id"])).stdout.decode()
    assert "1 at " in shown and "'first': main " in shown and "'later'" in shown
    markdown = invoke_sk("export", str(meta["id"]), "--format", "md").stdout.decode()
    assert "## Checkpoints" in markdown and "'later'" in markdown
    # replay --marker takes a checkpoint's label, its marker's, or the marker's number.
    ctx = open_context()
    session = ctx.resolve(str(meta["id"]))
    recorded = next(m for m in read_session_markers(session, ctx.vault) if m.label == "checkpoint 1: first")
    assert start_time(session, ctx.vault, marker="first") == recorded.time_s
    assert start_time(session, ctx.vault, marker="checkpoint 1: first") == recorded.time_s
    assert start_time(session, ctx.vault, marker="later") == start_time(session, ctx.vault, marker="2") > recorded.time_s


def test_outside_git_checkpoints_are_markers_only(home: Paths, tmp_path: Path) -> None:
    assert subprocess.run(["git", "-C", str(Path.cwd()), "rev-parse"], capture_output=True).returncode != 0
    h = _record(f'{SK_CMD} mark "no repo here"')
    assert b"not in a git work tree: the checkpoint is a marker only" in h.output
    meta, _, events = only_session(home)
    assert [e.data for e in events if e.code == "m"] == ["checkpoint 1: no repo here"]
    (checkpoint,) = read_checkpoints(session_folders(home)[0].parent)
    assert checkpoint.snapshot is None and checkpoint.ref is None and not checkpoint.has_snapshot
    for args in (["diff", str(meta["id"])], ["restore-files", str(meta["id"]), "--checkpoint", "1", "--yes"]):
        result = run_sk(*args)
        assert result.returncode == 1
        lines = result.stderr.decode().splitlines()
        assert len(lines) == 1 and "markers only" in lines[0] and "Traceback" not in lines[0]


def test_mark_outside_a_session_says_so(home: Paths) -> None:
    result = invoke_sk("mark", "x")
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        "shellkeep: not inside a recorded session; run 'shellkeep mark' in one, or give --session SESSION or --last"
    ]


def test_unknown_checkpoint_is_one_line(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f"{SK_CMD} mark one")
    meta, _, _ = only_session(home)
    result = invoke_sk("diff", str(meta["id"]), "--from", "7")
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        f"shellkeep: session {meta['id']} has no checkpoint 7; checkpoints with files: 1; see 'shellkeep show {meta['id']}'"
    ]


def test_each_exchange_gets_a_checkpoint_once_and_only_the_last_a_snapshot(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    meta = make_session(home, repo, 1, agent="claude")
    meta = read_meta(meta.folder)
    started = meta.started_at
    exchanges = [
        Exchange(index=0, time=started, prompt="first", answer="a"),
        Exchange(index=1, time=None, prompt="second", answer="b"),
    ]
    assert add_exchange_checkpoints(meta, exchanges, snapshot_last=True) == 2
    assert add_exchange_checkpoints(meta, exchanges, snapshot_last=True) == 0  # collected again: no duplicates
    found = read_checkpoints(meta.folder)
    assert [(c.label, c.auto, c.exchange, c.has_snapshot) for c in found] == [
        ("exchange 1", True, 1, False),
        ("exchange 2", True, 2, True),
    ]
    assert "prompt" not in (meta.folder / CHECKPOINTS_FILE).read_text()
    result = CliRunner().invoke(main, ["show", meta.id])
    assert result.exit_code == 0 and "exchange 2" in result.stdout
    # In a git work tree, a marker added after the exchange is not said to be outside one.
    assert "'exchange 1': marker only (no snapshot: added after the session had ended)" in result.stdout
    assert "not in a git work tree" not in result.stdout


def test_an_unanswered_exchange_gets_no_checkpoint_and_no_exchange_a_snapshot(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    meta = read_meta(make_session(home, repo, 1, agent="claude").folder)
    exchanges = [
        Exchange(index=0, time=meta.started_at, prompt="first", answer="a"),
        Exchange(index=1, time=None, prompt="second, cut short", answer=""),
    ]
    # The run has just ended, its last prompt unanswered: the files hold that turn's work in flight.
    assert add_exchange_checkpoints(meta, exchanges, snapshot_last=True) == 1
    [only] = read_checkpoints(meta.folder)
    assert (only.label, only.exchange, only.has_snapshot, only.git_root) == ("exchange 1", 1, False, str(repo))
    listed = invoke_sk("show", meta.id)
    assert "1 at 0.0 s 'exchange 1': marker only (no snapshot: added after the session had ended)" in listed.stdout.decode()
    refused = invoke_sk("restore-files", meta.id, "--before-exchange", "2", "--yes")
    assert refused.returncode == 1 and refused.stderr.decode().splitlines() == [
        f"shellkeep: session {meta.id} has no snapshot of its files: its checkpoints are markers only, added after the session had ended"
    ]
    answered = [exchanges[0], Exchange(index=1, time=None, prompt="second, cut short", answer="b")]
    assert add_exchange_checkpoints(meta, answered, snapshot_last=True) == 1  # answered later: its own now
    assert [(c.exchange, c.has_snapshot) for c in read_checkpoints(meta.folder)] == [(1, False), (2, True)]


def test_outside_git_an_exchange_marker_says_so(home: Paths, tmp_path: Path) -> None:
    meta = read_meta(make_session(home, tmp_path, 1, agent="claude").folder)
    assert add_exchange_checkpoints(meta, [Exchange(index=0, time=None, prompt="p", answer="a")], snapshot_last=True) == 1
    assert "'exchange 1': marker only (not in a git work tree)" in invoke_sk("show", meta.id).stdout.decode()


def test_an_exchange_marker_of_a_work_tree_removed_since_is_not_said_to_be_outside_git(home: Paths) -> None:
    repo = Path.cwd() / "repo"
    repo.mkdir()
    _make_repo(repo)
    tree = Path.cwd() / "feature"
    git(repo, "worktree", "add", "-q", str(tree))
    assert run_sk("run", "--", "true", cwd=tree).returncode == 0  # recorded in the work tree: git_start kept
    meta = read_meta(session_folders(home)[0].parent)
    assert meta.git_start is not None
    git(repo, "worktree", "remove", "--force", str(tree))  # as agents' scratch work trees go
    exchanges = [Exchange(index=0, time=None, prompt="p", answer="a"), Exchange(index=1, time=None, prompt="q", answer="b")]
    assert add_exchange_checkpoints(meta, exchanges, snapshot_last=True) == 2  # collected later, the tree gone
    shown = invoke_sk("show", meta.id).stdout.decode()
    assert "'exchange 1': marker only (no snapshot: added after the session had ended)" in shown
    assert "'exchange 2': marker only (no snapshot: added after the session had ended)" in shown
    assert "not in a git work tree" not in shown


def test_a_cut_last_line_is_skipped_and_numbering_goes_on(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f"{SK_CMD} mark one")
    folder = session_folders(home)[0].parent
    with open(folder / CHECKPOINTS_FILE, "ab") as fh:
        fh.write(b'{"n": 2, "time_s": 1.0, "lab')  # a crash mid-line
    assert [c.n for c in read_checkpoints(folder)] == [1]
    meta, _, _ = only_session(home)
    assert b"checkpoint 2 of session" in invoke_sk("mark", "--session", str(meta["id"]), "two").stdout
    assert [c.label for c in read_checkpoints(folder)] == ["one", "two"]


def test_a_secret_in_a_label_is_redacted_everywhere_it_goes(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    secret = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
    _record(f"{SK_CMD} mark 'token {secret}'")
    folder = session_folders(home)[0].parent
    meta, _, events = only_session(home)
    (checkpoint,) = read_checkpoints(folder)
    assert checkpoint.label.startswith("token [REDACTED:")
    assert secret not in (folder / CHECKPOINTS_FILE).read_text()
    assert [e.data for e in events if e.code == "m"] == [f"checkpoint 1: {checkpoint.label}"]
    assert secret not in git(repo, "log", "--format=%B", f"refs/shellkeep/{meta['id']}/1")


def test_marks_at_the_same_time_get_numbers_of_their_own(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record("true")
    meta, _, _ = only_session(home)
    procs = [
        subprocess.Popen([*SK, "mark", "--session", str(meta["id"]), f"m{i}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(4)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else b""
    found = read_checkpoints(session_folders(home)[0].parent)
    assert sorted(c.n for c in found) == [1, 2, 3, 4]
    assert sorted(c.label for c in found) == ["m0", "m1", "m2", "m3"]
    for c in found:
        assert git(repo, "rev-parse", f"refs/shellkeep/{meta['id']}/{c.n}").strip() == c.snapshot


def test_removing_a_session_drops_its_refs_and_keeps_the_others(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f"{SK_CMD} mark one; {SK_CMD} mark two")
    _record(f"{SK_CMD} mark kept")
    first, second = [read_meta(p.parent) for p in session_folders(home)]
    remove_session(home, first)
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/shellkeep").split()
    assert refs == [f"refs/shellkeep/{second.id}/1"]


def test_diff_from_the_last_checkpoint_shows_the_files_now(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f"{SK_CMD} mark only")
    meta, _, _ = only_session(home)
    (repo / "a.txt").write_text("one\nafter the session\n")
    for args in ([], ["--from", "1"]):
        result = invoke_sk("diff", str(meta["id"]), *args)
        assert result.returncode == 0, result.stderr
        assert "+after the session" in result.stdout.decode()
        assert result.stderr == b"checkpoint 1 'only' -> now\n"


def test_undoing_a_restore_that_dropped_a_gitignore_keeps_the_files_it_ignored(home: Paths) -> None:
    repo = Path.cwd()
    git_init(repo)
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "init")
    script = f'{SK_CMD} mark start; echo c > c.txt; echo "*.log" > .gitignore; git add .gitignore; echo log > ig.log'
    _record(script)
    meta, _, _ = only_session(home)
    sid = str(meta["id"])
    # Back to checkpoint 1: .gitignore and c.txt go (added since); ig.log, ignored then, stays.
    first = invoke_sk("restore-files", sid, "--checkpoint", "1", "--yes")
    assert first.returncode == 0, first.stderr
    assert not (repo / ".gitignore").exists() and not (repo / "c.txt").exists()
    assert (repo / "ig.log").read_text() == "log\n"
    undo = [c.n for c in read_checkpoints(Path(session_folders(home)[0].parent)) if c.label.startswith("before restore-files")]
    # Undo, to the checkpoint taken before that restore: everything is back, ig.log untouched.
    second = invoke_sk("restore-files", sid, "--checkpoint", str(undo[-1]), "--yes")
    assert second.returncode == 0, second.stderr
    assert (repo / ".gitignore").read_text() == "*.log\n" and (repo / "c.txt").read_text() == "c\n"
    assert (repo / "ig.log").read_text() == "log\n"


def test_declining_a_restore_changes_nothing_and_says_so(home: Paths) -> None:
    repo = Path.cwd()
    _make_repo(repo)
    _record(f'{SK_CMD} mark start; echo two >> b.txt; rm a.txt; mkdir -p new; echo n > new/c.txt')
    meta, _, _ = only_session(home)
    declined = invoke_sk("restore-files", str(meta["id"]), "--checkpoint", "1", input_bytes=b"n\n")
    assert declined.returncode == 1 and declined.stderr.endswith(b"not restored; the files are as they were\n"), declined.stderr
    assert (repo / "b.txt").read_text() == "bee\ntwo\n"
    # The question names each file it would change, re-create (deleted since) and delete.
    asked = declined.stderr.decode().splitlines()
    assert asked[:3] == ["  change b.txt", "  restore a.txt", "  delete new/c.txt"], asked
    assert asked[3].startswith(f"change 1 file, restore 1 deleted since and delete 1 in {repo}, back to checkpoint 1?")
