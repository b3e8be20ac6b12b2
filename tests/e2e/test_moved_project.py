"""A project folder moved or renamed on disk: its sessions are still listed and resumed.

A real git repository in ``tmp_path`` (an origin remote, a commit) holds a session of the
line-based notes program (``test_resume.NOTES``), recorded in a real pty from a subfolder.
Then the repository is moved with ``mv``. ``resume SESSION`` elsewhere refuses with one line
naming ``--cwd``; ``resume SESSION --cwd DIR`` and a bare ``resume`` in the moved repository
(its git remote and root commit match) start the program in the moved subfolder and type
the earlier exchanges into it; ``ls``, ``search`` and the picker there offer the older
session, ``ls`` and ``search`` in another repository or a fork do not.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.store.paths import Paths
from tests.e2e.test_resume import NOTES
from tests.helpers import program_runs as _runs
from tests.helpers import PtyHarness, SK, invoke_sk, load_session, run_sk, session_folders, wait_for_background, wait_until

PY = sys.executable
PROMPTS = ("remember apples", "remember pears")


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return out.stdout.strip()


def _repo(path: Path, remote: str) -> str:
    """Make a git repository at ``path`` with an origin remote and two commits; return the root commit.

    The root commit's message names the folder: two repositories made within the same second
    would otherwise share their (empty, same-author) root commit, as clones do.
    """
    (path / "src").mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "remote", "add", "origin", remote)
    _git(path, "commit", "-q", "--allow-empty", "-m", f"first in {path.name}")
    root = _git(path, "rev-parse", "HEAD")
    _git(path, "commit", "-q", "--allow-empty", "-m", "second")
    return root


@pytest.fixture
def moved(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Record a notes session in ``web/src`` of a git repository, then ``mv web web-renamed``.

    Returns the old session's meta (as stored before the move) and the paths involved.
    """
    notes, log = tmp_path / "notes.py", tmp_path / "notes.jsonl"
    notes.write_text(NOTES)
    old_repo, new_repo = tmp_path / "web", tmp_path / "web-renamed"
    root_commit = _repo(old_repo, "git@github.com:Acme/web.git")
    monkeypatch.chdir(old_repo / "src")
    harness = PtyHarness.start([*SK, "run", "--", PY, str(notes), str(log)], cols=100, rows=30)
    harness.expect(b"> ")
    for prompt in PROMPTS:
        harness.write(prompt.encode() + b"\r")
        harness.expect(f"heard: {prompt}\r\n> ".encode())
    harness.write(b"\x04")
    assert harness.finish() == 0
    [meta_path] = session_folders(home)
    wait_until(lambda: json.loads(meta_path.read_text())["exchange_count"] == 2, 20)
    wait_for_background(home)
    meta = json.loads(meta_path.read_text())
    assert meta["git_identity"]["root_commit"] == root_commit, meta  # what tells a fork apart
    monkeypatch.chdir(tmp_path)
    subprocess.run(["mv", str(old_repo), str(new_repo)], check=True)
    return {"meta": meta, "root_commit": root_commit, "new_repo": new_repo.resolve(), "log": log, "tmp": tmp_path}


def _resumed(home: Paths, old_id: object, harness: PtyHarness, log: Path) -> dict[str, object]:
    """Wait for the resumed notes program to get the block, end it, return the new session's meta."""
    wait_until(lambda: len(_runs(log)) == 2 and _runs(log)[1], 20)
    harness.expect(b"\r\n> ")
    harness.write(b"\x04")
    assert harness.finish() == 0
    [block] = _runs(log)[1]
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {old_id} ")
    assert block.split(" | ")[1:] == [
        "User: remember apples", "Assistant: heard: remember apples",
        "User: remember pears", "Assistant: heard: remember pears",
    ]  # fmt: skip
    [new] = [load_session(f.parent)[0] for f in session_folders(home) if f.parent.name != old_id]
    return new


def test_the_git_identity_is_recorded(moved: dict[str, object]) -> None:
    meta = moved["meta"]
    assert isinstance(meta, dict)
    # Both are read once the child runs (the upkeep completes the root commit if git was slow).
    assert meta["git_identity"] == {"remote": "github.com/Acme/web", "root_commit": moved["root_commit"]}


def test_resume_elsewhere_asks_for_cwd(moved: dict[str, object]) -> None:
    result = run_sk("resume", str(moved["meta"]["id"]))  # type: ignore[index]
    assert result.returncode == 2
    err = result.stderr.decode()
    assert "no longer exists" in err and "--cwd DIR" in err and len(err.strip().splitlines()) == 1


