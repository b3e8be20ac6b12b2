"""Turn results into output: JSON in one place, durations, times and sizes for tables."""

from __future__ import annotations

import dataclasses
import json

import click

from shellkeep.app.display import format_duration, format_local_time

__all__ = ["format_duration", "format_local_time", "format_size", "plural", "print_json", "to_jsonable"]


def plural(count: int, noun: str) -> str:
    """Return ``"1 session"`` or ``"2 sessions"`` (``noun`` is singular; an ``s`` is added)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


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


def format_size(n: int) -> str:
    """Format a byte count as ``812 B``, ``4.2 KB``, ``12.3 MB`` or ``1.1 GB`` (units of 1024)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover
