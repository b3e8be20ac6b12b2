"""Screens of a recording over time (shellkeep/terminal/replay.py: screen_at, iter_screens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recordings import iter_screens, screen_at
from tests.unit.terminal.helpers import SIZE, write_cast


def test_iter_screens_gives_the_screen_at_each_time(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "s.cast", SIZE, [("o", "one "), ("o", "two "), ("o", "three")])
    texts = [snap.to_text() for snap in iter_screens(path, [0.0, 0.005, 0.01, 0.02, 5.0])]
    assert texts == ["one", "one", "one two", "one two three", "one two three"]
    assert screen_at(path, 0.01).to_text() == "one two"


def test_iter_screens_rejects_decreasing_times(tmp_path: Path) -> None:
    path = write_cast(tmp_path / "s.cast", SIZE, [("o", "x")])
    with pytest.raises(ValueError):
        list(iter_screens(path, [1.0, 0.5]))
