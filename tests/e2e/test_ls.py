"""``shellkeep ls``: filters, JSON, and a listing that stays right without its index."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.store.paths import Paths
from shellkeep.store.session import title_of, write_meta
from tests.helpers import invoke_sk, run_sk
from tests.factory import BASE, make_session


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def sessions(home: Paths) -> dict[str, str]:
    here = Path.cwd()
    ev = [(5.0, "o", "hello world\r\n")]  # longer than a second: not hidden as trivial
    made = {
        "a": make_session(home, here, 1, agent="claude", name="fix-login", started=BASE, events=ev),
        "b": make_session(home, here, 2, agent="codex", status="killed", started=BASE + timedelta(days=2), events=ev),
        "c": make_session(home, here.parent / "elsewhere", 3, agent="claude", started=BASE + timedelta(days=4), events=ev),
    }
    return {k: m.id for k, m in made.items()}


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        ([], ["b", "a"]),
        (["--all"], ["c", "b", "a"]),
        (["--agent", "claude"], ["a"]),
        (["--status", "killed"], ["b"]),
        (["--since", "2024-05-02"], ["b"]),
        (["--until", "2024-05-02"], ["a"]),
        (["--name", "login"], ["a"]),
        (["--all", "--limit", "2"], ["c", "b"]),
    ],
    ids=["default", "all", "agent", "status", "since", "until", "name", "limit"],
)
def test_ls_filters(sessions: dict[str, str], args: list[str], expect: list[str]) -> None:
    result = sk("ls", *args, "--json")
    assert result.exit_code == 0, result.stderr
    assert [s["id"] for s in json.loads(result.stdout)] == [sessions[k] for k in expect]


def test_ls_table_lists_the_sessions(sessions: dict[str, str]) -> None:
    result = sk("ls", "--all")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["ID", "NAME", "AGENT", "STATUS"]
    assert [line.split()[0] for line in lines[1:]] == [sessions["c"], sessions["b"], sessions["a"]]


def test_ls_ends_each_row_with_what_the_session_was_about(home: Paths) -> None:
    here = Path.cwd()
    ev = [(5.0, "o", "hello world\r\n")]
    given = make_session(home, here, 1, agent="claude", started=BASE, events=ev)
    write_meta(dataclasses.replace(given, title="the title given", about="the agent's own"))
    about = make_session(home, here, 2, agent="claude", started=BASE + timedelta(days=1), events=ev)
    write_meta(dataclasses.replace(about, about="Fix the flaky login test"))
    plain = make_session(home, here, 3, started=BASE + timedelta(days=2), events=ev)
    write_meta(dataclasses.replace(plain, command=["bash", "-c", "make   test"]))
    for _ in range(2):  # from the index, then as listed again from it
        lines = sk("ls").stdout.splitlines()
        assert lines[0].split()[-1] == "TITLE"
        assert [line.split("  ")[-1] for line in lines[1:]] == ["bash -c make test", "Fix the flaky login test", "the title given"]
    listed = json.loads(sk("ls", "--json").stdout)
    assert [s["about"] for s in listed] == [None, "Fix the flaky login test", "the agent's own"]


def test_ls_is_right_after_the_index_is_deleted(home: Paths, sessions: dict[str, str]) -> None:
    before = sk("ls", "--all", "--json").stdout
    home.index.unlink()
    result = sk("ls", "--all", "--json")
    assert result.stdout == before
    assert result.stderr == "shellkeep: index.sqlite3 was missing; rebuilding it from the session folders\n"
    assert sk("ls", "--all", "--json").stderr == ""


def test_ls_rejects_a_bad_time_and_status(sessions: dict[str, str]) -> None:
    result = invoke_sk("ls", "--since", "soonish")
    assert result.returncode == 2 and result.stderr.startswith(b"shellkeep: cannot read the time 'soonish'")
    assert result.stderr.count(b"\n") == 1
    assert invoke_sk("ls", "--status", "sleeping").returncode == 2


def test_ls_with_an_index_from_a_newer_version_exits_3(home: Paths, sessions: dict[str, str]) -> None:
    import sqlite3

    sk("ls")
    sqlite3.connect(home.index).execute("PRAGMA user_version = 99")
    result = invoke_sk("ls")
    assert result.returncode == 3
    assert result.stderr.count(b"\n") == 1 and b"newer shellkeep" in result.stderr


def test_ls_with_no_match_says_so_on_stderr(sessions: dict[str, str]) -> None:
    result = sk("ls", "--agent", "nobody")
    assert result.exit_code == 0 and result.stdout == ""
    assert "no sessions match" in result.stderr


def test_ls_in_a_folder_without_sessions_counts_those_of_other_projects(home: Paths, tmp_path: Path) -> None:
    make_session(home, tmp_path / "elsewhere", 1, events=[(5.0, "o", "done\r\n")])
    make_session(home, tmp_path / "elsewhere", 2, events=[(5.0, "o", "done\r\n")])
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke_sk("ls", cwd=empty)
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.decode() == "no sessions in this project (2 in other projects: shellkeep ls --all)\n"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(("ls", "--since", "99999999d"), "the age '99999999d' reaches back before the year 1", id="ls-since-huge-age"),
        pytest.param(("search", "x", "--since", "99999999999w"), "reaches back before the year 1", id="search-since-huge-age"),
        pytest.param(("ls", "--limit", "99999999999999999999999"), "is not in the range 1<=x<=1000000000", id="ls-limit-overflow"),
        pytest.param(("ls", "--limit", "-3"), "is not in the range", id="ls-limit-negative"),
        pytest.param(("search", "x", "--limit", "0"), "is not in the range", id="search-limit-zero"),
        pytest.param(("audit", "--limit", "99999999999999999999999"), "is not in the range", id="audit-limit-overflow"),
        pytest.param(("resume", "--last", "--dry-run", "--exchanges", "-1"), "is not in the range 0<=x", id="resume-exchanges-negative"),
    ],
)
def test_a_bad_count_or_age_is_one_line_exit_2(home: Paths, args: tuple[str, ...], fragment: str) -> None:
    make_session(home, Path.cwd(), 1)
    result = invoke_sk(*args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(b"shellkeep: ") and result.stderr.count(b"\n") == 1
    assert fragment.encode() in result.stderr


@pytest.mark.parametrize("when", ["0001-01-01", "9999-12-31"], ids=["first-day", "last-day"])
def test_the_calendars_ends_are_bounds_not_errors(home: Paths, when: str) -> None:
    make_session(home, Path.cwd(), 1)
    for option in ("--since", "--until"):
        result = invoke_sk("ls", option, when, "--json")
        assert result.returncode == 0, result.stderr
        assert len(json.loads(result.stdout)) == (1 if (option == "--since") == (when == "0001-01-01") else 0)


def test_ls_hides_sessions_shorter_than_a_second_without_input(home: Paths) -> None:
    here = Path.cwd()
    long = make_session(home, here, 1, events=[(5.0, "o", "done\r\n")])
    blip = make_session(home, here, 2, events=[(0.2, "o", "command not found\r\n")])
    typed = make_session(home, here, 3, events=[(0.3, "o", "y\r\n")])
    write_meta(dataclasses.replace(typed, input_bytes=2))  # short, but something was typed: kept

    result = invoke_sk("ls")  # a real process: stderr apart from stdout
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.decode().splitlines()[1:]]
    assert listed == [typed.id, long.id]
    assert result.stderr.decode() == (
        "1 session shorter than a second with no input hidden; 'shellkeep ls --all-sessions' shows them\n"
    )
    every = invoke_sk("ls", "--all-sessions")
    assert [line.split()[0] for line in every.stdout.decode().splitlines()[1:]] == [typed.id, blip.id, long.id]
    assert every.stderr == b""
    assert [s["id"] for s in json.loads(invoke_sk("ls", "--json").stdout)] == [typed.id, blip.id, long.id]  # scripts see all
    # A listing of nothing but hidden sessions says only that.
    only = invoke_sk("ls", "--since", "2024-05-01T12:01:30+00:00", "--until", "2024-05-01T12:02:30+00:00")
    assert only.stdout == b"" and only.stderr.startswith(b"1 session shorter than a second")


@pytest.mark.parametrize("tz", ["America/St_Johns", "Australia/Lord_Howe", "Asia/Kathmandu"], ids=str)
def test_started_is_the_local_time_across_a_clock_change(home: Paths, tz: str) -> None:
    """The STARTED column is ``astimezone()``'s local minute, also around DST changes of half-hour zones."""
    ev = [(5.0, "o", "hello world\r\n")]
    # Every 20 minutes over two days around each zone's 2024 clock changes (April, November and October).
    starts = [datetime(2024, month, day, tzinfo=timezone.utc) + timedelta(minutes=20 * k) for month, day in ((4, 6), (11, 2), (10, 5)) for k in range(144)]
    for n, at in enumerate(starts, start=1):
        make_session(home, Path.cwd(), n, started=at, events=ev)
    done = run_sk("ls", env={**os.environ, "TZ": tz})
    assert done.returncode == 0, done.stderr
    shown = [line.split()[4:6] for line in done.stdout.decode().splitlines()[1:]]
    expect_program = "import sys; from datetime import datetime; [print(datetime.fromisoformat(a).astimezone().strftime('%Y-%m-%d %H:%M')) for a in sys.argv[1:]]"
    expected = subprocess.run(
        [sys.executable, "-c", expect_program, *(a.isoformat() for a in sorted(starts, reverse=True))], env={**os.environ, "TZ": tz}, capture_output=True, text=True, check=True
    ).stdout.split("\n")[:-1]
    assert [" ".join(s) for s in shown] == expected
    assert len(shown) == len(starts)  # every row was converted (a clock set back repeats some minutes)


