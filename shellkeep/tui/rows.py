"""The session picker's rows: which sessions it lists, their filter text, cells and previews.

No Textual here: ``tui/app.py`` draws these rows, ``tui/picker.py`` opens it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.registry import typed_command
from shellkeep.app.context import Context
from shellkeep.app.moves import project_sessions
from shellkeep.app.conversation import gather
from shellkeep.app.env_restore import agent_files_env
from shellkeep.app.remote import remote_of, remote_sessions
from shellkeep.archive.listing import resumed_as_of
from shellkeep.store.checkpoints import read_checkpoints
from shellkeep.store.session import SessionMeta, is_trivial
from shellkeep.app.display import format_local_time
from shellkeep.errors import ShellkeepError
from shellkeep.vault.exchanges import is_collected, read_exchanges

PREVIEW_EXCHANGES = 3
PREVIEW_ANSWER_LINES = 6
PREVIEW_BUILD_MAX_BYTES = 2 << 20
PREVIEW_CHECKPOINTS = 5
"""Largest recording whose exchanges the preview builds itself (the rest wait for resume)."""


@dataclass(frozen=True, slots=True)
class Choice:
    """What the user picked: ``action`` is ``resume`` or ``replay``; ``session_id`` the session."""

    action: str
    session_id: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of the list: the session and the lowercase text the filter searches."""

    meta: SessionMeta
    haystack: str
    first_prompt: str = ""
    machine: str = ""
    """The host a pulled session was recorded on ('' for this machine's)."""
    resumed_as: str = ""
    """The id of the newest run that resumed this session ('' when none did)."""



def list_entries(ctx: Context, *, all_projects: bool, all_sessions: bool = False) -> list[Entry]:
    """Return the sessions of the project (or every project), newest first, with their filter text.

    Every project's include the sessions pulled from other machines, their host in
    ``machine`` (and in the filter text). Trivial sessions (``store.session.is_trivial``)
    are left out unless ``all_sessions``.
    """
    entries = []
    # This project's include those recorded at its former paths (a moved work tree), as in ``ls``.
    metas = ctx.sessions(all_projects=True) if all_projects else project_sessions(ctx)
    if all_projects:
        metas = sorted([*metas, *remote_sessions(ctx.paths)], key=lambda m: (m.started_at, m.id), reverse=True)
    resumed = resumed_as_of(metas)  # a resumed run is recorded in its project (or a former path of it)
    for meta in metas:
        if not all_sessions and is_trivial(meta):
            continue
        remote = remote_of(meta)
        machine = (remote.get("host") or "?") if remote else ""
        try:
            exchanges = read_exchanges(meta, ctx.vault)
        except ShellkeepError:  # sealed with a key no store holds (suspended): listed all the same
            exchanges = []
        prompts = " ".join(e.prompt for e in exchanges)
        first = next((e.prompt.strip() for e in exchanges if e.prompt.strip()), "")
        resumed_as = resumed.get(meta.id, "")
        words = [meta.id, meta.name or "", meta.title or "", meta.about or "", meta.agent, meta.status, " ".join(meta.command), meta.cwd, meta.project, machine, prompts]
        words += [f"resumed as {resumed_as}"] if resumed_as else []
        entries.append(Entry(meta, " ".join(words).lower(), first, machine, resumed_as))
    return entries


def matches(entry: Entry, query: str) -> bool:
    """Return whether every whitespace-separated word of ``query`` occurs in the entry (any case)."""
    return all(word in entry.haystack for word in query.lower().split())


WIDE_COLS = 120
"""From this terminal width on, the picker shows the preview pane beside the list."""
_FIXED_COLS = {"session": 21, "machine": 10, "project": 14, "started": 11, "agent": 8, "status": 11, "ex": 3}
"""Widths of the columns before "title or prompt", in terminal columns (cells padded 1 each side)."""
_MIN_WHAT_COLS = 30
"""The id column is shown only when "title or prompt" keeps at least this many columns."""


def columns(with_project: bool, list_cols: int, with_machine: bool = False) -> list[str]:
    """Return the column names for a list ``list_cols`` wide: the id only where it leaves room;
    ``machine`` (where a pulled session was recorded) with ``with_machine``."""
    columns = ["started", "agent", "status", "ex", "title or prompt"]
    if with_project:
        columns.insert(0, "project")
    if with_machine:
        columns.insert(0, "machine")
    fixed = sum(_FIXED_COLS[n] + 2 for n in columns[:-1])
    if list_cols - fixed - _FIXED_COLS["session"] - 2 >= _MIN_WHAT_COLS + 4:
        columns.insert(0, "session")
    return columns


