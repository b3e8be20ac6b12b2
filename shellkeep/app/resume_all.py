"""Bring back every session a crash or a reboot cut short, across projects (``resume --all``).

Which sessions: those of this host that were cut short (interrupted, hangup, killed:
``app.resume.CUT_SHORT``) but not by SIGINT (the user's own Ctrl-C ended those on purpose),
are not a failed native resume, and have not been resumed yet
(no session names them as ``parent``, the resume chain), and that ended

- at or after ``since`` when it is given;
- otherwise in this boot (at or after ``/proc/stat`` ``btime``), or in the boot before it:
  the boot id of the newest session recorded before this boot (``meta.json`` ``boot_id``).
  That is what a reboot cuts short: sessions that ended just before it.

How: inside tmux, each in a new window (``tmux new-window -n NAME -c CWD -e SHELLKEEP_HOME=...
-e SHELLKEEP_CONFIG=... 'sh -c HOLD sh shellkeep resume ID'``), those that shared a tmux window
as the panes of one window in its layout (``app.tmux_layout``); otherwise one after another in
this terminal, each a ``shellkeep resume ID`` process. A pane runs in the tmux server's
environment, not this one: it is given this command's data folder and config file whatever
decided them (``XDG_DATA_HOME``, ``XDG_CONFIG_HOME``...), and a resume that fails there keeps
its pane open with its error on screen until Enter (``_HOLD``) instead of closing it.
"""

from __future__ import annotations

import os
import shlex
import signal
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.app.resume import CUT_SHORT
from shellkeep.errors import ShellkeepError
from shellkeep.store.session import SessionMeta, boot_id, boot_time, host_name, parse_iso

__all__ = ["Comeback", "ResumeAllPlan", "TmuxError", "plan_resume_all", "run_one_by_one", "shellkeep_argv"]

Warn = Callable[[str], None]

_HOLD = '"$@" || { code=$?; echo; echo "shellkeep: resume exited with status $code; press Enter to close this pane"; read -r _; exit "$code"; }'
"""The ``sh`` script a pane runs its ``shellkeep resume ID`` in (its words after the script's
``$0``): a pane whose command exits closes at once, and its error with it, so one that fails
waits for Enter. No ``'`` or ``\\`` in it (fish's single quotes read those) and no ``;`` at its
end (tmux would take that for the end of a command)."""


class TmuxError(ShellkeepError):
    """tmux refused to open a window (exit status 1)."""


@dataclass(frozen=True, slots=True)
class Comeback:
    """One session to bring back: its metadata, the command that resumes it, where it runs.

    argv: ``shellkeep resume ID [options]``. cwd: the session's directory, else its project
    root, else None (both are gone: ``resume`` itself looks for the moved project).
    window: the tmux window name, ``<project base name>-<agent>`` (``.`` and ``:``, which
    tmux reads in a target, made ``-``).
    """

    session: SessionMeta
    argv: tuple[str, ...]
    cwd: Path | None
    window: str

    @property
    def pane_command(self) -> str:
        """Return the shell command a tmux pane runs: ``argv`` in ``sh -c _HOLD``."""
        return shlex.join(("sh", "-c", _HOLD, "sh", *self.argv))

    def tmux_argv(self, pane_env: Mapping[str, str]) -> tuple[str, ...]:
        """Return the ``tmux new-window`` command that opens this comeback in a new window.

        pane_env: the variables the window is given (``-e``), as ``Paths.as_env`` returns them.
        """
        args = ["tmux", "new-window", "-n", self.window]
        if self.cwd is not None:
            args += ["-c", str(self.cwd)]
        for name, value in pane_env.items():
            args += ["-e", f"{name}={value}"]
        return (*args, self.pane_command)


@dataclass(frozen=True, slots=True)
class ResumeAllPlan:
    """The sessions ``resume --all`` brings back, oldest first, and since when they are taken.

    since: the lower bound on their end (aware UTC datetime). since_boot: ``since`` is this
    boot's start (no ``--since``): the boot before it counts too. in_tmux: $TMUX is set.
    """

    comebacks: tuple[Comeback, ...]
    since: datetime
    since_boot: bool
    in_tmux: bool


