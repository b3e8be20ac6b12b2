"""Listing the indexed sessions: filters, metadata, the git projects of a repository."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.archive import listing
from shellkeep.git.identity import GitIdentity
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import read_meta, write_meta
from tests.unit.archive.helpers import ids, query
from tests.factory import BASE, make_session



@pytest.fixture
def listed(home: Paths, project: Path) -> dict[str, str]:
    made = {
        "old-claude": make_session(home, project, 1, agent="claude", name="fix-login", started=BASE),
        "new-claude": make_session(home, project, 2, agent="claude", name="refactor", started=BASE + timedelta(days=3)),
        "codex": make_session(home, project, 3, agent="codex", status="killed", started=BASE + timedelta(days=5)),
        "other": make_session(home, project.parent / "other", 4, agent="claude", started=BASE + timedelta(days=6)),
    }
    return {k: m.id for k, m in made.items()}


@pytest.mark.parametrize(
    ("filters", "expect"),
    [
        ({}, ["codex", "new-claude", "old-claude"]),
        ({"agents": ("claude",)}, ["new-claude", "old-claude"]),
        ({"agents": ("claude", "codex")}, ["codex", "new-claude", "old-claude"]),
        ({"statuses": ("killed",)}, ["codex"]),
        ({"since": BASE + timedelta(days=1)}, ["codex", "new-claude"]),
        ({"until": BASE + timedelta(days=4)}, ["new-claude", "old-claude"]),
        ({"name": "LOG"}, ["old-claude"]),
        ({"name": "re*"}, ["new-claude"]),
        ({"limit": 2}, ["codex", "new-claude"]),
        ({"project": None}, ["other", "codex", "new-claude", "old-claude"]),
    ],
    ids=["none", "agent", "agents", "status", "since", "until", "name", "glob", "limit", "all"],
)
def test_list_filters(home: Paths, project: Path, listed: dict[str, str], filters: dict[str, object], expect: list[str]) -> None:
    q = listing.SessionQuery(**{"project": project_key(project), **filters})  # type: ignore[arg-type]
    assert ids(listing.list_indexed(home, q)) == [listed[k] for k in expect]
    assert ids(listing.find_sessions(home, q)) == [listed[k] for k in expect]


def test_listing_gives_the_same_metadata_as_the_folders(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, name="same")
    listed = listing.list_indexed(home, query(project))
    assert [s.meta() for s in listed] == [read_meta(meta.folder)]
    assert listed[0].to_json() == read_meta(meta.folder).to_json()

def test_git_projects_finds_a_project_by_remote_or_root_commit(home: Paths, project: Path, tmp_path: Path) -> None:
    import dataclasses

    other = tmp_path / "other"
    identities = {project: {"remote": "github.com/a/web", "root_commit": "c1"}, other: {"remote": None, "root_commit": "c9"}}
    for n, (root, identity) in enumerate(identities.items(), 1):
        meta = make_session(home, root, n)
        write_meta(dataclasses.replace(meta, git_identity=identity))
    found = listing.git_projects(home, GitIdentity("github.com/a/web", "c1"))
    assert [(p.project, p.project_root) for p in found] == [(project_key(project), str(project))]
    assert [p.project for p in listing.git_projects(home, GitIdentity(None, "c9"))] == [project_key(other)]
    assert listing.git_projects(home, GitIdentity("github.com/fork/web", "c1")) == []  # a fork: same root, other remote
