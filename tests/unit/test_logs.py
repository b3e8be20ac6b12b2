"""``shellkeep.logs``: loggers that load ``logging`` on first use, at the level ``configure`` set."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROGRAM = """
import sys
from shellkeep import logs
logs.configure({verbose}, {quiet})
assert "logging" not in sys.modules, "configure alone imported logging"
log = logs.get_logger("shellkeep.example")
log.debug("a debug line")
log.info("an info line")
log.warning("a warning line")
log.error("an error line")
"""


@pytest.mark.parametrize(
    ("verbose", "quiet", "shown"),
    [
        pytest.param(0, False, ["warning", "error"], id="default"),
        pytest.param(1, False, ["info", "warning", "error"], id="-v"),
        pytest.param(2, False, ["debug", "info", "warning", "error"], id="-vv"),
        pytest.param(0, True, ["error"], id="-q"),
    ],
)
def test_the_configured_level_applies_to_the_first_logger_used_later(verbose: int, quiet: bool, shown: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM.format(verbose=verbose, quiet=quiet)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"shellkeep: a{'n' if w in ('info', 'error') else ''} {w} line" for w in shown]
