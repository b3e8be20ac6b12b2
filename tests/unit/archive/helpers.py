"""Helpers the archive tests share."""

from __future__ import annotations

from pathlib import Path

from shellkeep.archive import listing
from shellkeep.store.paths import project_key


def ids(metas: list) -> list[str]:  # type: ignore[type-arg]
    return [m.id for m in metas]


def query(project: Path, **kw: object) -> listing.SessionQuery:
    return listing.SessionQuery(project=project_key(project), **kw)  # type: ignore[arg-type]
