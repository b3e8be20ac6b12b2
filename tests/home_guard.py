"""Keep the test suite out of the user's home: a temporary HOME and XDG folders, and a check.

``isolate()`` runs once at the start of a pytest process, before any test: it keeps the real
home in ``SHELLKEEP_TEST_REAL_HOME`` and points ``HOME`` and the ``XDG_*`` folders at a new
temporary folder, process-wide, so the pytest-xdist workers and every program a test starts
inherit them. A worker (or a pytest started by a test) finds the variable set and keeps what
its parent chose.

``snapshot()`` records (path, kind, size, mtime) of the real home's top level and of the
dotfiles programs the suite starts would write (shell histories, agent folders, asciinema,
chromium, ``.cache`` but ``shellkeep-ci``); ``changes()`` compares two snapshots.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

REAL_HOME_VAR = "SHELLKEEP_TEST_REAL_HOME"
"""The environment variable holding the user's real home while the suite runs."""

_BASE_VAR = "SHELLKEEP_TEST_HOME_BASE"
"""The temporary folder holding the suite's HOME and XDG folders (removed by its creator)."""

XDG_FOLDERS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CACHE_HOME": ".cache",
    "XDG_STATE_HOME": ".local/state",
    "XDG_RUNTIME_DIR": "runtime",
}
"""Each XDG variable the suite sets, by its folder inside the temporary HOME."""

WATCHED = (
    ".bash_history",
    ".python_history",
    ".zsh_history",
    ".node_repl_history",
    ".lesshst",
    ".viminfo",
    ".local/share/fish",
    ".config/fish",
    ".gemini",
    ".claude",
    ".claude.json",
    ".codex",
    ".qwen",
    ".copilot",
    ".aider",
    ".config/asciinema",
    ".local/share/asciinema",
    ".config/chromium",
    ".config/shellkeep",
    ".local/share/shellkeep",
    ".local/share/opencode/storage",
    ".pki",
)
"""Dotfiles and folders under the real home that programs the suite starts would write."""

_CACHE_KEPT = "shellkeep-ci"
"""The one folder of the real ``~/.cache`` the suite reads (pinned agent CLIs): not watched."""

Entry = tuple[str, int, int]
"""A path's kind (``d`` folder, ``f`` file, ``l`` link, ``o`` other), size and mtime in ns."""


def real_home() -> Path:
    """Return the user's real home: the one kept before the suite switched HOME, else HOME."""
    return Path(os.environ.get(REAL_HOME_VAR) or Path.home())


def isolate() -> Path | None:
    """Point HOME and the XDG folders at a new temporary folder, process-wide; keep the real one.

    Returns the temporary folder to remove at the end, or None when an outer process already
    isolated this one (a pytest-xdist worker inherits the controller's folders).
    """
    if os.environ.get(REAL_HOME_VAR):
        return None
    os.environ[REAL_HOME_VAR] = str(Path.home())
    base = Path(tempfile.mkdtemp(prefix="shellkeep-test-home-"))
    home = base / "home"
    home.mkdir(mode=0o700)
    for var, relative in XDG_FOLDERS.items():
        folder = home / relative
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        os.environ[var] = str(folder)
    os.environ["HOME"] = str(home)
    os.environ[_BASE_VAR] = str(base)
    return base


def remove(base: Path) -> None:
    """Remove the temporary folder ``isolate()`` made, folders a test left read-only included."""
    for folder, _dirs, _files in os.walk(base):
        try:
            os.chmod(folder, stat.S_IRWXU)
        except OSError:
            pass
    shutil.rmtree(base, ignore_errors=True)


def _entry(path: Path) -> Entry | None:
    """Return the (kind, size, mtime) of ``path`` without following a link, or None when absent."""
    try:
        info = path.lstat()
    except OSError:
        return None
    kind = "d" if stat.S_ISDIR(info.st_mode) else "f" if stat.S_ISREG(info.st_mode) else "l" if stat.S_ISLNK(info.st_mode) else "o"
    return kind, info.st_size if kind == "f" else 0, info.st_mtime_ns if kind in "fl" else 0


def _walk(root: Path, relative: str, into: dict[str, Entry]) -> None:
    """Record ``root/relative`` and, for a folder, everything under it (links not followed)."""
    top = _entry(root / relative)
    if top is None:
        return
    into[relative] = top
    if top[0] != "d":
        return
    for folder, dirs, files in os.walk(root / relative):
        for name in dirs + files:
            path = Path(folder) / name
            found = _entry(path)
            if found is not None:
                into[str(path.relative_to(root))] = found


def snapshot(home: Path) -> dict[str, Entry]:
    """Return the watched state of ``home``: its top level, the ``WATCHED`` paths, ``.cache``.

    Top-level folders and ``.cache``'s children count by name and kind only (their mtime
    changes whenever anything inside them does); files by size and mtime; the ``WATCHED``
    paths entirely.
    """
    found: dict[str, Entry] = {}
    try:
        top = sorted(home.iterdir())
    except OSError:
        top = []
    for path in top:
        entry = _entry(path)
        if entry is not None:
            found[path.name] = entry
    cache = home / ".cache"
    if cache.is_dir() and not cache.is_symlink():
        for path in sorted(cache.iterdir()):
            entry = _entry(path)
            if entry is not None and path.name != _CACHE_KEPT:
                found[f".cache/{path.name}"] = entry
    for relative in WATCHED:
        _walk(home, relative, found)
    return found


def changes(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """Return one line per path that appeared, went or changed between two snapshots, sorted."""
    lines: list[str] = []
    for path in sorted(before.keys() | after.keys()):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        if old is None:
            lines.append(f"created {path}")
        elif new is None:
            lines.append(f"removed {path}")
        else:
            lines.append(f"changed {path}")
    return lines
