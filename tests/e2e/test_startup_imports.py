"""``shellkeep ls`` and ``shellkeep search`` as new processes import only what they use.

Help and completion load only the command asked for: ``shellkeep --help`` and the completion
of a command name none, ``shellkeep CMD --help`` CMD's own modules and no layer below cli.

Their start-up is most of their time over 10,000 sessions (bench/index_bench.py), so the
agents, the conversation code, the terminal emulator, redaction and the TUI stay out of it
while the index is up to date. Checked on a real process with ``python -X importtime``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shellkeep.cli.record import COMMANDS
from shellkeep.store.paths import Paths
from tests.helpers import run_sk, wait_for_background

NOT_NEEDED = (
    "pyte",
    "textual",
    "zstandard",
    "shellkeep.agents.adapter",
    "shellkeep.app.conversation",
    "shellkeep.app.checkpoints",
    "shellkeep.app.moves",
    "shellkeep.capture.redaction",
    "shellkeep.terminal.emulator",
    "shellkeep.terminal.replay",
    "shellkeep.terminal.tail",
    "shellkeep.terminal.transcript",
    "shellkeep.vault.exchanges",
    # Nor, for plain sessions, the key stores, the recording readers and the recovery of an
    # interrupted session; nor logging when nothing is logged (issue 11: under 200 ms).
    "logging",
    "secrets",  # with hmac and hashlib (OpenSSL): store.atomic names its temporary files with os.urandom
    "shellkeep.asciicast.reader",
    "shellkeep.asciicast.tail",
    "shellkeep.store.checkpoints",
    "shellkeep.store.notices",
    "shellkeep.vault.keys",
    "shellkeep.vault.recording",
    "shellkeep.vault.recovery",
)


def imported(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "shellkeep", *args],
        capture_output=True,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("args", [("ls",), ("search", "hello", "--json")], ids=["ls", "search"])
def test_listing_and_searching_import_only_what_they_use(home: Paths, args: tuple[str, ...]) -> None:
    assert run_sk("run", "--name", "first", "--", "echo", "hello there").returncode == 0
    wait_for_background(home)  # indexed and compressed: the index is up to date
    assert run_sk(*args).returncode == 0  # the first read may still catch up
    modules = imported(*args)
    assert "shellkeep.archive.index" in modules  # the measurement sees the command's own imports
    assert sorted(modules.intersection(NOT_NEEDED)) == []


_LIGHT = ("shellkeep.errors", "shellkeep.logs", "shellkeep.store", "shellkeep.git", "shellkeep.app.display")
"""What ``shellkeep --version`` loads already (the console script's error handling), and the
formatting of times the tables share (``app.display``, no imports of its own)."""


def _below_cli(modules: set[str]) -> list[str]:
    """Return the shellkeep modules of ``modules`` outside cli and ``_LIGHT`` (packages aside)."""
    packages = {"shellkeep.app", "shellkeep.agents"}  # their __init__ loads nothing
    return sorted(m for m in modules if m.startswith("shellkeep.") and m not in packages and not m.startswith(("shellkeep.cli", *_LIGHT)))


_LOADED = """
import atexit, sys
atexit.register(lambda: sys.stderr.write("\\n".join(["--modules--", *sys.modules])))
sys.argv = ["shellkeep", *sys.argv[1:]]
from shellkeep.cli.entry import entry
entry()
"""
"""Run the console script and, at exit, list every module loaded (importlib's included, which
``-X importtime`` leaves out: the group loads commands with ``importlib.import_module``)."""


def loaded(*args: str, env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return set(done.stderr.decode().rpartition("--modules--")[2].split())


def _commands(modules: set[str]) -> list[str]:
    """Return the command modules (``cli/ls.py``...) among ``modules``."""
    return sorted(m for m in modules if m in {target.partition(":")[0] for target in COMMANDS.values()})


def test_the_groups_help_and_completion_load_no_command() -> None:
    assert _commands(loaded("--help")) == []
    env = {"_SHELLKEEP_COMPLETE": "bash_complete", "COMP_WORDS": "shellkeep se", "COMP_CWORD": "1"}
    assert _commands(loaded(env=env)) == []


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=str)
def test_a_commands_help_loads_only_that_command(name: str) -> None:
    modules = loaded(name, "--help")
    own = COMMANDS[name].partition(":")[0]
    chained = {"browse": {"shellkeep.cli.replay", "shellkeep.cli.resume"}}
    assert _commands(modules) == sorted({own} | chained.get(name, set()))
    assert _below_cli(modules) == []
