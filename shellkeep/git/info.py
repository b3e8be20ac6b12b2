"""Find the git work tree a directory is in and its origin remote, from the file system alone.

git is not run and nothing is built at import, so that recording start-up stays cheap
(``store.paths`` uses this before the child runs, ``app.session_meta`` just after). The repository's
identity (remote and root commit) is ``shellkeep.git.identity``'s.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["git_root", "normalise_remote", "origin_remote"]


def git_root(cwd: Path) -> Path | None:
    """Return the nearest of ``cwd`` and its parents that holds ``.git`` (folder or file), or None.

    ``cwd`` is taken as given: resolve it first for the top-level with symlinks resolved.
    A directory that cannot be examined may raise OSError.
    """
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _git_dir(root: Path) -> Path | None:
    """Return the git directory shared by the work tree at ``root`` (its ``commondir`` for a worktree)."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        git_dir = dot_git
    else:
        try:
            text = dot_git.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if not text.startswith("gitdir:"):
            return None
        git_dir = (root / text[len("gitdir:") :].strip()).resolve()
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return git_dir
    return (git_dir / common).resolve()


_SECTION = r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]'  # patterns, compiled (and cached) by re at first use
_ANY_SECTION = r"^\s*\["
_URL = r"(?i)^\s*url\s*=\s*(.*?)\s*$"


def origin_remote(root: Path) -> str | None:
    """Return the normalised URL of the ``origin`` remote of the work tree at ``root``, or None.

    Reads the repository's ``config`` file (git-config(1) syntax; the first ``url`` of
    ``[remote "origin"]``, else of the only remote there is); git is not run. Never raises.
    """
    git_dir = _git_dir(root)
    if git_dir is None:
        return None
    try:
        lines = (git_dir / "config").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    urls: dict[str, str] = {}
    remote: str | None = None
    for line in lines:
        section = re.match(_SECTION, line)
        if section:
            remote = section.group(1)
            continue
        if re.match(_ANY_SECTION, line):
            remote = None
            continue
        url = re.match(_URL, line)
        if remote is not None and url and remote not in urls:
            urls[remote] = url.group(1).strip('"')
    chosen = urls.get("origin") or (next(iter(urls.values())) if len(urls) == 1 else None)
    return normalise_remote(chosen) if chosen else None


def normalise_remote(url: str) -> str:
    """Return ``url`` as ``host/path``: the same repository by https, ssh or scp-like syntax.

    ``git@github.com:Owner/repo.git``, ``https://user@github.com/Owner/repo`` and
    ``ssh://git@github.com:22/Owner/repo.git/`` all give ``github.com/Owner/repo`` (the host
    lower-cased, the user, port, ``.git`` and trailing slashes dropped). A local path
    stays a path, made absolute-looking (``file://`` removed).
    """
    from urllib.parse import urlsplit

    text = url.strip()
    if "://" in text:
        parts = urlsplit(text)
        host, path = (parts.hostname or "").lower(), parts.path
    elif re.match(r"^[^/]+:", text) and not os.path.isabs(text):  # scp-like: [user@]host:path
        host, _, path = text.partition(":")
        host = host.rpartition("@")[2].lower()
    else:
        host, path = "", text
    path = re.sub(r"(?:\.git)?/*$", "", path.rstrip("/"))
    return f"{host}/{path.lstrip('/')}" if host else "/" + path.lstrip("/")