def test_a_path_that_is_not_utf8_shows_its_byte_as_backslash_x_in_messages(home: Paths, tmp_path: Path) -> None:
    data = Path(os.fsdecode(bytes(tmp_path) + b"/da\xffta"))
    data.write_text("not a folder")
    result = invoke_sk("ls", env={**os.environ, "SHELLKEEP_HOME": str(data)})
    assert result.returncode == 3
    assert result.stderr == b"shellkeep: the data folder " + bytes(tmp_path) + b"/da\\xffta is not a folder; point SHELLKEEP_HOME at a folder\n"


@pytest.mark.parametrize(
    ("agent", "transcript", "session_id", "title"),
    [
        ("claude", "claude/projects/-home-bob-work-calc/0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a.jsonl", "0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a", "Add divide to calc"),
        ("gemini", "gemini/.gemini/tmp/calc/chats/session-2026-03-14T07-30-9d8c7b6a.jsonl", "9d8c7b6a", "Guard divide against zero"),
    ],
    ids=["claude", "gemini"],
)
def test_a_session_whose_recorder_died_is_listed_with_the_agents_own_title(
    home: Paths, tmp_path: Path, agent: str, transcript: str, session_id: str, title: str
) -> None:
    from shellkeep.store.session import host_name
    from tests.unit.agents.conftest import DATA

    copy = tmp_path / Path(transcript).name
    copy.write_bytes((DATA / transcript).read_bytes())
    ev = [(5.0, "o", "hello world\r\n")]
    proc = subprocess.Popen(["true"])
    proc.wait()  # its pid, free now, stands for the dead recorder's
    gone = proc.pid
    dead = make_session(home, Path.cwd(), 1, agent=agent, status="running", host=host_name(), events=ev, pid=gone)
    write_meta(dataclasses.replace(dead, command=[agent, "--session-id", session_id], agent_session_id=session_id, agent_transcript=str(copy)))
    listed = json.loads(sk("ls", "--json").stdout)
    assert [(s["status"], s["about"]) for s in listed] == [("interrupted", title)]  # before any resume
    shown = sk("ls").stdout.splitlines()[1].split("  ")[-1]  # the last column, cut to the table's width
    assert shown == title or (shown.endswith("…") and title.startswith(shown[:-1])), shown


