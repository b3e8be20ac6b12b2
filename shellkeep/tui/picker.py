"""The session picker of ``shellkeep browse`` and ``shellkeep resume --pick``: a Textual app.

The project's sessions newest first (with those recorded at its former paths, as ``ls``
lists them; every project after Ctrl-A, with the sessions pulled from other machines by
``sync pull``, marked with their machine), a filter typed at the top
that keeps the sessions matching every word (id, name, agent, status, command, directory,
prompts), and a preview of the highlighted session's last screen (an audited read) and last
exchanges. Enter resumes it; Ctrl-R replays it (``browse`` only); Escape leaves.
Textual and rich are imported when the picker opens, never by other commands.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.app.context import Context
from shellkeep.app.moves import project_sessions
from shellkeep.app.conversation import gather
from shellkeep.app.reads import last_screen
from shellkeep.app.remote import remote_of, remote_sessions
from shellkeep.errors import SessionNotFound, ShellkeepError, UserInputError
from shellkeep.store.checkpoints import read_checkpoints
from shellkeep.store.paths import project_key
from shellkeep.store.session import SessionMeta, is_trivial
from shellkeep.app.display import format_local_time
from shellkeep.vault.exchanges import is_collected, read_exchanges

if TYPE_CHECKING:
    from textual.app import App

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
class _Entry:
    """One row of the list: the session and the lowercase text the filter searches."""

    meta: SessionMeta
    haystack: str
    first_prompt: str = ""
    machine: str = ""
    """The host a pulled session was recorded on ('' for this machine's)."""


def pick_session(ctx: Context, *, all_sessions: bool = False) -> str | None:
    """Open the picker on the context's project; return the id chosen with Enter, or None.

    Blocks until the user chooses or leaves. Raises UserInputError without a terminal and
    SessionNotFound when nothing was ever recorded.
    """
    choice = run_picker(ctx, all_projects=False, allow_replay=False, all_sessions=all_sessions)
    return choice.session_id if choice is not None else None


def run_picker(ctx: Context, *, all_projects: bool, allow_replay: bool, all_sessions: bool = False) -> Choice | None:
    """Run the picker full screen and return the user's choice, or None when they left.

    Raises UserInputError when stdin or stdout is not a terminal, ShellkeepError when Textual
    is missing, SessionNotFound when no session is stored in any project.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserInputError("the session picker needs a terminal; give a SESSION instead, see 'shellkeep ls'")
    try:
        app = picker_app(ctx, all_projects=all_projects, allow_replay=allow_replay, all_sessions=all_sessions)
    except ImportError as exc:
        raise ShellkeepError(f"the session picker needs the 'textual' package ({exc}); install it with pip") from exc
    return app.run()


def picker_app(ctx: Context, *, all_projects: bool, allow_replay: bool, all_sessions: bool = False) -> App[Choice | None]:
    """Return the picker as a Textual app (``run()`` it, or ``run_test()`` it headless).

    Sessions shorter than a second with no input (``store.session.is_trivial``) are left
    out unless ``all_sessions``.

    Raises SessionNotFound when no session is stored in any project; ImportError without Textual.
    """
    here = _entries(ctx, all_projects=False, all_sessions=all_sessions)
    everywhere = _entries(ctx, all_projects=True, all_sessions=all_sessions) if all_projects or not here else None
    if not here and not everywhere:
        raise SessionNotFound(f"no sessions recorded in project {project_key(ctx.project_root)} yet; run 'shellkeep' to record one")
    return _picker_class()(ctx, here, everywhere, all_projects or not here, allow_replay, all_sessions)


def _entries(ctx: Context, *, all_projects: bool, all_sessions: bool = False) -> list[_Entry]:
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
        words = [meta.id, meta.name or "", meta.title or "", meta.agent, meta.status, " ".join(meta.command), meta.cwd, meta.project, machine, prompts]
        entries.append(_Entry(meta, " ".join(words).lower(), first, machine))
    return entries


def matches(entry: _Entry, query: str) -> bool:
    """Return whether every whitespace-separated word of ``query`` occurs in the entry (any case)."""
    return all(word in entry.haystack for word in query.lower().split())


WIDE_COLS = 120
"""From this terminal width on, the picker shows the preview pane beside the list."""
_FIXED_COLS = {"session": 21, "machine": 10, "project": 14, "started": 11, "agent": 8, "status": 11, "ex": 3}
"""Widths of the columns before "title or prompt", in terminal columns (cells padded 1 each side)."""
_MIN_WHAT_COLS = 30
"""The id column is shown only when "title or prompt" keeps at least this many columns."""


def _columns(with_project: bool, list_cols: int, with_machine: bool = False) -> list[str]:
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
    """Return what a session is about, on one line: its name, title, first prompt, else its command."""
    text = meta.name or meta.title or first_prompt or " ".join(meta.command)
    return " ".join(text.split())


def _fit(text: str, cols: int) -> str:
    """Cut ``text`` to ``cols`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= cols else text[: max(0, cols - 1)] + "…"


def list_width(width_cols: int) -> int:
    """Return the list's width in a terminal ``width_cols`` wide (the preview takes 2/5 from ``WIDE_COLS`` on)."""
    return width_cols * 3 // 5 if width_cols >= WIDE_COLS else width_cols


def row_cells(entry: _Entry, with_project: bool, width_cols: int, with_machine: bool = False) -> tuple[str, ...]:
    """Return one row's cells for a list ``width_cols`` wide (the whole terminal when narrow).

    The last cell (title or prompt) takes the width the others leave; every cell is cut
    to its column, so a row fits the terminal from 80 columns on. with_machine: a
    ``machine`` cell first (the host of a pulled session, ``-`` for this machine's).
    """
    meta = entry.meta
    names = _columns(with_project, list_width(width_cols), with_machine)
    fixed = sum(_FIXED_COLS[n] + 2 for n in names[:-1])
    rest = max(10, list_width(width_cols) - fixed - 2 - 2)  # the last cell's padding, the scrollbar
    cells = {
        "session": meta.id,
        "machine": entry.machine or "-",
        "project": meta.project,
        "started": format_local_time(meta.started_at)[-11:],  # mm-dd HH:MM; the list is newest first
        "agent": meta.agent,
        "status": meta.status,
        "ex": str(meta.exchange_count or ""),
        "title or prompt": what_of(meta, entry.first_prompt),
    }
    return tuple(_fit(cells[n], _FIXED_COLS.get(n, rest)) for n in names)


def _preview_checkpoints(meta: SessionMeta) -> str:
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


def _preview_exchanges(ctx: Context, meta: SessionMeta) -> str:
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
        exchanges = list(gather(meta, ctx.vault).exchanges)[-PREVIEW_EXCHANGES:]
    if not exchanges:
        return "(no exchanges)"
    parts = []
    for exchange in exchanges:
        answer = exchange.answer.strip().splitlines()
        shown = answer[:PREVIEW_ANSWER_LINES] + (["…"] if len(answer) > PREVIEW_ANSWER_LINES else [])
        parts.append("› " + exchange.prompt.strip() + ("\n" + "\n".join(shown) if shown else ""))
    return "\n\n".join(parts)


_PickerFactory = Callable[["Context", "list[_Entry]", "list[_Entry] | None", bool, bool], "App[Choice | None]"]


@cache
def _picker_class() -> _PickerFactory:
    """Build the picker's App class (Textual is imported here, on first use)."""
    from rich.text import Text
    from textual import events
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Horizontal, Vertical, VerticalScroll
    from textual.widgets import DataTable, Footer, Input, Static

    class Picker(App[Choice | None]):
        """Sessions on the left, the highlighted one's last screen and exchanges on the right."""

        TITLE = "shellkeep"
        ENABLE_COMMAND_PALETTE = False
        CSS = """
        #filter { dock: top; }
        #sessions { width: 3fr; }
        #preview { width: 2fr; border-left: solid $primary; padding: 0 1; }
        #preview.narrow { display: none; }
        #screen { width: auto; }
        #exchanges { margin-top: 1; color: $text-muted; }
        #empty { padding: 1 2; color: $text-muted; }
        """
        BINDINGS = [
            Binding("enter", "choose('resume')", "Resume", priority=True),
            Binding("ctrl+r", "choose('replay')", "Replay", priority=True),
            Binding("ctrl+a", "toggle_projects", "All projects", priority=True),
            Binding("escape", "leave", "Quit", priority=True),
            Binding("up", "move(-1)", show=False, priority=True),
            Binding("down", "move(1)", show=False, priority=True),
            Binding("pageup", "move(-10)", show=False, priority=True),
            Binding("pagedown", "move(10)", show=False, priority=True),
        ]

        def __init__(
            self,
            ctx: Context,
            here: list[_Entry],
            everywhere: list[_Entry] | None,
            all_projects: bool,
            allow_replay: bool,
            all_sessions: bool = False,
        ) -> None:
            super().__init__()
            self._ctx = ctx
            self._here = here
            self._everywhere = everywhere
            self.all_projects = all_projects
            self.allow_replay = allow_replay
            self.all_sessions = all_sessions
            self._shown: list[_Entry] = []
            self._wide = True
            self._previews: dict[str, tuple[Text, str]] = {}

        def compose(self) -> ComposeResult:
            yield Input(placeholder="type to filter: id, name, agent, status, command, prompts", id="filter")
            with Horizontal():
                with Vertical(id="sessions"):
                    yield DataTable(id="table", cursor_type="row", zebra_stripes=True)
                    yield Static("", id="empty")
                with VerticalScroll(id="preview"):
                    yield Static("", id="screen")
                    yield Static("", id="exchanges")
            yield Footer()

        def on_mount(self) -> None:
            self.query_one("#filter", Input).focus()
            self._refill()

        def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
            if action == "choose" and parameters == ("replay",) and not self.allow_replay:
                return False
            return True

        # -- the list ---------------------------------------------------------------------

        def _entries(self) -> list[_Entry]:
            if not self.all_projects:
                return self._here
            if self._everywhere is None:
                self._everywhere = _entries(self._ctx, all_projects=True, all_sessions=self.all_sessions)
            return self._everywhere

        def _refill(self) -> None:
            query = self.query_one("#filter", Input).value
            table = self.query_one("#table", DataTable)
            table.clear(columns=True)
            width = self.size.width
            self._wide = width >= WIDE_COLS
            self.query_one("#preview").set_class(not self._wide, "narrow")
            entries = self._entries()
            with_machine = any(e.machine for e in entries)
            table.add_columns(*_columns(self.all_projects, list_width(width), with_machine))
            self._shown = [e for e in entries if matches(e, query)]
            for entry in self._shown:
                table.add_row(*row_cells(entry, self.all_projects, width, with_machine), key=entry.meta.id)
            scope = "any project" if self.all_projects else "this project (Ctrl-A: every project)"
            empty = "" if self._shown else f"no session of {scope} matches '{query}'" if query else f"no sessions in {scope}"
            self.query_one("#empty", Static).update(empty)
            if self._shown:
                table.move_cursor(row=0)
            self._show_preview()

        def on_input_changed(self, event: Input.Changed) -> None:
            self._refill()

        def on_resize(self, event: events.Resize) -> None:
            if (event.size.width >= WIDE_COLS) != self._wide:
                self._refill()

        def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
            self._show_preview()

        def _current(self) -> _Entry | None:
            table = self.query_one("#table", DataTable)
            if not self._shown or table.cursor_row is None or not 0 <= table.cursor_row < len(self._shown):
                return None
            return self._shown[table.cursor_row]

        def _show_preview(self) -> None:
            if not self._wide:
                return  # no pane to show it in: read nothing (each preview is an audited read)
            entry = self._current()
            screen, exchanges = (Text(""), "") if entry is None else self._preview(entry)
            self.query_one("#screen", Static).update(screen)
            self.query_one("#exchanges", Static).update(exchanges)

        def _preview(self, entry: _Entry) -> tuple[Text, str]:
            meta = entry.meta
            cached = self._previews.get(meta.id)
            if cached is None and entry.machine and not Path(meta.cast).exists():
                # Pulled, its recording not fetched: a preview does not fetch it (a replay does).
                screen = Text(f"(recorded on {entry.machine}; its recording is fetched when it is replayed)")
                cached = self._previews[meta.id] = (screen, _preview_checkpoints(meta) + _preview_exchanges(self._ctx, meta))
            if cached is None:
                try:
                    snapshot = last_screen(self._ctx, meta, command="browse")  # audited, as every read
                    screen = Text.from_ansi(snapshot.to_ansi(), no_wrap=True, overflow="crop")
                except (OSError, ShellkeepError) as exc:
                    screen = Text(f"(no last screen: {exc})")
                cached = self._previews[meta.id] = (screen, _preview_checkpoints(meta) + _preview_exchanges(self._ctx, meta))
            return cached

        # -- actions ----------------------------------------------------------------------

        def action_move(self, step: int) -> None:
            table = self.query_one("#table", DataTable)
            if self._shown:
                table.move_cursor(row=max(0, min(len(self._shown) - 1, (table.cursor_row or 0) + step)))

        def action_toggle_projects(self) -> None:
            self.all_projects = not self.all_projects
            self._refill()

        def action_choose(self, action: str) -> None:
            entry = self._current()
            if entry is not None:
                self.exit(Choice(action, entry.meta.id))

        def action_leave(self) -> None:
            self.exit(None)

    return Picker
