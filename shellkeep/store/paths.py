"""Own every location shellkeep reads or writes; the only module that calls platformdirs.

Data lives under ``platformdirs.user_data_dir("shellkeep")`` unless ``SHELLKEEP_HOME`` is
set; config under ``platformdirs.user_config_dir("shellkeep")/config.toml`` unless
``SHELLKEEP_CONFIG`` names a file. Directories are made 0700 and files 0600.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


@dataclass(frozen=True, slots=True)
class Paths:
    """The locations of one shellkeep installation.

    home: the data directory; every other data path is below it.
    config_file: the user's config.toml (may not exist).
    """

    home: Path
    config_file: Path

    @property
    def projects(self) -> Path:
        """Return the folder holding one folder per project."""
        return self.home / "projects"

    @property
    def logs(self) -> Path:
        """Return the folder of per-invocation debug logs."""
        return self.home / "logs"

    @property
    def index(self) -> Path:
        """Return the path of the derived SQLite index."""
        return self.home / "index.sqlite3"

    @property
    def audit_log(self) -> Path:
        """Return the path of the append-only audit log."""
        return self.home / "audit.jsonl"

    def project_dir(self, project_root: Path) -> Path:
        """Return the data folder of the project rooted at ``project_root``."""
        return self.projects / project_key(project_root)

    def session_dir(self, project_root: Path, session_id: str) -> Path:
        """Return the folder of one session."""
        return self.project_dir(project_root) / session_id


def resolve_paths(env: dict[str, str] | None = None) -> Paths:
    """Build the ``Paths`` from the environment (``SHELLKEEP_HOME``, ``SHELLKEEP_CONFIG``)."""
    env = dict(os.environ) if env is None else env
    home_s = env.get("SHELLKEEP_HOME")
    config_s = env.get("SHELLKEEP_CONFIG")
    if home_s:
        home = Path(home_s).expanduser().absolute()
    else:
        import platformdirs

        home = Path(platformdirs.user_data_dir("shellkeep"))
    if config_s:
        config_file = Path(config_s).expanduser().absolute()
    else:
        import platformdirs

        config_file = Path(platformdirs.user_config_dir("shellkeep")) / "config.toml"
    return Paths(home=home, config_file=config_file)


def ensure_dir(path: Path) -> Path:
    """Create ``path`` and its missing parents with mode 0700; return it.

    Raises OSError when it cannot be created.
    """
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass
    if not path.is_dir():
        raise NotADirectoryError(20, "not a directory", str(path))
    return path


def project_root_of(cwd: Path) -> Path:
    """Return the git top-level of ``cwd``, else ``cwd`` itself (absolute, symlinks resolved)."""
    cwd = cwd.resolve()
    probe = cwd
    while True:
        if (probe / ".git").exists():
            return probe
        if probe.parent == probe:
            return cwd
        probe = probe.parent


def project_key(project_root: Path) -> str:
    """Return the readable, unique folder name of a project: base name plus a short hash.

    ``/home/alice/src/web`` gives ``web-3f9c1a2b``.
    """
    root = str(project_root)
    digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    base = project_root.name or "root"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in base)
    return f"{safe}-{digest}"


def git_state(cwd: Path) -> dict[str, object] | None:
    """Return ``{"branch", "commit", "dirty"}`` of the git work tree at ``cwd``, or None.

    Blocks for the duration of two short ``git`` calls; never raises.
    """
    try:
        out = subprocess.run(
            ["git", "-C", str(cwd), "status", "--porcelain=v2", "--branch", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    branch: str | None = None
    commit: str | None = None
    dirty = False
    for line in out.stdout.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.split(" ", 2)[2]
            commit = None if oid == "(initial)" else oid
        elif line.startswith("# branch.head "):
            head = line.split(" ", 2)[2]
            branch = None if head == "(detached)" else head
        elif line and not line.startswith("#"):
            dirty = True
    return {"branch": branch, "commit": commit, "dirty": dirty}
