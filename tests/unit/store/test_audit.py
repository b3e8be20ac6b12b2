"""The audit log: appends chain by hash; verify finds edits, removals and a cut end."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from shellkeep.errors import DataError
from shellkeep.store import audit
from shellkeep.store.paths import Paths


def fill(home: Paths, n: int) -> None:
    for i in range(n):
        audit.record(home, "replay", f"session-{i}", project="web-1234", detail=f"at={i}")


def test_entries_chain_and_verify(home: Paths) -> None:
    fill(home, 5)
    entries = audit.read_entries(home)
    assert [e.seq for e in entries] == [1, 2, 3, 4, 5]
    assert entries[0].prev == audit.GENESIS
    assert all(b.prev == a.hash for a, b in zip(entries, entries[1:]))
    assert entries[2].command == "replay" and entries[2].session == "session-2" and entries[2].user
    assert audit.verify(home) == audit.VerifyResult(5, entries[-1].hash)
    assert oct(home.audit_log.stat().st_mode & 0o777) == "0o600"


def test_many_reads_go_in_one_append_chained_as_single_ones(home: Paths) -> None:
    fill(home, 2)
    added = audit.record_many(home, "search", [("a", "web-1234", "hit"), ("b", "api-5678", "hit"), ("c", None, None)])
    entries = audit.read_entries(home)
    assert entries[2:] == added
    assert [(e.seq, e.session, e.project, e.detail) for e in added] == [(3, "a", "web-1234", "hit"), (4, "b", "api-5678", "hit"), (5, "c", None, None)]
    assert all(b.prev == a.hash for a, b in zip(entries, entries[1:]))
    assert audit.verify(home) == audit.VerifyResult(5, added[-1].hash)  # the head names the last one
    assert audit.record_many(home, "search", []) == [] and len(audit.read_entries(home)) == 5


def test_an_empty_log_verifies(home: Paths) -> None:
    assert audit.verify(home).entries == 0


def _lines(home: Paths) -> list[bytes]:
    return home.audit_log.read_bytes().splitlines(keepends=True)


def test_an_edited_line_is_found_by_its_line_number(home: Paths) -> None:
    fill(home, 5)
    lines = _lines(home)
    obj = json.loads(lines[2])
    obj["user"] = "mallory"
    lines[2] = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    home.audit_log.write_bytes(b"".join(lines))
    with pytest.raises(DataError, match="line 3 was edited") as err:
        audit.verify(home)
    assert err.value.exit_code == 3


def test_an_edit_with_a_recomputed_hash_breaks_the_next_line(home: Paths) -> None:
    fill(home, 5)
    lines = _lines(home)
    obj = json.loads(lines[1])
    obj["session"] = "another"
    obj["hash"] = audit._digest(obj)
    lines[1] = audit._canonical(obj) + b"\n"
    home.audit_log.write_bytes(b"".join(lines))
    with pytest.raises(DataError, match="line 3 does not follow"):
        audit.verify(home)


@pytest.mark.parametrize(("removed", "reported"), [(0, "line 1 does not follow"), (2, "line 3 does not follow")], ids=["first", "middle"])
def test_a_removed_line_is_found(home: Paths, removed: int, reported: str) -> None:
    fill(home, 5)
    lines = _lines(home)
    del lines[removed]
    home.audit_log.write_bytes(b"".join(lines))
    with pytest.raises(DataError, match=reported):
        audit.verify(home)


def test_lines_cut_from_the_end_are_found(home: Paths) -> None:
    fill(home, 5)
    home.audit_log.write_bytes(b"".join(_lines(home)[:3]))
    with pytest.raises(DataError, match="ends at entry 3 but 5 were written"):
        audit.verify(home)


def test_garbage_is_reported_with_its_line(home: Paths) -> None:
    fill(home, 2)
    with open(home.audit_log, "ab") as fh:
        fh.write(b"not json\n")
    with pytest.raises(DataError, match="line 3 is not a valid entry"):
        audit.verify(home)


def test_concurrent_appends_from_many_processes_keep_one_chain(home: Paths) -> None:
    script = textwrap.dedent(
        """
        from shellkeep.store.audit import record
        from shellkeep.store.paths import resolve_paths
        paths = resolve_paths()
        for i in range(10):
            record(paths, "cat", f"s{i}")
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert audit.verify(home).entries == 60
