"""Parse the time bounds users give: ``--since`` / ``--until`` of the commands and the web's ``since``.

Plain text in, an aware ``datetime`` out; no SQL and no files. Shared by ``cli/`` and ``web/``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from shellkeep.errors import UserInputError

__all__ = ["parse_time"]

# Compiled on first use by re's own cache: no work at import.
_RELATIVE = r"^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hour|hours|d|day|days|w|week|weeks)$"
_UNITS_S = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400, "w": 604800, "week": 604800, "weeks": 604800}


def parse_time(text: str, *, now: datetime | None = None, end_of_day: bool = False) -> datetime:
    """Parse a time bound a user gave: ISO date or date-time, ``today``, ``yesterday``, or
    an age like ``30m``, ``2h``, ``3d``, ``1w`` (that long ago). Returns an aware datetime.

    Naive times are local. end_of_day: a bare date means the end of that day (for --until).
    Raises UserInputError for anything else.
    """
    now = now or datetime.now(timezone.utc)
    value = text.strip()
    lowered = value.lower()
    local_now = now.astimezone()
    if lowered in ("today", "yesterday"):
        day = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
        if lowered == "yesterday":
            day -= timedelta(days=1)
        return day + timedelta(days=1) if end_of_day else day
    if lowered == "now":
        return now
    m = re.match(_RELATIVE, value, re.IGNORECASE)
    if m:
        try:
            return now - timedelta(seconds=float(m.group(1)) * _UNITS_S[m.group(2).lower()])
        except OverflowError:
            raise UserInputError(f"the age '{text}' reaches back before the year 1; give a smaller age or a date") from None
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UserInputError(
            f"cannot read the time '{text}'; give a date like 2024-05-01, a time like "
            "'2024-05-01 14:30', 'today', 'yesterday' or an age like 2h, 3d, 1w"
        ) from None
    if at.tzinfo is None:
        try:
            at = at.astimezone()  # naive: local time
        except (OverflowError, ValueError):
            at = at.replace(tzinfo=timezone.utc)  # the first or last day of the calendar: no room to shift
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            at += timedelta(days=1)
        except OverflowError:
            return at.replace(hour=23, minute=59, second=59, microsecond=999999)  # the end of 9999-12-31
    return at
