"""``shellkeep ls`` and ``shellkeep search`` as new processes import only what they use.

Their start-up is most of their time over 10,000 sessions (bench/index_bench.py), so the
agents, the conversation code, the terminal emulator, redaction and the TUI stay out of it
while the index is up to date. Checked on a real process with ``python -X importtime``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
