"""Find where a session runs on screen: its tmux pane and window layout, or a plain terminal.

The place is kept in ``meta.json`` as ``place`` (a JSON object, the contract):

- ``{"kind": "tmux", "socket", "server_pid", "pane_id", "session_name", "window_index",
  "window_id", "window_name", "pane_index", "window_layout", "window_panes", "layout_at"}``
  inside tmux ($TMUX and $TMUX_PANE set): the tmux session, window and pane, and the window's
  layout string (tmux's ``#{window_layout}``, e.g. ``b25f,80x24,0,0{40x24,0,0,1,39x24,41,0,2}``)
  as it was at ``layout_at`` (ISO 8601 UTC). Indexes are tmux's own (0-based by default).
- ``{"kind": "terminal", "cols", "rows"}`` otherwise (the size in character cells), with
  ``"screen"`` (GNU screen's $STY) when the session ran inside GNU screen.

``place_from_env`` reads only the environment (it runs before the child starts);
``probe_place`` asks tmux for the rest (``tmux display-message``, a short timeout) once the
child runs, on the thread that writes the first ``meta.json``; ``refresh_place`` asks again at
the session's end, as the window may have been split or resized since. A tmux that is missing,
slow or gone leaves the place as it was: it never fails the recording.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone

from shellkeep.logs import get_logger
from shellkeep.errors import DataError
from shellkeep.store.session import SessionMeta, iso, read_meta
from shellkeep.termsize import TermSize

__all__ = ["latest_place", "place_from_env", "place_line", "probe_place", "refresh_place"]

log = get_logger(__name__)

_TIMEOUT_S = 2.0
_FIELDS = ("window_index", "window_id", "pane_index", "window_panes", "window_layout")
_FORMAT = " ".join(f"#{{{name}}}" for name in _FIELDS) + "\n#{session_name}\n#{window_name}"
"""One line of fields without spaces, then the two names, which may hold spaces."""


def place_from_env(env: Mapping[str, str], size: TermSize) -> dict[str, object]:
    """Return the place as the environment tells it, without running anything.

    Inside tmux: ``{"kind": "tmux", "socket", "server_pid", "pane_id"}`` ($TMUX is
    ``SOCKET,SERVER_PID,SESSION_INDEX``; $TMUX_PANE is ``%N``); else the terminal's size.
    """
    tmux, pane = env.get("TMUX", ""), env.get("TMUX_PANE", "")
    if tmux and pane.startswith("%"):
        socket, _, rest = tmux.partition(",")
        server_pid = rest.partition(",")[0]
        return {"kind": "tmux", "socket": socket, "server_pid": int(server_pid) if server_pid.isdigit() else None, "pane_id": pane}
    place: dict[str, object] = {"kind": "terminal", "cols": size.cols, "rows": size.rows}
    if env.get("STY"):
        place["screen"] = env["STY"]
    return place


def probe_place(place: dict[str, object] | None, *, timeout_s: float = _TIMEOUT_S) -> dict[str, object] | None:
    """Return ``place`` with its tmux window and layout filled in (``tmux display-message``).

    Blocks up to ``timeout_s`` seconds. A place that is not tmux, or a tmux that fails or
    does not answer in time, comes back unchanged (logged at DEBUG).
    """
    if not place or place.get("kind") != "tmux":
        return place
    import subprocess  # once the child runs: not on the start-up path

    socket, pane = str(place.get("socket") or ""), str(place.get("pane_id") or "")
    argv = ["tmux", *(("-S", socket) if socket else ()), "display-message", "-p", "-t", pane, _FORMAT]
    try:
        done = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout_s, check=False)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        log.debug("tmux did not say where pane %s is: %s", pane, exc)
        return place
    lines = done.stdout.decode("utf-8", "replace").split("\n")
    fields = lines[0].split(" ")
    if done.returncode != 0 or len(lines) < 3 or len(fields) != len(_FIELDS):
        log.debug("tmux did not say where pane %s is: %s", pane, done.stderr.decode("utf-8", "replace").strip())
        return place
    found: dict[str, object] = dict(zip(_FIELDS, fields))
    for number in ("window_index", "pane_index", "window_panes"):
        text = str(found[number])
        found[number] = int(text) if text.isdigit() else None
    found["session_name"] = lines[1]
    found["window_name"] = "\n".join(lines[2:]).rstrip("\n")
    found["layout_at"] = iso(datetime.now(timezone.utc))
    return {**place, **found}


def refresh_place(place: dict[str, object] | None, *, timeout_s: float = _TIMEOUT_S) -> dict[str, object] | None:
    """Return ``place`` with the window's layout as it is now, at the session's end.

    The layout and pane count are replaced (and ``layout_at`` moved) only when they changed
    and tmux still knows the pane; otherwise ``place`` comes back as it was. Blocks up to
    ``timeout_s`` seconds.
    """
    if not place or place.get("kind") != "tmux":
        return place
    now = probe_place({k: place[k] for k in ("kind", "socket", "server_pid", "pane_id") if k in place}, timeout_s=timeout_s)
    if not now or "window_layout" not in now or now.get("window_id") != place.get("window_id"):
        return place
    if now["window_layout"] == place.get("window_layout"):
        return place
    return {**place, **{k: now[k] for k in ("window_layout", "window_panes", "window_name", "layout_at")}}


def latest_place(meta: SessionMeta) -> dict[str, object] | None:
    """Return the newer (by ``layout_at``) of ``meta.place`` and the place in its ``meta.json``.

    The layout watcher (``app.outputs.place_watch``) may have stored a newer layout since
    ``meta`` was read; an unreadable ``meta.json`` leaves ``meta.place``.
    """
    place = meta.place
    if not place or place.get("kind") != "tmux":
        return place
    try:
        stored = read_meta(meta.folder).place
    except (OSError, DataError):
        return place
    if not stored or stored.get("kind") != "tmux":
        return place
    return stored if str(stored.get("layout_at") or "") > str(place.get("layout_at") or "") else place


def place_line(place: dict[str, object] | None) -> str:
    """Return the place in one line, e.g. ``tmux main:1 (editor) pane 0 of 2, layout 5e0b,...``."""
    if not place:
        return "-"
    if place.get("kind") == "tmux":
        if "window_layout" not in place:
            return f"tmux pane {place.get('pane_id')}"
        panes = place.get("window_panes")
        return (
            f"tmux {place.get('session_name')}:{place.get('window_index')} ({place.get('window_name')}) "
            f"pane {place.get('pane_index')} of {panes}, layout {place.get('window_layout')}"
        )
    screen = f", GNU screen {place['screen']}" if place.get("screen") else ""
    return f"terminal {place.get('cols')}x{place.get('rows')}{screen}"
