"""Where each agent sat: the tmux place recorded at start (and end), and ``resume --all``
rebuilding a two-pane window after shellkeep, the programs and the tmux server were killed -9.

Real tmux on a private server (``tmux -L NAME -f /dev/null``) in the test's HOME; each pane runs
``shellkeep run`` around a python3 program that prints ``ready LABEL`` and waits for a line.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.app.tmux_layout import layout_panes
from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, process_gone, run_sk, session_folders, wait_for_background, wait_until

PY = sys.executable
PROGRAM = "import sys; sys.stdout.write('ready ' + sys.argv[1] + '\\n> '); sys.stdout.flush(); sys.stdin.readline()"
GEOMETRY = "#{pane_width}x#{pane_height},#{pane_left},#{pane_top}"

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Tmux:
    """A private tmux server by socket name; ``env`` is the test's environment without $TMUX."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(["tmux", "-L", self.name, *args], env=env or self.env, capture_output=True, timeout=30)
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout.decode()

    def start(self, session: str, *args: str, env: dict[str, str] | None = None) -> None:
        """Start the server with one detached session of 100x30 (``args``: its cwd and command)."""
        self("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", *args, env=env)

    def client_env(self, session: str) -> dict[str, str]:
        """Return the environment of a program inside ``session`` as tmux sets it ($TMUX)."""
        socket, pid, session_id = self("display-message", "-p", "-t", session, "#{socket_path},#{pid},#{session_id}").strip().split(",")
        return {**self.env, "TMUX": f"{socket},{pid},{session_id.lstrip('$')}"}

    def panes(self, target: str) -> list[str]:
        """Return the geometry of ``target``'s panes in order: ``WxH,LEFT,TOP``."""
        return self("list-panes", "-t", target, "-F", GEOMETRY).split()


@pytest.fixture
def tmux(home: Paths) -> Iterator[Tmux]:
    server = Tmux(f"test-sk-{secrets.token_hex(4)}")
    try:
        yield server
    finally:
        done = subprocess.run(["tmux", "-L", server.name, "display-message", "-p", "#{socket_path}"], env=server.env,
                              capture_output=True, timeout=30)  # fmt: skip
        subprocess.run(["tmux", "-L", server.name, "kill-server"], env=server.env, capture_output=True, timeout=30)
        if done.stdout.strip():
            Path(done.stdout.decode().strip()).unlink(missing_ok=True)


def _run(folder: Path, label: str) -> list[str]:
    return ["-c", str(folder), shlex.join([*SK, "run", "--", PY, "-c", PROGRAM, label])]


def _metas(home: Paths) -> list[dict[str, object]]:
    return [json.loads(f.read_text()) for f in session_folders(home)]


def _recorded(home: Paths, label: str) -> dict[str, object] | None:
    """Return the meta of the session running ``label`` once its tmux place and output are stored."""
    for meta in _metas(home):
        if meta["command"][-1] == label and not meta.get("parent") and "window_layout" in (meta.get("place") or {}):  # type: ignore[index,operator]
            cast = Path(str(meta["cast"]))
            if cast.exists() and f"ready {label}" in cast.read_text():
                return meta
    return None


