"""Tests for shellkeep/git/info.py: the git top-level, origin remote and root commit of a work tree."""

from __future__ import annotations

from pathlib import Path

from shellkeep.git.info import git_root


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


import subprocess

import pytest

from shellkeep.git.identity import GitIdentity, root_commit
from shellkeep.git.info import normalise_remote, origin_remote


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:Acme/web.git", "github.com/Acme/web"),
        ("https://github.com/Acme/web", "github.com/Acme/web"),
        ("https://user:token@GitHub.com/Acme/web.git/", "github.com/Acme/web"),
        ("ssh://git@github.com:22/Acme/web.git", "github.com/Acme/web"),
        ("/srv/git/web.git", "/srv/git/web"),
        ("file:///srv/git/web.git", "/srv/git/web"),
    ],
    ids=["scp-like", "https", "https-user-host-case", "ssh-port", "path", "file-url"],
)
def test_normalise_remote(url: str, expected: str) -> None:
    assert normalise_remote(url) == expected


def _git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_origin_remote_and_root_commit_of_a_real_repository_and_its_worktree(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    assert origin_remote(repo) is None and root_commit(repo) is None  # no remote, no commit yet
    _git(repo, "remote", "add", "upstream", "https://example.com/up/web.git")
    assert origin_remote(repo) == "example.com/up/web"  # the only remote
    _git(repo, "remote", "add", "origin", "git@github.com:Acme/web.git")
    _git(repo, "config", "remote.origin.pushurl", "git@github.com:Acme/push.git")
    assert origin_remote(repo) == "github.com/Acme/web"
    _git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    first = _git(repo, "rev-parse", "HEAD")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    assert root_commit(repo) == first
    # A linked worktree (its .git is a file; the config is in the common directory).
    _git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert origin_remote(tmp_path / "wt") == "github.com/Acme/web"
    assert root_commit(tmp_path / "wt") == first


@pytest.mark.parametrize(
    ("mine", "theirs", "same"),
    [
        (GitIdentity("github.com/a/web", "c1"), GitIdentity("github.com/a/web", "c1"), True),
        (GitIdentity("github.com/a/web", "c1"), GitIdentity("github.com/a/web", None), True),
        (GitIdentity(None, "c1"), GitIdentity(None, "c1"), True),
        (GitIdentity("github.com/a/web", "c1"), GitIdentity("github.com/fork/web", "c1"), False),
        (GitIdentity("github.com/a/web", "c1"), GitIdentity("github.com/a/web", "c2"), False),
        (GitIdentity("github.com/a/web", None), GitIdentity(None, "c1"), False),
        (GitIdentity("github.com/Acme/Web", "c1"), GitIdentity("github.com/acme/web", "c1"), True),
        (GitIdentity("gitlab.com/Acme/Web", None), GitIdentity("gitlab.com/acme/web", None), True),
        (GitIdentity("bitbucket.org/ACME/web", "c1"), GitIdentity("bitbucket.org/acme/web", None), True),
        (GitIdentity("github.com/Acme/Web", "c1"), GitIdentity("github.com/acme/web", "c2"), False),
        (GitIdentity("git.example.com/Acme/web", None), GitIdentity("git.example.com/acme/web", None), False),
        (GitIdentity("/srv/git/Web", None), GitIdentity("/srv/git/web", None), False),
    ],
    ids=["both", "root-unknown", "no-remote", "fork", "history-recreated", "nothing-shared", "github-case",
         "gitlab-case", "bitbucket-case", "github-case-history-recreated", "self-hosted-case-counts", "path-case-counts"],  # fmt: skip
)
def test_identities_match(mine: GitIdentity, theirs: GitIdentity, same: bool) -> None:
    assert mine.matches(theirs) is same and theirs.matches(mine) is same
