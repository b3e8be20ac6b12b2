"""``shellkeep resume --all`` after real recordings in two projects were killed with kill -9.

Each program prints ``ready NAME`` and a prompt, and ends after one line. Outside tmux the
sessions are resumed one after another in the same pty; inside tmux (a private server,
``tmux -L``, killed at the end) each opens in a window of its own.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, process_gone, run_sk, session_folders, wait_for_background, wait_until

PY = sys.executable
PROGRAM = "import sys; sys.stdout.write('ready ' + sys.argv[1] + '\\n> '); sys.stdout.flush(); sys.stdin.readline()"


def _killed_session(home: Paths, folder: Path, label: str) -> dict[str, object]:
    """Record the program in ``folder`` (a project of its own), kill -9 shellkeep; return its meta."""
    folder.mkdir()
    before = {f.parent for f in session_folders(home)}
    harness = PtyHarness.start(["env", "-C", str(folder), *SK, "run", "--", PY, "-c", PROGRAM, label])
    harness.expect(f"ready {label}".encode())
    [session] = wait_until(lambda: [f.parent for f in session_folders(home) if f.parent not in before], 10)  # type: ignore[misc]
    wait_until(lambda: f"ready {label}" in (session / "session.cast").read_text(), 10)
    meta = json.loads((session / "meta.json").read_text())
    os.kill(int(meta["pid"]), signal.SIGKILL)
    harness.finish()
    wait_until(lambda: meta.get("child_pid") is None or process_gone(int(meta["child_pid"])), 10)
    return meta


def _children(home: Paths) -> dict[object, dict[str, object]]:
    """Return the resumed runs by the session they resume."""
    metas = [json.loads(f.read_text()) for f in session_folders(home)]
    return {m["parent"]: m for m in metas if m.get("parent")}


@pytest.fixture
def two_cut(home: Paths, tmp_path: Path) -> list[dict[str, object]]:
    """Two sessions killed with kill -9, in the projects ``alpha`` and ``beta``, oldest first."""
    return [_killed_session(home, tmp_path / "alpha", "alpha"), _killed_session(home, tmp_path / "beta", "beta")]


def test_print_and_dry_run_list_every_session_cut_short_and_change_nothing(
    home: Paths, two_cut: list[dict[str, object]]
) -> None:
    outside_tmux = {k: v for k, v in os.environ.items() if k != "TMUX"}  # inside tmux, --print shows tmux commands
    printed = run_sk("resume", "--all", "--print", env=outside_tmux)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.decode().splitlines()
    assert [line.split()[-1] for line in lines] == [m["id"] for m in two_cut]  # oldest first
    assert all(line.split()[-2] == "resume" for line in lines)
    planned = run_sk("resume", "--all", "--dry-run", "--no-screen", env=outside_tmux)
    assert planned.returncode == 0, planned.stderr
    assert [line.split()[-2:] for line in planned.stdout.decode().splitlines()] == [
        [str(m["id"]), "--no-screen"] for m in two_cut
    ]
    assert b"2 sessions cut short since the last boot" in planned.stderr
    assert _children(home) == {}
    assert run_sk("resume", "--all", "--print", "--since", "2030-01-01").stdout == b""


def test_outside_tmux_they_are_resumed_one_after_another_and_then_skipped(
    home: Paths, two_cut: list[dict[str, object]]
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    harness = PtyHarness.start([*SK, "resume", "--all", "--no-screen"], cols=100, rows=30, env=env)
    for label in ("alpha", "beta"):
        harness.expect(f"ready {label}".encode())
        harness.write(b"done\r")
    assert harness.finish() == 0
    out = bytes(harness.output).decode()
    assert out.index(f"resuming 1 of 2: {two_cut[0]['id']}") < out.index(f"resuming 2 of 2: {two_cut[1]['id']}")
    children = _children(home)
    assert set(children) == {m["id"] for m in two_cut}
    assert {c["project"] for c in children.values()} == {m["project"] for m in two_cut}  # each in its own project
    wait_for_background(home)
    again = run_sk("resume", "--all", "--print")
    assert again.returncode == 0 and again.stdout == b""  # resumed already: skipped
    assert b"no session cut short since the last boot" in again.stderr


@pytest.fixture
def tmux_server(home: Paths) -> Iterator[tuple[str, dict[str, str]]]:
    """Start a private tmux server (its own socket name) and yield (name, env with $TMUX); kill it at the end.

    The server is started without the test's SHELLKEEP_* variables, as a user's server
    started before them would be: ``resume --all`` hands them to each window itself.
    """
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    name = f"test-sk-{secrets.token_hex(4)}"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    server_env = {k: v for k, v in env.items() if not k.startswith("SHELLKEEP_")}
    subprocess.run(["tmux", "-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "100", "-y", "30"],
                   env=server_env, check=True, timeout=30)  # fmt: skip
    socket = ""
    try:
        shown = subprocess.run(["tmux", "-L", name, "display-message", "-p", "-t", "main", "#{socket_path},#{pid},#{session_id}"],
                               env=env, check=True, capture_output=True, timeout=30)  # fmt: skip
        socket, pid, session_id = shown.stdout.decode().strip().split(",")
        yield name, {**env, "TMUX": f"{socket},{pid},{session_id.lstrip('$')}"}
    finally:
        subprocess.run(["tmux", "-L", name, "kill-server"], env=env, timeout=30)
        if socket:
            Path(socket).unlink(missing_ok=True)  # a killed server leaves its socket behind


def test_inside_tmux_each_opens_in_a_window_named_after_project_and_agent(
    home: Paths, two_cut: list[dict[str, object]], tmux_server: tuple[str, dict[str, str]]
) -> None:
    name, env = tmux_server
    result = run_sk("resume", "--all", "--no-screen", env=env)
    assert result.returncode == 0, result.stderr
    assert b"opened 2 tmux windows" in result.stderr

    def windows() -> list[tuple[str, str]]:
        listed = subprocess.run(["tmux", "-L", name, "list-windows", "-t", "main", "-F", "#{window_index} #{window_name}"],
                                env=env, capture_output=True, timeout=30)  # fmt: skip
        return [tuple(line.split(" ", 1)) for line in listed.stdout.decode().splitlines()]  # type: ignore[misc]

    agent = str(two_cut[0]["agent"]).replace(".", "-")
    opened = windows()[1:]
    assert [window for _, window in opened] == [f"alpha-{agent}", f"beta-{agent}"]
    for (index, _), label in zip(opened, ("alpha", "beta")):

        def shown(index: str = index, label: str = label) -> bool:
            pane = subprocess.run(["tmux", "-L", name, "capture-pane", "-p", "-t", f"main:{index}"],
                                  env=env, capture_output=True, timeout=30)  # fmt: skip
            return f"ready {label}" in pane.stdout.decode()

        wait_until(shown, 30)
    children = wait_until(lambda: len(_children(home)) == 2 and _children(home), 20)
    assert set(children) == {m["id"] for m in two_cut}  # type: ignore[arg-type]
    for index, _ in opened:
        subprocess.run(["tmux", "-L", name, "send-keys", "-t", f"main:{index}", "done", "Enter"], env=env, timeout=30)
    wait_until(lambda: all(c.get("status") != "running" for c in _children(home).values()), 30)
    wait_for_background(home)


def test_all_refuses_a_session_and_since_needs_all() -> None:
    for args, message in (
        (["--all", "--last"], b"shellkeep: give --all or --last, not both"),
        (["--all", "abc"], b"shellkeep: give --all or SESSION, not both"),
        (["--since", "2h"], b"shellkeep: --since goes with --all"),
        (["--print"], b"shellkeep: --print goes with --all"),
        (["--all", "--since", "soon"], b"shellkeep: cannot read the time 'soon'"),
    ):
        result = run_sk("resume", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith(message) and result.stderr.count(b"\n") == 1
