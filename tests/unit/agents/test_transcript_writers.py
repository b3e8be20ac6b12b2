"""The transcript writers of a hand-off (shellkeep/agents/*_writer.py, transcript_writer.py).

Each writer's file is read back by shellkeep's own reader of that agent, found where that
agent's adapter looks for the session id, carries the ``shellkeep_handoff`` mark, is never
written over, and has the shape the real CLI writes (compared with files Claude Code, Gemini
CLI and Qwen Code wrote in tests/data/agents).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Exchange, ToolCall
from shellkeep.agents.codex import codex_home, find_rollout
from shellkeep.agents.registry import adapter_named
from shellkeep.agents.transcript_writer import (
    MARK_FIELD,
    HandoffMark,
    HandoffRefused,
    answer_with_tools,
    create_new,
    read_mark,
)
from shellkeep.agents.writers import writer_for, writer_names

from .conftest import DATA

NOW = datetime(2026, 12, 6, 8, 30, 15, tzinfo=timezone.utc)
MARK = HandoffMark(from_session="20261206-083000-0001", from_agent="claude", written_at="2026-12-06T08:30:15.000Z")
EXCHANGES = (
    Exchange(index=0, time="2026-12-06T08:00:01.000Z", prompt="guard divide() against zero", answer="Done: it raises now.",
             tool_calls=(ToolCall("Edit", "calc.py"), ToolCall("Bash", "pytest -q")), model="claude-opus-4-8"),
    Exchange(index=1, time="2026-12-06T08:01:02.000Z", prompt="add a test for it", answer="Added test_divide_by_zero."),
)  # fmt: skip
AGENTS = ["claude", "codex", "gemini", "qwen"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "calc"
    folder.mkdir(parents=True)
    return folder


def _env(tmp_path: Path, project: Path, agent: str) -> dict[str, str]:
    """Return an environment whose agent folders are in ``tmp_path`` (Gemini's project registered, as
    Gemini CLI does at its first start in a folder)."""
    home = tmp_path / "home"
    if agent == "gemini":
        (home / ".gemini" / "tmp" / "calc").mkdir(parents=True)
        (home / ".gemini" / "projects.json").write_text(json.dumps({"projects": {str(project): "calc"}}))
        (home / ".gemini" / "tmp" / "calc" / ".project_root").write_text(str(project))
    return {"HOME": str(home)}


def _found(agent: str, session_id: str, project: Path, env: dict[str, str]) -> Path | None:
    """Return where the agent's adapter finds the transcript of ``session_id`` (as its resume would)."""
    if agent == "codex":
        return find_rollout(codex_home(env), session_id)
    adapter = adapter_named(agent)
    layout = adapter.transcript_layout(project, env)  # type: ignore[attr-defined]
    found: Path | None = layout.path_of(session_id)
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_a_written_transcript_reads_back_as_the_same_conversation(tmp_path: Path, project: Path, agent: str) -> None:
    env = _env(tmp_path, project, agent)
    writer = writer_for(agent)
    assert writer is not None
    written = create_new(writer, EXCHANGES, project, env, MARK, NOW)
    assert written.exchanges == 2 and written.path.is_file()
    assert _found(agent, written.session_id, project, env) == written.path
    session = AgentSession(agent=agent, session_id=written.session_id, transcript=written.path)
    back = adapter_named(agent).read_exchanges(session)
    assert [(e.prompt, e.answer) for e in back] == [(e.prompt, answer_with_tools(e)) for e in EXCHANGES]
    assert back[0].answer.startswith("[tools used: Edit calc.py; Bash pytest -q]\n\nDone: it raises now.")
    assert written.path.stat().st_mode & 0o777 == 0o600
    head = (lambda record: record.get("payload")) if agent == "codex" else None
    assert read_mark(written.path, head) == {"by": "shellkeep", **{k: v for k, v in MARK.to_json().items() if k != "by"}}


@pytest.mark.parametrize("agent", AGENTS)
def test_the_transcript_names_the_cwd_the_agent_resumes_in(tmp_path: Path, project: Path, agent: str) -> None:
    env = _env(tmp_path, project, agent)
    writer = writer_for(agent)
    assert writer is not None
    written = create_new(writer, EXCHANGES[:1], project, env, MARK, NOW)
    records = [json.loads(line) for line in written.path.read_text().splitlines()]
    if agent == "gemini":  # its chat names the project by hash, the file lives in the project's folder
        import hashlib

        assert records[0]["projectHash"] == hashlib.sha256(str(project).encode()).hexdigest()
        assert records[0]["sessionId"] == written.session_id
        return
    cwds = {json.dumps(r.get("payload", r).get("cwd")) for r in records if "cwd" in r.get("payload", r)}
    assert cwds == {json.dumps(str(project))}


