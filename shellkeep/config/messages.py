"""Word config errors: where a value came from, what it must be, and the closest right name."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from shellkeep.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value came from, for messages: "'<file>'", "environment variable X", ...

    fix: what the user can do about a bad value there ("" = nothing to add).
    """

    label: str  # "" for a value given on the command line
    fix: str = ""


def show(value: object) -> str:
    """Render a bad value for an error message, briefly."""
    if value is None:
        text = "nothing"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, dict):
        text = "a table"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def bad_value(origin: Origin, key: str, expect: str, got: object) -> ConfigError:
    """Return the error for a value of the wrong type or out of range."""
    shown = "" if isinstance(got, (list, tuple, dict)) else f", got {show(got)}"
    fix = f"; {origin.fix}" if origin.fix else ""
    where = f"invalid config in {origin.label}" if origin.label else "invalid value"
    return ConfigError(f"{where}: {key} must be {expect}{shown}{fix}")


def suggest(word: str, choices: Iterable[str]) -> str:
    """Return '; did you mean X?' for the closest choice, or ''."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