def plan_resume_all(
    ctx: Context,
    *,
    since: datetime | None = None,
    options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> ResumeAllPlan:
    """Return the sessions to bring back (the rule in this module's docstring), oldest first.

    options: passed on to each ``shellkeep resume`` (``--no-screen``, ``--exchanges N``...).
    Listing recovers sessions found interrupted, as every listing does; nothing else is written.
    """
    env = os.environ if env is None else env
    sessions = ctx.sessions(all_projects=True)
    since_boot = since is None
    if since is None:
        booted = boot_time()
        since = datetime.fromtimestamp(booted or 0.0, timezone.utc)
    previous_boot = _previous_boot(sessions) if since_boot else None
    resumed = {m.parent for m in sessions if m.parent and not m.resume_failed}
    host = host_name()
    chosen = [
        m
        for m in sessions
        if m.status in CUT_SHORT
        and m.signal != signal.SIGINT  # the user's own Ctrl-C (the terminal's interrupt key) ended it
        and not m.resume_failed
        and m.id not in resumed
        and m.host == host
        and (_ended_at(m) >= since or (previous_boot is not None and m.boot_id == previous_boot))
    ]
    chosen.sort(key=lambda m: (m.started_at, m.id))
    base = (*shellkeep_argv(), "resume")
    comebacks = tuple(Comeback(m, (*base, m.id, *options), _where(m), _window_name(m)) for m in chosen)
    return ResumeAllPlan(comebacks, since, since_boot, bool(env.get("TMUX")))


def run_one_by_one(plan: ResumeAllPlan, *, warn: Warn) -> int:
    """Resume each comeback in turn in this terminal, each as a ``shellkeep resume`` process.

    Blocks until the last one exits. Returns 0 when every resume exited 0, else the first
    non-zero status (the rest are still resumed).
    """
    first_failure = 0
    total = len(plan.comebacks)
    for n, comeback in enumerate(plan.comebacks, 1):
        meta = comeback.session
        warn(f"resuming {n} of {total}: {meta.id} ({Path(meta.project_root).name}, {meta.agent})")
        try:
            code = subprocess.run(comeback.argv, cwd=comeback.cwd).returncode
        except OSError as exc:
            warn(f"cannot start {comeback.argv[0]}: {exc.strerror or exc}")
            code = 127
        if code < 0:
            code = 128 - code
        if code and not first_failure:
            first_failure = code
    return first_failure


def shellkeep_argv() -> tuple[str, ...]:
    """Return how to run this shellkeep again: ``shellkeep`` when that is it on PATH, else its
    path, or ``python -m shellkeep`` for a module run."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name in ("shellkeep", "shellkeep.__main__"):
        return (sys.executable, "-m", "shellkeep")
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    found = shutil.which("shellkeep")
    try:
        if found and script and os.path.samefile(found, script):
            return ("shellkeep",)
    except OSError:
        pass
    return (script,) if script and os.access(script, os.X_OK) else ("shellkeep",)


def _previous_boot(sessions: Sequence[SessionMeta]) -> str | None:
    """Return the boot id of the newest session recorded before this boot, or None."""
    current = boot_id()
    if current is None:
        return None
    earlier = [m for m in sessions if m.boot_id and m.boot_id != current]
    if not earlier:
        return None
    return max(earlier, key=lambda m: (m.started_at, m.id)).boot_id


def _ended_at(meta: SessionMeta) -> datetime:
    for text in (meta.ended_at, meta.started_at):
        if text:
            try:
                return parse_iso(text)
            except ValueError:
                continue
    return datetime.fromtimestamp(0, timezone.utc)


def _where(meta: SessionMeta) -> Path | None:
    for candidate in (meta.cwd, meta.project_root):
        if candidate and os.path.isdir(candidate):
            return Path(candidate)
    return None


def _window_name(meta: SessionMeta) -> str:
    project = Path(meta.project_root).name or meta.project
    return f"{project}-{meta.agent}".replace(".", "-").replace(":", "-")