def test_resume_with_cwd_runs_in_the_new_folder(home: Paths, moved: dict[str, object]) -> None:
    meta, new_repo, log = moved["meta"], moved["new_repo"], moved["log"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path) and isinstance(log, Path)
    harness = PtyHarness.start([*SK, "resume", str(meta["id"]), "--cwd", str(new_repo / "src")], cols=100, rows=30)
    new = _resumed(home, meta["id"], harness, log)
    assert new["cwd"] == str(new_repo / "src") and new["parent"] == meta["id"]
    assert f"resuming in {new_repo / 'src'}" in bytes(harness.output).decode()


def test_a_bare_resume_in_the_moved_repository_finds_and_resumes_it(
    home: Paths, moved: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    meta, new_repo, log = moved["meta"], moved["new_repo"], moved["log"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path) and isinstance(log, Path)
    monkeypatch.chdir(new_repo)
    # no SESSION, no --cwd; --yes: the session ended normally, so resume would ask before running it again
    harness = PtyHarness.start([*SK, "resume", "--yes"], cols=100, rows=30)
    new = _resumed(home, meta["id"], harness, log)
    assert new["cwd"] == str(new_repo / "src")  # the same subfolder of the moved repository
    out = bytes(harness.output).decode()
    assert "is gone; resuming in" in out and "the same git repository" in out


def test_ls_in_the_moved_repository_lists_the_older_session(
    home: Paths, moved: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    meta, new_repo, tmp = moved["meta"], moved["new_repo"], moved["tmp"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path) and isinstance(tmp, Path)
    monkeypatch.chdir(new_repo / "src")
    listed = json.loads(invoke_sk("ls", "--json").stdout)
    assert [m["id"] for m in listed] == [meta["id"]]
    assert meta["id"] in invoke_sk("ls").stdout.decode()

    # Another repository (its own remote and root commit) does not list it.
    other = tmp / "other"
    _repo(other, "https://github.com/acme/other.git")
    monkeypatch.chdir(other)
    assert json.loads(invoke_sk("ls", "--json").stdout) == []

    # Nor does a repository of the same remote whose root commit differs (re-created history).
    fork = tmp / "fork"
    _repo(fork, "https://github.com/Acme/web")
    monkeypatch.chdir(fork)
    assert json.loads(invoke_sk("ls", "--json").stdout) == []


def test_search_in_the_moved_repository_finds_the_older_session(
    home: Paths, moved: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    meta, new_repo, tmp = moved["meta"], moved["new_repo"], moved["tmp"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path) and isinstance(tmp, Path)
    monkeypatch.chdir(new_repo / "src")
    hits = json.loads(invoke_sk("search", "apples", "--json").stdout)
    assert hits and {h["session_id"] for h in hits} == {meta["id"]}

    # A repository of the same remote but another root commit does not search it.
    fork = tmp / "fork"
    _repo(fork, "https://github.com/Acme/web")
    monkeypatch.chdir(fork)
    result = invoke_sk("search", "apples", "--json")
    assert result.returncode == 0 and json.loads(result.stdout) == []


def test_the_picker_in_the_moved_repository_offers_the_older_session(home: Paths, moved: dict[str, object]) -> None:
    pytest.importorskip("textual")
    from shellkeep.tui.rows import Choice
    from tests.unit.test_browse import _pick

    meta, new_repo, tmp = moved["meta"], moved["new_repo"], moved["tmp"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path) and isinstance(tmp, Path)
    from tests.factory import make_session

    # The moved repository has a session of its own (older): without the former path's, the
    # picker would open on it (not on every project's, as for a project without sessions).
    own = make_session(home, new_repo, 1, events=[(2.0, "o", "own\r\n")])  # longer than a second: listed
    assert _pick(home, new_repo / "src", ["enter"]) == Choice("resume", str(meta["id"]))
    assert _pick(home, new_repo / "src", ["down", "enter"]) == Choice("resume", own.id)


def test_a_remote_spelt_in_another_case_is_the_same_github_repository(
    home: Paths, moved: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    meta, new_repo = moved["meta"], moved["new_repo"]
    assert isinstance(meta, dict) and isinstance(new_repo, Path)
    _git(new_repo, "remote", "set-url", "origin", "https://GitHub.com/acme/WEB.git")  # recorded as git@github.com:Acme/web.git
    monkeypatch.chdir(new_repo)
    assert [m["id"] for m in json.loads(invoke_sk("ls", "--json").stdout)] == [meta["id"]]
