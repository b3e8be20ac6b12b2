"""Parsing the time bounds users give (``--since``, ``--until``): ISO, words, ages."""

from __future__ import annotations

from datetime import timedelta

import pytest

from shellkeep.archive.since import parse_time
from shellkeep.errors import UserInputError
from tests.factory import BASE


@pytest.mark.parametrize(
    ("text", "end_of_day", "expect"),
    [
        ("2024-05-01T00:00:00Z", False, BASE - timedelta(hours=12)),
        ("2h", False, BASE - timedelta(hours=2)),
        ("3d", False, BASE - timedelta(days=3)),
        ("1w", False, BASE - timedelta(weeks=1)),
    ],
    ids=["iso", "hours", "days", "weeks"],
)
def test_parse_time(text: str, end_of_day: bool, expect: object) -> None:
    assert parse_time(text, now=BASE, end_of_day=end_of_day) == expect


def test_parse_time_dates_are_local_and_until_includes_the_day() -> None:
    start = parse_time("2024-05-01", now=BASE)
    end = parse_time("2024-05-01", now=BASE, end_of_day=True)
    assert end - start == timedelta(days=1)
    assert start.tzinfo is not None
    with pytest.raises(UserInputError, match="cannot read the time 'soon'"):
        parse_time("soon")
