"""Turn results into output: JSON in one place, durations and times for tables."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import click


def to_jsonable(value: object) -> object:
    """Return ``value`` with dataclasses (``to_json`` where they have it) turned into dicts."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_jsonable(to_json())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def print_json(value: object) -> None:
    """Print ``value`` as indented JSON on stdout."""
    click.echo(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


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
