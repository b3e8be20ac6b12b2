"""Resolve where agent CLIs keep their files, from the child's environment, never ``os.environ``.

Also the pieces several agents share: the dash-encoded cwd (Claude Code, Qwen Code),
newest-file scans, the resume hint an agent prints on exit, and the comparison of a
recorded cwd with the session's.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path

__all__ = [
    "CLOCK_SLACK",
    "UUID_PATTERN",
    "dash_encoded",
    "find_in_screen",
    "home_dir",
    "is_new",
    "mtime_at",
    "newest",
    "same_dir",
    "shown_on_screen",
    "xdg_data_home",
]

UUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
"""A regular expression matching a UUID in its 8-4-4-4-12 text form."""

CLOCK_SLACK = timedelta(seconds=2)
"""How much earlier than the launch a file may look and still count as new (mtime granularity)."""

_NON_ALNUM = r"[^a-zA-Z0-9]"
_ESCAPE = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])"


def home_dir(env: Mapping[str, str]) -> Path:
    """Return the user's home directory: ``HOME`` in ``env``, else the password database's."""
    home = env.get("HOME")
    if home:
        return Path(home)
    try:
        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        return Path("/")


def xdg_data_home(env: Mapping[str, str]) -> Path:
    """Return ``$XDG_DATA_HOME`` from ``env`` when absolute, else ``~/.local/share``."""
    value = env.get("XDG_DATA_HOME")
    if value and os.path.isabs(value):
        return Path(value)
    return home_dir(env) / ".local" / "share"


def dash_encoded(cwd: Path) -> str:
    """Return ``cwd`` with every character that is not an ASCII letter or digit turned into '-'.

    This is how Claude Code (and Qwen Code) name a project's folder:
    ``/home/alice/src/app`` → ``-home-alice-src-app``. Claude Code cuts names longer than
    200 characters and adds a hash suffix; callers glob ``<first 200>-*`` for those.
    """
    return re.sub(_NON_ALNUM, "-", str(cwd))


def same_dir(recorded: object, cwd: Path) -> bool:
    """Return whether a cwd an agent recorded names the same directory as ``cwd``."""
    if not isinstance(recorded, str) or not recorded:
        return False
    if recorded.rstrip("/") == str(cwd).rstrip("/"):
        return True
    try:
        return os.path.realpath(recorded) == os.path.realpath(cwd)
    except (OSError, ValueError):
        return False


def mtime_at(path: Path) -> datetime | None:
    """Return the file's modification time as an aware UTC datetime, or None when it is gone."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc)
    except (OSError, ValueError):
        return None


def is_new(moment: datetime | None, started_at: datetime) -> bool:
    """Return whether ``moment`` is not before ``started_at`` (less ``CLOCK_SLACK``)."""
    if moment is None:
        return False
    if started_at.tzinfo is None:
        started_at = started_at.replace(tzinfo=timezone.utc)
    return moment >= started_at - CLOCK_SLACK


def newest(paths: Iterable[Path]) -> list[Path]:
    """Return the existing paths among ``paths``, most recently modified first."""
    stamped = [(m, p) for p in paths if (m := mtime_at(p)) is not None]
    stamped.sort(key=lambda item: item[0], reverse=True)
    return [p for _, p in stamped]


def find_in_screen(screen_text: str, pattern: str) -> str | None:
    """Return group 1 of the last match of ``pattern`` in the screen text, or None.

    Escape sequences are removed first; when nothing matches, the lines are joined and
    searched again, for a hint the terminal wrapped in the middle of the id.
    """
    text = re.sub(_ESCAPE, "", screen_text)
    regex = re.compile(pattern)
    for candidate in (text, text.replace("\r", "").replace("\n", "")):
        matches = list(regex.finditer(candidate))
        if matches:
            return matches[-1].group(1)
    return None


SHOWN_PROMPT_CHARS = 40
"""How much of a prompt's start ``shown_on_screen`` compares (a long prompt is wrapped or cut on screen)."""


def shown_on_screen(prompts: Iterable[str], screen_text: str) -> bool:
    """Return whether one of ``prompts`` is on the screen (the start of it, whitespace collapsed).

    This tells two conversations of one agent in one folder apart when the agent cannot be
    given an id: each session's screen shows the prompts typed in it. Box-drawing
    characters (the borders a TUI draws around a wrapped prompt) are left out of the
    comparison. Empty prompts never match.
    """
    screen = " ".join(re.sub(r"[\u2500-\u259f]", " ", re.sub(_ESCAPE, "", screen_text)).split())
    for prompt in prompts:
        start = " ".join(prompt.split())[:SHOWN_PROMPT_CHARS]
        if start and start in screen:
            return True
    return False
