"""Find the git work tree a directory is in, from the file system alone (git is not run)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["git_root"]


def git_root(cwd: Path) -> Path | None:
    """Return the nearest of ``cwd`` and its parents that holds ``.git`` (folder or file), or None.

    ``cwd`` is taken as given: resolve it first for the top-level with symlinks resolved.
    A directory that cannot be examined may raise OSError.
    """
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None
