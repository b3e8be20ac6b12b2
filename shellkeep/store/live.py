"""Own a running session's live-status file, ``live.json``: what ``shellkeep ps`` reads.

The recorder's writer thread rewrites it at most once a second while the program draws, and
once more after it has been quiet for a second, so it tells when output last came, how the
child's pty reads input, whether a prompt was left at the bottom and whether the agent's
adapter recognised its own prompt or approval dialog (``hint``). It is a hint, not the
truth (``meta.json`` is): written without fsync, removed when the session ends, ignored for
a session that is not live. It holds no recorded text.

``waits_for_user`` is the one rule, shared by ``shellkeep ps`` and the waiting notifier,
that tells from a status whether a quiet program waits for its user.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from shellkeep.store.paths import FILE_MODE

LIVE_FILE = "live.json"

WORKING_WINDOW_S = 3.0
"""Output within this many seconds means the session is working, not waiting or idle."""


@dataclass(frozen=True, slots=True)
class LiveStatus:
    """What the recorder last saw of a running session.

    output_at: when the program last wrote output, epoch seconds (wall clock).
    output_bytes: raw output bytes relayed so far.
    canonical / echo: the child's pty reads whole lines (ICANON) / echoes what is typed
    (ECHO), as ``termios.tcgetattr`` told at ``updated_at``; None when it could not be read.
    prompt: the last line the program wrote looks like a prompt (``capture.activity``).
    updated_at: when this status was written, epoch seconds.
    hint: the reason of the adapter's waiting hint that matched what the agent drew last
    (``"approval"``: its approval dialog; ``"input"``: its ready prompt), or None.
    shell: the program is an interactive shell (bash, zsh...) and holds the terminal itself:
    no job it started is in the foreground (``tcgetpgrp`` is the shell's own group).
    shell_prompt: with ``shell``, the last line ends as the shell's own prompt did when it
    was first seen (``$``, ``#``...): a shell without a line editor (dash, ``sh``) reads its
    command line in canonical mode, as its ``read -p`` does.
    """

    output_at: float | None
    output_bytes: int
    canonical: bool | None
    echo: bool | None
    prompt: bool
    updated_at: float
    hint: str | None = None
    shell: bool = False
    shell_prompt: bool = False


def waits_for_user(status: LiveStatus) -> bool:
    """Return whether a quiet program waits for its user, by ``status`` (how long it has
    been quiet aside): the adapter's hint matched, or its pty reads key by key (not
    canonical), or reads a line with echo off, or reads a line after a prompt.

    A shell reading key by key itself is its line editor at its own prompt: that is idle
    (a command has ended, nothing asks anything), and so is a shell reading a line after
    its own prompt (``shell_prompt``: dash has no line editor). What a shell runs in the foreground
    (vim, sudo's password prompt, a script's question) is judged like any program, and so
    is the shell reading a line after a prompt (``read -p``).
    """
    if status.hint is not None:
        return True
    if status.canonical is None:
        return False
    if status.shell and (not status.canonical or status.shell_prompt):
        return False
    return not status.canonical or not status.echo or status.prompt


def write_live_status(folder: Path, status: LiveStatus) -> None:
    """Replace ``folder/live.json`` with ``status`` (a temporary file and a rename, no fsync).

    Raises OSError.
    """
    tmp = folder / f".{LIVE_FILE}.tmp"
    data = json.dumps(
        {
            "output_at": status.output_at,
            "output_bytes": status.output_bytes,
            "canonical": status.canonical,
            "echo": status.echo,
            "prompt": status.prompt,
            "updated_at": status.updated_at,
            "hint": status.hint,
            "shell": status.shell,
            "shell_prompt": status.shell_prompt,
        }
    ).encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, folder / LIVE_FILE)


def read_live_status(folder: Path) -> LiveStatus | None:
    """Return the live status in ``folder``, or None when there is none or it is unreadable."""
    try:
        obj = json.loads((folder / LIVE_FILE).read_bytes())
        output_at = obj.get("output_at")
        return LiveStatus(
            output_at=None if output_at is None else float(output_at),
            output_bytes=int(obj.get("output_bytes") or 0),
            canonical=_flag(obj.get("canonical")),
            echo=_flag(obj.get("echo")),
            prompt=bool(obj.get("prompt")),
            updated_at=float(obj["updated_at"]),
            hint=_reason(obj.get("hint")),
            shell=bool(obj.get("shell")),
            shell_prompt=bool(obj.get("shell_prompt")),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def remove_live_status(folder: Path) -> None:
    """Remove ``folder/live.json`` (the session has ended); never raises."""
    for name in (LIVE_FILE, f".{LIVE_FILE}.tmp"):
        try:
            os.unlink(folder / name)
        except OSError:
            pass


def _reason(value: object) -> str | None:
    return value[:32] if isinstance(value, str) and value else None


def _flag(value: object) -> bool | None:
    return None if value is None else bool(value)
