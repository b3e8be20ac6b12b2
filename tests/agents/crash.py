"""Crash a shellkeep session under test: find it running, then kill -9 shellkeep and the agent together."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, process_gone, session_folders

from .screen_driver import ScreenDriver


def running_meta(driver: ScreenDriver, home: Paths, wait_s: float) -> tuple[Path, dict[str, Any]]:
    """Return the only session's folder and its ``meta.json`` once it names the agent's pid."""
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    driver.wait_until(lambda: meta_of(folder).get("child_pid"), wait_s, "child_pid")
    return folder, meta_of(folder)


def kill_shellkeep_and_agent(driver: ScreenDriver, meta: dict[str, Any], wait_s: float, *, group: bool) -> None:
    """Kill shellkeep, then the agent (its whole process group if ``group``), with SIGKILL.

    Returns once shellkeep's pty closed with 128 + SIGKILL and both processes are gone.
    """
    os.kill(meta["pid"], signal.SIGKILL)
    if group:
        os.killpg(os.getpgid(meta["child_pid"]), signal.SIGKILL)
    else:
        os.kill(meta["child_pid"], signal.SIGKILL)
    assert driver.wait_exit(wait_s) == 128 + signal.SIGKILL
    driver.wait_until(lambda: process_gone(meta["child_pid"]) and process_gone(meta["pid"]), wait_s, "both gone")
