"""Retention limits, gc planning and protection, pins, automatic gc and the free-space check."""

from __future__ import annotations

import dataclasses
import os
from datetime import timedelta
from pathlib import Path

from shellkeep.app.context import open_context
from shellkeep.app.gc import maybe_auto_gc, project_policies
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.retention import (
    RetentionPolicy,
    collect_garbage,
    folder_size,
    is_pinned,
    plan_gc,
    set_pinned,
)
from shellkeep.store.session import SessionMeta, list_sessions, write_meta
from shellkeep.store.space import low_disk_warning, release_space, reserve_space

from tests.factory import BASE, make_session

NOW = BASE + timedelta(days=100)


def sessions(home: Paths, root: Path, count: int, *, days_apart: float = 1.0, size: int = 100) -> list[SessionMeta]:
    """Make ``count`` finished sessions, one every ``days_apart`` days from BASE, of about ``size`` bytes."""
    return [
        make_session(home, root, n, started=BASE + timedelta(days=n * days_apart), events=[(0.5, "o", "x" * size)])
        for n in range(count)
    ]


def test_max_age_days_removes_only_old_sessions(home: Paths, tmp_path: Path) -> None:
    made = sessions(home, tmp_path / "p", 10, days_apart=10)  # days 0, 10, ..., 90
    entries, kept, protected = plan_gc(made, RetentionPolicy(max_age_days=35), now=NOW)
    assert [e.session_id for e in entries] == [m.id for m in made[:7]]  # 100-60 = 40 > 35
    assert {e.reason for e in entries} == {"max_age_days"} and kept == 3 and protected == 0
    assert entries[0].age_days > entries[-1].age_days > 35


def test_max_sessions_keeps_the_newest(home: Paths, tmp_path: Path) -> None:
    made = sessions(home, tmp_path / "p", 6)
    entries, kept, _ = plan_gc(made, RetentionPolicy(max_sessions=4), now=NOW)
    assert [e.session_id for e in entries] == [made[0].id, made[1].id]
    assert kept == 4 and {e.reason for e in entries} == {"max_sessions"}


def test_max_total_size_keeps_the_newest_under_the_limit(home: Paths, tmp_path: Path) -> None:
    made = sessions(home, tmp_path / "p", 5, size=4000)
    each = folder_size(made[0].folder)
    entries, kept, _ = plan_gc(made, RetentionPolicy(max_total_bytes=each * 3 + 10), now=NOW)
    assert [e.session_id for e in entries] == [made[0].id, made[1].id]
    assert sum(e.size_bytes for e in entries) == 2 * each and kept == 3


def test_protected_sessions_are_never_planned(home: Paths, tmp_path: Path) -> None:
    root = tmp_path / "p"
    made = sessions(home, root, 6)
    running = dataclasses.replace(made[0], status="running", ended_at=None)
    interrupted = dataclasses.replace(made[1], status="interrupted")
    resumed_one = dataclasses.replace(made[2], status="interrupted")
    resumer = dataclasses.replace(made[5], parent=resumed_one.id)
    set_pinned(made[3], True)
    metas = [running, interrupted, resumed_one, made[3], made[4], resumer]
    entries, kept, protected = plan_gc(metas, RetentionPolicy(max_age_days=1), now=NOW)
    assert [e.session_id for e in entries] == [resumed_one.id, made[4].id, resumer.id]
    assert kept == 3 and protected == 3


def test_per_project_policies(home: Paths, tmp_path: Path) -> None:
    a = sessions(home, tmp_path / "a", 3)
    b = [make_session(home, tmp_path / "b", 10 + n, started=BASE + timedelta(days=n)) for n in range(3)]
    policies = {project_key(tmp_path / "a"): RetentionPolicy(max_sessions=1)}
    entries, kept, _ = plan_gc([*a, *b], RetentionPolicy(), project_policies=policies, now=NOW)
    assert [e.session_id for e in entries] == [a[0].id, a[1].id]
    assert kept == 4


def test_dry_run_removes_nothing_and_the_real_run_removes_the_same(home: Paths, tmp_path: Path) -> None:
    root = tmp_path / "p"
    made = sessions(home, root, 5)
    policy = RetentionPolicy(max_sessions=2)
    dry = collect_garbage(home, policy, dry_run=True, now=NOW)
    assert dry.dry_run and len(dry.removed) == 3
    assert len(list_sessions(home, root)) == 5
    real = collect_garbage(home, policy, now=NOW)
    assert [e.session_id for e in real.removed] == [e.session_id for e in dry.removed]
    assert real.freed_bytes == dry.freed_bytes > 0
    left = list_sessions(home, root)
    assert [m.id for m in left] == [made[4].id, made[3].id]
    assert not made[0].folder.exists()


def test_a_session_that_became_protected_meanwhile_stays(home: Paths, tmp_path: Path) -> None:
    made = sessions(home, tmp_path / "p", 3)
    entries, _, _ = plan_gc(made, RetentionPolicy(max_sessions=1), now=NOW)
    assert len(entries) == 2
    set_pinned(made[0], True)  # pinned after planning, before removal: re-read protects it
    write_meta(dataclasses.replace(made[1], status="running", host="elsewhere"))
    result = collect_garbage(home, RetentionPolicy(max_sessions=1), now=NOW)
    assert result.removed == ()
    assert all(m.folder.exists() for m in made)


def test_pin_and_unpin(home: Paths, tmp_path: Path) -> None:
    meta = sessions(home, tmp_path / "p", 1)[0]
    assert not is_pinned(meta)
    assert set_pinned(meta, True) and is_pinned(meta)
    assert not set_pinned(meta, True)
    assert set_pinned(meta, False) and not is_pinned(meta)
    assert not set_pinned(meta, False)


def test_auto_gc_runs_at_most_once_a_day(home: Paths, tmp_path: Path) -> None:
    sessions(home, tmp_path / "p", 4)
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("[retention]\nmax_sessions = 3\nauto_gc = false\n")
    assert maybe_auto_gc(open_context(paths=home)) is None
    home.config_file.write_text("[retention]\nmax_sessions = 3\nauto_gc = true\n")
    first = maybe_auto_gc(open_context(paths=home))
    assert first is not None and len(first.removed) == 1
    sessions(home, tmp_path / "q", 2)
    assert maybe_auto_gc(open_context(paths=home)) is None  # within a day
    later = maybe_auto_gc(open_context(paths=home), now_s=(home.home / "gc.stamp").stat().st_mtime + 86401)
    assert later is not None and len(later.removed) == 2


def test_low_disk_warning_is_one_line(tmp_path: Path) -> None:
    free_mb = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize // (1024 * 1024)
    assert low_disk_warning(tmp_path, 0) is None
    assert low_disk_warning(tmp_path, 1) is None or free_mb < 1
    message = low_disk_warning(tmp_path, free_mb + 1000)
    assert message is not None and "\n" not in message and "record.min_free_mb" in message


def test_reserve_and_release(tmp_path: Path) -> None:
    assert reserve_space(tmp_path, 8192)
    assert (tmp_path / ".reserve").stat().st_size == 8192
    release_space(tmp_path)
    release_space(tmp_path)
    assert not (tmp_path / ".reserve").exists()
