"""Fixtures every test gets: a private shellkeep home and config, and a project folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.store.paths import Paths


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Paths:
    """Point ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG`` into ``tmp_path``; cd into a project.

    Clears ``SHELLKEEP_SESSION`` so tests run the same inside a recorded shell.
    """
    data = tmp_path / "home"
    config = tmp_path / "config" / "config.toml"
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("SHELLKEEP_HOME", str(data))
    monkeypatch.setenv("SHELLKEEP_CONFIG", str(config))
    for var in ("SHELLKEEP_SESSION", "SHELLKEEP_SESSION_DIR", "SHELLKEEP_PROJECT", "SHELLKEEP_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(project)
    return Paths(home=data, config_file=config)
