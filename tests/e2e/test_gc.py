"""``shellkeep gc``, ``pin`` and ``unpin`` as a user runs them: dry run against real run, and
the sessions that must survive (running, interrupted and not yet resumed, pinned)."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta, list_sessions, write_meta
from tests.helpers import invoke_sk
from tests.factory import BASE, make_session

pytestmark = pytest.mark.timeout(120)


def set_config(home: Paths, text: str) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(text)


def population(home: Paths, project: Path) -> dict[str, SessionMeta]:
    """Ten old sessions (days 0-9 from BASE, long ago), some of them protected, one new one."""
    made = {f"old{n}": make_session(home, project, n, started=BASE + timedelta(days=n), events=[(0.5, "o", "x" * 5000)]) for n in range(10)}
    made["running"] = make_session(home, project, 20, started=BASE, status="running", host="another-host")
    made["interrupted"] = make_session(home, project, 21, started=BASE, status="interrupted")
    made["resumed"] = make_session(home, project, 22, started=BASE, status="interrupted")
    resumer = make_session(home, project, 23, started=BASE + timedelta(days=1))
    made["resumer"] = dataclasses.replace(resumer, parent=made["resumed"].id)
    write_meta(made["resumer"])
    made["pinned"] = make_session(home, project, 24, started=BASE)
    made["fresh"] = make_session(home, project, 25, started=BASE + timedelta(days=100000))  # far future: never old
    return made


def test_dry_run_then_real_run_and_the_protected_survive(home: Paths, tmp_path: Path) -> None:
    made = population(home, tmp_path / "project")
    pinned = invoke_sk("pin", made["pinned"].id)
    assert pinned.returncode == 0 and pinned.stdout.decode().strip() == f"pinned {made['pinned'].id}"
    set_config(home, "[retention]\nmax_age_days = 30\n")
    expected = sorted([*(made[f"old{n}"].id for n in range(10)), made["resumed"].id, made["resumer"].id])

    dry = invoke_sk("gc", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    out = dry.stdout.decode()
    assert out.count("would remove 2") == len(expected)  # ids start with the year
    assert f"would remove {len(expected)} sessions, would free" in out
    assert "kept 4, 3 protected" in out  # running, interrupted, pinned; the fresh one is simply young
    assert len(list_sessions(home, None)) == 16  # nothing removed

    dry_json = json.loads(invoke_sk("gc", "--dry-run", "--json").stdout)
    assert sorted(e["session_id"] for e in dry_json["removed"]) == expected
    assert set(dry_json["removed"][0]) == {"session_id", "project", "name", "started_at", "age_days", "size_bytes", "reason"}

    real = invoke_sk("gc", "--json")
    assert real.returncode == 0, real.stderr
    result = json.loads(real.stdout)
    assert result["dry_run"] is False
    assert sorted(e["session_id"] for e in result["removed"]) == expected
    assert result["freed_bytes"] == dry_json["freed_bytes"] > 50000
    left = {m.id for m in list_sessions(home, None)}
    assert left == {made[k].id for k in ("running", "interrupted", "pinned", "fresh")}
    for key in ("old0", "resumed", "resumer"):
        assert not made[key].folder.exists()


def test_unpin_lets_gc_remove_it(home: Paths, tmp_path: Path) -> None:
    meta = make_session(home, tmp_path / "project", 1, started=BASE)
    set_config(home, "[retention]\nmax_age_days = 1\n")
    assert invoke_sk("pin", "--last").returncode == 0
    assert invoke_sk("pin", meta.id).stdout.decode().strip() == f"{meta.id} was already pinned"
    assert json.loads(invoke_sk("gc", "--json").stdout)["removed"] == []
    assert invoke_sk("unpin", meta.id).returncode == 0
    assert [e["session_id"] for e in json.loads(invoke_sk("gc", "--json").stdout)["removed"]] == [meta.id]


def test_max_sessions_and_project_scope(home: Paths, tmp_path: Path) -> None:
    here = [make_session(home, tmp_path / "project", n, started=BASE + timedelta(days=n)) for n in range(4)]
    there = [make_session(home, tmp_path / "other", 10 + n, started=BASE + timedelta(days=n)) for n in range(4)]
    set_config(home, "[retention]\nmax_sessions = 2\n")
    scoped = json.loads(invoke_sk("gc", "--project", "--dry-run", "--json").stdout)
    assert [e["session_id"] for e in scoped["removed"]] == [here[0].id, here[1].id]
    everywhere = json.loads(invoke_sk("gc", "--dry-run", "--json").stdout)
    gone = {e["session_id"] for e in everywhere["removed"]}
    assert gone == {m.id for m in [*here, *there]} - {here[3].id, there[3].id}  # the newest two overall stay


def test_without_limits_nothing_goes(home: Paths, tmp_path: Path) -> None:
    make_session(home, tmp_path / "project", 1, started=BASE)
    result = invoke_sk("gc")
    assert result.returncode == 0
    assert "no retention limits are set" in result.stderr.decode()
    assert "removed 0 sessions" in result.stdout.decode()


def test_pin_an_unknown_session_is_exit_2(home: Paths) -> None:
    result = invoke_sk("pin", "nope")
    assert result.returncode == 2 and result.stderr.decode().count("\n") == 1


def test_a_project_file_adds_limits_for_its_own_sessions(home: Paths, tmp_path: Path) -> None:
    here = [make_session(home, tmp_path / "project", n, started=BASE + timedelta(days=n)) for n in range(3)]
    other_root = tmp_path / "other"
    other_root.mkdir(exist_ok=True)
    there = [make_session(home, other_root, 10 + n, started=BASE + timedelta(days=n)) for n in range(3)]
    (other_root / ".shellkeep.toml").write_text("[retention]\nmax_sessions = 1\n")
    result = invoke_sk("gc", "--json")
    assert result.returncode == 0, result.stderr
    removed = json.loads(result.stdout)["removed"]
    assert {e["session_id"] for e in removed} == {there[0].id, there[1].id}
    assert {e["reason"] for e in removed} == {"max_sessions"}
    left = {m.id for m in list_sessions(home, None)}
    assert left == {m.id for m in here} | {there[2].id}


def test_a_folder_an_earlier_version_compressed_in_place_reads_and_gc_renames_it(home: Paths, tmp_path: Path) -> None:
    """Before session.cast.zst, the upkeep compressed session.cast in place (meta.json naming
    session.cast); such a folder reads everywhere, and ``shellkeep gc`` renames it."""
    import io

    import zstandard

    from shellkeep.store.atomic import write_bytes_atomic
    from shellkeep.vault.seekable import compressed_frames

    meta = make_session(home, tmp_path / "project", 1, name="older", events=[(0.5, "o", "from-an-older-version\r\n"), (1.0, "m", "old-mark")])
    cast = Path(meta.cast)
    plain = cast.read_bytes()
    write_bytes_atomic(cast, compressed_frames(zstandard.ZstdCompressor(level=9, write_checksum=True), io.BytesIO(plain)))
    assert cast.read_bytes()[:4] == b"\x28\xb5\x2f\xfd" and json.loads((cast.parent / "meta.json").read_text())["cast"] == str(cast)

    def reads() -> None:
        assert invoke_sk("export", "older", "--format", "cast").stdout == plain
        assert b"from-an-older-version" in invoke_sk("export", "older", "--format", "txt").stdout
        assert b"from-an-older-version" in invoke_sk("cat", "older").stdout
        found = json.loads(invoke_sk("search", "older-version", "--json").stdout)
        assert [h["session_id"] for h in found] == [meta.id]

    reads()
    assert invoke_sk("gc", "--dry-run").returncode == 0
    assert cast.exists()  # a dry run changes nothing
    result = invoke_sk("gc")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in cast.parent.iterdir()) == ["meta.json", "session.cast.zst"]
    assert json.loads((cast.parent / "meta.json").read_text())["cast"] == str(cast.parent / "session.cast.zst")
    reads()  # the index still holds the old name: it is found under the new one
