"""``shellkeep import --agent``: the agents' own sessions, in their real formats under a temporary
HOME, become searchable sessions without a recording; incremental, never duplicated, kept after
the agent deletes its files, resumable natively from shellkeep's copy; and the daily import the
upkeep after a session starts by itself."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.agents.locations import dash_encoded
from shellkeep.store.paths import Paths
from tests.agent_homes import CLAUDE_ID, CODEX_ID, COPILOT_ID, OPENCODE_ID, QWEN_ID, AgentHome, build_agent_home
from tests.helpers import SK, invoke_sk, run_sk, wait_for_background, wait_until
from tests.unit.agents.conftest import DATA
from tests.transcripts import START, claude_lines, codex_lines

AGENT_VARS = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME", "OPENCODE_DB", "XDG_DATA_HOME")

# A stand-in agent CLI for resumes and recordings: Claude Code's (--session-id / --resume,
# its transcript under ~/.claude/projects/<dash-encoded cwd>/) or Codex's (`codex resume ID`,
# its rollout found by id). It logs what it found to $FAKE_LOG and appends an exchange, as
# the real ones do.
FAKE_AGENT = r'''#!/usr/bin/env python3
import glob, json, os, re, sys
name = os.path.basename(sys.argv[0]); args = sys.argv[1:]
if name == "claude":
    sid = args[args.index("--session-id") + 1] if "--session-id" in args else args[args.index("--resume") + 1]
    folder = os.path.join(os.environ["HOME"], ".claude", "projects", re.sub(r"[^a-zA-Z0-9]", "-", os.getcwd()))
    path = os.path.join(folder, sid + ".jsonl")
    resuming = "--resume" in args
elif "resume" not in args:  # a new Codex thread: its rollout, then wait until told to end
    import datetime, time, uuid
    sid = str(uuid.uuid4())
    now = datetime.datetime.now(datetime.timezone.utc)
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)
    day = os.path.join(os.environ["HOME"], ".codex", "sessions", now.astimezone().strftime("%Y/%m/%d"))
    os.makedirs(day, exist_ok=True)
    with open(os.path.join(day, "rollout-%s-%s.jsonl" % (now.astimezone().strftime("%Y-%m-%dT%H-%M-%S"), sid)), "w") as fh:
        for kind, payload in (
            ("session_meta", {"id": sid, "timestamp": stamp, "cwd": os.getcwd()}),
            ("turn_context", {"cwd": os.getcwd(), "model": "m"}),
            ("event_msg", {"type": "user_message", "message": "recorded codex prompt"}),
            ("event_msg", {"type": "agent_message", "message": "recorded codex answer"}),
        ):
            fh.write(json.dumps({"timestamp": stamp, "type": kind, "payload": payload}) + "\n")
    while not os.path.exists(os.environ["FAKE_GO"]):
        time.sleep(0.05)
    print("codex resume " + sid)
    sys.exit(0)
else:
    sid = args[args.index("resume") + 1]
    found = glob.glob(os.path.join(os.environ["HOME"], ".codex", "sessions", "*", "*", "*", "rollout-*-" + sid + ".jsonl"))
    path = found[0] if found else ""
    resuming = True
if resuming and not os.path.exists(path):
    print("No conversation found with session ID: " + sid)
    sys.exit(1)
text = open(path).read() if os.path.exists(path) else ""
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps({"agent": name, "id": sid, "resumed": resuming, "lines": text.count("\n"), "text": text}) + "\n")
if name == "claude":
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as fh:
        for record in (
            {"type": "user", "uuid": sid + "-u", "parentUuid": None, "sessionId": sid, "cwd": os.getcwd(),
             "timestamp": "2026-12-01T10:00:00.000Z", "message": {"role": "user", "content": "recorded prompt kiwi"}},
            {"type": "assistant", "uuid": sid + "-a", "parentUuid": sid + "-u", "sessionId": sid, "cwd": os.getcwd(),
             "timestamp": "2026-12-01T10:00:01.000Z",
             "message": {"id": "m-" + sid, "role": "assistant", "model": "x", "content": [{"type": "text", "text": "kiwi answer"}]}},
        ):
            fh.write(json.dumps(record) + "\n")
print("fake " + name + " done")
'''


@pytest.fixture
def agent_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentHome:
    """A HOME with one session of each agent recorded in ``tmp_path/work/calc``; the tests run
    there, with HOME pointing at it and a stand-in ``claude`` and ``codex`` first on PATH."""
    workdir = tmp_path / "work" / "calc"
    workdir.mkdir(parents=True)
    built = build_agent_home(tmp_path / "user-home", workdir.resolve())
    for var in AGENT_VARS:
        monkeypatch.delenv(var, raising=False)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(FAKE_AGENT.replace("#!/usr/bin/env python3", f"#!{sys.executable}", 1))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("HOME", str(built.home))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "fake.log"))
    monkeypatch.chdir(built.workdir)
    return built


def _import(*args: str) -> list[dict[str, object]]:
    done = invoke_sk("import", "--agent", *(args or ("all",)), "--json")
    assert done.returncode == 0, done.stderr
    results: list[dict[str, object]] = json.loads(done.stdout)
    return results


def _sessions() -> list[dict[str, object]]:
    listed = invoke_sk("ls", "--all", "--json")
    assert listed.returncode == 0, listed.stderr
    sessions: list[dict[str, object]] = json.loads(listed.stdout)
    return sessions


def _by_action(results: list[dict[str, object]]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for result in results:
        found.setdefault(str(result["action"]), set()).add(f"{result['agent']}:{result['agent_session_id']}")
    return found


def _fake_log(agent_home: AgentHome) -> list[dict[str, object]]:
    path = Path(os.environ["FAKE_LOG"])
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_import_all_gives_a_searchable_archive_of_every_agent(home: Paths, agent_home: AgentHome) -> None:
    shutil.copy(DATA / "codex" / "session_index.jsonl", agent_home.home / ".codex" / "session_index.jsonl")  # its thread names
    results = _import()
    imported = {r["agent"]: r for r in results if r["action"] == "imported"}
    assert sorted(imported) == ["claude", "codex", "copilot", "gemini", "opencode", "qwen"]
    assert imported["claude"]["agent_session_id"] == CLAUDE_ID and imported["codex"]["agent_session_id"] == CODEX_ID
    assert imported["qwen"]["agent_session_id"] == QWEN_ID and imported["copilot"]["agent_session_id"] == COPILOT_ID
    assert imported["opencode"]["agent_session_id"] == OPENCODE_ID
    assert {r["action"] for r in results} <= {"imported", "empty"}  # OpenCode's other project has no exchange

    sessions = {s["agent"]: s for s in _sessions()}
    assert sorted(sessions) == sorted(imported)
    for agent, session in sessions.items():
        folder = Path(str(session["cast"])).parent
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["imported_from_agent"] == agent and meta["detail"] == "conversation"
        assert meta["cwd"] == str(agent_home.workdir) and meta["project_root"] == str(agent_home.workdir)
        assert meta["exchange_count"] >= 1 and meta["usage"], agent
        assert meta["agent_session_id"] == imported[agent]["agent_session_id"]
        assert meta["started_at"] < meta["ended_at"] and meta["status"] == "finished"
        assert not any(folder.glob("session.cast*")), "no recording is made"
        assert (folder / "exchanges.jsonl").is_file()
        if agent != "opencode":  # its database is shared by every session: not copied
            assert list((folder / "agent").glob("*.ref")), agent

    table = invoke_sk("ls", "--all").stdout.decode().splitlines()
    rows = [[cell.strip() for cell in line.split("  ") if cell.strip()] for line in table]
    assert rows[0][-3:] == ["KEPT", "PROJECT", "TITLE"] and all(row[-3] == "imported" for row in rows[1:])
    # Each leads with the agent's own title where it keeps one, else the first prompt.
    abouts = {m["agent"]: m["about"] for m in json.loads(invoke_sk("ls", "--all", "--json").stdout)}
    assert abouts == {
        "claude": "Add divide to calc", "codex": "fix divide", "gemini": "Guard divide against zero",
        "qwen": "calc functions", "opencode": "Guard divide", "copilot": "What does divide do with 0?",
    }  # fmt: skip
    shown = invoke_sk("show", str(imported["claude"]["session_id"])).stdout.decode()
    assert "\ntitle      Add divide to calc\n" in shown and "\nabout " not in shown
    assert len(table) == 7
    hits = json.loads(invoke_sk("search", "divide", "--json").stdout)
    assert {h["agent"] for h in hits} == set(imported)
    shown = invoke_sk("show", str(sessions["claude"]["id"]))
    assert shown.returncode == 0
    assert "from claude's own history" in shown.stdout.decode() and "Add a divide function" in shown.stdout.decode()
    assert "- (not recorded by shellkeep)" in shown.stdout.decode() and "0 bytes out" not in shown.stdout.decode()

    played = run_sk("replay", str(sessions["codex"]["id"]))
    assert played.returncode == 1 and played.stdout == b""
    assert played.stderr.decode() == (
        f"shellkeep: session {sessions['codex']['id']} was imported from codex's own history and has no terminal "
        f"recording; 'shellkeep show {sessions['codex']['id']}' has its exchanges\n"
    )
    exported = invoke_sk("export", str(sessions["gemini"]["id"]), "--format", "md")
    assert exported.returncode == 0 and b"divide" in exported.stdout
    stats = invoke_sk("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert "claude" in stats.stdout.decode() or json.loads(stats.stdout)


def test_a_second_run_takes_only_new_and_grown_sessions(home: Paths, agent_home: AgentHome) -> None:
    first = _import()
    before = {s["agent"]: s["id"] for s in _sessions()}
    again = _import()
    assert _by_action(again).get("unchanged") == _by_action(first)["imported"]
    assert "imported" not in _by_action(again) and "updated" not in _by_action(again)

    with agent_home.claude.open("ab") as fh:  # the agent goes on with the conversation
        fh.write(b"\n")  # the fixture's last line was cut: the agent's next record starts a new line
        for line in claude_lines(1, session_id=CLAUDE_ID, cwd=str(agent_home.workdir), first=7):
            record = json.loads(line)
            record["parentUuid"] = None  # as the fixture's records (file order then)
            fh.write(json.dumps(record).encode() + b"\n")
    rollout = agent_home.home / ".codex" / "sessions" / "2026" / "11" / "29" / "rollout-2026-11-29T10-15-00-019d0000-0000-7000-8000-000000000001.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(b"".join(codex_lines(2, thread_id="019d0000-0000-7000-8000-000000000001", cwd=str(agent_home.workdir))))

    third = _import("claude", "--agent", "codex")
    actions = _by_action(third)
    assert actions["updated"] == {f"claude:{CLAUDE_ID}"}
    assert actions["imported"] == {"codex:019d0000-0000-7000-8000-000000000001"}
    assert actions["unchanged"] == {f"codex:{CODEX_ID}"}
    after = {(s["agent"], s["id"]) for s in _sessions()}
    assert ("claude", before["claude"]) in after  # the same session, updated
    assert len(after) == len(before) + 1
    grown = next(r for r in third if r["action"] == "updated")
    assert grown["session_id"] == before["claude"] and grown["exchanges"] == 3
    hits = json.loads(invoke_sk("search", "prompt 7", "--json").stdout)
    assert before["claude"] in {h["session_id"] for h in hits}


def test_since_takes_only_sessions_written_since(home: Paths, agent_home: AgentHome) -> None:
    rollout = agent_home.home / ".codex" / "sessions" / "2026" / "11" / "29" / "rollout-2026-11-29T10-15-00-019d0000-0000-7000-8000-000000000002.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(b"".join(codex_lines(1, thread_id="019d0000-0000-7000-8000-000000000002", cwd=str(agent_home.workdir))))
    results = _import("codex", "--since", "2026-11-01")
    assert _by_action(results) == {"imported": {"codex:019d0000-0000-7000-8000-000000000002"}}  # the fixture is of March


def test_a_codex_thread_shellkeep_is_recording_is_left_to_the_recording(home: Paths, agent_home: AgentHome, tmp_path: Path) -> None:
    go = tmp_path / "go"
    recording = subprocess.Popen([*SK, "run", "--", "codex"], env={**os.environ, "FAKE_GO": str(go)},
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        sessions = agent_home.home / ".codex" / "sessions"
        wait_until(lambda: [p for p in sessions.rglob("rollout-*.jsonl") if p != agent_home.codex])
        # A new process, as the user's would be: the recorder claims the thread just after
        # codex writes it, and an import in this process can come before that.
        done = run_sk("import", "--agent", "codex", "--json")
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)
        assert [r["action"] for r in results if r["agent_session_id"] != CODEX_ID] == ["recorded"]
        assert [r["action"] for r in results if r["agent_session_id"] == CODEX_ID] == ["imported"]
    finally:
        go.touch()
        assert recording.wait(timeout=60) == 0, recording.stderr.read() if recording.stderr else b""
    wait_for_background(home)
    again = _import("codex")
    assert sorted(r["action"] for r in again) == ["recorded", "unchanged"]
    hits = json.loads(invoke_sk("search", "recorded codex prompt", "--json").stdout)
    assert len({h["session_id"] for h in hits}) == 1  # only the recording has it


def test_a_session_recorded_by_shellkeep_is_not_imported_again(home: Paths, agent_home: AgentHome) -> None:
    recorded = run_sk("run", "--", "claude")
    assert recorded.returncode == 0, recorded.stderr
    wait_for_background(home)
    [own] = _sessions()
    assert own["agent"] == "claude" and own["agent_session_id"]

    results = _import("claude")
    assert _by_action(results) == {"recorded": {f"claude:{own['agent_session_id']}"}, "imported": {f"claude:{CLAUDE_ID}"}}
    imported = next(s for s in _sessions() if s["agent_session_id"] == CLAUDE_ID)

    resumed = run_sk("resume", "--yes", "--no-screen", str(imported["id"]))  # natively: the transcript grows
    assert resumed.returncode == 0, resumed.stderr
    wait_for_background(home)
    assert [entry["resumed"] for entry in _fake_log(agent_home)] == [False, True]
    again = _import("claude")
    assert _by_action(again) == {"recorded": {f"claude:{own['agent_session_id']}", f"claude:{CLAUDE_ID}"}}
    assert len(_sessions()) == 3  # the recording, the import, and the resumed run


def _go_on_without_shellkeep(transcript: Path, session_id: str, first: int) -> None:
    """Append an exchange to a Claude Code transcript, as the agent run again by hand does
    (its first record's parent is the transcript's last record: one conversation)."""
    last = json.loads(transcript.read_bytes().splitlines()[-1])["uuid"]
    with transcript.open("ab") as fh:
        for n, line in enumerate(claude_lines(1, session_id=session_id, cwd=os.getcwd(), first=first)):
            record = json.loads(line)
            record["parentUuid"] = last if n == 0 else record["parentUuid"]
            fh.write(json.dumps(record).encode() + b"\n")


def test_a_recorded_conversation_that_grew_without_shellkeep_is_imported_past_the_recording(home: Paths, agent_home: AgentHome) -> None:
    recorded = run_sk("run", "--", "claude")
    assert recorded.returncode == 0, recorded.stderr
    wait_for_background(home)
    [own] = _sessions()
    sid = str(own["agent_session_id"])
    [meta_file] = home.projects.glob(f"*/{own['id']}/meta.json")
    transcript = Path(json.loads(meta_file.read_text())["agent_transcript"])
    _go_on_without_shellkeep(transcript, sid, 7)

    results = [r for r in _import("claude") if r["agent_session_id"] == sid]
    assert [(r["action"], r["exchanges"]) for r in results] == [("imported", 1)]  # only what the recording lacks
    later = results[0]["session_id"]
    [later_meta] = home.projects.glob(f"*/{later}/meta.json")
    assert json.loads(later_meta.read_text())["continues"] == own["id"]
    assert {h["session_id"] for h in json.loads(invoke_sk("search", "prompt 7", "--json").stdout)} == {later}
    assert later not in {h["session_id"] for h in json.loads(invoke_sk("search", "kiwi", "--json").stdout)}  # the recording's: not again
    assert [r["action"] for r in _import("claude") if r["agent_session_id"] == sid] == ["unchanged"]

    _go_on_without_shellkeep(transcript, sid, 8)
    grown = [r for r in _import("claude") if r["agent_session_id"] == sid]
    assert [(r["action"], r["session_id"], r["exchanges"]) for r in grown] == [("updated", later, 2)]  # the same continuation
    assert len([s for s in _sessions() if s["agent_session_id"] == sid]) == 2


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_it_stays_after_the_agent_deletes_its_files_and_resume_restores_the_copy(
    home: Paths, agent_home: AgentHome, agent: str
) -> None:
    original = getattr(agent_home, agent)
    content = original.read_bytes()
    _import(agent)
    [session] = _sessions()
    store = agent_home.home / (".claude" if agent == "claude" else ".codex")
    import shutil

    shutil.rmtree(store)  # Claude Code prunes transcripts after 30 days; a user cleans up

    shown = invoke_sk("show", str(session["id"]))
    assert shown.returncode == 0 and b"#1" in shown.stdout
    hits = json.loads(invoke_sk("search", "divide", "--json").stdout)
    assert str(session["id"]) in {h["session_id"] for h in hits}

    resumed = run_sk("resume", "--yes", "--no-screen", str(session["id"]))
    assert resumed.returncode == 0, resumed.stderr
    assert "restored shellkeep's copy" in resumed.stderr.decode()
    [entry] = _fake_log(agent_home)
    assert entry["agent"] == agent and entry["resumed"] is True and entry["id"] == session["agent_session_id"]
    assert entry["text"] == content.decode()  # the agent found its whole transcript again
    assert original.read_bytes().startswith(content)


def test_encrypted_import_stores_nothing_in_the_clear(home: Paths, agent_home: AgentHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    _import("claude")
    [session] = _sessions()
    for path in home.home.rglob("*"):
        if path.is_file() and path.suffix != ".sqlite3" and "index" not in path.name:
            assert b"divide function" not in path.read_bytes(), path
    shown = invoke_sk("show", str(session["id"]))
    assert shown.returncode == 0 and b"Add a divide function" in shown.stdout


def test_an_encrypted_import_keeps_its_text_out_of_the_index(home: Paths, agent_home: AgentHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    _import("claude")
    for args in ((), ("reindex",)):
        if args:
            assert run_sk(*args).returncode == 0
        found = invoke_sk("search", "divide", "--json")
        assert found.returncode == 0 and b"divide" in found.stdout, found.stderr
        indexes = [p for p in home.home.rglob("*") if p.is_file() and ".sqlite3" in p.name]
        assert indexes
        for path in indexes:
            assert b"divide" not in path.read_bytes(), path


def test_an_import_killed_midway_loses_nothing_and_the_next_run_cleans_up(home: Paths, agent_home: AgentHome) -> None:
    folder = agent_home.home / ".claude" / "projects" / dash_encoded(agent_home.workdir)
    ids = {str(uuid.UUID(int=i + 1)) for i in range(260)}
    for i, sid in enumerate(sorted(ids)):
        lines = claude_lines(1, session_id=sid, cwd=str(agent_home.workdir), start=START + timedelta(minutes=i))
        (folder / f"{sid}.jsonl").write_bytes(b"".join(lines))
    ids.add(CLAUDE_ID)

    def midway() -> bool:
        entries = [e for p in home.projects.glob("*") for e in p.iterdir()] if home.projects.is_dir() else []
        placed = any(not e.name.startswith(".") for e in entries)
        return placed and any(e.name.startswith(".import-") and (e / "meta.json").is_file() for e in entries)

    proc = subprocess.Popen([*SK, "import", "--agent", "claude"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(midway, timeout_s=120, interval_s=0.001)
    finally:
        proc.kill()  # SIGKILL
        proc.wait()
    _import("claude")
    assert {str(s["agent_session_id"]) for s in _sessions()} == ids
    assert not [e for p in home.projects.glob("*") for e in p.iterdir() if e.name.startswith(".import-")]


def test_an_imported_session_in_a_git_repo_keeps_its_git_identity(home: Paths, agent_home: AgentHome) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(agent_home.workdir), *args], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("remote", "add", "origin", "https://example.com/bob/calc.git")
    git("-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty", "-m", "first")
    first = git("rev-list", "--max-parents=0", "HEAD")
    _import("claude")
    [session] = _sessions()
    [folder] = [f for f in home.projects.glob(f"*/{session['id']}")]
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["git_identity"]["root_commit"] == first
    assert "example.com/bob/calc" in meta["git_identity"]["remote"]
    assert meta["git_start"]["branch"] == "main"


def test_a_fifo_named_like_a_transcript_is_skipped_with_one_line(home: Paths, agent_home: AgentHome) -> None:
    fifo = agent_home.claude.parent / "00000000-0000-0000-0000-00000000ffff.jsonl"
    os.mkfifo(fifo)
    done = invoke_sk("import", "--agent", "claude", "--json", timeout_s=30)
    assert done.returncode == 0, done.stderr
    assert [r["action"] for r in json.loads(done.stdout)] == ["imported"]
    assert done.stderr.count(b"not a regular file") == 1 and str(fifo).encode() in done.stderr


def test_an_imported_session_is_not_offered_as_a_recording(home: Paths, agent_home: AgentHome) -> None:
    _import("claude")
    [session] = _sessions()
    sid = str(session["id"])
    found = invoke_sk("search", "divide")
    assert found.returncode == 0, found.stderr
    assert f"shellkeep show {sid}".encode() in found.stderr and b"shellkeep replay" not in found.stderr
    shown = invoke_sk("show", sid)
    [terminal] = [line for line in shown.stdout.decode().splitlines() if line.split()[:1] == ["terminal"]]
    assert terminal.split() == ["terminal", "-"]
    resumed = run_sk("resume", "--yes", sid)
    assert resumed.returncode == 0, resumed.stderr
    assert b"was imported from the agent (no terminal recording)" in resumed.stderr
    assert b"record.detail" not in resumed.stderr


def test_a_damaged_transcript_is_warned_about_once_a_state(home: Paths, agent_home: AgentHome) -> None:
    damaged = agent_home.claude.parent / "00000000-0000-0000-0000-00000000dddd.jsonl"
    damaged.write_bytes(b'\x00\x00garbage\n{"type":"user","tor')

    def warnings() -> int:
        done = invoke_sk("import", "--agent", "claude")
        assert done.returncode == 0, done.stderr
        return sum(1 for line in done.stderr.splitlines() if b"is damaged" in line and damaged.name.encode() in line), done.stderr

    first = warnings()
    assert first[0] == 1, first[1]
    assert warnings()[0] == 0  # the same file, unchanged: said already
    with damaged.open("ab") as fh:
        fh.write(b"more garbage\n")
    assert warnings()[0] == 1, warnings.__name__


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("x.cast", "--agent", "claude"), "give a recording FILE or --agent NAME, not both"),
        ((), "give a recording FILE to import, or --agent NAME (or all) for an agent's own sessions"),
        (("--agent", "vim"), "invalid value for '--agent': 'vim' is not one of"),
        (("--agent", "claude", "--since", "someday"), "'someday'"),
    ],
    ids=["both", "neither", "unknown-agent", "bad-since"],
)
def test_bad_input_is_one_line(home: Paths, agent_home: AgentHome, args: tuple[str, ...], message: str) -> None:
    done = invoke_sk("import", *args)
    assert done.returncode == 2, done.stderr
    err = done.stderr.decode()
    assert err.startswith("shellkeep: ") and message in err and err.count("\n") == 1
    assert not home.projects.exists() or not list(home.projects.glob("*/*"))


def _stamp_mtime(paths: Paths) -> float | None:
    try:
        return paths.history_stamp.stat().st_mtime
    except FileNotFoundError:
        return None


def test_the_upkeep_imports_by_itself_at_most_once_a_day(home: Paths, agent_home: AgentHome) -> None:
    assert invoke_sk("config", "set", "history.auto_import", "on").returncode == 0
    assert run_sk("run", "--", "true").returncode == 0
    wait_until(lambda: _stamp_mtime(home) is not None)
    wait_for_background(home)
    imported = [s for s in _sessions() if s["agent"] != "true"]
    assert len(imported) == 6
    stamp = _stamp_mtime(home)

    rollout = agent_home.home / ".codex" / "sessions" / "2026" / "11" / "29" / "rollout-2026-11-29T10-15-00-019d0000-0000-7000-8000-000000000003.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(b"".join(codex_lines(1, thread_id="019d0000-0000-7000-8000-000000000003", cwd=str(agent_home.workdir))))
    assert run_sk("run", "--", "true").returncode == 0
    wait_for_background(home)
    assert _stamp_mtime(home) == stamp  # not a day yet: not again
    assert len([s for s in _sessions() if s["agent"] != "true"]) == 6

    assert stamp is not None
    os.utime(home.history_stamp, (stamp - 86400 - 60, stamp - 86400 - 60))  # a day later
    assert run_sk("run", "--", "true").returncode == 0
    wait_until(lambda: (_stamp_mtime(home) or 0) > stamp - 86400)
    wait_for_background(home)
    assert len([s for s in _sessions() if s["agent"] != "true"]) == 7


def test_with_the_shell_integration_installed_it_imports_by_default(home: Paths, agent_home: AgentHome) -> None:
    assert run_sk("run", "--", "true").returncode == 0
    wait_for_background(home)
    assert _stamp_mtime(home) is None  # "shell" (the default), and no shell integration yet
    installed = run_sk("init", "bash", "--install")
    assert installed.returncode == 0, installed.stderr
    assert run_sk("run", "--", "true").returncode == 0
    wait_until(lambda: _stamp_mtime(home) is not None)
    wait_for_background(home)
    assert len([s for s in _sessions() if s["agent"] != "true"]) == 6


def test_a_session_of_less_than_a_second_is_listed(home: Paths, agent_home: AgentHome) -> None:
    quick = "5b1c0d2e-0000-4000-8000-00000000abcd"
    path = agent_home.claude.with_name(f"{quick}.jsonl")
    records = [json.loads(line) for line in claude_lines(1, session_id=quick, cwd=str(agent_home.workdir))]
    for record in records:
        if "timestamp" in record:
            record["timestamp"] = "2026-11-29T10:15:00.100Z"  # prompt, tool call and answer within the same second
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    _import("claude")
    listed = invoke_sk("ls").stdout.decode()  # hides sessions shorter than a second with no input
    assert "claude" in listed and len(listed.splitlines()) == 3, listed


def test_no_agent_history_at_all_is_said_plainly(home: Paths, tmp_path: Path) -> None:
    empty = tmp_path / "nobody"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "CLAUDE_", "GEMINI_", "QWEN_", "XDG_", "COPILOT_"))}
    done = invoke_sk("import", "--agent", "all", env={**env, "HOME": str(empty)})
    assert done.returncode == 0 and done.stdout == b""
    assert done.stderr.decode() == (
        "shellkeep: no session of claude, codex, gemini, qwen, opencode, copilot found where they keep them "
        "(docs/import.md: 'The agents' own histories'); nothing imported\n"
    )
