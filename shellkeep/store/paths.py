"""Own every location shellkeep reads or writes; the only module that calls platformdirs.

Data lives under ``platformdirs.user_data_dir("shellkeep")`` unless ``SHELLKEEP_HOME`` is
set; config under ``platformdirs.user_config_dir("shellkeep")/config.toml`` unless
``SHELLKEEP_CONFIG`` names a file. Directories are made 0700 and files 0600.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shellkeep.git.info import git_root

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

DIR_MODE = 0o700
FILE_MODE = 0o600
PROJECT_FILE_NAME = ".shellkeep.toml"
"""A project's own settings, at its root (read by ``config``)."""


@dataclass(frozen=True, slots=True)
class Paths:
    """The locations of one shellkeep installation.

    home: the data directory; every other data path is below it.
    config_file: the user's config.toml (may not exist).
    """

    home: Path
    config_file: Path

    def as_env(self) -> dict[str, str]:
        """Return the variables that make another shellkeep process use these paths, whatever
        decided them here (``SHELLKEEP_HOME``, ``XDG_DATA_HOME``...): ``SHELLKEEP_HOME`` and
        ``SHELLKEEP_CONFIG``, absolute."""
        return {"SHELLKEEP_HOME": str(self.home), "SHELLKEEP_CONFIG": str(self.config_file)}

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
    def index_mark(self) -> Path:
        """Return the empty file left once an index was built: without it, a missing index is a first build."""
        return self.home / "index.built"

    @property
    def copies(self) -> Path:
        """Return the content-addressed store of agent transcript copies (``store.chunks``)."""
        return self.home / "copies"

    @property
    def ask_runs(self) -> Path:
        """Return the folder of ``shellkeep ask``'s per-run files (an agent's one-call settings), private."""
        return self.home / "ask"

    @property
    def audit_log(self) -> Path:
        """Return the path of the append-only audit log."""
        return self.home / "audit.jsonl"

    @property
    def notices(self) -> Path:
        """Return the file the shell reads on entering a project (``store.notices``)."""
        return self.home / "notices.tsv"

    @property
    def notices_lock(self) -> Path:
        """Return the lock file taken while the notice file is rewritten."""
        return self.home / "notices.lock"

    @property
    def serve_token(self) -> Path:
        """Return the file holding the token of ``shellkeep serve`` (0600, reused across runs)."""
        return self.home / "serve.token"

    @property
    def shell_dir(self) -> Path:
        """Return the folder of the installed shell snippets (``init.bash``, ``init.zsh``, ``init.fish``)."""
        return self.home / "shell"

    @property
    def history_stamp(self) -> Path:
        """Return the file whose mtime is when the agents' histories were last imported by themselves."""
        return self.home / "history-import.stamp"

    @property
    def history_warned(self) -> Path:
        """Return the import's note of the damaged transcripts it warned about, and in which state (warned once a state)."""
        return self.home / "history-import-warned.json"

    @property
    def history_lock(self) -> Path:
        """Return the lock file held while the agents' histories are imported (one run at a time)."""
        return self.home / "history-import.lock"

    @property
    def machine_file(self) -> Path:
        """Return the file holding this machine's stable id for ``sync`` (``machine.json``)."""
        return self.home / "machine.json"

    @property
    def remotes(self) -> Path:
        """Return the folder of sessions pulled from other machines: ``remotes/<machine>/projects/...``."""
        return self.home / "remotes"

    def remote_paths(self, machine: str) -> Paths:
        """Return the layout of the sessions pulled from ``machine`` (its id): ``remotes/<machine>``
        as a home of its own, with ``projects/`` and a derived index of its own (``search --remote``)."""
        return Paths(self.remotes / machine, self.config_file)

    @property
    def otlp_queue(self) -> Path:
        """Return the folder of the sessions the OTLP export could not send yet, one file each (``app.otlp``)."""
        return self.home / "otlp-queue"

    @property
    def env_fingerprint_key(self) -> Path:
        """Return the key of the recorded environment's secret fingerprints (32 random bytes, 0600; ``vault.env_secrets``)."""
        return self.home / "env-fingerprint.key"

    @property
    def sync_state(self) -> Path:
        """Return the folder of what ``sync push`` knows it sent, one file per remote URL."""
        return self.home / "sync"

    def last_good_config(self, project_root: Path | None = None) -> Path:
        """Return where the last good copy of a config file is kept (0600, ``config.fallback``):
        the user's config.toml's with no ``project_root``, else that project's ``.shellkeep.toml``'s."""
        if project_root is None:
            return self.home / "config.last-good.toml"
        return self.home / "config.last-good" / f"{project_key(project_root)}.toml"

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


SHELLS = ("bash", "zsh", "fish")
"""The shells ``shellkeep init`` knows."""


def rc_file(shell: str, env: dict[str, str] | None = None) -> Path:
    """Return the rc file an interactive ``shell`` reads: ~/.bashrc, ~/.zshrc or config.fish.

    Honours ``ZDOTDIR`` (zsh) and ``XDG_CONFIG_HOME`` (fish); ``HOME`` from ``env``.
    Raises ValueError for a shell not in ``SHELLS``.
    """
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if shell == "bash":
        return home / ".bashrc"
    if shell == "zsh":
        return Path(env.get("ZDOTDIR") or home) / ".zshrc"
    if shell == "fish":
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "fish" / "config.fish"
    raise ValueError(f"unknown shell {shell!r}")


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
    return git_root(cwd) or cwd


def project_key(project_root: Path) -> str:
    """Return the readable, unique folder name of a project: base name plus a short hash.

    ``/home/alice/src/web`` gives ``web-3f9c1a2b``.
    """
    root = str(project_root)
    digest = _sha256()(root.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    base = project_root.name or "root"
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in base)
    return f"{safe}-{digest}"


def _sha256() -> Any:
    """Return a sha256 constructor, CPython's built-in one when there is one.

    ``hashlib`` loads OpenSSL (about 2 ms at every start-up); the digests are the same.
    """
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256


def git_state(cwd: Path) -> dict[str, object] | None:
    """Return ``{"branch", "commit", "dirty"}`` of the git work tree at ``cwd``, or None.

    Outside a work tree (no ``.git`` in ``cwd`` or above it, and no ``GIT_DIR``) this is
    None at once, without running git. Blocks for one short ``git status``; never raises.
    """
    if "GIT_DIR" not in os.environ:
        try:
            if git_root(cwd.resolve()) is None:
                return None
        except OSError:
            pass  # let git decide
    import subprocess

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
