"""Shared helpers of the agent adapter tests: fixture folders, the reference samples, installing transcripts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import AGENT_SAMPLES, needs_shared

DATA = Path(__file__).resolve().parents[2] / "data" / "agents"
"""tests/data/agents: small transcripts written for these tests (cwd ``/home/bob/work/calc``)."""

FIXTURE_CWD = "/home/bob/work/calc"
"""The cwd the fixtures record."""


requires_reference = needs_shared(AGENT_SAMPLES)
"""Marks a test that reads the shared reference samples (left out when they are absent)."""


def reference(*parts: str) -> Path:
    """Return a path inside the shared reference samples folder (only under ``requires_reference``)."""
    return AGENT_SAMPLES.joinpath(*parts)


def install(source: Path, target: Path, replace: Mapping[str, str] | None = None) -> Path:
    """Copy a fixture file to ``target`` (parents made), replacing text on the way; return ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if replace:
        text = source.read_text(encoding="utf-8")
        for old, new in replace.items():
            text = text.replace(old, new)
        target.write_text(text, encoding="utf-8")
    else:
        shutil.copyfile(source, target)
    return target


def set_mtime(path: Path, moment: datetime) -> None:
    """Set a file's modification time to an aware datetime."""
    stamp = moment.timestamp()
    os.utime(path, (stamp, stamp))


def utc(text: str) -> datetime:
    """Return ``2026-03-14T07:30:00`` as an aware UTC datetime."""
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    """Return an empty home folder for the agent's files (the env mapping's HOME)."""
    home = tmp_path / "user-home"
    home.mkdir()
    return home


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """Return the directory the agent runs in (symlinks resolved, as agents record it)."""
    path = tmp_path / "work" / "calc"
    path.mkdir(parents=True)
    return path.resolve()