def _kill_9(*pids: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_until(lambda: all(process_gone(pid) for pid in pids), 10)


def _terminal_session(home: Paths, folder: Path) -> dict[str, object]:
    """Record ``gamma`` in a plain 90x25 terminal (no tmux) and kill -9 shellkeep and it."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    harness = PtyHarness.start(["env", "-C", str(folder), *SK, "run", "--", PY, "-c", PROGRAM, "gamma"], cols=90, rows=25, env=env)
    harness.expect(b"ready gamma")
    meta: dict[str, object] = wait_until(lambda: next((m for m in _metas(home) if m["command"][-1] == "gamma" and m.get("child_pid")), None), 10)  # type: ignore[assignment,index]
    _kill_9(int(str(meta["pid"])), int(str(meta["child_pid"])))
    harness.finish()
    return meta


def test_two_panes_killed_with_their_server_come_back_as_one_window_in_the_same_layout(
    home: Paths, tmp_path: Path, tmux: Tmux
) -> None:
    folders = {label: tmp_path / label for label in ("alpha", "beta", "gamma")}
    for folder in folders.values():
        folder.mkdir()
    tmux.start("work", *_run(folders["alpha"], "alpha"))
    tmux("split-window", "-h", "-l", "30", "-t", "work", *_run(folders["beta"], "beta"))  # uneven: 69 | 30 columns
    old = {label: wait_until(lambda label=label: _recorded(home, label), 20) for label in ("alpha", "beta")}
    wait_until(lambda: (_recorded(home, "beta") or {}).get("place", {}).get("window_panes") == 2, 10)  # type: ignore[union-attr]
    old = {label: _recorded(home, label) for label in ("alpha", "beta")}
    layout, geometry = tmux("display-message", "-p", "-t", "work", "#{window_layout}").strip(), tmux.panes("work")
    places = {label: meta["place"] for label, meta in old.items()}  # type: ignore[index]
    assert places["beta"]["window_layout"] == layout and len(geometry) == 2  # type: ignore[index]
    assert places["alpha"]["window_id"] == places["beta"]["window_id"] and places["alpha"]["session_name"] == "work"  # type: ignore[index]
    assert (places["alpha"]["pane_index"], places["beta"]["pane_index"]) == (0, 1)  # type: ignore[index]
    shown = run_sk("show", str(old["beta"]["id"]))  # type: ignore[index]
    assert f"tmux work:{places['beta']['window_index']} (".encode() in shown.stdout and b"pane 1 of 2" in shown.stdout  # type: ignore[index]
    gamma = _terminal_session(home, folders["gamma"])
    gamma_shown = json.loads(run_sk("show", "--json", str(gamma["id"])).stdout)
    assert gamma_shown["place"] == {"kind": "terminal", "cols": 90, "rows": 25}

    server_pid = int(tmux("display-message", "-p", "-t", "work", "#{pid}"))
    recorders = [int(str(m["pid"])) for m in old.values()]  # type: ignore[index]
    _kill_9(*recorders, *(int(str(m["child_pid"])) for m in old.values()))  # type: ignore[index]
    # Reaped by their parent, the tmux server, before it goes: a zombie still counts as running.
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in recorders), 10)
    _kill_9(server_pid)
    tmux.start("main", env={k: v for k, v in tmux.env.items() if not k.startswith("SHELLKEEP_")})
    env = tmux.client_env("main")

    printed = run_sk("resume", "--all", "--print", "--no-screen", env=env)
    assert printed.returncode == 0, printed.stderr
    together, alone = [shlex.split(line) for line in printed.stdout.decode().splitlines()]
    steps = " ".join(together).split(" ; ")
    assert steps[0].startswith("tmux new-window -n alpha-") and steps[0].endswith(f"resume {old['alpha']['id']} --no-screen")  # type: ignore[index]
    assert steps[1].startswith("split-window -c " + str(folders["beta"])) and steps[1].endswith(f"resume {old['beta']['id']} --no-screen")  # type: ignore[index]
    assert steps[2] == f"select-layout {layout}" and len(steps) == 3
    assert alone[:4] == ["tmux", "new-window", "-n", alone[3]] and alone[3].startswith("gamma-") and ";" not in alone
    outside = run_sk("resume", "--all", "--dry-run", "--no-screen", env=tmux.env)  # no $TMUX: one after another
    assert b"2 of them sat in tmux; run 'shellkeep resume --all' inside tmux" in outside.stderr
    one_by_one = [line.split()[-2] for line in outside.stdout.decode().splitlines()]  # oldest first: either pane's may be
    assert set(one_by_one[:2]) == {old["alpha"]["id"], old["beta"]["id"]} and one_by_one[2] == gamma["id"]  # type: ignore[index]
    assert not [m for m in _metas(home) if m.get("parent")]  # --print and --dry-run ran nothing

    result = run_sk("resume", "--all", "--no-screen", env=env)
    assert result.returncode == 0, result.stderr
    assert b"opened 2 tmux windows for 3 sessions" in result.stderr
    windows = tmux("list-windows", "-t", "main", "-F", "#{window_index} #{window_panes} #{window_name}").splitlines()[1:]
    assert [w.split()[1:] for w in windows] == [["2", together[3]], ["1", alone[3]]]
    rebuilt = f"main:{windows[0].split()[0]}"
    assert tmux.panes(rebuilt) == geometry  # the same panes, sizes and places as before the kill
    for pane, label in enumerate(("alpha", "beta")):
        wait_until(lambda pane=pane, label=label: f"ready {label}" in tmux("capture-pane", "-p", "-t", f"{rebuilt}.{pane}"), 30)
    wait_until(lambda: "ready gamma" in tmux("capture-pane", "-p", "-t", f"main:{windows[1].split()[0]}"), 30)

    children = wait_until(lambda: len(kids := {m["parent"]: m for m in _metas(home) if m.get("parent")}) == 3 and kids, 20)
    assert set(children) == {old["alpha"]["id"], old["beta"]["id"], gamma["id"]}  # type: ignore[arg-type,index]
    new_panes = tmux("list-panes", "-t", rebuilt, "-F", "#{pane_id}").split()
    assert [children[old[label]["id"]]["place"]["pane_id"] for label in ("alpha", "beta")] == new_panes  # type: ignore[index]
    for index in (w.split()[0] for w in windows):
        for pane in tmux("list-panes", "-t", f"main:{index}", "-F", "#{pane_id}").split():
            tmux("send-keys", "-t", pane, "done", "Enter")
    wait_until(lambda: all(m.get("status") != "running" for m in _metas(home) if m.get("parent")), 30)
    wait_for_background(home)


def test_the_layout_is_stored_again_at_the_end_when_the_window_was_split_later(home: Paths, tmp_path: Path, tmux: Tmux) -> None:
    tmux.start("work", *_run(tmp_path, "alpha"))
    first: dict[str, object] = wait_until(lambda: _recorded(home, "alpha"), 20)  # type: ignore[assignment]
    assert first["place"]["window_panes"] == 1  # type: ignore[index]
    tmux("split-window", "-v", "-t", "work", "-c", str(tmp_path), shlex.join([PY, "-c", "import sys; sys.stdin.readline()"]))
    layout = tmux("display-message", "-p", "-t", "work", "#{window_layout}").strip()
    tmux("send-keys", "-t", str(first["place"]["pane_id"]), "done", "Enter")  # type: ignore[index]
    ended = wait_until(lambda: next((m for m in _metas(home) if m["id"] == first["id"] and m["status"] == "finished"), None), 20)
    assert ended["place"]["window_layout"] == layout and ended["place"]["window_panes"] == 2  # type: ignore[index]
    assert ended["place"]["layout_at"] > first["place"]["layout_at"]  # type: ignore[index]
    tmux("kill-server")  # it and the other pane carry SHELLKEEP_HOME: wait_for_background would wait on them
    wait_for_background(home)


def test_a_split_while_it_runs_is_stored_before_a_kill_9(home: Paths, tmp_path: Path, tmux: Tmux) -> None:
    """The layout a crash leaves behind is the last one seen: the pane's resize wakes the watcher."""
    tmux.start("work", *_run(tmp_path, "alpha"))
    first: dict[str, object] = wait_until(lambda: _recorded(home, "alpha"), 20)  # type: ignore[assignment]
    assert first["place"]["window_panes"] == 1  # type: ignore[index]
    tmux("split-window", "-h", "-t", "work", "-c", str(tmp_path), shlex.join([PY, "-c", "import sys; sys.stdin.readline()"]))
    tmux("resize-pane", "-t", str(first["place"]["pane_id"]), "-x", "70")  # type: ignore[index]
    layout = tmux("display-message", "-p", "-t", "work", "#{window_layout}").strip()
    assert layout_panes(layout) == [first["place"]["pane_id"], layout_panes(layout)[1]]  # type: ignore[index]

    def stored() -> dict[str, object] | None:
        meta: dict[str, object] = json.loads((Path(str(first["cast"])).parent / "meta.json").read_text())
        return meta if meta["place"]["window_layout"] == layout else None  # type: ignore[index]

    meta = wait_until(stored, 20)
    assert meta["status"] == "running" and meta["place"]["window_panes"] == 2  # type: ignore[index]
    _kill_9(int(str(first["pid"])), int(str(first["child_pid"])))
    assert json.loads((Path(str(first["cast"])).parent / "meta.json").read_text())["place"]["window_layout"] == layout
    tmux("kill-server")
    wait_for_background(home)


def test_panes_get_the_data_folder_xdg_variables_chose_and_a_pane_whose_resume_fails_stays_open(
    home: Paths, tmp_path: Path, tmux: Tmux
) -> None:
    """The user's shell sets XDG_DATA_HOME and XDG_CONFIG_HOME, the tmux server's environment
    has neither (nor SHELLKEEP_HOME): each pane is given the data folder and config file they
    chose. A pane whose resume fails keeps its error on screen until Enter."""
    xdg = {"XDG_DATA_HOME": str(tmp_path / "xdg-data"), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config")}
    paths = Paths(home=tmp_path / "xdg-data" / "shellkeep", config_file=tmp_path / "xdg-config" / "shellkeep" / "config.toml")
    bare = {k: v for k, v in tmux.env.items() if not k.startswith(("SHELLKEEP_", "XDG_"))}
    folders = {label: tmp_path / label for label in ("alpha", "beta")}
    for folder in folders.values():
        folder.mkdir()
    tmux.start("work", *_run(folders["alpha"], "alpha"), env={**bare, **xdg})  # recorded under the XDG folders
    tmux("split-window", "-h", "-t", "work", *_run(folders["beta"], "beta"))
    wait_until(lambda: (_recorded(paths, "beta") or {}).get("place", {}).get("window_panes") == 2, 20)  # type: ignore[union-attr]
    old = {label: wait_until(lambda label=label: _recorded(paths, label), 20) for label in ("alpha", "beta")}
    recorders = [int(str(m["pid"])) for m in old.values()]  # type: ignore[index]
    _kill_9(*recorders, *(int(str(m["child_pid"])) for m in old.values()))  # type: ignore[index]
    # Reaped by their parent, the tmux server, before it goes: a zombie still counts as running.
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in recorders), 10)
    gone = ["tmux", "-L", tmux.name, "has-session"]  # its panes closed, the server ends
    wait_until(lambda: subprocess.run(gone, env=bare, capture_output=True, timeout=30).returncode != 0, 10)
    tmux.start("main", env=bare)
    env = {**{k: v for k, v in tmux.client_env("main").items() if not k.startswith(("SHELLKEEP_", "XDG_"))}, **xdg}

    printed = run_sk("resume", "--all", "--print", "--no-screen", env=env)
    assert printed.returncode == 0, printed.stderr
    [line] = printed.stdout.decode().splitlines()  # one window: the sessions shared one
    argv = shlex.split(line)
    assert argv.count(f"SHELLKEEP_HOME={paths.home}") == 2 and argv.count(f"SHELLKEEP_CONFIG={paths.config_file}") == 2

    # The printed command, run when the sessions cannot be found: each pane shows why and waits.
    away = tmp_path / "away"
    paths.projects.rename(away)
    done = subprocess.run(["tmux", "-L", tmux.name, *argv[1:]], env=env, capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    failed = tmux("list-windows", "-t", "main", "-F", "#{window_index}").split()[1]
    for pane in (0, 1):
        wait_until(lambda pane=pane: "press Enter to close this pane" in tmux("capture-pane", "-pJ", "-t", f"main:{failed}.{pane}"), 30)
        screen = tmux("capture-pane", "-pJ", "-t", f"main:{failed}.{pane}")
        assert "no session matches" in screen and "resume exited with status 2" in screen
    assert tmux("display-message", "-p", "-t", f"main:{failed}", "#{window_panes}").strip() == "2"
    for pane in tmux("list-panes", "-t", f"main:{failed}", "-F", "#{pane_id}").split():
        tmux("send-keys", "-t", pane, "Enter")
    wait_until(lambda: len(tmux("list-windows", "-t", "main", "-F", "#{window_index}").split()) == 1, 10)
    shutil.rmtree(paths.projects, ignore_errors=True)
    away.rename(paths.projects)

    result = run_sk("resume", "--all", "--no-screen", env=env)
    assert result.returncode == 0, result.stderr
    assert b"opened 1 tmux window for 2 sessions" in result.stderr
    rebuilt = "main:" + tmux("list-windows", "-t", "main", "-F", "#{window_index}").split()[1]
    for pane, label in enumerate(("alpha", "beta")):
        wait_until(lambda pane=pane, label=label: f"ready {label}" in tmux("capture-pane", "-p", "-t", f"{rebuilt}.{pane}"), 30)
    children = wait_until(lambda: len(kids := {m["parent"]: m for m in _metas(paths) if m.get("parent")}) == 2 and kids, 20)
    assert set(children) == {old["alpha"]["id"], old["beta"]["id"]}  # type: ignore[arg-type,index]
    for pane in tmux("list-panes", "-t", rebuilt, "-F", "#{pane_id}").split():
        tmux("send-keys", "-t", pane, "done", "Enter")
    wait_until(lambda: all(m.get("status") != "running" for m in _metas(paths) if m.get("parent")), 30)
    wait_for_background(paths)
