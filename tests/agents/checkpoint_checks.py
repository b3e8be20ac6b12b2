"""Find the checkpoints a real agent's session takes of a git project while it runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from shellkeep.store.checkpoints import Checkpoint, read_checkpoints
from shellkeep.store.paths import Paths
from tests.helpers import session_folders

from .screen_driver import ScreenDriver


def git_project(folder: Path) -> list[str]:
    """Make *folder* a git repository (branch ``main``, one empty commit); return the git command for it."""
    git = ["git", "-C", str(folder), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    return git


def session_folder(driver: ScreenDriver, home: Paths, wait_s: float) -> Path:
    """Return the only session's folder once it exists (polls up to ``wait_s``)."""
    driver.wait_until(lambda: len(session_folders(home)) == 1, wait_s, "the session folder")
    return session_folders(home)[0].parent


def exchange_checkpoint(driver: ScreenDriver, folder: Path, exchange: int, wait_s: float) -> Checkpoint:
    """Return the automatic checkpoint of ``exchange`` (0-based: 0 is the start) once taken, with its snapshot."""

    def found() -> Checkpoint | None:
        return next((c for c in read_checkpoints(folder) if c.auto and c.exchange == exchange), None)

    driver.wait_until(found, wait_s, f"the checkpoint of exchange {exchange}")
    checkpoint = found()
    assert checkpoint is not None and checkpoint.has_snapshot
    return checkpoint
