"""Times and durations as every view shows them: the CLI's tables, the picker, the web pages.

Here, below ``tui`` and ``web`` (sibling layers), so that both show them alike."""

from __future__ import annotations

from datetime import datetime


def format_duration(seconds: float | None) -> str:
    """Format float seconds as ``1h02m``, ``3m05s`` or ``4.2s``; ``-`` for None."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_local_time(iso_text: str | None) -> str:
    """Format an ISO 8601 UTC time in local time as ``YYYY-mm-dd HH:MM``."""
    if not iso_text:
        return "-"
    try:
        at = datetime.fromisoformat(iso_text.replace("Z", "+00:00"))
    except ValueError:
        return iso_text
    return at.astimezone().strftime("%Y-%m-%d %H:%M")
