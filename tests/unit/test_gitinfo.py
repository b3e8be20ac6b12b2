"""Tests for shellkeep/gitinfo.py: the git top-level of a directory, without running git."""

from __future__ import annotations

from pathlib import Path

from shellkeep.gitinfo import git_root


def test_git_root_is_the_nearest_folder_holding_dot_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    worktree = repo / "vendor" / "lib"  # a linked work tree or submodule: .git is a file
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../../.git/worktrees/lib\n")
    assert git_root(repo / "vendor") == repo
    assert git_root(worktree / "src") == worktree
    assert git_root(repo) == repo


def test_git_root_outside_a_work_tree_is_none(tmp_path: Path) -> None:
    folder = tmp_path / "plain" / "sub"
    folder.mkdir(parents=True)
    assert git_root(folder) is None
