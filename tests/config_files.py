"""Config files for tests: a project folder, writing a file with its parents, listing a tree."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Return a project folder (``tmp_path/project``), made."""
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    return root


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, making its folders; return ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def tree(root: Path) -> list[str]:
    """Return every path below ``root``, relative to it, sorted."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))