@pytest.mark.parametrize(
    ("agent", "variable", "folder"),
    [("claude", "CLAUDE_CONFIG_DIR", "projects"), ("codex", "CODEX_HOME", "sessions"),
     ("gemini", "GEMINI_CLI_HOME", ".gemini"), ("qwen", "QWEN_HOME", "projects")],
    ids=AGENTS,
)  # fmt: skip
def test_the_agents_own_folder_variable_is_respected(tmp_path: Path, project: Path, agent: str, variable: str, folder: str) -> None:
    env = _env(tmp_path, project, agent)
    elsewhere = tmp_path / "elsewhere"
    if agent == "gemini":  # GEMINI_CLI_HOME replaces HOME for it
        (tmp_path / "home").rename(elsewhere)
    env[variable] = str(elsewhere)
    writer = writer_for(agent)
    assert writer is not None
    written = create_new(writer, EXCHANGES, project, env, MARK, NOW)
    assert written.path.is_relative_to(elsewhere / folder)
    assert _found(agent, written.session_id, project, env) == written.path


class _Ids:
    """A writer whose ids come from a list (to aim at a file that is already there)."""

    def __init__(self, agent: str, ids: list[str]) -> None:
        inner = writer_for(agent)
        assert inner is not None
        self.inner, self.ids = inner, iter(ids)

    def new_session_id(self) -> str:
        return next(self.ids)

    def target(self, session_id: str, cwd: Path, env: object, now: datetime) -> Path:
        return self.inner.target(session_id, cwd, env, now)  # type: ignore[arg-type]

    def lines(self, *args: object) -> list[bytes]:
        return self.inner.lines(*args)  # type: ignore[arg-type]


TAKEN = "11111111-2222-4333-8444-555555555555"
FREE = "66666666-7777-4888-9999-aaaaaaaaaaaa"


@pytest.mark.parametrize("agent", AGENTS)
def test_an_existing_file_is_never_written_over(tmp_path: Path, project: Path, agent: str) -> None:
    env = _env(tmp_path, project, agent)
    writer = _Ids(agent, [TAKEN, FREE])
    there = writer.target(TAKEN, project, env, NOW)
    there.parent.mkdir(parents=True, exist_ok=True)
    there.write_bytes(b"the agent's own file\n")
    written = create_new(writer, EXCHANGES, project, env, MARK, NOW)
    assert written.session_id == FREE and written.path != there
    assert there.read_bytes() == b"the agent's own file\n"

    every = _Ids(agent, [TAKEN] * 3)
    with pytest.raises(HandoffRefused, match="a file was already at each new transcript path"):
        create_new(every, EXCHANGES, project, env, MARK, NOW)
    assert there.read_bytes() == b"the agent's own file\n"


def test_a_dry_run_writes_nothing(tmp_path: Path, project: Path) -> None:
    env = _env(tmp_path, project, "codex")
    writer = writer_for("codex")
    assert writer is not None
    written = create_new(writer, EXCHANGES, project, env, MARK, NOW, dry_run=True)
    assert not written.path.exists() and not (tmp_path / "home").exists()


def test_gemini_refuses_a_project_it_never_ran_in(tmp_path: Path, project: Path) -> None:
    writer = writer_for("gemini")
    assert writer is not None
    with pytest.raises(HandoffRefused, match="gemini has no project folder for .* yet"):
        create_new(writer, EXCHANGES, project, {"HOME": str(tmp_path / "home")}, MARK, NOW)


def test_nothing_to_hand_off_is_refused(tmp_path: Path, project: Path) -> None:
    writer = writer_for("claude")
    assert writer is not None and writer_for("aider") is None and sorted(writer_names()) == AGENTS
    with pytest.raises(HandoffRefused, match="no exchange"):
        create_new(writer, [Exchange(index=0, time=None, prompt="  ", answer="x")], project, {"HOME": str(tmp_path)}, MARK, NOW)


# -- the shape the real CLIs write ------------------------------------------------------------------


def _records(path: Path) -> Iterator[dict[str, object]]:
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if isinstance(record, dict):
            yield record


def _written(tmp_path: Path, project: Path, agent: str) -> list[dict[str, object]]:
    writer = writer_for(agent)
    assert writer is not None
    return list(_records(create_new(writer, EXCHANGES, project, _env(tmp_path, project, agent), MARK, NOW).path))


def _keys_by_kind(records: list[dict[str, object]], kind_of: str) -> dict[object, set[str]]:
    found: dict[object, set[str]] = {}
    for record in records:
        found.setdefault(record.get(kind_of), set()).update(k for k in record if k != MARK_FIELD)
    return found


