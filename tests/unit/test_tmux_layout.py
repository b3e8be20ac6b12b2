"""``app.place`` (where a session sat) and ``app.tmux_layout`` (the windows ``resume --all`` opens)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shellkeep.app.place import place_from_env, place_line, probe_place, refresh_place
from shellkeep.app.resume_all import Comeback, ResumeAllPlan
from shellkeep.app.tmux_layout import TmuxWindow, layout_panes, tmux_windows
from shellkeep.store.session import SessionMeta
from shellkeep.termsize import TermSize

THREE = "d02f,100x30,0,0{43x30,0,0,0,56x30,44,0[56x15,44,0,1,56x14,44,16,2]}"
ONE = "a87d,100x30,0,0,0"


@pytest.mark.parametrize(
    ("layout", "panes"),
    [
        pytest.param(ONE, ["%0"], id="one-pane"),
        pytest.param(THREE, ["%0", "%1", "%2"], id="side-by-side-then-stacked"),
        pytest.param("f2d6,100x30,0,0{69x30,0,0,12,30x30,70,0,3}", ["%12", "%3"], id="ids-out-of-order"),
        pytest.param("7d5b,100x30,0,0{69x30,0,0,12,30x30,70,0,3}", [], id="wrong-checksum"),
        pytest.param("a87d,100x30,0,0,0;rm -rf", [], id="not-only-cells"),
        pytest.param("", [], id="empty"),
        pytest.param("not a layout", [], id="garbage"),
    ],
)
def test_layout_panes_lists_the_cells_pane_ids_in_order_of_a_checked_layout(layout: str, panes: list[str]) -> None:
    assert layout_panes(layout) == panes


def _tmux(pane: str, layout: str, at: str, *, window: str = "@1", server: int = 100) -> dict[str, object]:
    return {"kind": "tmux", "socket": "/tmp/tmux-1/default", "server_pid": server, "pane_id": pane, "window_id": window,
            "window_layout": layout, "window_panes": len(layout_panes(layout)), "layout_at": at}  # fmt: skip


def _comeback(n: int, place: dict[str, object] | None) -> Comeback:
    meta = SessionMeta(id=f"s{n}", project="p", project_root=f"/w/p{n}", cwd=f"/w/p{n}", command=["claude"], agent="claude",
                       started_at=f"2026-01-01T00:00:0{n}.000Z", place=place)  # fmt: skip
    return Comeback(meta, ("shellkeep", "resume", meta.id), Path(meta.cwd), f"p{n}-claude")


def _plan(*comebacks: Comeback) -> ResumeAllPlan:
    return ResumeAllPlan(comebacks, datetime(2026, 1, 1, tzinfo=timezone.utc), True, True)


def test_sessions_of_one_window_share_a_window_in_its_newest_layout_and_the_rest_open_alone() -> None:
    left = _comeback(1, _tmux("%0", ONE, "2026-01-01T00:00:01.000Z"))  # recorded before the window was split
    right_bottom = _comeback(2, _tmux("%2", THREE, "2026-01-01T00:00:05.000Z"))
    moved = _comeback(3, _tmux("%9", THREE, "2026-01-01T00:00:03.000Z"))  # its pane is not in the layout
    plain = _comeback(4, {"kind": "terminal", "cols": 80, "rows": 24})
    other_server = _comeback(5, _tmux("%0", ONE, "2026-01-01T00:00:06.000Z", server=200))
    unknown_layout = _comeback(6, {"kind": "tmux", "socket": "/tmp/tmux-1/default", "server_pid": 100, "pane_id": "%1"})

    windows = tmux_windows(_plan(left, right_bottom, moved, plain, other_server, unknown_layout))

    assert windows == (
        TmuxWindow((left, None, right_bottom), THREE),  # the middle cell held no session: a shell
        TmuxWindow((moved,)),
        TmuxWindow((plain,)),
        TmuxWindow((other_server,)),
        TmuxWindow((unknown_layout,)),
    )
    env = {"SHELLKEEP_HOME": "/h", "SHELLKEEP_CONFIG": "/c.toml"}
    passed = ("-e", "SHELLKEEP_HOME=/h", "-e", "SHELLKEEP_CONFIG=/c.toml")
    assert windows[0].tmux_argv(env) == (
        "tmux", "new-window", "-n", "p1-claude", "-c", "/w/p1", *passed, left.pane_command,
        ";", "split-window", "-c", "/w/p1", *passed,
        ";", "split-window", "-c", "/w/p2", *passed, right_bottom.pane_command,
        ";", "select-layout", THREE,
    )  # fmt: skip
    assert right_bottom.pane_command.startswith("sh -c ") and right_bottom.pane_command.endswith(" sh shellkeep resume s2")
    assert windows[2].tmux_argv(env) == plain.tmux_argv(env)  # as before: one window of its own


def test_a_window_whose_first_cell_held_no_session_opens_with_a_shell_and_takes_the_first_sessions_name() -> None:
    bottom = _comeback(1, _tmux("%2", THREE, "2026-01-01T00:00:05.000Z"))
    [window] = tmux_windows(_plan(bottom))
    argv = window.tmux_argv({})
    assert argv[:6] == ("tmux", "new-window", "-n", "p1-claude", "-c", "/w/p1")
    assert argv[6:9] == (";", "split-window", "-c") and argv.count(bottom.pane_command) == 1
    assert argv[-3:] == (";", "select-layout", THREE) and argv.count("split-window") == 2


def test_place_from_env_reads_tmux_screen_or_the_terminal_size() -> None:
    size = TermSize(cols=120, rows=40)
    assert place_from_env({"TMUX": "/tmp/tmux-1/default,4242,0", "TMUX_PANE": "%7"}, size) == {
        "kind": "tmux", "socket": "/tmp/tmux-1/default", "server_pid": 4242, "pane_id": "%7"}  # fmt: skip
    assert place_from_env({"STY": "123.pts-0.host"}, size) == {"kind": "terminal", "cols": 120, "rows": 40, "screen": "123.pts-0.host"}
    assert place_from_env({"TMUX": "/tmp/x,1,0"}, size) == {"kind": "terminal", "cols": 120, "rows": 40}  # no pane: not a tmux client
    assert place_line(place_from_env({}, size)) == "terminal 120x40"
    assert place_line(None) == "-"
    full = {**_tmux("%2", THREE, "2026"), "session_name": "work", "window_index": 1, "window_name": "edit", "pane_index": 2}
    assert place_line(full) == f"tmux work:1 (edit) pane 2 of 3, layout {THREE}"


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_tmux_that_cannot_answer_leaves_the_place_as_it_was(tmp_path: Path) -> None:
    gone = {"kind": "tmux", "socket": str(tmp_path / "no-server"), "server_pid": 1, "pane_id": "%0"}
    assert probe_place(gone) == gone  # real tmux, no server on that socket
    recorded = {**gone, "window_id": "@0", "window_layout": ONE, "window_panes": 1}
    assert refresh_place(recorded) == recorded
    terminal: dict[str, object] = {"kind": "terminal", "cols": 80, "rows": 24}
    assert probe_place(terminal) is terminal and refresh_place(None) is None


def test_a_layout_tmux_would_refuse_opens_each_session_alone() -> None:
    broken = "0000,100x30,0,0{43x30,0,0,0,56x30,44,0,1}"  # an edited meta.json: the checksum is wrong
    first, second = _comeback(1, _tmux("%0", broken, "1")), _comeback(2, _tmux("%1", broken, "2"))
    assert tmux_windows(_plan(first, second)) == (TmuxWindow((first,)), TmuxWindow((second,)))
