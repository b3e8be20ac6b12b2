"""Crash a shellkeep session under test: kill -9 of shellkeep and the agent it runs, together."""

from __future__ import annotations

import os
import signal
from typing import Any

from tests.helpers import process_gone

from .screen_driver import ScreenDriver


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
