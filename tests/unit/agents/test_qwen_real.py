"""Qwen Code 0.23.4 and 0.24.4 chat files recorded from real runs (tests/data/agents/qwen-real).

Each holds a real session against the loopback stand-in: two exchanges, a kill -9 of the
process group (after the answers were written), ``qwen -r <id>`` and a third exchange. Paths
were made ``/home/bob/...``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Launch, Usage
from shellkeep.agents.qwen import QwenAdapter

from .conftest import DATA, FIXTURE_CWD, install, utc

SID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
REAL = DATA / "qwen-real"
VERSIONS = ("0.23.4", "0.24.4")
ADAPTER = QwenAdapter()
PROMPTS = ("guard divide() against zero", "add a test for it", "run the tests")
ANSWERS = ("STANDIN-ANSWER-1: zero", "STANDIN-ANSWER-2: it", "STANDIN-ANSWER-3: tests")


def _chat(version: str) -> Path:
    return REAL / version / ".qwen" / "projects" / "-home-bob-work-calc" / "chats" / f"{SID}.jsonl"


def _usage(path: Path) -> list[Usage]:
    found = []
    for record in map(json.loads, path.read_text().splitlines()):
        meta = record.get("usageMetadata")
        if record.get("type") == "assistant" and meta:
            found.append(Usage(input=meta["promptTokenCount"], output=meta["candidatesTokenCount"], cache_read=meta["cachedContentTokenCount"]))
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_reads_the_three_exchanges_of_a_resumed_session(version: str) -> None:
    path = _chat(version)
    exchanges = ADAPTER.read_exchanges(AgentSession("qwen", SID, path))
    assert [(e.prompt, e.answer) for e in exchanges] == list(zip(PROMPTS, ANSWERS))
    assert [e.usage for e in exchanges] == _usage(path)
    assert all(e.time is not None for e in exchanges)
    assert ADAPTER.knows_version(version)


@pytest.mark.parametrize("version", VERSIONS)
def test_finds_the_pre_assigned_session_in_its_project_folder(version: str, tmp_path: Path) -> None:
    home, workdir = tmp_path / "home", tmp_path / "work" / "calc"
    workdir.mkdir(parents=True)
    encoded = "".join(c if c.isalnum() else "-" for c in str(workdir))
    path = install(_chat(version), home / ".qwen" / "projects" / encoded / "chats" / f"{SID}.jsonl", {FIXTURE_CWD: str(workdir)})
    launch = Launch(argv=("qwen", "--session-id", SID), agent_session_id=SID)
    found = ADAPTER.find_session(launch, workdir, {"HOME": str(home)}, utc("2026-12-03T00:00:00"), "")
    assert found == AgentSession("qwen", SID, path)
    assert ADAPTER.resume_argv(["qwen"], found) == ["qwen", "-r", SID]


def test_the_last_prompt_without_its_answer_is_an_exchange_without_answer(tmp_path: Path) -> None:
    """What a kill -9 within the second Qwen Code takes to write an answer leaves (the screen has it)."""
    lines = _chat("0.24.4").read_text().splitlines()
    last_answer = max(n for n, line in enumerate(lines) if json.loads(line).get("type") == "assistant")
    cut = tmp_path / f"{SID}.jsonl"
    cut.write_text("\n".join(lines[:last_answer]) + "\n")
    exchanges = ADAPTER.read_exchanges(AgentSession("qwen", SID, cut))
    assert [(e.prompt, e.answer) for e in exchanges][-1] == (PROMPTS[-1], "")
    assert ADAPTER.answers_written_late
