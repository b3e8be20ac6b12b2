"""Shared click options and helpers of the commands: session reference, --json, warnings.

Also the shell-completion callbacks (``complete_*``), so that every session argument,
config key and agent option completes the same way in bash, zsh and fish.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from click.shell_completion import CompletionItem

from shellkeep.cli.console import warn
from shellkeep.errors import DataError
from shellkeep.store.paths import Paths, resolve_paths

if TYPE_CHECKING:
    from shellkeep.app.context import Context

__all__ = [
    "complete_agent",
    "complete_config_key",
    "complete_session",
    "context",
    "count",
    "cwd",
    "json_option",
    "number",
    "paths",
    "require_ref",
    "session_argument",
    "warn",
]

F = TypeVar("F", bound=Callable[..., object])

MAX_COUNT = 1_000_000_000
"""The largest count an option takes (``--limit``, ``--exchange``): more fits no SQLite or C int."""

MAX_SECONDS = 1e10
"""The longest duration an option takes, in seconds (about 317 years), as the asciicast reader."""


class _Count(click.IntRange):
    """An ``IntRange`` whose error for a value that is no integer (a str from the command line) says what it takes."""

    def convert(self, value: int, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, str):
            try:
                int(value)
            except ValueError:
                self.fail(f"{value!r} is not a whole number; it takes one from {self.min} to {self.max}", param, ctx)
        return super().convert(value, param, ctx)


def count(*, min: int = 1) -> click.IntRange:  # noqa: A002 - click's own word
    """Return the type of a count option: an integer from ``min`` to ``MAX_COUNT``.

    A negative, an overflowing or a non-integer value is a usage error (one line, exit 2).
    """
    return _Count(min=min, max=MAX_COUNT)


class _FiniteFloatRange(click.FloatRange):
    """A ``FloatRange`` that refuses nan and inf (``float()`` reads 'nan', 'inf' and '1e400')."""

    def convert(self, value: float, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def number(*, min: float = 0.0, max: float = MAX_SECONDS) -> click.FloatRange:  # noqa: A002 - click's own words
    """Return the type of a duration or factor option: a finite float from ``min`` to ``max``.

    nan, inf, an overflow ('1e400') or a value out of range is a usage error (one line, exit 2).
    """
    return _FiniteFloatRange(min=min, max=max)


def complete_session(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete a SESSION: the ids and names of every stored session, newest first (``archive.names``)."""
    from shellkeep.archive.names import session_words

    return [CompletionItem(word, help=about or None) for word, about in session_words(resolve_paths(), incomplete)]


def complete_config_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete a config key (``record.input``...) from the config's key table."""
    from shellkeep.config import config_keys

    return [CompletionItem(key) for key in config_keys() if key.startswith(incomplete)]


def complete_agent(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Complete an agent name from the adapter registry (built-in and plug-in adapters)."""
    from shellkeep.agents.registry import adapter_names

    return [CompletionItem(name) for name in adapter_names() if name.startswith(incomplete)]


def session_argument(func: F) -> F:
    """Add ``SESSION`` (id, unique prefix or name; optional; completed) and ``--last``."""
    func = click.option("--last", "last", is_flag=True, help="The newest session of this project.")(func)
    return click.argument("ref", metavar="SESSION", required=False, shell_complete=complete_session)(func)


def json_option(func: F) -> F:
    """Add ``--json``: print the result as JSON and nothing else."""
    return click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")(func)


def paths() -> Paths:
    """Return the data and config locations for this invocation.

    Raises DataError when the data folder exists but is not a folder (a reader would
    otherwise report it as empty). ``run`` uses ``resolve_paths`` and records nothing then.
    """
    found = resolve_paths()
    if found.home.exists() and not found.home.is_dir():
        raise DataError(f"the data folder {found.home} is not a folder; point SHELLKEEP_HOME at a folder")
    return found


def context(*, strict: bool = False) -> Context:
    """Build this command's context once: paths, project, settings and keys (``app.context``).

    strict: a broken config is an error (exit 2) rather than a warning and the defaults.
    Raises DataError as ``paths``.
    """
    from shellkeep.app.context import open_context

    return open_context(paths=paths(), cwd=cwd(), strict=strict, warn=warn)


def cwd() -> Path:
    """Return the working directory (absolute)."""
    return Path.cwd()


def require_ref(ref: str | None, last: bool) -> None:
    """Raise a usage error when neither SESSION nor --last was given."""
    if not ref and not last:
        raise click.UsageError("give a SESSION (id, prefix or name) or --last")
    if ref and last:
        raise click.UsageError(f"give a SESSION or --last, not both ('{ref}' and --last)")
