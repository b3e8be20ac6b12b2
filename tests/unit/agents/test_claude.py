"""Tests for shellkeep/agents/claude.py: Claude Code transcripts, ids, resume."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, ToolCall, Usage
from shellkeep.agents.claude import ClaudeAdapter, claude_root, project_dirs
from shellkeep.agents.locations import dash_encoded

from .conftest import DATA, FIXTURE_CWD, install, reference, requires_reference, set_mtime, utc

SID = "0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a"
FIXTURE = DATA / "claude" / "projects" / "-home-bob-work-calc" / f"{SID}.jsonl"
ADAPTER = ClaudeAdapter()
STARTED = utc("2026-03-14T07:00:00")


def fixture_session() -> AgentSession:
    return AgentSession(agent="claude", session_id=SID, transcript=FIXTURE)


def test_reads_exchanges_from_the_fixture() -> None:
    first, second = ADAPTER.read_exchanges(fixture_session())
    assert first.index == 0
    assert first.time == "2026-03-14T08:30:01.500Z"
    assert first.prompt == "Add a divide function to calc.py that refuses zero"
    assert first.answer == (
        "I'll read calc.py first.\n\nAdding divide() with a zero check.\n\n"
        "divide() is in calc.py and raises ZeroDivisionError for b == 0; the 3 tests pass."
    )
    assert first.tool_calls == (
        ToolCall("Read", "/home/bob/work/calc/calc.py"),
        ToolCall("Edit", "/home/bob/work/calc/calc.py"),
        ToolCall("Bash", "python -m pytest -q tests/test_calc.py"),
    )
    assert first.tool_results == (
        "1 def add(a, b): 2 return a + b",
        "error: File has been modified since read",
        "3 passed in 0.02s",
    )
    # one usage per message id, its last line's: A (10, 40) + B + C + D
    assert first.usage == Usage(input=19, output=137, cache_read=5800, cache_write=250)
    assert first.model == "claude-opus-x"
    # meta lines, slash commands, local output, the sidechain and the interruption are no prompts
    assert second.index == 1
    assert second.prompt == "Also export divide from __init__.py"
    assert second.answer == "Done: calc/__init__.py now exports divide."
    assert (second.model, second.usage) == ("claude-sonnet-x", Usage(4, 12, 1700, 0))
    assert second.tool_calls == () and second.tool_results == ()


@pytest.mark.parametrize(
    ("limit", "prompts"),
    [(1, ["Also export"]), (2, ["Add a divide", "Also export"]), (9, ["Add a divide", "Also export"]), (0, [])],
    ids=["last-1", "last-2", "more-than-there-are", "zero"],
)
def test_limit_keeps_the_last_exchanges(limit: int, prompts: list[str]) -> None:
    exchanges = ADAPTER.read_exchanges(fixture_session(), limit=limit)
    assert [e.prompt[: len(p)] for e, p in zip(exchanges, prompts, strict=False)] == prompts
    assert [e.index for e in exchanges] == list(range(len(prompts)))


def test_limited_read_equals_the_tail_of_a_full_read() -> None:
    full = ADAPTER.read_exchanges(fixture_session())
    assert ADAPTER.read_exchanges(fixture_session(), limit=1)[0].answer == full[-1].answer
    assert ADAPTER.read_exchanges(fixture_session(), limit=2) == full


def test_nul_padding_and_a_record_after_it_are_read(tmp_path: Path) -> None:
    path = install(FIXTURE, tmp_path / f"{SID}.jsonl")
    with path.open("ab") as fh:
        fh.write(b"\x00" * 4096)
        fh.write(
            b'{"type":"user","message":{"role":"user","content":"after the hole"},"timestamp":"2026-03-14T09:00:00Z"}\n'
        )
        fh.write(b'{"type":"assistant","message":{"id":"m9","content":[{"type":"text","text":"still here"}]}}\n')
    session = AgentSession(agent="claude", session_id=SID, transcript=path)
    for limit in (None, 1):
        last = ADAPTER.read_exchanges(session, limit=limit)[-1]
        assert (last.prompt, last.answer) == ("after the hole", "still here")


def test_missing_or_foreign_transcript_gives_nothing(tmp_path: Path) -> None:
    assert ADAPTER.read_exchanges(AgentSession("claude", SID, tmp_path / "nope.jsonl")) == []
    (tmp_path / "bin.jsonl").write_bytes(bytes(range(256)) * 100)
    assert ADAPTER.read_exchanges(AgentSession("claude", SID, tmp_path / "bin.jsonl"), limit=3) == []
    assert ADAPTER.read_exchanges(AgentSession("claude", SID, None)) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["claude"], True),
        (["/usr/local/bin/claude", "-c"], True),
        (["npx", "-y", "@anthropic-ai/claude-code"], True),
        (["node", "/x/node_modules/@anthropic-ai/claude-code/cli.js"], True),
        (["codex"], False),
        (["bash", "-c", "claude"], False),
    ],
    ids=["bare", "path", "npx", "node-cli-js", "codex", "inside-bash"],
)
def test_matches(argv: list[str], expected: bool) -> None:
    assert ADAPTER.matches(argv) is expected


def test_prepare_pre_assigns_a_session_id(workdir: Path) -> None:
    launch = ADAPTER.prepare(["claude", "--model", "opus", "fix it"], workdir, {})
    assert launch.agent_session_id is not None
    assert uuid.UUID(launch.agent_session_id).version == 4
    assert launch.argv == ("claude", "--session-id", launch.agent_session_id, "--model", "opus", "fix it")
    assert launch.env_updates == {}
    npx = ADAPTER.prepare(["npx", "-y", "@anthropic-ai/claude-code", "-p", "hi"], workdir, {})
    assert npx.argv[:5] == ("npx", "-y", "@anthropic-ai/claude-code", "--session-id", npx.agent_session_id)


@pytest.mark.parametrize(
    ("argv", "session_id"),
    [
        (["claude", "-c"], None),
        (["claude", "--continue", "--model", "x"], None),
        (["claude", "--resume", SID], SID),
        (["claude", f"--resume={SID}"], SID),
        (["claude", "-r", "my named session"], None),
        (["claude", "-r"], None),
        (["claude", "--session-id", SID], SID),
        (["claude", "--resume", SID, "--fork-session"], None),
        (["claude", "mcp", "list"], None),
        (["claude", "--help"], None),
        (["claude", "-v"], None),
    ],
    ids=[
        "continue",
        "continue-long",
        "resume-id",
        "resume-inline",
        "resume-name",
        "resume-picker",
        "own-session-id",
        "forked",
        "subcommand",
        "help",
        "version",
    ],
)
def test_prepare_leaves_the_users_choice_alone(workdir: Path, argv: list[str], session_id: str | None) -> None:
    launch = ADAPTER.prepare(argv, workdir, {})
    assert launch.argv == tuple(argv)
    assert launch.agent_session_id == session_id


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        (["claude"], ["claude", "--resume", SID]),
        (
            ["claude", "--session-id", "x", "--model", "opus", "fix the bug"],
            ["claude", "--model", "opus", "--resume", SID],
        ),
        (
            ["claude", "-c", "--add-dir", "../lib", "--verbose"],
            ["claude", "--add-dir", "../lib", "--verbose", "--resume", SID],
        ),
        (["claude", "--resume", "old", "--fork-session", "-p", "hi"], ["claude", "--resume", SID]),
        (["npx", "@anthropic-ai/claude-code", "-r"], ["npx", "@anthropic-ai/claude-code", "--resume", SID]),
    ],
    ids=["bare", "drops-session-id-and-prompt", "drops-continue", "drops-fork-and-print", "npx"],
)
def test_resume_argv_keeps_the_users_other_arguments(original: list[str], expected: list[str]) -> None:
    assert ADAPTER.resume_argv(original, fixture_session()) == expected


def test_resume_argv_needs_an_id_and_an_existing_transcript(tmp_path: Path) -> None:
    assert ADAPTER.resume_argv(["claude"], AgentSession("claude", None, None)) is None
    assert ADAPTER.resume_argv(["claude"], AgentSession("claude", SID, tmp_path / "gone.jsonl")) is None
    assert ADAPTER.resume_argv(["claude"], AgentSession("claude", SID, None)) == ["claude", "--resume", SID]


def test_root_and_project_folder_follow_the_env(user_home: Path, tmp_path: Path) -> None:
    assert claude_root({"HOME": str(user_home)}) == user_home / ".claude"
    assert claude_root({"HOME": str(user_home), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == tmp_path / "cfg"
    assert dash_encoded(Path("/home/alice/src/my_app.v2")) == "-home-alice-src-my-app-v2"
    long_cwd = Path("/" + "a" * 250)
    (tmp_path / "cfg" / "projects" / ("-" + "a" * 199 + "-k3j2")).mkdir(parents=True)
    assert [p.name[-5:] for p in project_dirs(tmp_path / "cfg", long_cwd)] == ["-k3j2"]


def _install(home: Path, cwd: Path, session_id: str = SID, *, config_dir: Path | None = None) -> Path:
    root = config_dir or home / ".claude"
    target = root / "projects" / dash_encoded(cwd) / f"{session_id}.jsonl"
    path = install(FIXTURE, target, {FIXTURE_CWD: str(cwd), SID: session_id})
    set_mtime(path, utc("2026-03-14T08:32:00"))
    return path


def test_find_session_uses_the_pre_assigned_id(user_home: Path, workdir: Path) -> None:
    launch = ADAPTER.prepare(["claude"], workdir, {})
    assert launch.agent_session_id is not None
    path = _install(user_home, workdir, launch.agent_session_id)
    _install(user_home, workdir, str(uuid.uuid4()))  # a newer, other conversation in the same folder
    found = ADAPTER.find_session(launch, workdir, {"HOME": str(user_home)}, STARTED, "")
    assert found == AgentSession("claude", launch.agent_session_id, path)


def test_find_session_honours_claude_config_dir(user_home: Path, workdir: Path, tmp_path: Path) -> None:
    config = tmp_path / "claude-config"
    launch = ADAPTER.prepare(["claude"], workdir, {})
    assert launch.agent_session_id is not None
    path = _install(user_home, workdir, launch.agent_session_id, config_dir=config)
    env = {"HOME": str(user_home), "CLAUDE_CONFIG_DIR": str(config)}
    assert ADAPTER.find_session(launch, workdir, env, STARTED, "") == AgentSession(
        "claude", launch.agent_session_id, path
    )


def test_find_session_takes_the_newest_transcript_started_after_launch(user_home: Path, workdir: Path) -> None:
    old = _install(user_home, workdir, "11111111-1111-4111-8111-111111111111")
    set_mtime(old, utc("2026-03-14T06:00:00"))
    newer = _install(user_home, workdir, "22222222-2222-4222-8222-222222222222")
    elsewhere = _install(user_home, workdir, "33333333-3333-4333-8333-333333333333")
    elsewhere.write_text(elsewhere.read_text().replace(f'"cwd":"{workdir}"', '"cwd":"/somewhere/else"'))
    launch = ADAPTER.prepare(["claude", "-c"], workdir, {})
    found = ADAPTER.find_session(launch, workdir, {"HOME": str(user_home)}, STARTED, "")
    assert found == AgentSession("claude", "22222222-2222-4222-8222-222222222222", newer)


def test_find_session_falls_back_to_the_resume_hint_on_screen(user_home: Path, workdir: Path, tmp_path: Path) -> None:
    other_cwd = tmp_path / "other"
    path = _install(user_home, other_cwd, SID)
    set_mtime(path, utc("2026-03-14T06:00:00"))
    launch = Launch(argv=("claude",))
    env = {"HOME": str(user_home)}
    screen = f"Resume this session with:\nclaude --resume {SID}\n$ "
    assert ADAPTER.find_session(launch, workdir, env, STARTED, screen) == AgentSession("claude", SID, path)
    wrapped = f"To resume, run: cd {other_cwd} && claude --resume {SID[:20]}\n{SID[20:]}   \n"
    assert ADAPTER.find_session(launch, workdir, env, STARTED, wrapped) == AgentSession("claude", SID, path)
    assert ADAPTER.find_session(launch, workdir, env, STARTED, "bye") is None


def test_pre_assigned_id_without_transcript_yet(user_home: Path, workdir: Path) -> None:
    launch = ADAPTER.prepare(["claude"], workdir, {})
    found = ADAPTER.find_session(launch, workdir, {"HOME": str(user_home)}, STARTED, "")
    assert found is not None and found.session_id == launch.agent_session_id
    assert found.transcript == user_home / ".claude" / "projects" / dash_encoded(workdir) / f"{found.session_id}.jsonl"
    assert ADAPTER.read_exchanges(found) == []
    assert ADAPTER.resume_argv(list(launch.argv), found) is None
    assert ADAPTER.transcript_files(found) == []


def test_transcript_files_include_subagents(user_home: Path, workdir: Path) -> None:
    path = _install(user_home, workdir)
    sub = path.parent / SID / "subagents" / "agent-1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text("{}\n")
    assert ADAPTER.transcript_files(AgentSession("claude", SID, path)) == [path, sub]


@requires_reference
def test_reads_the_reference_sample() -> None:
    folder = reference("claude-code", "projects", "-home-alice-src-app")
    [path] = sorted(folder.glob("*.jsonl"))
    [exchange] = ADAPTER.read_exchanges(AgentSession("claude", path.stem, path))
    assert exchange.prompt == "Why does test_parse fail?"
    assert (
        exchange.answer == "Let me look at the parser.\n\nparse() calls int() on input with whitespace; strip it first."
    )
    assert exchange.tool_calls == (ToolCall("Read", "/home/alice/src/app/parse.py"),)
    assert exchange.tool_results == ("1 def parse(s): 2 return int(s)",)
    assert exchange.usage == Usage(input=2500, output=65, cache_read=2000, cache_write=0)
    assert exchange.model == "claude-sonnet-x"
    assert exchange.time == "2026-11-29T10:15:02.120Z"
    assert re.fullmatch(r"[0-9a-f-]{36}", path.stem)


def test_resumed_conversation_written_to_a_new_file_is_preferred(user_home: Path, workdir: Path) -> None:
    old = _install(user_home, workdir, SID)  # the resumed conversation: started long ago, written now
    forked_id = "44444444-4444-4444-8444-444444444444"
    forked = _install(user_home, workdir, forked_id)
    forked.write_text(forked.read_text().replace("2026-03-14T08:3", "2026-03-15T08:3"))
    env = {"HOME": str(user_home)}
    launch = ADAPTER.prepare(["claude", "--resume", SID], workdir, env)
    later = utc("2026-03-15T08:00:00")
    assert ADAPTER.find_session(launch, workdir, env, later, "") == AgentSession("claude", forked_id, forked)
    forked.unlink()
    assert ADAPTER.find_session(launch, workdir, env, later, "") == AgentSession("claude", SID, old)


def _linked(kind: str, uuid: str, parent: str | None, second: int, text: str) -> str:
    """Return one Claude Code transcript line linked into the record tree."""
    import json

    content: object = text if kind == "user" else [{"type": "text", "text": text}]
    message: dict[str, object] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg-{uuid}", usage={"input_tokens": 7, "output_tokens": 3})
    record = {
        "type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": f"2026-03-14T08:00:{second:02d}.000Z",
        "message": message,
    }  # fmt: skip
    return json.dumps(record) + "\n"


def test_records_are_read_in_conversation_order_not_file_order(tmp_path: Path) -> None:
    # Claude Code 2.1 writes a new conversation's first prompt after its first answer.
    path = tmp_path / f"{SID}.jsonl"
    path.write_text(
        '{"type":"permission-mode","permissionMode":"default"}\n'
        + _linked("assistant", "a1", "x1", 3, "first answer")
        + _linked("system", "s1", "a1", 4, "")
        + _linked("user", "u1", None, 1, "first prompt")
        + _linked("attachment", "x1", "u1", 2, "")
        + _linked("user", "u2", "s1", 5, "second prompt")
        + _linked("assistant", "a2", "u2", 6, "second answer")
    )
    exchanges = ADAPTER.read_exchanges(AgentSession("claude", SID, path))
    assert [(e.prompt, e.answer, e.usage) for e in exchanges] == [
        ("first prompt", "first answer", Usage(7, 3)),
        ("second prompt", "second answer", Usage(7, 3)),
    ]
    assert [e.prompt for e in ADAPTER.read_exchanges(AgentSession("claude", SID, path), limit=1)] == ["second prompt"]


def test_an_abandoned_branch_is_left_out(tmp_path: Path) -> None:
    # The user went back to the first answer and asked again: the newest leaf's branch is the conversation.
    path = tmp_path / f"{SID}.jsonl"
    path.write_text(
        _linked("user", "u1", None, 1, "first prompt")
        + _linked("assistant", "a1", "u1", 2, "first answer")
        + _linked("user", "u2", "a1", 3, "abandoned prompt")
        + _linked("assistant", "a2", "u2", 4, "abandoned answer")
        + _linked("user", "u3", "a1", 5, "edited prompt")
        + _linked("assistant", "a3", "u3", 6, "edited answer")
    )
    exchanges = ADAPTER.read_exchanges(AgentSession("claude", SID, path))
    assert [e.prompt for e in exchanges] == ["first prompt", "edited prompt"]
