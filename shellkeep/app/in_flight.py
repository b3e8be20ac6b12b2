"""Know a session's files in flight: those changed since the last exchange that completed.

Two sources, joined: the agent's edit and write tool calls in the exchanges after that one
(``EDIT_TOOLS``, the path read from each call's summary, ``agents.records``), and the git
difference between that exchange's snapshot (its checkpoint, ``app.live_snapshots``) and
the work tree now. ``resume`` says them in one line, ``show`` lists them (``--json`` too),
``diff --in-flight`` prints the patch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from shellkeep.agents.base import Exchange, ToolCall
from shellkeep.app.checkpoints import DiffResult, NoSnapshot
from shellkeep.app.context import Context
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.git.snapshot import changed_paths, diff_text, take_snapshot, work_tree
from shellkeep.logs import get_logger
from shellkeep.store.checkpoints import Checkpoint, read_checkpoints
from shellkeep.store.session import SessionMeta, parse_iso

__all__ = ["EDIT_TOOLS", "InFlight", "InFlightFile", "TAIL_EXCHANGES", "edited_paths", "files_in_flight", "in_flight", "in_flight_diff", "in_flight_line"]

log = get_logger(__name__)

EDIT_TOOLS = frozenset(
    {
        "edit", "multiedit", "write", "notebookedit",  # Claude Code; OpenCode's edit, write
        "apply_patch",  # Codex
        "write_file", "replace",  # Gemini CLI, Qwen Code
        "create", "str_replace_editor", "str_replace_based_edit_tool",  # Copilot CLI
    }
)  # fmt: skip
"""The tools that write files, by name in lower case, as the agents call them."""

_PATCH_FILE: re.Pattern[str] | None = None  # compiled on first use

TAIL_EXCHANGES = 20
"""How many exchanges are read from the end of a transcript not collected yet."""


@dataclass(frozen=True, slots=True)
class InFlightFile:
    """One file in flight: ``path`` relative to the work tree (absolute when outside it);
    ``status`` as git sees it now against the snapshot (``A`` added, ``M`` changed, ``D``
    removed, ``T`` type changed; None: no difference now); ``tools``: the edit tools that
    named it, in order, without repeats."""

    path: str
    status: str | None
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class InFlight:
    """The files changed since exchange ``since_exchange`` completed (0: the session's
    start), whose files checkpoint ``checkpoint`` holds; ``files`` sorted by path."""

    since_exchange: int
    checkpoint: int
    files: tuple[InFlightFile, ...]

    def to_json(self) -> dict[str, object]:
        """Return ``since_exchange``, ``checkpoint`` and ``files`` (``path``, ``status``, ``tools``)."""
        return {
            "since_exchange": self.since_exchange,
            "checkpoint": self.checkpoint,
            "files": [{"path": f.path, "status": f.status, "tools": list(f.tools)} for f in self.files],
        }


def in_flight(meta: SessionMeta, exchanges: Sequence[Exchange], *, tail: bool = False) -> InFlight | None:
    """Return the files in flight of ``meta``, or None when no exchange boundary has a snapshot.

    exchanges: the session's own exchanges in order (``index`` 0-based; exchange K is
    ``index`` K-1); tail: they are the last few only, their indexes not the conversation's,
    so those sent after the boundary's snapshot count (and undated ones). A work tree that
    git cannot read now leaves the tool calls alone as the source (logged). Raises OSError
    when ``checkpoints.jsonl`` cannot be read.
    """
    boundary = _last_boundary(read_checkpoints(meta.folder))
    if boundary is None:
        return None
    since = boundary.exchange or 0
    root = Path(boundary.git_root or meta.cwd)
    tools: dict[str, list[str]] = {}
    for exchange in exchanges:
        if _after(exchange, since, _at(meta, boundary) if tail else None):
            for call in exchange.tool_calls:
                for path in edited_paths(call):
                    names = tools.setdefault(_relative(path, root), [])
                    names += [] if call.name in names else [call.name]
    status: dict[str, str] = {}
    try:
        if work_tree(root) is not None:
            now = take_snapshot(root, "shellkeep: the files now (for the files in flight)")
            status = {path: code for code, path in changed_paths(root, _commit(boundary), now.commit)}
    except ShellkeepError as exc:
        log.warning("cannot compare the files of %s with git: %s", meta.id, exc)
    files = tuple(InFlightFile(p, status.get(p), tuple(tools.get(p, ()))) for p in sorted({*status, *tools}))
    return InFlight(since, boundary.n, files)


def files_in_flight(ctx: Context, meta: SessionMeta) -> InFlight | None:
    """Return ``in_flight`` of ``meta`` with its exchanges (stored, else the last
    ``TAIL_EXCHANGES`` read from the end of the agent's transcript, quick whatever its size,
    as after a crash before the upkeep collected them); never raises: exchanges
    that cannot be read (a missing key) leave git alone as the source, and a session whose
    checkpoints cannot be read has none in flight (both logged)."""
    from shellkeep.app.conversation import gather
    from shellkeep.app.env_restore import agent_files_env
    from shellkeep.vault.exchanges import is_collected, read_exchanges

    try:
        if _last_boundary(read_checkpoints(meta.folder)) is None:
            return None  # no snapshot: no exchange to read (most sessions outside git)
    except OSError as exc:
        log.warning("cannot read the checkpoints of %s: %s", meta.id, exc)
        return None
    tail = not is_collected(meta)
    try:
        if not tail:
            exchanges = read_exchanges(meta, ctx.vault)
        else:  # cut short, not collected yet: the end of the agent's own transcript (nothing written)
            env = agent_files_env(ctx, meta)  # where the agent's transcript is: the session's environment
            exchanges = list(gather(meta, ctx.vault, env, from_recording=False, limit=TAIL_EXCHANGES).exchanges)
    except ShellkeepError as exc:
        log.info("the exchanges of %s are not readable for the files in flight: %s", meta.id, exc)
        exchanges = []
    try:
        return in_flight(meta, exchanges, tail=tail)
    except OSError as exc:
        log.warning("cannot read the checkpoints of %s: %s", meta.id, exc)
        return None


def in_flight_line(found: InFlight | None) -> str | None:
    """Return the one line ``resume`` prints about the files in flight, or None when none:
    ``files in flight: a.py, b/c.py (2 changed since the last answer)``."""
    if found is None or not found.files:
        return None
    names = [f.path for f in found.files]
    shown = ", ".join(names[:5]) + (f", … ({len(names) - 5} more)" if len(names) > 5 else "")
    since = "the last answer" if found.since_exchange else "the session started"
    return f"files in flight: {shown} ({len(names)} changed since {since})"


def in_flight_diff(meta: SessionMeta) -> DiffResult:
    """Return the patch from the last completed exchange's snapshot to the files now.

    Raises NoSnapshot (no exchange boundary has a snapshot), UserInputError (the work tree
    is gone), GitFailed.
    """
    boundary = _last_boundary(read_checkpoints(meta.folder))
    if boundary is None:
        raise NoSnapshot(
            f"session {meta.id} has no snapshot of an exchange's files (not an agent in a git work tree, or record.snapshots off)"
        )
    root = Path(boundary.git_root or ".")
    if work_tree(root) is None:
        raise UserInputError(f"{root} is no longer a git work tree; the files in flight cannot be compared")
    now = take_snapshot(root, "shellkeep: the files now (for diff --in-flight)")
    label = f"checkpoint {boundary.n} '{boundary.label}'"
    return DiffResult(diff_text(root, _commit(boundary), now.commit), label, "now")


def edited_paths(call: ToolCall) -> list[str]:
    """Return the paths an edit or write tool call names (its summary: the file path, or for
    ``apply_patch`` the files of the patch, ``update a.py, add b.py``); [] for other tools
    or a summary cut short."""
    if call.name.lower() not in EDIT_TOOLS or call.summary.endswith("…") or not call.summary.strip():
        return []
    if call.name.lower() != "apply_patch":
        return [call.summary.strip()]
    global _PATCH_FILE
    if _PATCH_FILE is None:
        _PATCH_FILE = re.compile(r"(?:\*\*\* (?:Add|Update|Delete) File: |\b(?:add|update|delete) )([^\s,]+)")
    return [m.group(1) for m in _PATCH_FILE.finditer(call.summary)]


def _last_boundary(checkpoints: Sequence[Checkpoint]) -> Checkpoint | None:
    """Return the checkpoint of the last exchange boundary with a snapshot, or None."""
    boundaries = [c for c in checkpoints if c.auto and c.exchange is not None and c.has_snapshot]
    return max(boundaries, key=lambda c: (c.exchange or 0, c.n), default=None)


def _at(meta: SessionMeta, checkpoint: Checkpoint) -> datetime | None:
    """Return when ``checkpoint`` was taken (UTC), or None when the start is unreadable."""
    try:
        return parse_iso(meta.started_at) + timedelta(seconds=checkpoint.time_s)
    except ValueError:
        return None


def _after(exchange: Exchange, since: int, taken_at: datetime | None) -> bool:
    """Return whether ``exchange`` came after exchange ``since``: by its number, or when
    ``taken_at`` is given (a tail of the conversation) by its time (undated: yes)."""
    if taken_at is None:
        return exchange.index + 1 > since
    try:
        return exchange.time is None or parse_iso(exchange.time) >= taken_at
    except ValueError:
        return True


def _relative(path: str, root: Path) -> str:
    candidate = Path(path)
    if not candidate.is_absolute():
        return path
    for inside, top in ((candidate, root), (candidate.resolve(), root.resolve())):
        try:
            return str(inside.relative_to(top))
        except ValueError:
            continue
    return path


def _commit(checkpoint: Checkpoint) -> str:
    assert checkpoint.snapshot is not None
    return checkpoint.snapshot
