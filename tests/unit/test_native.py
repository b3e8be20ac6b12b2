"""Tests for shellkeep/app/native.py: a transcript with NUL bytes over records in its middle.

A block lost in the middle of a JSONL transcript (a crash of the file system leaves NUL bytes
over records, the file's size kept) makes the agent's own resume drop every exchange after it,
saying nothing. The check before launching notices it: shellkeep's copy is put back when it
holds more, else the caller re-injects. Real files and shellkeep's real copy store; the real
agents are driven in tests/agents/test_resume_fallback.py (``nul-block``).
"""

from __future__ import annotations

import json
from pathlib import Path

from shellkeep.app.context import open_context
from shellkeep.app.native import check_transcript
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from shellkeep.vault.access import Vault
from shellkeep.vault.copies import store_copy

SID = "3f2a9c1e-0b7d-4e2f-9a61-5c8d7e6f1a2b"
LINES = [
    (json.dumps({"type": "user" if i % 2 == 0 else "assistant", "sessionId": SID, "uuid": f"u{i}", "message": {"content": f"m{i}"}}) + "\n").encode()
    for i in range(8)
]


def _session(tmp_path: Path) -> tuple[Vault, SessionMeta, Path]:
    data = tmp_path / "data"
    ctx = open_context(paths=Paths(data, tmp_path / "config.toml"), cwd=tmp_path, env={"SHELLKEEP_HOME": str(data)})
    folder = data / "projects" / "p-0000" / "20261203-101500-000aa"
    folder.mkdir(parents=True)
    transcript = tmp_path / ".claude" / "projects" / "p" / f"{SID}.jsonl"
    transcript.parent.mkdir(parents=True)
    meta = SessionMeta(
        id=folder.name, project="p-0000", project_root=str(tmp_path), cwd=str(tmp_path), command=["claude"], agent="claude",
        started_at="2026-12-03T10:15:00.000Z", status="finished", host="desk", cast=str(folder / "session.cast"),
        agent_session_id=SID, agent_transcript=str(transcript),
    )  # fmt: skip
    return ctx.vault, meta, transcript


def _damaged() -> bytes:
    whole = b"".join(LINES)
    start = len(b"".join(LINES[:3]))
    end = start + len(LINES[3]) + 10  # a record and the start of the next one
    return whole[:start] + bytes(end - start) + whole[end:]


def test_nul_bytes_over_records_are_noticed_and_the_copy_put_back(tmp_path: Path) -> None:
    vault, meta, transcript = _session(tmp_path)
    store_copy(vault, meta.folder, transcript.name, LINES)
    transcript.write_bytes(_damaged())
    check = check_transcript(meta, vault)
    assert check.usable and check.note is not None
    [backup] = transcript.parent.glob(f"{transcript.name}.shellkeep-backup-*")
    assert check.note == f"the agent's transcript {transcript} was damaged; kept it as {backup.name} and restored shellkeep's copy"
    assert backup.read_bytes() == _damaged() and transcript.read_bytes() == b"".join(LINES)
    assert check_transcript(meta, vault).note is None  # whole now: nothing more to say


def test_a_damaged_transcript_whose_copy_holds_no_more_is_re_injected(tmp_path: Path) -> None:
    vault, meta, transcript = _session(tmp_path)
    transcript.write_bytes(_damaged())
    check = check_transcript(meta, vault)
    assert not check.usable and check.note == f"the agent's transcript {transcript} is damaged and shellkeep holds no copy of it"
    store_copy(vault, meta.folder, transcript.name, [line for line in _damaged().splitlines(keepends=True)])  # copied after the damage
    check = check_transcript(meta, vault)
    assert not check.usable and "is damaged (NUL bytes over records) and shellkeep's copy holds no more" in str(check.note)
    assert transcript.read_bytes() == _damaged() and not list(transcript.parent.glob("*.shellkeep-backup-*"))


_PEAK_PROBE = """
import resource, sys
from pathlib import Path
from shellkeep.app.native import check_transcript
from shellkeep.vault.copies import store_copy
from tests.unit.test_native import LINES, _session
vault, meta, transcript = _session(Path(sys.argv[1]))
store_copy(vault, meta.folder, transcript.name, LINES)
with transcript.open("wb") as fh:  # a hole of 100 MB of NUL bytes after the third record, sparse
    fh.write(b"".join(LINES[:3]))
    fh.seek(100 << 20, 1)
    fh.write(b"".join(LINES[3:]))
size = transcript.stat().st_size
check = check_transcript(meta, vault)
assert transcript.read_bytes() == b"".join(LINES), "not restored"
# VmHWM: this process image's own peak; ru_maxrss keeps, across exec, the peak of the process
# that started it (a pytest worker grown past 150 MB after two thousand tests)
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")] if sys.platform == "linux" else []
print(int(check.usable), size, int(hwm[0]) * 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def test_a_100_mb_block_of_nul_bytes_is_checked_in_under_one_and_a_half_times_its_size(tmp_path: Path) -> None:
    """The check reads a damaged transcript in pieces: a 100 MB hole is never held (the peak RSS
    of the process, in a child, stays under 1.5 times the transcript's size)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _PEAK_PROBE, str(tmp_path)], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    usable, size, peak = (int(word) for word in done.stdout.split())
    assert usable == 1 and size == (100 << 20) + len(b"".join(LINES))  # restored from the copy, the damaged file kept aside
    assert peak < 1.5 * size, f"peak RSS {peak >> 20} MB for a {size >> 20} MB transcript"
