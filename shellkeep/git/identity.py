"""Tell which git repository a work tree holds, wherever it is on disk.

A repository's identity is its origin remote, normalised (``github.com/owner/repo``,
``git.info.origin_remote``), and its root commit (``root_commit``, which runs git): both stay
the same when the work tree is moved or renamed. Not imported before a recorded child runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["CASE_INSENSITIVE_HOSTS", "GitIdentity", "remote_key", "root_commit"]

CASE_INSENSITIVE_HOSTS = ("github.com", "gitlab.com", "bitbucket.org")
"""Hosts whose repository paths ignore case (``GitHub.com/Owner/Repo`` is ``github.com/owner/repo``).
``archive.migrations`` holds a copy of this list in its version 3 script."""


def remote_key(remote: str) -> str:
    """Return a normalised remote (``git.info.normalise_remote``) as remotes are compared.

    Lower-cased on a host of ``CASE_INSENSITIVE_HOSTS``; any other remote as it is (a
    self-hosted server or a path may tell case apart).
    """
    host = remote.partition("/")[0].lower()
    return remote.lower() if host in CASE_INSENSITIVE_HOSTS else remote


@dataclass(frozen=True, slots=True)
class GitIdentity:
    """Which repository a work tree holds, wherever it is on disk.

    remote: the origin remote's URL, normalised by ``normalise_remote`` (None: no origin).
    root_commit: the 40-hex root commit of HEAD's first-parent history (None: not known yet,
    or no commit).
    """

    remote: str | None
    root_commit: str | None = None

    def to_json(self) -> dict[str, str | None]:
        """Return ``{"remote", "root_commit"}`` (meta.json's ``git_identity``)."""
        return {"remote": self.remote, "root_commit": self.root_commit}

    @classmethod
    def from_json(cls, data: object) -> GitIdentity | None:
        """Build from what ``to_json`` returned; None for anything else or an empty identity."""
        if not isinstance(data, dict):
            return None
        remote, root = data.get("remote"), data.get("root_commit")
        identity = cls(remote if isinstance(remote, str) and remote else None, root if isinstance(root, str) and root else None)
        return identity if identity.remote or identity.root_commit else None

    def matches(self, other: GitIdentity) -> bool:
        """Return whether ``other`` is the same repository.

        The root commits must be equal where both are known, and so must the remotes; at
        least one of the two must be known on both sides (a fork shares its root commit
        but not its remote; a remote-less clone is known by its root commit alone). Remotes
        are compared by ``remote_key`` (case ignored on GitHub, GitLab and Bitbucket).
        """
        compared = False
        mine_remote = remote_key(self.remote) if self.remote else None
        their_remote = remote_key(other.remote) if other.remote else None
        for mine, theirs in ((self.root_commit, other.root_commit), (mine_remote, their_remote)):
            if mine and theirs:
                if mine != theirs:
                    return False
                compared = True
        return compared


def root_commit(root: Path, *, timeout_s: float = 10.0) -> str | None:
    """Return the root commit of HEAD's first-parent history in the work tree at ``root``, or None.

    Runs ``git rev-list --first-parent --max-parents=0 HEAD`` (blocks for it: milliseconds
    with a commit-graph, longer in a large repository without one). None outside a work
    tree, without commits, or when git is missing or slow. Never raises.
    """
    import subprocess

    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-list", "--first-parent", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commits = out.stdout.split()
    return commits[-1] if out.returncode == 0 and commits else None
