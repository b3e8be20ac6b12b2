"""``shellkeep resume`` in real ptys with a small line-based program that has no resume of its own.

The program (``notes.py``, written by the tests) prints ``> ``, reads a line, logs it to a
JSONL file and prints ``heard: <line>``; with ``paste`` it switches bracketed paste on and
reads a whole paste as one entry. Resuming one of its sessions starts it again and, once its
output has settled, types the last exchanges into it: the log shows what it received.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.recordings import vault

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.app.conversation import gather
from shellkeep.store.paths import Paths
from shellkeep.termsize import TermSize
from shellkeep.store.session import read_meta
from tests.factory import make_session
from tests.helpers import SK, PtyHarness, invoke_sk, load_session, output_text, process_gone, program_runs, session_folders, wait_for_background, wait_until

PY = sys.executable

NOTES = r'''
import json, sys
log_path, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "plain")
if mode == "paste":
    sys.stdout.write("\x1b[?2004h")
sys.stdout.write("notes ready\n")
with open(log_path, "a", encoding="utf-8") as log:
    log.write(json.dumps({"start": mode}) + "\n")
    log.flush()
    while True:
        sys.stdout.write("> ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            break
        text = line.rstrip("\n")
        if text.startswith("\x1b[200~"):
            while "\x1b[201~" not in text:
                more = sys.stdin.readline()
                if not more:
                    break
                text += "\n" + more.rstrip("\n")
        log.write(json.dumps({"line": text}) + "\n")
        log.flush()
        sys.stdout.write("heard: " + text.replace("\x1b", "^[") + "\n")
if mode == "paste":
    sys.stdout.write("\x1b[?2004l")
'''

PROMPTS = ("remember apples", "remember pears", "remember plums")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    """Return the path of the notes program."""
    path = tmp_path / "notes.py"
    path.write_text(NOTES)
    return path


def _record(notes: Path, log: Path, mode: str = "plain", prompts: tuple[str, ...] = PROMPTS) -> PtyHarness:
    """Start ``shellkeep run -- notes.py`` in a pty and type each prompt, waiting for its answer."""
    harness = PtyHarness.start([*SK, "run", "--", PY, str(notes), str(log), mode], cols=100, rows=30)
    harness.expect(b"> ")
    for prompt in prompts:
        harness.write(prompt.encode() + b"\r")
        harness.expect(f"heard: {prompt}\r\n> ".encode())
    return harness


def _recorded(notes: Path, log: Path, home: Paths, mode: str = "plain") -> dict[str, object]:
    """Record a whole session of three exchanges ended with Ctrl-D; return its meta.

    Waits for the detached upkeep ``shellkeep run`` starts at the end (it builds the
    exchanges of a program without a transcript from its recording, then compresses and
    indexes): the session folder changes no more after that.
    """
    harness = _record(notes, log, mode)
    harness.write(b"\x04")
    assert harness.finish() == 0
    [folder] = session_folders(home)
    wait_until(lambda: (folder.parent / "exchanges.jsonl").exists() and load_session(folder.parent)[0]["exchange_count"], 20)
    wait_for_background(home)
    meta, _, _ = load_session(folder.parent)
    return meta


def _resume(*args: str) -> PtyHarness:
    # --yes: the session resumed ended normally, so resume would otherwise ask before running it again
    return PtyHarness.start([*SK, "resume", "--yes", *args], cols=100, rows=30)


def _new_session(home: Paths, old_id: object) -> dict[str, object]:
    metas = [load_session(f.parent)[0] for f in session_folders(home)]
    [new] = [m for m in metas if m["id"] != old_id]
    return new


def test_resume_types_the_last_exchanges_into_the_program(home: Paths, notes: Path, tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    old = _recorded(notes, log, home)
    assert old["agent"] == Path(PY).name and old["agent_session_id"] is None
    assert old["exchange_count"] == 3  # built from the recording: the program has no transcript

    harness = _resume()
    wait_until(lambda: len(program_runs(log)) == 2 and program_runs(log)[1], 20)
    harness.expect(b"heard: [shellkeep]")
    harness.expect(b"\r\n> ")
    harness.write(b"remember figs\r")
    harness.expect(b"heard: remember figs")
    harness.write(b"\x04")
    assert harness.finish() == 0

    [block, figs] = program_runs(log)[1]
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {old['id']} ")
    assert "its last 3 exchanges follow" in block
    # Outside a paste the block's lines are joined, so it is submitted once, as one line.
    parts = block.split(" | ")
    assert parts[1:] == [
        "User: remember apples",
        "Assistant: heard: remember apples",
        "User: remember pears",
        "Assistant: heard: remember pears",
        "User: remember plums",
        "Assistant: heard: remember plums",
    ]
    assert figs == "remember figs"

    new = _new_session(home, old["id"])
    assert new["parent"] == old["id"]
    assert new["command"] == old["command"] and new["cwd"] == old["cwd"]
    assert new["status"] == "finished"
    # The typed-in context is not an exchange of the new session; what followed is.
    exchanges = gather(read_meta(Path(str(new["cast"])).parent), vault()).exchanges
    assert [(e.prompt, e.answer) for e in exchanges] == [("remember figs", "heard: remember figs")]

    # The last screen was redrawn under the banner before the program started again.
    out = bytes(harness.output).decode()
    banner = out.index(f"── shellkeep: {old['id']} ")
    redrawn = out[banner : out.index("notes ready", out.index("heard: remember plums", banner))]
    assert "re-injecting 3 exchanges" in redrawn
    assert redrawn.index("notes ready") < redrawn.index("> remember apples") < redrawn.index("heard: remember plums")


def test_resume_wraps_the_block_in_bracketed_paste_when_the_program_asks(
    home: Paths, notes: Path, tmp_path: Path
) -> None:
    log = tmp_path / "notes.jsonl"
    old = _recorded(notes, log, home, mode="paste")

    harness = _resume("--exchanges", "2")
    wait_until(lambda: len(program_runs(log)) == 2 and program_runs(log)[1], 20)
    harness.expect(b"\r\n> ")
    harness.write(b"\x04")
    assert harness.finish() == 0

    [block] = program_runs(log)[1]
    assert block.startswith("\x1b[200~" + INJECTED_CONTEXT_PREFIX)
    assert block.endswith("\x1b[201~")
    lines = block.removeprefix("\x1b[200~").removesuffix("\x1b[201~").split("\n")
    assert "its last 2 exchanges follow" in lines[0]
    assert lines[1:] == [
        "User: remember pears",
        "Assistant: heard: remember pears",
        "User: remember plums",
        "Assistant: heard: remember plums",
    ]
    assert _new_session(home, old["id"])["parent"] == old["id"]


def test_dry_run_prints_the_plan_and_changes_nothing(home: Paths, notes: Path, tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    old = _recorded(notes, log, home)
    folder = Path(str(old["cast"])).parent
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()}

    harness = _resume("--dry-run", "--exchanges", "1")
    assert harness.finish() == 0
    out = bytes(harness.output).decode()
    assert "mode: inject" in out
    assert f"would run: {PY} {notes} {log} plain" in out
    assert f"parent: {old['id']}" in out
    assert f"{INJECTED_CONTEXT_PREFIX} {old['id']}" in out and "its last 1 exchange follow" in out
    assert "User: remember plums" in out and "remember apples" not in out

    assert [p.parent.name for p in session_folders(home)] == [old["id"]]
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir()} == before
    assert len(program_runs(log)) == 1  # the program was not started again


@pytest.mark.parametrize(
    ("agent", "wait"),
    [
        pytest.param("gemini", "once it draws its prompt ('Type your message or @path/to/file') and then its output settles for 0.8s", id="ready-prompt"),
        pytest.param("claude", "once it switches bracketed paste on and its output settles for 0.8s", id="paste-mode"),
        pytest.param("aider", "once it switches bracketed paste on and its output settles for 0.8s", id="paste-mode-aider"),
        pytest.param("codex", "once its output settles for 0.8s", id="quiet-only"),
    ],
)
def test_a_dry_run_says_what_the_resume_waits_for_before_typing(home: Paths, agent: str, wait: str) -> None:
    meta = make_session(home, Path.cwd(), 1, agent=agent, exchanges=[{"prompt": "remember plums", "answer": "noted"}])
    result = invoke_sk("resume", meta.id, "--dry-run", "--inject")
    assert result.returncode == 0, result.stderr
    assert f"would type, {wait}:\n" in result.stdout.decode()  # as run_resume makes the run wait (pty.inject)


def test_in_a_narrow_terminal_the_banner_puts_the_whole_command_on_its_own_line(
    home: Paths, notes: Path, tmp_path: Path
) -> None:
    log = tmp_path / "notes.jsonl"
    old = _recorded(notes, log, home)
    harness = PtyHarness.start([*SK, "resume", "--yes", "--dry-run"], cols=80, rows=30)
    assert harness.finish() == 0
    lines = bytes(harness.output).decode().replace("\r\n", "\n").split("\n")
    [at] = [i for i, line in enumerate(lines) if line.startswith(f"── shellkeep: {old['id']} ")]
    assert lines[at].endswith(" ──") and len(lines[at]) <= 80
    assert lines[at + 1] == f"re-injecting 3 exchanges: {PY} {notes} {log} plain"  # whole, not cut


def test_agent_hands_the_conversation_to_another_program(home: Paths, notes: Path, tmp_path: Path) -> None:
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    old = _recorded(notes, first_log, home)

    for dry in (("--dry-run",), ()):  # an agent not on PATH: refused in one line, planned or run
        refused = invoke_sk("resume", "--yes", "--agent", "nosuch-agent", *dry)
        err = refused.stderr.decode()
        assert refused.returncode == 2 and err == (
            "shellkeep: --agent 'nosuch-agent': nosuch-agent is not found on PATH; install it, or give another agent or program\n"
        ), err
    assert [p.parent.name for p in session_folders(home)] == [old["id"]]  # nothing was started

    other = f"{PY} {notes} {second_log} plain"
    harness = _resume("--agent", other, "--exchanges", "1")
    wait_until(lambda: program_runs(second_log) and program_runs(second_log)[0], 20)
    harness.expect(b"\r\n> ")
    harness.write(b"\x04")
    assert harness.finish() == 0

    [[block]] = program_runs(second_log)
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {old['id']} ")
    assert block.split(" | ")[1:] == ["User: remember plums", "Assistant: heard: remember plums"]
    assert len(program_runs(first_log)) == 1
    new = _new_session(home, old["id"])
    assert new["parent"] == old["id"]
    assert new["command"] == [PY, str(notes), str(second_log), "plain"]


def test_no_screen_leaves_out_the_redraw(home: Paths, notes: Path, tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    old = _recorded(notes, log, home)

    harness = _resume("--no-screen", "--exchanges", "0")
    harness.expect(b"notes ready")
    harness.expect(b"> ")
    harness.write(b"\x04")
    assert harness.finish() == 0
    out = bytes(harness.output).decode()
    assert f"── shellkeep: {old['id']} " in out and "starting again" in out
    assert "remember" not in out  # neither the old screen nor any typed-in exchange
    assert program_runs(log)[1] == []
    assert _new_session(home, old["id"])["parent"] == old["id"]


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGHUP], ids=["kill-9-wrapper", "hangup"])
def test_a_session_cut_short_is_chosen_and_its_exchanges_collected(
    home: Paths, notes: Path, tmp_path: Path, signum: int
) -> None:
    log = tmp_path / "notes.jsonl"
    finished = _recorded(notes, log, home)  # an older session, ended normally
    harness = _record(notes, log, prompts=("remember kiwis", "remember limes"))
    wait_until(lambda: len(session_folders(home)) == 2, 10)
    cut_folder = next(f.parent for f in session_folders(home) if f.parent.name != finished["id"])
    cut = json.loads((cut_folder / "meta.json").read_text())
    # What reached the screen reaches the disk within about a second: wait for it.
    wait_until(lambda: "heard: remember limes" in (cut_folder / "session.cast").read_text(), 10)
    os.kill(int(cut["pid"]), signum)
    harness.finish()
    wait_until(lambda: process_gone(int(json.loads((cut_folder / "meta.json").read_text())["child_pid"])), 10)

    resumed = _resume("--exchanges", "2")
    wait_until(lambda: len(program_runs(log)) == 3 and program_runs(log)[2], 20)
    resumed.expect(b"\r\n> ")
    resumed.write(b"\x04")
    assert resumed.finish() == 0

    [block] = program_runs(log)[2]
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {cut['id']} ")
    assert block.split(" | ")[1:] == [
        "User: remember kiwis",
        "Assistant: heard: remember kiwis",
        "User: remember limes",
        "Assistant: heard: remember limes",
    ]
    meta, _, events = load_session(cut_folder)
    assert meta["status"] == ("interrupted" if signum == signal.SIGKILL else "hangup")
    assert meta["exchange_count"] == 2  # collected at the end, or at resume time once killed
    assert "heard: remember limes" in output_text(events)
    children = [load_session(f.parent)[0] for f in session_folders(home)]
    assert [m["parent"] for m in children if m["parent"]] == [cut["id"]]


def test_pick_opens_the_picker_and_enter_resumes_the_session_chosen(home: Paths, notes: Path, tmp_path: Path) -> None:
    pytest.importorskip("textual")
    from tests.agents.screen_driver import ScreenDriver

    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first = _recorded(notes, first_log, home)
    harness = _record(notes, second_log, prompts=("remember dates",))
    harness.write(b"\x04")
    assert harness.finish() == 0

    # The picker takes its size from the pty: a COLUMNS left in the environment would win.
    env = {**{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}, "TERM": "xterm-256color"}
    wide = TermSize(140, 30)  # the preview pane needs room
    with ScreenDriver([*SK, "resume", "--pick"], env=env, cwd=Path.cwd(), echo=True, size=wide) as picker:
        picker.wait_for_screen("remember apples", 30)  # the first session's first prompt
        picker.wait_for_screen("heard: remember dates", 30)  # the newest session's last screen
        picker.type("first.jsonl")  # only the first session's command names it
        picker.wait_until(lambda: "heard: remember plums" in picker.text(), 30, "filtered")
        picker.press("enter")
        picker.wait_until(lambda: len(program_runs(first_log)) == 2 and program_runs(first_log)[1], 30, "injected")
        picker.wait_for_screen("heard: [shellkeep]", 30)
        picker.type("\x04")
        assert picker.wait_exit(30) == 0
    [block] = program_runs(first_log)[1]
    assert block.startswith(f"{INJECTED_CONTEXT_PREFIX} {first['id']} ")
    parents = [load_session(f.parent)[0]["parent"] for f in session_folders(home)]
    assert parents.count(first["id"]) == 1


def _finished_command_session(home: Paths, project: Path, marker: Path) -> str:
    """Store a finished session of a short command that leaves ``marker`` when run again."""
    import dataclasses

    from shellkeep.store.session import write_meta
    from tests.factory import make_session

    meta = make_session(home, project, 1, agent="sh", events=[(2.0, "o", "built\r\n")])
    write_meta(dataclasses.replace(meta, command=["sh", "-c", f"echo rerun > {marker}"]))
    return meta.id


def test_resume_without_terminal_says_what_it_would_rerun_and_needs_yes(home: Paths, tmp_path: Path) -> None:
    from tests.helpers import run_sk

    project = tmp_path / "proj"
    project.mkdir()
    marker = tmp_path / "marker"
    session_id = _finished_command_session(home, project, marker)
    refused = run_sk("resume", cwd=project)
    assert refused.returncode == 1
    err = refused.stderr.decode()
    assert err.startswith(f"shellkeep: no session was cut short; resuming would run 'sh -c 'echo rerun > {marker}''")
    assert session_id in err and err.endswith("; pass --yes to do so\n") and err.count("\n") == 1
    assert not marker.exists()

    done = run_sk("resume", "--yes", "--no-screen", cwd=project)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "rerun\n"
    assert "already resumed" not in done.stderr.decode()

    wait_for_background(home)
    [run] = [m.id for m in map(read_meta, (p.parent for p in session_folders(home))) if m.parent == session_id]
    again = run_sk("resume", session_id, "--yes", "--no-screen", cwd=project)  # not refused: another branch
    assert again.returncode == 0, again.stderr
    line = f"shellkeep: already resumed as {run}; this starts another branch (resume {run} to go on with it)\n"
    assert again.stderr.decode().count(line) == 1, again.stderr


@pytest.mark.parametrize(("answer", "reran"), [(b"\r", False), (b"y\r", True)], ids=["default-no", "yes"])
def test_resume_on_a_terminal_asks_before_rerunning_a_finished_command(
    home: Paths, tmp_path: Path, answer: bytes, reran: bool
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    marker = tmp_path / "marker"
    _finished_command_session(home, project, marker)
    term = PtyHarness.start(["sh", "-c", f"cd '{project}' && exec \"$@\"", "sh", *SK, "resume", "--no-screen"])
    term.expect(b"again (session ")
    term.expect(b"[y/N]")
    term.write(answer)
    assert term.finish() == (0 if reran else 1)
    assert marker.exists() is reran