def what_of(meta: SessionMeta, first_prompt: str) -> str:
    """Return what a session is about, on one line: its name, title, the agent's own title
    (``about``), its first prompt, else its command."""
    text = meta.name or meta.title or meta.about or first_prompt or " ".join(typed_command(meta.command, meta.agent, meta.agent_session_id))
    return " ".join(text.split())


def _fit(text: str, cols: int) -> str:
    """Cut ``text`` to ``cols`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= cols else text[: max(0, cols - 1)] + "…"


def list_width(width_cols: int) -> int:
    """Return the list's width in a terminal ``width_cols`` wide (the preview takes 2/5 from ``WIDE_COLS`` on)."""
    return width_cols * 3 // 5 if width_cols >= WIDE_COLS else width_cols


def row_cells(entry: Entry, with_project: bool, width_cols: int, with_machine: bool = False) -> tuple[str, ...]:
    """Return one row's cells for a list ``width_cols`` wide (the whole terminal when narrow).

    The last cell (title or prompt) takes the width the others leave; every cell is cut
    to its column, so a row fits the terminal from 80 columns on. with_machine: a
    ``machine`` cell first (the host of a pulled session, ``-`` for this machine's).
    """
    meta = entry.meta
    names = columns(with_project, list_width(width_cols), with_machine)
    fixed = sum(_FIXED_COLS[n] + 2 for n in names[:-1])
    rest = max(10, list_width(width_cols) - fixed - 2 - 2)  # the last cell's padding, the scrollbar
    cells = {
        "session": meta.id,
        "machine": entry.machine or "-",
        "project": meta.project,
        "started": format_local_time(meta.started_at)[-11:],  # mm-dd HH:MM; the list is newest first
        "agent": meta.agent,
        "status": "resumed" if entry.resumed_as else meta.status,
        "ex": str(meta.exchange_count or ""),
        # The status column is too narrow for the id: the run that resumed it leads the last cell.
        "title or prompt": (f"resumed as {entry.resumed_as} · " if entry.resumed_as else "") + what_of(meta, entry.first_prompt),
    }
    return tuple(_fit(cells[n], _FIXED_COLS.get(n, rest)) for n in names)


def preview_checkpoints(meta: SessionMeta) -> str:
    """Return the session's checkpoints as one line and a blank line ('' when it has none)."""
    try:
        checkpoints = read_checkpoints(meta.folder)
    except OSError:
        return ""
    if not checkpoints:
        return ""
    shown = ", ".join(
        f"{c.n}" + (f" '{c.label}'" if c.label else "") + ("" if c.has_snapshot else " (marker)")
        for c in checkpoints[-PREVIEW_CHECKPOINTS:]
    )
    more = f"{len(checkpoints) - PREVIEW_CHECKPOINTS} earlier, " if len(checkpoints) > PREVIEW_CHECKPOINTS else ""
    return f"checkpoints: {more}{shown}\n\n"


def preview_exchanges(ctx: Context, meta: SessionMeta) -> str:
    """Return the last exchanges as text; built from a small recording when never stored."""
    try:
        exchanges = read_exchanges(meta, ctx.vault, PREVIEW_EXCHANGES)
    except ShellkeepError as exc:  # a key missing, a damaged record: the preview says so
        return f"(no exchanges: {exc})"
    if not exchanges and not is_collected(meta):
        try:
            small = Path(meta.cast).stat().st_size <= PREVIEW_BUILD_MAX_BYTES
        except OSError:
            small = False
        if not small:
            return "(exchanges are read when the session is resumed)"
        exchanges = list(gather(meta, ctx.vault, agent_files_env(ctx, meta)).exchanges)[-PREVIEW_EXCHANGES:]
    if not exchanges:
        return "(no exchanges)"
    parts = []
    for exchange in exchanges:
        answer = exchange.answer.strip().splitlines()
        shown = answer[:PREVIEW_ANSWER_LINES] + (["…"] if len(answer) > PREVIEW_ANSWER_LINES else [])
        parts.append("› " + exchange.prompt.strip() + ("\n" + "\n".join(shown) if shown else ""))
    return "\n\n".join(parts)