@pytest.mark.parametrize(
    ("agent", "command", "typed"),
    [
        ("claude", ["claude", "--session-id", "15cc2469-0b6f-4c7e-a8b5-2f1e0d9c8b7a", "--model", "sonnet"], "claude --model sonnet"),
        ("gemini", ["gemini", "--session-id=9d8c7b6a-91d4-4c7e-a8b5-2f1e0d9c8b7a"], "gemini"),
        ("claude", ["claude", "--resume", "15cc2469-0b6f-4c7e-a8b5-2f1e0d9c8b7a"], "claude"),
    ],
    ids=["claude", "gemini-equals", "claude-resume"],
)
def test_a_title_without_prompt_is_the_command_as_typed_without_the_id_shellkeep_added(
    home: Paths, agent: str, command: list[str], typed: str
) -> None:
    session_id = next(word.rpartition("=")[2] for word in command if len(word.rpartition("=")[2]) == 36)
    made = make_session(home, Path.cwd(), 1, agent=agent, events=[(5.0, "o", "hello world\r\n")])
    meta = dataclasses.replace(made, command=command, agent_session_id=session_id)
    write_meta(meta)
    shown = sk("ls").stdout.splitlines()[1]
    assert shown.endswith(f"  {typed}") and session_id not in shown, shown
    assert title_of(meta) == typed  # ps, the picker and the web list title with the same rule
