"""The session picker's Textual app: the list on the left, the highlighted session's preview on the right.

Imported only when the picker opens (``tui/picker.py``), so Textual and rich load with it.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Input, Static

from shellkeep.app.context import Context
from shellkeep.app.reads import last_screen
from shellkeep.errors import ShellkeepError
from shellkeep.tui.rows import (
    WIDE_COLS,
    Choice,
    Entry,
    columns,
    list_entries,
    list_width,
    matches,
    preview_checkpoints,
    preview_exchanges,
    row_cells,
)


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
        here: list[Entry],
        everywhere: list[Entry] | None,
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
        self._shown: list[Entry] = []
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

    def _entries(self) -> list[Entry]:
        if not self.all_projects:
            return self._here
        if self._everywhere is None:
            self._everywhere = list_entries(self._ctx, all_projects=True, all_sessions=self.all_sessions)
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
        table.add_columns(*columns(self.all_projects, list_width(width), with_machine))
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

    def _current(self) -> Entry | None:
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

    def _preview(self, entry: Entry) -> tuple[Text, str]:
        meta = entry.meta
        cached = self._previews.get(meta.id)
        if cached is None and entry.machine and not Path(meta.cast).exists():
            # Pulled, its recording not fetched: a preview does not fetch it (a replay does).
            screen = Text(f"(recorded on {entry.machine}; its recording is fetched when it is replayed)")
            cached = self._previews[meta.id] = (screen, preview_checkpoints(meta) + preview_exchanges(self._ctx, meta))
        if cached is None:
            try:
                snapshot = last_screen(self._ctx, meta, command="browse")  # audited, as every read
                screen = Text.from_ansi(snapshot.to_ansi(), no_wrap=True, overflow="crop")
            except (OSError, ShellkeepError) as exc:
                screen = Text(f"(no last screen: {exc})")
            cached = self._previews[meta.id] = (screen, preview_checkpoints(meta) + preview_exchanges(self._ctx, meta))
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
