"""Tests for shellkeep/cli/browse.py: the session picker, driven headless through Textual's pilot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from shellkeep.app.context import open_context
from shellkeep.tui.picker import picker_app, run_picker
from shellkeep.tui.rows import Choice
from shellkeep.errors import SessionNotFound, UserInputError
from shellkeep.store.paths import Paths
from tests.unit.test_resume import exchange, make_session

pytest.importorskip("textual")

SIZE = (140, 30)


def _pick(paths: Paths, project: Path, keys: list[str], *, all_projects: bool = False, allow_replay: bool = True) -> object:
    """Run the picker headless, press ``keys`` (Textual key names), and return its result."""
    app = picker_app(open_context(paths=paths, cwd=project), all_projects=all_projects, allow_replay=allow_replay)

    async def drive() -> object:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
            if app.is_running:
                await pilot.press("escape")
        return app.return_value

    return asyncio.run(drive())


def _with_screen(meta: object, text: str) -> None:
    with open(meta.cast, "a") as fh:  # type: ignore[attr-defined]
        fh.write(json.dumps([0.1, "o", text]) + "\n")


@pytest.fixture
def sessions(home: Paths) -> list[str]:
    project = Path.cwd()
    older = make_session(home, project, 1, command=("codex",), agent="codex", exchanges=[exchange(0, "rename the parser")])
    newer = make_session(home, project, 2, status="killed", command=("claude",), agent="claude",
                         exchanges=[exchange(0, "fix the flaky test", "Done: the test waits for the file.")])  # fmt: skip
    _with_screen(newer, "\x1b[1mclaude\x1b[0m last words on screen\r\n")
    return [newer.id, older.id]


def test_enter_resumes_the_highlighted_session(home: Paths, sessions: list[str]) -> None:
    assert _pick(home, Path.cwd(), ["enter"]) == Choice("resume", sessions[0])
    assert _pick(home, Path.cwd(), ["down", "enter"]) == Choice("resume", sessions[1])
    assert _pick(home, Path.cwd(), ["down", "down", "up", "enter"]) == Choice("resume", sessions[0])


def test_typing_filters_on_every_word(home: Paths, sessions: list[str]) -> None:
    # "parser" is only in the older session's prompt; "codex" in its agent.
    assert _pick(home, Path.cwd(), [*"codex parser", "enter"]) == Choice("resume", sessions[1])
    assert _pick(home, Path.cwd(), [*"nothing like it", "enter"]) is None  # nothing to pick: Enter does nothing


def test_replay_key_and_leaving(home: Paths, sessions: list[str]) -> None:
    assert _pick(home, Path.cwd(), ["ctrl+r"]) == Choice("replay", sessions[0])
    assert _pick(home, Path.cwd(), ["ctrl+r"], allow_replay=False) is None  # resume --pick: Enter only
    assert _pick(home, Path.cwd(), ["escape"]) is None


def test_a_key_shows_every_project(home: Paths, sessions: list[str], tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = make_session(home, elsewhere, 5, command=("aider",), agent="aider", exchanges=[])
    assert _pick(home, Path.cwd(), ["enter"]) == Choice("resume", sessions[0])
    assert _pick(home, Path.cwd(), ["ctrl+a", "enter"]) == Choice("resume", other.id)
    assert _pick(home, Path.cwd(), ["enter"], all_projects=True) == Choice("resume", other.id)
    # A project without sessions opens on every project's.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _pick(home, empty, ["enter"]) == Choice("resume", other.id)


def test_preview_shows_the_last_screen_and_exchanges(home: Paths, sessions: list[str]) -> None:
    app = picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=False, allow_replay=True)

    async def drive() -> tuple[str, str]:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = str(app.query_one("#screen").render())
            exchanges = str(app.query_one("#exchanges").render())
            await pilot.press("escape")
        return screen, exchanges

    screen, exchanges = asyncio.run(drive())
    assert "claude last words on screen" in screen
    assert "› fix the flaky test" in exchanges and "Done: the test waits for the file." in exchanges


def test_nothing_to_pick_or_no_terminal(home: Paths) -> None:
    with pytest.raises(SessionNotFound, match="no sessions recorded in project"):
        picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=False, allow_replay=False)
    with pytest.raises(UserInputError, match="the session picker needs a terminal"):
        run_picker(open_context(paths=home, cwd=Path.cwd()), all_projects=False, allow_replay=False)


def test_preview_builds_the_exchanges_of_a_small_recording_never_collected(home: Paths) -> None:
    from tests.unit.test_resume import _cast_with_two_prompts

    meta = make_session(home, Path.cwd(), 1, command=("notes",))
    _cast_with_two_prompts(meta)
    app = picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=False, allow_replay=True)

    async def drive() -> str:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            text = str(app.query_one("#exchanges").render())
            await pilot.press("escape")
        return text

    assert "› one\nfirst answer\n\n› two\nsecond answer" in asyncio.run(drive())
    assert not (meta.folder / "exchanges.jsonl").exists()  # a preview stores nothing


def test_a_preview_is_an_audited_read(home: Paths, sessions: list[str]) -> None:
    from shellkeep.store.audit import read_entries

    _pick(home, Path.cwd(), ["down"])  # previews the newest, then the next one
    previewed = [(e.command, e.session, e.detail) for e in read_entries(home)]
    assert ("browse", sessions[0], "last screen") in previewed
    assert ("browse", sessions[1], "last screen") in previewed


def test_a_session_whose_key_is_missing_is_still_offered(home: Paths, sessions: list[str], no_os_keyring: None) -> None:
    pytest.importorskip("cryptography")
    from shellkeep.agents.base import Exchange
    from shellkeep.vault.access import Vault
    from shellkeep.vault.exchanges import write_exchanges
    from shellkeep.vault.keys import current_key, forget_cached_keys

    current_key(home, create=True)
    [folder] = [f for f in home.projects.glob("*/*") if f.name == sessions[1]]
    write_exchanges(folder, [Exchange(index=0, time=None, prompt="sealed prompt", answer="ok")], Vault(home, encrypt=True))
    (home.home / "keys" / "keys.json").unlink()
    forget_cached_keys()
    assert _pick(home, Path.cwd(), ["down", "enter"]) == Choice("resume", sessions[1])


def test_sessions_shorter_than_a_second_without_input_are_left_out(home: Paths, sessions: list[str]) -> None:
    import dataclasses

    from shellkeep.store.session import read_meta, write_meta

    [folder] = [f for f in home.projects.glob("*/*") if f.name == sessions[0]]
    write_meta(dataclasses.replace(read_meta(folder), duration=0.4, input_bytes=0))  # the newest becomes a blip
    assert _pick(home, Path.cwd(), ["enter"]) == Choice("resume", sessions[1])
    app = picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=False, allow_replay=False, all_sessions=True)

    async def drive() -> object:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("enter")
        return app.return_value

    assert asyncio.run(drive()) == Choice("resume", sessions[0])


@pytest.mark.parametrize("cols", [80, 100, 140], ids=["80", "100", "140"])
def test_rows_show_title_or_first_prompt_and_fit_the_terminal(home: Paths, sessions: list[str], cols: int) -> None:
    import dataclasses

    from textual.widgets import DataTable

    from shellkeep.store.session import read_meta, write_meta

    [older] = [f for f in home.projects.glob("*/*") if f.name == sessions[1]]
    write_meta(dataclasses.replace(read_meta(older), about="Rename the parser module"))  # the agent's own title
    app = picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=True, allow_replay=False)

    async def drive() -> tuple[list[list[str]], int, int]:
        async with app.run_test(size=(cols, 24)) as pilot:
            await pilot.pause()
            table = app.query_one("#table", DataTable)
            rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
            used, room = table.virtual_size.width, table.size.width
            await pilot.press("escape")
        return rows, used, room

    rows, used, room = asyncio.run(drive())
    assert used <= room <= cols  # no column runs past the screen: nothing to scroll sideways
    assert rows[0][-1] == "fix the flaky test"  # the first prompt
    assert "Rename the parser module".startswith(rows[1][-1].rstrip("…"))  # the agent's title first (cut to fit)
    assert (sessions[0] in rows[0]) is False  # no room for the id beside the project; Enter still picks by id


def test_every_project_shows_the_pulled_sessions_marked_with_their_machine(home: Paths, sessions: list[str], tmp_path: Path) -> None:
    from shellkeep.app.sync import pull, push
    from shellkeep.store.session import host_name

    pytest.importorskip("obstore")
    desk = Paths(tmp_path / "desk", tmp_path / "desk.toml")
    theirs = make_session(desk, Path.cwd(), 9, agent="claude", exchanges=[exchange(0, "tune the far cache")])
    url = f"file://{tmp_path / 'share'}"
    push(open_context(paths=desk, cwd=Path.cwd()), url)
    pull(open_context(paths=home, cwd=Path.cwd()), url)
    assert _pick(home, Path.cwd(), ["enter"]) == Choice("resume", sessions[0])  # this project: this machine's only
    assert _pick(home, Path.cwd(), ["ctrl+a", *"far cache", "ctrl+r"]) == Choice("replay", theirs.id)
    app = picker_app(open_context(paths=home, cwd=Path.cwd()), all_projects=True, allow_replay=True)

    async def drive() -> tuple[list[str], list[str], str, str]:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            table = app.query_one("#table")
            columns = [str(c.label) for c in table.columns.values()]  # type: ignore[attr-defined]
            machines = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]  # type: ignore[attr-defined]
            screen = str(app.query_one("#screen").render())
            exchanges = str(app.query_one("#exchanges").render())
            await pilot.press("escape")
        return columns, machines, screen, exchanges

    columns, machines, screen, exchanges = asyncio.run(drive())
    assert columns[0] == "machine"
    host = host_name()
    assert machines == [host if len(host) <= 10 else host[:9] + "…", "-", "-"]  # the pulled one is the newest
    assert "recorded on" in screen and "fetched when it is replayed" in screen  # the preview fetched nothing
    assert "› tune the far cache" in exchanges
    assert list(home.remotes.glob("*/projects/*/*/exchanges.jsonl")) and not list(home.remotes.glob("*/projects/*/*/session.cast*"))
