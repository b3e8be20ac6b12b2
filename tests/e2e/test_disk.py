"""A full disk, for real: a 256 KiB tmpfs as the data directory.

On ENOSPC the recording stops cleanly (the cast reads up to its last whole event), the
child keeps running and keeps its exit status, the user sees one line, and meta.json says
the recording is incomplete (``recording_error``) - thanks to the space held at start.
Needs root to mount a tmpfs; skipped with the reason otherwise. The low-space warning at
start is checked on the same tmpfs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.recordings import read_events
from shellkeep.store.paths import Paths
from tests.e2e.test_secrets import wait_for_housekeeping
from tests.helpers import SK, PtyHarness, invoke_sk, run_sk, wait_for_background

pytestmark = pytest.mark.timeout(120)

CHILD = """
import sys, time
for i in range(6000):
    sys.stdout.write(f"line {i:05d} " + "x" * 100 + "\\n")
    if i % 200 == 199:  # in bursts, so the recording has whole events before the disk fills
        sys.stdout.flush()
        time.sleep(0.005)
sys.stdout.flush()
time.sleep(0.3)
print("CHILD-DONE")
sys.exit(7)
"""


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Mount a 256 KiB tmpfs and make it the data directory."""
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {result.stderr.strip() or result.returncode}")
    monkeypatch.setenv("SHELLKEEP_HOME", str(mount_point / "home"))
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def test_a_full_disk_stops_the_recording_cleanly(small_disk: Path, home: Paths) -> None:
    harness = PtyHarness.start([*SK, "run", "--", sys.executable, "-c", CHILD])
    assert harness.finish(60) == 7  # the child's own status
    out = bytes(harness.output)
    assert b"CHILD-DONE" in out and out.count(b"line ") == 6000  # the screen got everything
    assert out.count(b"shellkeep: recording suspended: disk full; the program keeps running") == 1
    assert b"Traceback" not in out

    wait_for_housekeeping(Paths(small_disk / "home", home.config_file))
    (meta_path,) = (small_disk / "home").glob("projects/*/*/meta.json")
    meta = json.loads(meta_path.read_text())
    assert meta["status"] == "finished" and meta["exit_code"] == 7
    assert meta["recording_error"] == "disk full"
    assert meta["output_bytes"] > 0
    assert not (meta_path.parent / ".reserve").exists()
    events = list(read_events(meta_path.parent / "session.cast"))  # valid up to its last whole event
    text = "".join(e.data for e in events if e.code == "o")
    assert text.startswith("line 00000 ") and "CHILD-DONE" not in text


def test_low_free_space_at_start_is_one_warning(small_disk: Path, home: Paths) -> None:
    result = subprocess.run([*SK, "run", "--", "true"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 0
    lines = result.stderr.decode().splitlines()
    warnings = [line for line in lines if "record.min_free_mb" in line]
    assert len(warnings) == 1 and warnings[0].startswith("shellkeep: only ") and "shellkeep gc" in warnings[0]
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("[record]\nmin_free_mb = 0\n")  # the check turned off
    quiet = subprocess.run([*SK, "run", "--", "true"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert quiet.returncode == 0 and b"min_free_mb" not in quiet.stderr


def _fill(disk: Path) -> None:
    """Write zeros to ``disk`` until it has no space left."""
    with open(disk / "filler", "wb", buffering=0) as fh:
        try:
            while fh.write(b"\0" * 4096):
                pass
        except OSError:
            pass


def test_a_full_disk_is_named_and_never_sent_to_reindex(small_disk: Path, home: Paths) -> None:
    recorded = subprocess.run([*SK, "run", "--", "echo", "seen-before"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert recorded.returncode == 0
    data = Paths(small_disk / "home", home.config_file)
    wait_for_housekeeping(data)
    # An index built while there was room: once none is left, SQLite says "disk I/O error"
    # (its shared memory cannot grow); every command names the full disk all the same.
    assert run_sk("ls").returncode == 0 and data.index.is_file()
    wait_for_background(data)
    Path(f"{data.index}-shm").unlink(missing_ok=True)  # as after a reboot: remade on the next open, safe once all are closed
    _fill(small_disk)
    for args in (["doctor", "--json"], ["ls"], ["search", "seen-before"], ["reindex"]):
        # ls warns through logging (on stderr in its own process); doctor opens the index afresh
        result = (run_sk if args[0] in ("ls", "doctor") else invoke_sk)(*args)
        out = result.stdout.decode() + result.stderr.decode()
        assert "the disk is full" in out and "free some space ('shellkeep gc' removes old sessions)" in out, (args, out)
        assert "reindex" not in out.replace("'shellkeep gc'", "") and "damaged" not in out and "Traceback" not in out, (args, out)
    (small_disk / "filler").unlink()
    for index in data.index.parent.glob(data.index.name + "*"):
        index.unlink()  # the index is made again by the next command: on a full disk it cannot be
    _fill(small_disk)
    for args in (["ls", "--all-sessions"], ["search", "seen-before"]):
        result = invoke_sk(*args)
        err = result.stderr.decode()
        assert "the disk is full; free some space ('shellkeep gc' removes old sessions)" in err, (args, err)
        assert "reindex" not in err and "Traceback" not in err, (args, err)
    # A session recorded on the full disk: one line per failing output, no traceback.
    again = subprocess.run([*SK, "run", "--", "echo", "on-a-full-disk"], capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert again.returncode == 0 and b"on-a-full-disk" in again.stdout
    assert b"Traceback" not in again.stderr and b"reindex" not in again.stderr, again.stderr
