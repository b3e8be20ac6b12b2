"""Take, compare and put back snapshots of a git work tree without touching the user's git state.

A snapshot is a commit object of the whole working tree: tracked files as they are on disk
and untracked files that are not ignored. It is built in a temporary index
(``GIT_INDEX_FILE`` naming a file in a temporary folder: a copy of the user's index for its
stat cache, else ``git read-tree HEAD``; then ``git add -A``, ``git write-tree``,
``git commit-tree``), so the user's index, branches, stash and files are never written; a
ref under ``refs/shellkeep/`` keeps it from ``git gc``. Every function runs git and blocks
until it is done.

A ``SnapshotSeries`` takes the snapshots of one running session: its temporary index lives
as long as the series, so each snapshot after the first hashes only the files changed since
the one before (git's stat cache; its untracked cache spares reading unchanged folders), and a
work tree unchanged since (same tree, same HEAD) makes no new commit: when ``git add -A``
leaves the index file as it was, not even ``write-tree`` runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from shellkeep.errors import ShellkeepError

__all__ = ["GitFailed", "Snapshot", "SnapshotSeries", "changed_paths", "diff_text", "drop_refs", "keep_ref", "restore", "take_snapshot", "work_tree"]

_IDENTITY = {
    "GIT_AUTHOR_NAME": "shellkeep",
    "GIT_AUTHOR_EMAIL": "shellkeep@localhost",
    "GIT_COMMITTER_NAME": "shellkeep",
    "GIT_COMMITTER_EMAIL": "shellkeep@localhost",
}
_TIMEOUT_S = 300.0


class GitFailed(ShellkeepError):
    """A git command needed for a snapshot failed; the message holds git's first line."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The git state at one moment: ``head`` (None on an unborn branch), ``branch`` (None when
    detached) and ``commit``, the snapshot commit of the working tree (40 hex digits)."""

    head: str | None
    branch: str | None
    commit: str


def work_tree(cwd: Path) -> Path | None:
    """Return the top-level of the git work tree ``cwd`` is in, or None (not in one, no git)."""
    try:
        out = _git(cwd, "rev-parse", "--show-toplevel", check=False)
    except GitFailed:
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    return Path(out.stdout.strip())


def take_snapshot(root: Path, message: str) -> Snapshot:
    """Snapshot the work tree at ``root`` as a commit object (no ref; see ``keep_ref``).

    The commit's parent is HEAD when there is one. Raises GitFailed.
    """
    head = _rev(root, "HEAD")
    branch_out = _git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    branch = branch_out.stdout.strip() or None if branch_out.returncode == 0 else None
    with _temp_index(root, head) as env:
        _git(root, "add", "-A", "--", ".", env=env)
        tree = _git(root, "write-tree", env=env).stdout.strip()
    parents = ["-p", head] if head else []
    commit = _git(root, "commit-tree", "--no-gpg-sign", *parents, "-m", message, tree, env=_IDENTITY).stdout.strip()
    return Snapshot(head=head, branch=branch, commit=commit)


class SnapshotSeries:
    """Take snapshots of the work tree at ``root`` one after another, reusing one index.

    The index is a file in a temporary folder made on the first ``take`` (seeded from the
    user's index for its stat cache, else from HEAD) and removed by ``close``; a series
    killed with its process leaves that folder in the temporary directory. Not thread-safe:
    one thread takes the snapshots.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder: str | None = None
        self._last: Snapshot | None = None
        self._last_tree: str | None = None
        self._index_signature: tuple[int, ...] | None = None

    def take(self, message: str) -> tuple[Snapshot, bool]:
        """Snapshot the work tree; return it and whether it is new.

        Not new: the tree and HEAD are those of the previous snapshot of the series, whose
        commit is returned again (no commit is made). Raises GitFailed.
        """
        head = _rev(self.root, "HEAD")
        index = self._index(head)
        env = {"GIT_INDEX_FILE": index, **_UNTRACKED_CACHE}
        _git(self.root, "add", "-A", "--", ".", env=env)
        if self._last is not None and head == self._last.head and _signature(index) == self._index_signature:
            return self._last, False  # git add left the index as write-tree did: the same tree
        tree = _git(self.root, "write-tree", env=env).stdout.strip()
        self._index_signature = _signature(index)  # write-tree may store its cache-tree in it
        if self._last is not None and tree == self._last_tree and head == self._last.head:
            return self._last, False
        branch_out = _git(self.root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
        branch = branch_out.stdout.strip() or None if branch_out.returncode == 0 else None
        parents = ["-p", head] if head else []
        commit = _git(self.root, "commit-tree", "--no-gpg-sign", *parents, "-m", message, tree, env=_IDENTITY).stdout.strip()
        self._last, self._last_tree = Snapshot(head=head, branch=branch, commit=commit), tree
        return self._last, True

    def close(self) -> None:
        """Remove the series' index; never raises; safe to repeat."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def _index(self, head: str | None) -> str:
        if self._folder is not None:
            return os.path.join(self._folder, "index")
        self._folder = tempfile.mkdtemp(prefix="shellkeep-series-")
        index = os.path.join(self._folder, "index")
        if head is not None:
            _seed_index(self.root, head, index)
        return index


def keep_ref(root: Path, ref: str, commit: str) -> None:
    """Point ``ref`` (``refs/shellkeep/...``) at ``commit`` so git gc keeps it; raises GitFailed."""
    _git(root, "update-ref", ref, commit)


def drop_refs(root: Path, refs: Sequence[str]) -> bool:
    """Delete ``refs`` (a session's ``refs/shellkeep/...``) in one git call; return whether
    they went (git deletes all or none). Never raises."""
    try:
        commands = "".join(f"delete {ref}\n" for ref in dict.fromkeys(refs))  # once each: checkpoints may share one
        return _git(root, "update-ref", "--stdin", check=False, stdin=commands).returncode == 0
    except GitFailed:
        return False


def diff_text(root: Path, from_commit: str, to_commit: str) -> str:
    """Return ``git diff`` between two snapshots as text (a patch, no colour); raises GitFailed."""
    return _git(root, "diff", "--no-color", "--no-ext-diff", from_commit, to_commit).stdout


def changed_paths(root: Path, from_commit: str, to_commit: str) -> list[tuple[str, str]]:
    """Return ``(status, path)`` for each file that differs: ``A`` only in ``to_commit``,
    ``D`` only in ``from_commit``, ``M``/``T`` changed. Paths are relative to ``root``."""
    out = _git(root, "diff", "--name-status", "--no-renames", "-z", from_commit, to_commit).stdout
    words = out.split("\0")
    return [(words[i][:1], words[i + 1]) for i in range(0, len(words) - 1, 2)]


def restore(root: Path, commit: str, changes: Sequence[tuple[str, str]]) -> None:
    """Make the files of ``changes`` (from ``changed_paths(root, commit, now)``) as in ``commit``.

    The files changed or removed since are written back from ``commit`` through a temporary
    index first; then the files added since are removed (and folders they leave empty),
    except those the restored ignore rules ignore: a file the ``.gitignore`` of ``commit`` ignores was no part of that
    checkpoint, so it stays (an undo of a restore that dropped a ``.gitignore`` would else
    delete the files it ignored). The user's index, HEAD and branches are left as they are.
    Raises GitFailed, OSError.
    """
    back = [path for status, path in changes if status != "A"]
    added = [path for status, path in changes if status == "A"]
    if back:
        with _temp_index(root, None) as env:
            _git(root, "read-tree", commit, env=env)
            _git(root, "checkout-index", "-f", "-z", "--stdin", env=env, stdin="\0".join(back) + "\0")
    if not added:
        return
    ignored = _git(root, "check-ignore", "--no-index", "-z", "--stdin", check=False, stdin="\0".join(added) + "\0")
    kept = set(ignored.stdout.split("\0")) if ignored.returncode == 0 else set()
    for path in added:
        target = root / path
        if path not in kept and (target.is_symlink() or target.is_file()):
            target.unlink()
            _remove_empty_parents(root, target.parent)


def _remove_empty_parents(root: Path, folder: Path) -> None:
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


@contextmanager
def _temp_index(root: Path, head: str | None) -> Iterator[dict[str, str]]:
    """Yield the env of a temporary index: a copy of the user's (its stat cache spares
    re-reading unchanged files), else HEAD's tree when ``head`` is given, else empty."""
    folder = tempfile.mkdtemp(prefix="shellkeep-index-")
    index = os.path.join(folder, "index")
    env = {"GIT_INDEX_FILE": index}
    try:
        if head is not None:
            _seed_index(root, head, index)
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_UNTRACKED_CACHE = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.untrackedCache", "GIT_CONFIG_VALUE_0": "true"}
"""git's untracked cache, kept in the series' index: the next ``add -A`` reads again only the
folders whose mtime changed (git 2.31 reads config from these variables; older ones ignore them)."""


def _signature(index: str) -> tuple[int, ...] | None:
    """Return what changes when git writes the file ``index`` (it writes a new file and renames it)."""
    try:
        st = os.stat(index)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _seed_index(root: Path, head: str, index: str) -> None:
    """Write a starting index at ``index``: a copy of the user's, else HEAD's tree."""
    user_index = _git(root, "rev-parse", "--git-path", "index").stdout.strip()
    try:
        shutil.copyfile(os.path.join(root, user_index), index)
    except OSError:
        _git(root, "read-tree", head, env={"GIT_INDEX_FILE": index})


def _rev(root: Path, name: str) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", f"{name}^{{commit}}", check=False)
    return out.stdout.strip() or None if out.returncode == 0 else None


def _git(
    root: Path, *args: str, env: Mapping[str, str] | None = None, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE")}
    full_env.update(env or {})
    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            errors="surrogateescape",
            env=full_env,
            input=stdin,
            timeout=_TIMEOUT_S,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitFailed(f"cannot run git: {exc}; check that git is installed") from exc
    if check and out.returncode != 0:
        first = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[0]
        raise GitFailed(f"git {args[0]} failed in {root}: {first}")
    return out
