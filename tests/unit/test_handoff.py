"""Tests for the hand-off of ``resume --agent OTHER`` (shellkeep/app/handoff.py and its hooks in
app/resume.py): the conversation written into OTHER's own history and OTHER resumed natively,
re-injection kept as the fallback. Sessions are real folders under a temporary
``SHELLKEEP_HOME``; the agents' folders are in the test's temporary HOME.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, ToolCall
from shellkeep.agents.registry import adapter_named
from shellkeep.app.resume import ResumeMode, plan_resume
from shellkeep.store.paths import Paths
from tests.unit.test_resume import CLAUDE_ID, _ctx, exchange, make_session


@pytest.fixture
def project() -> Path:
    """Return the project folder the ``home`` fixture changed into."""
    return Path.cwd()


def _claude_session(home: Paths, project: Path, *, n: int = 2) -> object:
    talk = [exchange(i, f"prompt {i}", f"answer {i}", tool_calls=(ToolCall("Bash", f"ls {i}"),)) for i in range(n)]
    return make_session(
        home, project, 1, status="killed", command=("claude", "--session-id", CLAUDE_ID), agent="claude",
        agent_session_id=CLAUDE_ID, exchanges=talk,
    )  # fmt: skip


def test_resume_with_another_agent_writes_its_history_and_resumes_it_natively(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project, n=7)
    env = {"HOME": str(tmp_path / "agent-home")}
    plan = plan_resume(_ctx(home, meta), meta, agent="codex", env=env)  # type: ignore[arg-type]
    assert plan.mode is ResumeMode.NATIVE and plan.argv[:2] == ("codex", "resume") and plan.inject_text is None
    [rollout] = (tmp_path / "agent-home" / ".codex" / "sessions").rglob("rollout-*.jsonl")
    assert plan.argv == ("codex", "resume", rollout.name[-len("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.jsonl") : -len(".jsonl")])
    assert plan.note == f"handed off 7 exchanges into codex's own history: {rollout}"
    back = adapter_named("codex").read_exchanges(AgentSession("codex", plan.argv[2], rollout))
    assert [e.prompt for e in back] == [f"prompt {i}" for i in range(7)]  # all of them, not resume.exchanges' 5
    assert back[3].answer == "[tools used: Bash ls 3]\n\nanswer 3"
    assert {e.time for e in back} == {meta.ended_at}  # type: ignore[attr-defined]  # undated: before the resumed run, its parent's
    head = json.loads(rollout.read_text().splitlines()[0])["payload"]
    assert head["shellkeep_handoff"]["from_session"] == meta.id and head["cwd"] == str(project.resolve())  # type: ignore[attr-defined]
    fallback = plan.fallback  # the other agent re-injected, when its own resume fails
    assert fallback is not None and (fallback.mode, fallback.argv, fallback.agent) == (ResumeMode.INJECT, ("codex",), "codex")
    assert fallback.inject_text is not None and "User: prompt 6" in fallback.inject_text and len(fallback.exchanges) == 5


def test_exchanges_limits_what_is_handed_off(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project, n=4)
    plan = plan_resume(_ctx(home, meta), meta, agent="qwen", exchanges=1, env={"HOME": str(tmp_path)})  # type: ignore[arg-type]
    [chat] = (tmp_path / ".qwen" / "projects").rglob("*.jsonl")
    assert plan.argv == ("qwen", "-r", chat.stem) and plan.note is not None and "handed off 1 exchange into qwen's" in plan.note
    assert [e.prompt for e in adapter_named("qwen").read_exchanges(AgentSession("qwen", chat.stem, chat))] == ["prompt 3"]


def test_inject_and_agents_without_a_writer_re_inject(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project)
    env = {"HOME": str(tmp_path)}
    forced = plan_resume(_ctx(home, meta), meta, agent="codex", env=env, force_inject=True)  # type: ignore[arg-type]
    assert (forced.mode, forced.argv) == (ResumeMode.INJECT, ("codex",))
    assert forced.note == "no hand-off into codex's own history (--inject); re-injecting 2 exchanges"
    for agent in ("aider", "opencode", "aider --model sonnet", "python3 -i"):  # the line says why, for each
        other = plan_resume(_ctx(home, meta), meta, agent=agent, env=env)  # type: ignore[arg-type]
        name = agent.split()[0]
        assert (other.mode, other.argv[0]) == (ResumeMode.INJECT, name)
        assert other.note == f"no hand-off into {name}'s own history ({name} keeps no transcript shellkeep can write); re-injecting 2 exchanges"
    assert not (tmp_path / ".codex").exists()


def test_a_failed_write_says_why_in_words(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project)
    (tmp_path / "codex-home").write_text("a file, not Codex's folder")
    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "codex-home")}
    plan = plan_resume(_ctx(home, meta), meta, agent="codex", env=env)  # type: ignore[arg-type]
    assert (plan.mode, plan.argv) == (ResumeMode.INJECT, ("codex",))
    assert plan.note is not None and "Errno" not in plan.note and plan.note.endswith("); re-injecting 2 exchanges")
    said = f"no hand-off into codex's own history (could not write its transcript, not a directory: {tmp_path / 'codex-home' / 'sessions'}/"
    assert plan.note.startswith(said), plan.note  # then the day's folder


def test_a_refused_hand_off_says_why_and_re_injects(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project)
    plan = plan_resume(_ctx(home, meta), meta, agent="gemini", env={"HOME": str(tmp_path)})  # type: ignore[arg-type]
    assert (plan.mode, plan.argv) == (ResumeMode.INJECT, ("gemini",))
    assert plan.note == (
        f"no hand-off into gemini's own history (gemini has no project folder for {project} yet (run gemini there once)); "
        "re-injecting 2 exchanges"
    )


def test_a_dry_run_says_where_it_would_write_and_writes_nothing(home: Paths, project: Path, tmp_path: Path) -> None:
    meta = _claude_session(home, project)
    plan = plan_resume(_ctx(home, meta), meta, agent="claude", env={"HOME": str(tmp_path)}, dry_run=True)  # type: ignore[arg-type]
    assert plan.mode is ResumeMode.NATIVE and plan.argv[:2] == ("claude", "--resume")
    assert plan.note is not None and plan.note.startswith("would hand off 2 exchanges into claude's own history: ")
    assert plan.note.endswith(f"{plan.argv[2]}.jsonl") and not (tmp_path / ".claude").exists()
