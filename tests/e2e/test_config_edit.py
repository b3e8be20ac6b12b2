"""``shellkeep config edit`` on a terminal: an invalid file saved reopens the editor when asked."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness

pytestmark = pytest.mark.timeout(120)

EDITOR = r'''
import pathlib, sys
f = pathlib.Path(sys.argv[2])  # click adds the file last
runs = pathlib.Path(sys.argv[1])
n = len(runs.read_text()) if runs.exists() else 0
runs.write_text("x" * (n + 1))
text = f.read_text()
if n == 0:
    f.write_text(text.replace("# exchanges = 5", "exchange = 1"))   # a typo: an unknown key
else:
    f.write_text(text.replace("exchange = 1", "exchanges = 2"))     # fixed
'''


def _editor(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    runs = tmp_path / "runs"
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} {shlex.quote(str(runs))}", runs


def _start(tmp_path: Path) -> tuple[PtyHarness, Path]:
    editor, runs = _editor(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "VISUAL"}
    return PtyHarness.start([*SK, "config", "edit"], env={**env, "EDITOR": editor}), runs


def test_edit_again_reopens_the_editor_until_the_file_is_valid(home: Paths, tmp_path: Path) -> None:
    term, runs = _start(tmp_path)
    term.expect(b"unknown key 'resume.exchange'")
    term.expect(b"edit again? [Y/n]")
    term.write(b"\r")  # the default: yes
    assert term.finish() == 0
    assert runs.read_text() == "xx"
    assert f"ok: {home.config_file}".encode() in term.output
    assert "exchanges = 2" in home.config_file.read_text()


def test_edit_again_answered_no_keeps_the_file_and_exits_2(home: Paths, tmp_path: Path) -> None:
    term, runs = _start(tmp_path)
    term.expect(b"edit again? [Y/n]")
    term.write(b"n\r")
    assert term.finish() == 2
    assert runs.read_text() == "x"
    assert term.output.count(b"unknown key 'resume.exchange'") == 1  # said once
    assert "exchange = 1" in home.config_file.read_text()  # what the user wrote is kept
