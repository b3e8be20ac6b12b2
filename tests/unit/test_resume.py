"""Tests for shellkeep/resume.py and the conversation it puts back (shellkeep/conversation.py).

Sessions are real folders under a temporary ``SHELLKEEP_HOME`` (the ``home`` fixture); agent
transcripts are written into a temporary HOME in the agents' own formats.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, Exchange, ToolCall, Usage
from shellkeep.app.context import Context, open_context
from shellkeep.app.conversation import collect, gather
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import read_exchanges, write_exchanges
from shellkeep.errors import SessionNotFound, UserInputError
from shellkeep.app.resume import (
    ResumeMode,
    choose_session,
    conversation_tail,
    inject_text,
    plan_resume,
    session_chain,
)
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta, create_session_folder, host_name, iso, read_meta, write_meta
from tests.helpers import stored_copy

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)
CLAUDE_ID = "3f2a9c1e-7b4d-4e21-9a0f-5c6d7e8f9a01"
CODEX_ID = "019ad3c2-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def _ctx(home: Paths, where: object) -> Context:
    """The context of a command run in ``where`` (a project folder, or a session's project)."""
    cwd = where if isinstance(where, Path) else Path(where.project_root)  # type: ignore[attr-defined]
    return open_context(paths=home, cwd=cwd if cwd.is_dir() else None)


@pytest.fixture
def project() -> Path:
    """Return the project folder the ``home`` fixture changed into."""
    return Path.cwd()


def make_session(
    paths: Paths,
    project: Path,
    minute: int,
    *,
    status: str = "finished",
    command: tuple[str, ...] = ("notes",),
    agent: str | None = None,
    parent: str | None = None,
    agent_session_id: str | None = None,
    transcript: Path | None = None,
    exchanges: list[Exchange] | None = None,
    host: str | None = None,
    pid: int = 0,
) -> SessionMeta:
    """Store a session started ``minute`` minutes after T0; exchanges.jsonl when given."""
    started = T0 + timedelta(minutes=minute)
    session_id = started.strftime("%Y%m%d-%H%M%S-000") + f"{minute:02x}"[-2:]
    folder = create_session_folder(paths, project, session_id)
    (folder / "session.cast").write_text(json.dumps({"version": 2, "width": 80, "height": 24}) + "\n")
    meta = SessionMeta(
        id=session_id,
        project=folder.parent.name,
        project_root=str(project),
        cwd=str(project),
        command=list(command),
        agent=agent or os.path.basename(command[0]),
        started_at=iso(started),
        ended_at=None if status == "running" else iso(started + timedelta(seconds=30)),
        status=status,
        host=host or host_name(),
        pid=pid,
        cast=str(folder / "session.cast"),
        parent=parent,
        agent_session_id=agent_session_id,
        agent_transcript=str(transcript) if transcript else None,
        exchange_count=len(exchanges or []),
    )
    write_meta(meta)
    if exchanges is not None:
        write_exchanges(folder, exchanges, Vault(Paths(home=folder.parent.parent.parent, config_file=folder / "none.toml")))
    return meta


def exchange(index: int, prompt: str, answer: str = "", **kw: object) -> Exchange:
    return Exchange(index=index, time=None, prompt=prompt, answer=answer, **kw)  # type: ignore[arg-type]


# -- choose_session ---------------------------------------------------------------------------


def test_choose_prefers_the_newest_session_cut_short_and_not_resumed(home: Paths, project: Path) -> None:
    older_cut = make_session(home, project, 1, status="killed")
    cut = make_session(home, project, 2, status="hangup")
    make_session(home, project, 3, status="finished")
    assert choose_session(_ctx(home, project), None).id == cut.id
    make_session(home, project, 4, status="finished", parent=cut.id)  # cut was resumed
    assert choose_session(_ctx(home, project), None).id == older_cut.id


def test_choose_takes_the_newest_ended_session_when_none_was_cut_short(home: Paths, project: Path) -> None:
    make_session(home, project, 1, status="finished")
    newest_ended = make_session(home, project, 2, status="finished")
    make_session(home, project, 3, status="running", host="elsewhere")  # alive, on another host
    assert choose_session(_ctx(home, project), None).id == newest_ended.id


def test_choose_recovers_a_session_whose_recorder_is_gone(home: Paths, project: Path) -> None:
    make_session(home, project, 1, status="finished")
    dead_pid = 2**22 + 12345  # above pid_max's default: no such process
    lost = make_session(home, project, 2, status="running", pid=dead_pid)
    chosen = choose_session(_ctx(home, project), None)
    assert (chosen.id, chosen.status) == (lost.id, "interrupted")
    assert read_meta(lost.folder).status == "interrupted"


def test_choose_by_reference_or_last(home: Paths, project: Path) -> None:
    first = make_session(home, project, 1, status="killed")
    newest = make_session(home, project, 2, status="finished")
    assert choose_session(_ctx(home, project), first.id[:-1]).id == first.id
    assert choose_session(_ctx(home, project), None, last=True).id == newest.id


def test_choose_without_a_session_to_resume(home: Paths, project: Path) -> None:
    with pytest.raises(SessionNotFound, match="no sessions recorded in project"):
        choose_session(_ctx(home, project), None)
    make_session(home, project, 1, status="running", host="elsewhere")
    with pytest.raises(SessionNotFound, match="still running"):
        choose_session(_ctx(home, project), None)
    with pytest.raises(SessionNotFound, match="no session matches 'nope'"):
        choose_session(_ctx(home, project), "nope")


# -- plan_resume: native resume for each adapter -------------------------------------------------


NATIVE = [
    ("claude", ["claude", "--model", "opus", "--session-id", CLAUDE_ID], CLAUDE_ID,
     ["claude", "--model", "opus", "--resume", CLAUDE_ID]),
    ("claude", ["npx", "@anthropic-ai/claude-code", "--session-id", CLAUDE_ID, "explain this"], CLAUDE_ID,
     ["npx", "@anthropic-ai/claude-code", "--resume", CLAUDE_ID]),
    ("codex", ["codex", "-m", "gpt-5", "fix the bug"], CODEX_ID, ["codex", "-m", "gpt-5", "resume", CODEX_ID]),
    ("codex", ["codex", "resume", "--last"], CODEX_ID, ["codex", "resume", CODEX_ID]),
    ("opencode", ["opencode", "-m", "anthropic/x"], "ses_abc", ["opencode", "-m", "anthropic/x", "-s", "ses_abc"]),
    ("gemini", ["gemini", "--session-id", "g-1", "-m", "pro"], "g-1", ["gemini", "-m", "pro", "-r", "g-1"]),
    ("qwen", ["qwen", "--session-id", "q-1"], "q-1", ["qwen", "-r", "q-1"]),
    ("copilot", ["copilot", "--session-id", "c-1", "--model", "x"], "c-1", ["copilot", "--model", "x", "--resume", "c-1"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "command", "agent_id", "expected"),
    NATIVE,
    ids=["claude", "claude-npx", "codex", "codex-resume-last", "opencode", "gemini", "qwen", "copilot"],
)
def test_plan_native_resume_keeps_the_users_other_arguments(
    home: Paths, project: Path, tmp_path: Path, agent: str, command: list[str], agent_id: str, expected: list[str]
) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text('{"type": "user"}\n')  # intact: one whole record
    meta = make_session(
        home, project, 1, status="killed", command=tuple(command), agent=agent,
        agent_session_id=agent_id, transcript=transcript, exchanges=[exchange(0, "hello", "hi")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, env={"HOME": str(tmp_path)})
    assert plan.mode is ResumeMode.NATIVE
    assert list(plan.argv) == [word.replace("{transcript}", str(transcript)) for word in expected]
    assert (plan.cwd, plan.agent, plan.inject_text) == (project, agent, None)
    assert [e.prompt for e in plan.exchanges] == ["hello"]


def test_plan_injects_when_the_agents_transcript_is_gone(home: Paths, project: Path, tmp_path: Path) -> None:
    command = ("claude", "--model", "opus", "--session-id", CLAUDE_ID, "first prompt")
    meta = make_session(
        home, project, 1, status="killed", command=command, agent="claude", agent_session_id=CLAUDE_ID,
        transcript=tmp_path / "deleted.jsonl", exchanges=[exchange(0, "first prompt", "done")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, env={"HOME": str(tmp_path)})
    assert plan.mode is ResumeMode.INJECT
    # A new conversation: the pre-assigned id and the initial prompt are not repeated.
    assert plan.argv == ("claude", "--model", "opus")
    assert plan.inject_text is not None and "User: first prompt" in plan.inject_text


# -- plan_resume: re-injection -------------------------------------------------------------------


def test_plan_injects_the_last_exchanges_into_a_program_without_resume(home: Paths, project: Path) -> None:
    exchanges = [exchange(i, f"prompt {i}", f"answer {i}") for i in range(4)]
    meta = make_session(home, project, 1, status="finished", command=("notes", "--fast"), exchanges=exchanges)
    plan = plan_resume(_ctx(home, meta), meta, exchanges=2, env={})
    assert plan.mode is ResumeMode.INJECT
    assert plan.argv == ("notes", "--fast") and plan.agent == "notes"
    assert [(e.index, e.prompt) for e in plan.exchanges] == [(0, "prompt 2"), (1, "prompt 3")]
    assert plan.inject_text == inject_text(meta, plan.exchanges)
    assert plan.settle_s == 0.8

    assert plan_resume(_ctx(home, meta), meta, exchanges=0, env={}).mode is ResumeMode.RESTART
    assert len(plan_resume(_ctx(home, meta), meta, env={}).exchanges) == 4  # config resume.exchanges: 5


def test_plan_reads_exchanges_and_settle_time_from_the_config(home: Paths, project: Path) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("[resume]\nexchanges = 1\ninject_settle_ms = 250\n")
    meta = make_session(home, project, 1, exchanges=[exchange(0, "a", "1"), exchange(1, "b", "2")])
    plan = plan_resume(_ctx(home, meta), meta, env={})
    assert ([e.prompt for e in plan.exchanges], plan.settle_s) == (["b"], 0.25)


def test_plan_never_types_into_a_shell(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, command=("/bin/bash", "-l"), exchanges=[exchange(0, "rm -rf build", "")])
    plan = plan_resume(_ctx(home, meta), meta, env={})
    assert (plan.mode, plan.argv, plan.inject_text) == (ResumeMode.RESTART, ("/bin/bash", "-l"), None)


@pytest.mark.parametrize(
    ("agent", "argv", "name"),
    [("codex", ("codex",), "codex"), ("claude", ("claude",), "claude"),
     ("python3 -i", ("python3", "-i"), "python3"), ("'my agent' --x", ("my agent", "--x"), "my agent")],
    ids=["adapter-codex", "adapter-claude", "command-line", "quoted"],
)  # fmt: skip
def test_plan_hands_the_conversation_to_another_agent(
    home: Paths, project: Path, agent: str, argv: tuple[str, ...], name: str
) -> None:
    meta = make_session(
        home, project, 1, command=("claude", "--session-id", CLAUDE_ID), agent="claude",
        agent_session_id=CLAUDE_ID, exchanges=[exchange(0, "explain", "it is fine")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, agent=agent, env={}, force_inject=True)  # an agent's own history: test_handoff
    assert (plan.mode, plan.argv, plan.agent) == (ResumeMode.INJECT, argv, name)
    assert plan.inject_text is not None and plan.inject_text.startswith(f"{INJECTED_CONTEXT_PREFIX} {meta.id} (claude, ")


def test_plan_refuses_what_cannot_be_resumed(home: Paths, project: Path, tmp_path: Path) -> None:
    running = make_session(home, project, 1, status="running", host="elsewhere", pid=4242)
    with pytest.raises(UserInputError, match=f"session {running.id} is still running \\(pid 4242\\)"):
        plan_resume(_ctx(home, running), running, env={})
    ended = make_session(home, project, 2, exchanges=[])
    with pytest.raises(UserInputError, match="--agent needs a name"):
        plan_resume(_ctx(home, ended), ended, agent="  ", env={})
    gone = tmp_path / "gone"
    gone.mkdir()
    moved = make_session(home, gone, 3, exchanges=[])
    os.rmdir(gone)
    with pytest.raises(UserInputError, match=f"directory {re.escape(str(gone))} no longer exists"):
        plan_resume(_ctx(home, moved), moved, env={})


def _cast_with_two_prompts(meta: SessionMeta) -> None:
    events = [
        [0.1, "o", "> "], [0.2, "i", "one\r"], [0.3, "o", "one\r\nfirst answer\r\n> "],
        [0.4, "i", "two\r"], [0.5, "o", "two\r\nsecond answer\r\n> "],
    ]  # fmt: skip
    with open(meta.cast, "a") as fh:
        fh.writelines(json.dumps(e) + "\n" for e in events)


def test_plan_collects_an_interrupted_session_once_and_dry_run_writes_nothing(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="interrupted")
    _cast_with_two_prompts(meta)
    before = sorted(p.name for p in meta.folder.iterdir()), (meta.folder / "meta.json").read_bytes()

    dry = plan_resume(_ctx(home, meta), meta, dry_run=True, env={})
    assert [(e.prompt, e.answer) for e in dry.exchanges] == [("one", "first answer"), ("two", "second answer")]
    assert (sorted(p.name for p in meta.folder.iterdir()), (meta.folder / "meta.json").read_bytes()) == before

    plan = plan_resume(_ctx(home, meta), meta, env={})
    assert plan.exchanges == dry.exchanges and plan.inject_text == dry.inject_text
    stored = read_meta(meta.folder)
    assert stored.exchange_count == 2 and [e.prompt for e in read_exchanges(stored, None)] == ["one", "two"]


# -- the chain of resumed sessions ------------------------------------------------------------------


def test_session_chain_runs_from_the_first_session_to_the_last_resumption(home: Paths, project: Path) -> None:
    first = make_session(home, project, 1, status="killed")
    second = make_session(home, project, 2, status="hangup", parent=first.id)
    make_session(home, project, 3, status="finished", parent=second.id)  # an older resumption of second
    third = make_session(home, project, 4, status="finished", parent=second.id)
    make_session(home, project, 5)  # unrelated
    ids = [first.id, second.id, third.id]
    for meta in (first, second, third):
        assert [m.id for m in session_chain(home, meta)] == ids


def test_session_chain_stops_at_a_missing_parent_and_at_a_cycle(home: Paths, project: Path) -> None:
    orphan = make_session(home, project, 1, parent="20200101-000000-00000")
    assert [m.id for m in session_chain(home, orphan)] == [orphan.id]
    a = make_session(home, project, 2)
    b = make_session(home, project, 3, parent=a.id)
    write_meta(dataclasses.replace(a, parent=b.id))  # a resumes b resumes a
    assert sorted(m.id for m in session_chain(home, b)) == sorted([a.id, b.id])


def test_session_chain_finds_a_parent_in_another_project(home: Paths, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = make_session(home, elsewhere, 1)
    second = make_session(home, project, 2, parent=first.id)
    assert [m.id for m in session_chain(home, second)] == [first.id, second.id]


def test_conversation_tail_fills_in_from_earlier_sessions(home: Paths, project: Path) -> None:
    first = make_session(home, project, 1, exchanges=[exchange(i, f"old {i}") for i in range(3)])
    second = make_session(home, project, 2, parent=first.id, exchanges=[exchange(0, "new 0")])
    tail = conversation_tail(_ctx(home, second), second, 3)
    assert [(e.index, e.prompt) for e in tail] == [(0, "old 1"), (1, "old 2"), (2, "new 0")]
    assert [e.prompt for e in conversation_tail(_ctx(home, second), second, 1)] == ["new 0"]
    assert conversation_tail(_ctx(home, second), second, 0) == []


def test_inject_text_has_a_header_then_each_exchange(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="killed", command=("claude",), agent="claude")
    text = inject_text(meta, [
        exchange(0, "  fix the test  ", "Done.\n\nAll green.", tool_calls=(ToolCall("Bash", "pytest -q"),)),
        exchange(1, "thanks", ""),
    ])  # fmt: skip
    assert text is not None
    header, *lines = text.split("\n")
    assert header == (
        f"{INJECTED_CONTEXT_PREFIX} {meta.id} (claude, killed 2026-11-29 09:01 UTC): "
        "its last 2 exchanges follow. Please continue from there."
    )
    assert lines == ["User: fix the test", "Tools: Bash pytest -q", "Assistant: Done.", "", "All green.", "User: thanks"]
    assert inject_text(meta, []) is None


# -- conversation: a session's own exchanges ---------------------------------------------------------


def _claude_line(kind: str, uuid: str, parent: str | None, at: datetime, text: str, **extra: object) -> str:
    message: dict[str, object] = {"role": kind, "content": text if kind == "user" else [{"type": "text", "text": text}]}
    if kind == "assistant":
        message.update(id=f"msg-{uuid}", model="claude-x", usage={"input_tokens": 10, "output_tokens": 2})
    record = {"type": kind, "uuid": uuid, "parentUuid": parent, "timestamp": iso(at), "message": message, **extra}
    return json.dumps(record) + "\n"


def test_collect_keeps_only_the_exchanges_sent_during_the_session(home: Paths, project: Path, tmp_path: Path) -> None:
    agent_home = tmp_path / "agent-home"
    folder = agent_home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    transcript = folder / f"{CLAUDE_ID}.jsonl"
    meta = make_session(
        home, project, 10, status="killed", command=("claude", "--resume", CLAUDE_ID), agent="claude",
        agent_session_id=CLAUDE_ID,
    )  # fmt: skip
    start = T0 + timedelta(minutes=10)
    injected = f"{INJECTED_CONTEXT_PREFIX} 20261129-090000-00001 (notes, finished): ..."
    transcript.write_text(
        _claude_line("user", "u1", None, start - timedelta(minutes=5), "before the resume")
        + _claude_line("assistant", "a1", "u1", start - timedelta(minutes=5), "old answer")
        + _claude_line("user", "u2", "a1", start + timedelta(seconds=3), injected)
        + _claude_line("assistant", "a2", "u2", start + timedelta(seconds=4), "noted")
        + _claude_line("user", "u3", "a2", start + timedelta(seconds=9), "the new question")
        + _claude_line("assistant", "a3", "u3", start + timedelta(seconds=10), "the new answer")
    )
    updated = collect(meta, Vault(home), None, {"HOME": str(agent_home)})
    assert [(e.index, e.prompt, e.answer) for e in read_exchanges(updated, None)] == [(0, "the new question", "the new answer")]
    assert (updated.exchange_count, updated.usage) == (1, {"input": 10, "output": 2, "cache_read": 0, "cache_write": 0})
    assert (updated.agent_session_id, updated.agent_transcript) == (CLAUDE_ID, str(transcript))
    assert stored_copy(meta.folder, transcript.name, home) == transcript.read_bytes()
    assert read_meta(meta.folder) == updated


def test_gather_writes_nothing_and_falls_back_to_the_recording(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, status="interrupted", command=("claude",), agent="claude")
    _cast_with_two_prompts(meta)
    before = sorted(p.name for p in meta.folder.iterdir())
    conversation = gather(meta, Vault(home), {"HOME": str(project / "no-such-home")})
    assert conversation.agent_session is None
    assert [e.prompt for e in conversation.exchanges] == ["one", "two"]
    assert sorted(p.name for p in meta.folder.iterdir()) == before


def test_read_exchanges_skips_a_malformed_line(home: Paths, project: Path) -> None:
    meta = make_session(home, project, 1, exchanges=[exchange(0, "a"), exchange(1, "b")])
    with open(meta.folder / "exchanges.jsonl", "a") as fh:
        fh.write('{"index": "x"}\n[1]\nnot json\n')
    assert [e.prompt for e in read_exchanges(meta, None)] == ["a", "b"]
    assert [e.prompt for e in read_exchanges(meta, None, 1)] == ["b"]
    assert read_exchanges(meta, None, 0) == []


def test_usage_is_summed_in_the_metadata(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = make_session(home, project, 1, command=("notes",))
    _cast_with_two_prompts(meta)
    updated = collect(meta, Vault(home), None, {})
    assert (updated.exchange_count, updated.usage) == (2, None)  # a program without usage figures
    assert Usage(1, 2, 3, 4) + Usage(1, 1, 1, 1) == Usage(2, 3, 4, 5)


GITHUB = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"


@pytest.mark.parametrize("redacted", [True, False], ids=["redacted", "no-redact"])
def test_collect_stores_exchanges_and_transcript_copies_redacted(
    home: Paths, project: Path, tmp_path: Path, redacted: bool
) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n")
    agent_home = tmp_path / "agent-home"
    folder = agent_home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(project))
    folder.mkdir(parents=True)
    transcript = folder / f"{CLAUDE_ID}.jsonl"
    meta = make_session(home, project, 10, command=("claude",), agent="claude", agent_session_id=CLAUDE_ID)
    meta = dataclasses.replace(meta, redacted=redacted)
    start = T0 + timedelta(minutes=10)
    transcript.write_text(
        _claude_line("user", "u1", None, start + timedelta(seconds=3), f"use {GITHUB} and corp_12345678")
        + _claude_line("assistant", "a1", "u1", start + timedelta(seconds=4), f"done with {GITHUB}")
    )
    updated = collect(meta, Vault(home), _ctx(home, meta).config.redact, {"HOME": str(agent_home)})
    stored = [(meta.folder / "exchanges.jsonl").read_text(), (stored_copy(meta.folder, transcript.name, home) or b"").decode()]
    [stored_exchange] = read_exchanges(updated, None)
    for text in [*stored, stored_exchange.prompt + stored_exchange.answer]:
        assert (GITHUB in text) is not redacted and ("corp_12345678" in text) is not redacted
        assert ("[REDACTED:github-token]" in text) is redacted
    assert ("[REDACTED:corp]" in stored_exchange.prompt) is redacted
    copy = [json.loads(line) for line in stored[1].splitlines()]  # still one JSON value a line
    assert [r["uuid"] for r in copy] == ["u1", "a1"]


@pytest.mark.parametrize(
    ("argv", "takes"),
    [
        (["vim", "notes.txt"], False),
        (["/usr/bin/nano"], False),
        (["less", "log"], False),
        (["python3"], False),
        (["python3", "-q"], False),
        (["node"], False),
        (["python3", "chat.py"], True),
        (["bash"], False),
        (["-zsh"], False),
        (["aider"], True),
        (["my-chat-tool", "--fast"], True),
    ],
    ids=["vim", "nano", "less", "python-repl", "python-repl-flag", "node-repl", "python-script", "bash", "login-zsh", "aider", "other"],
)
def test_context_is_never_typed_into_shells_editors_or_bare_repls(argv: list[str], takes: bool) -> None:
    from shellkeep.app.resume import _takes_context

    assert _takes_context(argv) is takes


def test_plan_reinjects_aider_from_its_markdown_chat_history(home: Paths, project: Path, tmp_path: Path) -> None:
    # aider's transcript is Markdown: it is judged present, never "unreadable" for want of JSON
    # records; aider is resumed by re-injection (its --restore-chat-history reloads every launch)
    history = tmp_path / ".aider.chat.history.md"
    history.write_text("# aider chat started at 2026-11-29 10:15:02\n\n#### hello\n\nhi\n")
    meta = make_session(
        home, project, 1, status="killed", command=("aider",), agent="aider",
        agent_session_id="2026-11-29 10:15:02", transcript=history, exchanges=[exchange(0, "hello", "hi")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, env={"HOME": str(tmp_path)})
    assert (plan.mode, plan.argv) == (ResumeMode.INJECT, ("aider",))
    assert plan.inject_text is not None and "User: hello\nAssistant: hi" in plan.inject_text
    assert plan.note is None


def test_plan_points_opencode_at_the_channel_database_the_session_was_found_in(
    home: Paths, project: Path, tmp_path: Path
) -> None:
    # OpenCode names its database by release channel; a build of another channel would open
    # opencode.db and call the session unknown. The native resume sets $OPENCODE_DB.
    from tests.unit.agents.test_opencode import build_database

    data = tmp_path / "xdg-data" / "opencode"
    build_database(data / "opencode.db", cwd="/elsewhere")
    channel = build_database(data / "opencode-beta.db", cwd=str(project))
    session_id = "ses_0a1b2c3d4e5fCALCsession0001"
    meta = make_session(
        home, project, 1, status="killed", command=("opencode",), agent="opencode",
        agent_session_id=session_id, transcript=channel, exchanges=[exchange(0, "hello", "hi")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, env={"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg-data")})
    assert plan.mode is ResumeMode.NATIVE
    assert list(plan.argv) == ["opencode", "-s", session_id]
    assert plan.env_updates == (("OPENCODE_DB", str(channel)),)


def test_plan_sets_no_environment_for_agents_with_one_store(home: Paths, project: Path, tmp_path: Path) -> None:
    transcript = tmp_path / f"{CLAUDE_ID}.jsonl"
    transcript.write_text('{"type": "user"}\n')
    meta = make_session(
        home, project, 1, status="killed", command=("claude",), agent="claude",
        agent_session_id=CLAUDE_ID, transcript=transcript, exchanges=[exchange(0, "hello", "hi")],
    )  # fmt: skip
    plan = plan_resume(_ctx(home, meta), meta, env={"HOME": str(tmp_path)})
    assert plan.mode is ResumeMode.NATIVE and plan.env_updates == ()
