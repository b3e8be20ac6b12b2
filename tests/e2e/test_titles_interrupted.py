"""A session's title (``meta.about``) is the same in ``ps`` while it runs, in ``ls`` and ``show``
once its recorder was killed (kill -9), before any resume: the first prompt typed into a
program without a transcript of its own (the generic adapter). With encryption on the title
is kept sealed (``about.txt``), never in ``meta.json``, and read through the key."""

from __future__ import annotations

import json
import os
import signal
import sys

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, meta_of, process_gone, session_folders, wait_until

ASK = "import sys\nwhile True:\n line = input('ask> ')\n print('answer: ' + str(len(line)) + ' letters', flush=True)"


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
def test_a_killed_recording_keeps_the_title_ps_showed(home: Paths, encrypted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if encrypted:
        pytest.importorskip("cryptography")
        monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")  # keys in the 0600 key file
        assert invoke_sk("key", "init").returncode == 0
        assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    h = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", ASK])
    h.expect(b"ask> ")
    h.write(b"count the apples\r")
    h.expect(b"answer: 16 letters")
    h.expect(b"ask> ", times=2)
    folder = wait_until(lambda: next(iter(session_folders(home)), None)).parent  # type: ignore[union-attr]
    # The typed line reaches the disk within the flush interval: later than the screen under load.
    wait_until(lambda: [s["title"] for s in json.loads(invoke_sk("ps", "--json").stdout)] == ["count the apples"], timeout_s=60)
    child = meta_of(folder)["child_pid"]
    os.kill(h.pid, signal.SIGKILL)
    h.finish()
    wait_until(lambda: process_gone(child))
    listed = json.loads(invoke_sk("ls", "--json").stdout)
    about = None if encrypted else "count the apples"
    assert [(s["status"], s.get("about")) for s in listed] == [("interrupted", about)]
    assert meta_of(folder).get("about") == about  # stored: the next list reads it from meta (or about.txt)
    assert (folder / "about.txt").is_file() == encrypted
    if encrypted:
        assert b"count the apples" not in (folder / "about.txt").read_bytes()  # sealed
    table = invoke_sk("ls").stdout.decode().splitlines()
    assert table[1].split("  ")[-1] == "count the apples"
    shown = invoke_sk("show", folder.name).stdout.decode()
    assert "\ntitle      count the apples\n" in shown and "\nabout " not in shown
