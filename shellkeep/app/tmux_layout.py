"""Rebuild the tmux windows the sessions of ``resume --all`` sat in: panes, layout and all.

Sessions that shared a tmux window (the same server, by socket and pid, and the same window id:
``meta.json`` ``place``, see ``app.place``) come back as the panes of one new window: the first
cell of the window's layout opens the window (``new-window``), each further cell is split from
the one before it (``split-window``), then the recorded layout string is applied
(``select-layout``). tmux matches a layout string's cells to the window's panes in order and
ignores the pane ids it holds, so the panes are made in the order of the layout's cells: each
cell that held a session resumes it, a cell that held none (a plain shell, a session that ended
on its own) gets a shell in the window's first directory, so the geometry is the recorded one.
The layout is the one recorded last by any of the window's sessions (``layout_at``).

Everything else opens in a window of its own, as ``Comeback.tmux_argv`` does: a session from a
plain terminal, a tmux session whose layout is unknown, or one whose pane is not in that layout.
Each window is one tmux command (its steps joined by ``;``), run with a short timeout.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shellkeep.app.resume_all import Comeback, ResumeAllPlan, TmuxError

__all__ = ["TmuxWindow", "layout_panes", "open_tmux_windows", "tmux_windows"]

_CELL = re.compile(r"(\d+)x(\d+),(\d+),(\d+)(?:,(\d+))?")
"""One cell of a tmux layout string, ``WxH,X,Y`` then ``,ID`` for a pane (tmux's layout-custom.c)."""

_LAYOUT = re.compile(r"[0-9a-f]{4},[0-9x,{}\[\]]+")
"""A whole layout string: its checksum, then cells (digits, ``x``, commas and brackets only)."""

_TIMEOUT_S = 30.0


def layout_panes(layout: str) -> list[str]:
    """Return the pane ids of a tmux layout string's cells in order (``%N``), or [] if it is not one.

    Format (tmux ``#{window_layout}``, layout-custom.c): ``CSUM,WxH,X,Y`` then ``,ID`` for a
    single pane, or ``{cells}`` (side by side) / ``[cells]`` (stacked), cells separated by
    commas; CSUM is 4 hex digits of tmux's checksum of the rest, which tmux checks too.
    """
    checksum, _, body = layout.partition(",")
    if not _LAYOUT.fullmatch(layout) or int(checksum, 16) != _checksum(body):
        return []
    return [f"%{found.group(5)}" for found in _CELL.finditer(body) if found.group(5) is not None]


def _checksum(body: str) -> int:
    """Return tmux's layout checksum of ``body`` (layout-custom.c ``layout_checksum``)."""
    value = 0
    for char in body.encode("ascii", "replace"):
        value = ((value >> 1) + ((value & 1) << 15) + char) & 0xFFFF
    return value


@dataclass(frozen=True, slots=True)
class TmuxWindow:
    """One window ``resume --all`` opens: its cells in order (a comeback, or None for a shell).

    layout: the recorded layout string to apply, or None for a window of one comeback.
    """

    cells: tuple[Comeback | None, ...]
    layout: str | None = None

    @property
    def comebacks(self) -> tuple[Comeback, ...]:
        """Return the comebacks of this window, in cell order."""
        return tuple(cell for cell in self.cells if cell is not None)

    def tmux_argv(self, pane_env: Mapping[str, str]) -> tuple[str, ...]:
        """Return the one ``tmux`` command that opens this window, its panes and its layout.

        pane_env: the variables each pane is given (``Comeback.tmux_argv``). Steps are separate
        tmux commands joined by a ``;`` argument, run in order by one client: ``split-window``
        splits the pane made just before it, ``select-layout`` the new window.
        """
        first = self.comebacks[0]
        if self.layout is None:
            return first.tmux_argv(pane_env)
        # Comeback.tmux_argv is ``tmux new-window -n NAME [-c CWD] [-e NAME=VALUE]... COMMAND``:
        # a pane takes the options after the name; a shell cell, the first one's without its command.
        shell = first.tmux_argv(pane_env)[4:-1]
        panes = [cell.tmux_argv(pane_env)[4:] if cell is not None else shell for cell in self.cells]
        argv = ["tmux", "new-window", "-n", first.window, *panes[0]]
        for options in panes[1:]:
            argv += [";", "split-window", *options]
        return (*argv, ";", "select-layout", self.layout)


def tmux_windows(plan: ResumeAllPlan) -> tuple[TmuxWindow, ...]:
    """Return the windows that bring back ``plan``'s comebacks, in the order of each one's oldest.

    Comebacks whose ``place`` puts them in the same tmux window, with a recorded layout that
    holds each one's pane, share a window (this module's docstring); the others get one each.
    """
    groups: dict[tuple[object, ...], list[Comeback]] = {}
    order: list[tuple[object, ...]] = []
    for n, comeback in enumerate(plan.comebacks):
        key = _window_key(comeback) or ("alone", n)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(comeback)
    windows: list[TmuxWindow] = []
    for key in order:
        windows += _windows_of(groups[key])
    return tuple(windows)


def open_tmux_windows(plan: ResumeAllPlan, *, env: Mapping[str, str], pane_env: Mapping[str, str]) -> int:
    """Open ``plan``'s windows in the tmux session $TMUX names; return how many were opened.

    env: tmux's own environment (its $TMUX names the session). pane_env: the variables each
    pane is given (``Paths.as_env``). Blocks while tmux runs each command. Raises TmuxError naming the session when tmux is
    missing, refuses a window or does not answer (the windows opened before it stay open).
    """
    windows = tmux_windows(plan)
    for window in windows:
        first = window.comebacks[0].session.id
        try:
            done = subprocess.run(
                window.tmux_argv(pane_env), env=dict(env), capture_output=True, stdin=subprocess.DEVNULL, timeout=_TIMEOUT_S
            )
        except OSError as exc:
            raise TmuxError(f"cannot run tmux ({exc.strerror or exc}); resume without tmux, or install it") from exc
        except subprocess.TimeoutExpired as exc:
            raise TmuxError(f"tmux did not answer in {_TIMEOUT_S:.0f} s opening the window of {first}; try again") from exc
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
            raise TmuxError(f"tmux did not open a window for {first}: {why[0]}")
    return len(windows)


def _window_key(comeback: Comeback) -> tuple[object, ...] | None:
    place = comeback.session.place or {}
    if place.get("kind") != "tmux" or not place.get("window_id") or not place.get("window_layout"):
        return None
    return (place.get("socket"), place.get("server_pid"), place.get("window_id"))


def _windows_of(group: Sequence[Comeback]) -> list[TmuxWindow]:
    """Return the windows of comebacks that sat in one tmux window: one with the layout, plus
    one each for those whose pane the layout lacks (or whose pane a newer comeback took)."""
    if len(group) == 1 and (group[0].session.place or {}).get("window_panes") in (1, None):
        return [TmuxWindow((group[0],))]
    newest = max(group, key=lambda c: str((c.session.place or {}).get("layout_at") or ""))
    layout = str((newest.session.place or {}).get("window_layout"))
    cells = layout_panes(layout)
    by_pane: dict[str, Comeback] = {}
    for comeback in group:  # oldest first: a newer session in the same pane takes its cell
        by_pane[str((comeback.session.place or {}).get("pane_id"))] = comeback
    placed = [by_pane.get(pane) for pane in cells]
    if not any(placed):
        return [TmuxWindow((c,)) for c in group]
    taken = {id(c) for c in placed if c is not None}
    return [TmuxWindow(tuple(placed), layout), *(TmuxWindow((c,)) for c in group if id(c) not in taken)]
