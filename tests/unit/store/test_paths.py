"""Project roots and git state (store/paths.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from shellkeep.store.paths import git_state, project_root_of


@pytest.fixture
def git_spy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a ``git`` first on PATH that notes each call, then runs the real git."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    if not real:
        pytest.skip("git is not installed")
    bin_dir = tmp_path / "spy-bin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls"
    spy = bin_dir / "git"
    spy.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    spy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GIT_DIR", raising=False)
    return log


def test_outside_a_work_tree_git_is_not_run(tmp_path: Path, git_spy: Path) -> None:
    folder = tmp_path / "plain" / "sub"
    folder.mkdir(parents=True)
    assert git_state(folder) is None
    assert project_root_of(folder) == folder.resolve()
    assert not git_spy.exists()


def test_inside_a_work_tree_git_gives_branch_commit_and_dirty(tmp_path: Path, git_spy: Path) -> None:
    repo = tmp_path / "repo"
    sub = repo / "src"
    sub.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    (sub / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "one"], check=True, env=env)
    state = git_state(sub)
    assert state is not None and state["branch"] == "main" and state["dirty"] is False
    assert isinstance(state["commit"], str) and len(state["commit"]) == 40
    (sub / "a.txt").write_text("b\n")
    assert git_state(sub)["dirty"] is True  # type: ignore[index]
    assert project_root_of(sub) == repo.resolve()
    assert "status" in git_spy.read_text()


def test_project_key_is_the_base_name_and_the_sha256_of_the_path() -> None:
    import hashlib

    from shellkeep.store.paths import project_key

    root = Path("/home/alice/src/my web")
    assert project_key(root) == "my-web-" + hashlib.sha256(b"/home/alice/src/my web").hexdigest()[:8]