REAL_QWEN = DATA / "qwen-real" / "0.24.4" / ".qwen" / "projects" / "-home-bob-work-calc" / "chats" / "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.jsonl"
REAL_GEMINI = DATA / "gemini-real" / "0.61.0" / ".gemini" / "tmp" / "calc" / "chats" / "session-2026-12-03T16-08-9d8c7b6a.jsonl"
REAL_CLAUDE = DATA / "plan" / "claude-todowrite.jsonl"


@pytest.mark.parametrize(
    ("agent", "real", "kind"),
    [("qwen", REAL_QWEN, "type"), ("claude", REAL_CLAUDE, "type"), ("gemini", REAL_GEMINI, "type")],
    ids=["qwen-0.24.4", "claude-2.1.197", "gemini-0.61.0"],
)  # fmt: skip
def test_records_have_the_fields_the_real_agent_writes(tmp_path: Path, project: Path, agent: str, real: Path, kind: str) -> None:
    ours = _keys_by_kind(_written(tmp_path, project, agent), kind)
    theirs = _keys_by_kind(list(_records(real)), kind)
    for record_kind, keys in ours.items():
        assert record_kind in theirs, record_kind
        assert keys <= theirs[record_kind], (record_kind, keys - theirs[record_kind])
    assert {"user", "assistant" if agent != "gemini" else "gemini"} <= set(ours)


def test_message_payloads_have_the_real_agents_shape(tmp_path: Path, project: Path) -> None:
    qwen = _written(tmp_path / "q", project, "qwen")
    real_qwen = {r["type"]: r for r in _records(REAL_QWEN) if r["type"] in ("user", "assistant")}
    for record in qwen:
        message, real = record["message"], real_qwen[str(record["type"])]["message"]
        assert isinstance(message, dict) and isinstance(real, dict)
        assert (set(message), message["role"]) == (set(real), real["role"]) and set(message["parts"][0]) == {"text"}
    gemini = _written(tmp_path / "g", project, "gemini")
    real_head = next(_records(REAL_GEMINI))
    assert set(gemini[0]) - {MARK_FIELD} == set(real_head)
    real_user = next(r for r in _records(REAL_GEMINI) if r.get("type") == "user")
    assert isinstance(gemini[1]["content"], list) and set(gemini[1]["content"][0]) == set(real_user["content"][0])  # type: ignore[index]
    claude = _written(tmp_path / "c", project, "claude")
    real_answer = next(r for r in _records(REAL_CLAUDE) if r.get("type") == "assistant" and "PLAN-MADE" in json.dumps(r))
    ours_answer = next(r for r in claude if r["type"] == "assistant")
    assert set(ours_answer["message"]) <= set(real_answer["message"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("config", "provider"),
    [(None, "openai"), ('model_provider = "standin"\n', "standin"), ("model_provider = [\n", "openai"),
     ('model_provider = "standin"\nprofile = "work"\n[profiles.work]\nmodel_provider = "azure"\n', "azure"),
     ('profile = "home"\n[profiles.work]\nmodel_provider = "azure"\n', "openai")],
    ids=["no-config", "configured", "unreadable", "profile", "other-profile"],
)  # fmt: skip
def test_a_rollout_names_the_provider_codex_will_use(tmp_path: Path, project: Path, config: str | None, provider: str) -> None:
    """``codex resume`` of a rollout whose ``model_provider`` is not configured stops at a
    "Model provider unavailable" dialog (once Codex has run in that home)."""
    env = {"HOME": str(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex")}
    if config is not None:
        (tmp_path / "codex").mkdir()
        (tmp_path / "codex" / "config.toml").write_text(config)
    writer = writer_for("codex")
    assert writer is not None
    head = next(_records(create_new(writer, EXCHANGES, project, env, MARK, NOW).path))
    assert head["type"] == "session_meta" and head["payload"]["model_provider"] == provider  # type: ignore[index]


def test_claude_answers_name_a_claude_model_or_none(tmp_path: Path, project: Path) -> None:
    """Claude Code restores the last answer's model on resume and warns for one it does not know
    (another agent's): such answers name ``<synthetic>``, as Claude Code's own model-less ones."""
    talk = [*EXCHANGES, Exchange(index=2, time=None, prompt="and from codex?", answer="yes", model="gpt-5-codex")]
    writer = writer_for("claude")
    assert writer is not None
    records = list(_records(create_new(writer, talk, project, {"HOME": str(tmp_path)}, MARK, NOW).path))
    models = [r["message"]["model"] for r in records if r["type"] == "assistant"]  # type: ignore[index]
    assert models == ["claude-opus-4-8", "<synthetic>", "<synthetic>"]
