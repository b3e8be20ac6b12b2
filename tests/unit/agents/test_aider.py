"""Tests for shellkeep/agents/aider.py: aider's Markdown chat history, its resume by re-injection."""

from __future__ import annotations

import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from shellkeep.agents.aider import AiderAdapter, chat_history_file, exchanges_from_markdown
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentSession, Launch, Usage

from .conftest import DATA, install, reference, requires_reference

FIXTURE = DATA / "aider" / ".aider.chat.history.md"
STAMP = "2026-03-14 08:30:00"
ADAPTER = AiderAdapter()


def test_reads_the_sessions_section_only() -> None:
    first, second, third = ADAPTER.read_exchanges(AgentSession("aider", STAMP, FIXTURE))
    assert first.index == 0
    assert first.prompt == "Add divide() that raises on zero.\nKeep add() as it is."
    assert first.answer.startswith("I'll add `divide()` below `add()`.\n\ncalc.py\n```python\n<<<<<<< SEARCH")
    assert first.answer.endswith(">>>>>>> REPLACE\n```")
    assert first.tool_results == ("Applied edit to calc.py; Commit 1a2b3c4 feat: Add divide()",)
    assert first.usage == Usage(input=2400, output=310, cache_read=0, cache_write=1500)
    assert first.model == "anthropic/claude-y"
    assert (second.prompt, second.answer) == ("/run pytest -q", "")
    assert second.tool_results == (
        "Add 0.1k tokens of command output to the chat? (Y)es/(N)o [Yes]: y; Added 3 lines of output to the chat.",
    )
    assert (third.prompt, third.answer, third.usage) == ("Thanks", "You're welcome.", Usage(3000, 5, 2200, 0))


def test_without_id_reads_every_section() -> None:
    exchanges = ADAPTER.read_exchanges(AgentSession("aider", None, FIXTURE))
    assert [e.prompt for e in exchanges][:1] == ["What is in calc.py?"]
    assert (exchanges[0].model, exchanges[0].usage) == ("openai/gpt-x", Usage(1100, 40, 0, 0))
    assert len(exchanges) == 4
    assert [e.prompt for e in ADAPTER.read_exchanges(AgentSession("aider", STAMP, FIXTURE), limit=1)] == ["Thanks"]


def test_unknown_section_gives_nothing(caplog: pytest.LogCaptureFixture) -> None:
    assert ADAPTER.read_exchanges(AgentSession("aider", "1999-01-01 00:00:00", FIXTURE)) == []
    assert "no section started at" in caplog.text


def test_a_later_launch_in_the_same_file_is_not_ours(tmp_path: Path) -> None:
    path = install(FIXTURE, tmp_path / ".aider.chat.history.md")
    with path.open("a") as fh:
        fh.write("\n# aider chat started at 2026-03-15 09:00:00\n\n#### someone else's prompt  \n\nanswer\n")
    prompts = [e.prompt for e in ADAPTER.read_exchanges(AgentSession("aider", STAMP, path))]
    assert prompts == ["Add divide() that raises on zero.\nKeep add() as it is.", "/run pytest -q", "Thanks"]


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        (["aider"], {}, "repo/.aider.chat.history.md"),
        (["aider", "--chat-history-file", "notes/chat.md"], {}, "repo/sub/notes/chat.md"),
        (["aider"], {"AIDER_CHAT_HISTORY_FILE": "/abs/chat.md"}, "/abs/chat.md"),
    ],
    ids=["git-root", "option-relative-to-cwd", "env"],
)
def test_chat_history_file(tmp_path: Path, argv: list[str], env: dict[str, str], expected: str) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    path = chat_history_file(argv, repo / "sub", env)
    assert path == (Path(expected) if expected.startswith("/") else tmp_path / expected)


def test_find_session_finds_the_section_started_after_launch(workdir: Path) -> None:
    path = install(FIXTURE, workdir / ".aider.chat.history.md")
    from datetime import datetime

    started = datetime(2026, 3, 14, 8, 29, 59).astimezone()  # aider's stamps are local time
    found = ADAPTER.find_session(Launch(("aider",)), workdir, {}, started, "")
    assert found == AgentSession("aider", STAMP, path)
    assert ADAPTER.find_session(Launch(("aider",)), workdir, {}, datetime(2026, 3, 15).astimezone(), "") is None
    assert ADAPTER.find_session(Launch(("aider",)), workdir / "nowhere", {}, started, "") is None


def test_prepare_and_resume(workdir: Path) -> None:
    assert ADAPTER.prepare(["aider", "calc.py"], workdir, {}) == Launch(("aider", "calc.py"))
    session = AgentSession("aider", STAMP, FIXTURE)
    # --restore-chat-history would reload every launch in the file: aider is re-injected instead
    assert ADAPTER.resume_argv(["aider", "--model", "sonnet", "calc.py"], session) is None
    assert ADAPTER.fresh_argv(
        ["aider", "--model", "sonnet", "calc.py", "-m", "do it", "--restore-chat-history", "--chat-history-file", "c.md"]
    ) == ["aider", "--model", "sonnet", "calc.py", "--chat-history-file", "c.md"]
    assert ADAPTER.fresh_argv(["python", "-m", "aider", "--no-restore-chat-history"]) == [
        "python", "-m", "aider", "--no-restore-chat-history",
    ]  # fmt: skip
    assert ADAPTER.transcript_files(session) == [FIXTURE]
    assert ADAPTER.inject_paste_mode


def test_markdown_parser_handles_a_bare_prompt_line() -> None:
    [exchange] = exchanges_from_markdown(["#### first  ", "####", "#### third", "", "answer  "])
    assert (exchange.prompt, exchange.answer) == ("first\n\nthird", "answer")


@requires_reference
def test_reads_the_reference_sample() -> None:
    path = reference("aider", ".aider.chat.history.md")
    first, second = ADAPTER.read_exchanges(AgentSession("aider", "2026-11-29 10:15:02", path))
    assert first.prompt == "Why does test_parse fail?"
    assert first.answer == (
        "parse() calls int() on the raw string; input with trailing whitespace raises ValueError.\n"
        "Strip the string first."
    )
    assert (first.model, first.usage) == ("anthropic/claude-x", Usage(input=7300, output=120))
    assert (second.prompt, second.tool_results) == ("/add parse.py", ("Added parse.py to the chat",))


# -- real chat histories (tests/agents/test_resume_aider.py, SHELLKEEP_TEST_SAVE_AIDER) ------------
REAL = DATA / "aider" / "real"
RESUMED = {  # version: the launch cut short, the re-injected launch
    "0.85.5": ("2026-12-03 16:35:36", "2026-12-03 16:35:45", (604, 10), (627, 10), (689, 10), (713, 11)),
    "0.86.2": ("2026-12-03 16:36:05", "2026-12-03 16:36:16", (596, 10), (619, 10), (682, 10), (706, 11)),
}


@pytest.mark.parametrize("version", sorted(RESUMED), ids=lambda v: f"aider-{v}")
def test_reads_a_real_history_cut_short_then_reinjected(version: str) -> None:
    path = REAL / f"{version}-resumed.aider.chat.history.md"
    first_stamp, second_stamp, *tokens = RESUMED[version]
    first = ADAPTER.read_exchanges(AgentSession("aider", first_stamp, path))
    assert [(e.prompt, e.answer) for e in first] == [
        ("the first word is plum", "STANDIN-ANSWER-1: plum"),
        ("the second word is pear", "STANDIN-ANSWER-2: pear"),
    ]  # the launch banner (> lines before the first prompt) belongs to no exchange
    assert [e.usage for e in first] == [Usage(input=i, output=o) for i, o in tokens[:2]]
    assert {e.model for e in first} == {"openai/mock-model"}
    assert all(e.tool_results == () for e in first)
    block, third = ADAPTER.read_exchanges(AgentSession("aider", second_stamp, path))
    assert block.prompt.startswith(INJECTED_CONTEXT_PREFIX)
    assert block.prompt.endswith(
        "User: the first word is plum\nAssistant: STANDIN-ANSWER-1: plum\n"
        "User: the second word is pear\nAssistant: STANDIN-ANSWER-2: pear"
    )  # one multi-line prompt: aider writes each line of it as a #### line
    assert (block.answer, block.usage) == ("STANDIN-ANSWER-3: there", Usage(*tokens[2]))
    assert (third.prompt, third.answer, third.usage) == (
        "the third word is quince", "STANDIN-ANSWER-4: quince", Usage(*tokens[3]),
    )  # fmt: skip


@pytest.mark.parametrize("version", sorted(RESUMED), ids=lambda v: f"aider-{v}")
def test_finds_the_launch_of_a_real_history(workdir: Path, version: str) -> None:
    first_stamp, second_stamp = RESUMED[version][:2]
    path = install(REAL / f"{version}-resumed.aider.chat.history.md", workdir / ".aider.chat.history.md")
    moment = datetime.strptime(second_stamp, "%Y-%m-%d %H:%M:%S").astimezone()  # aider writes local time
    assert ADAPTER.find_session(Launch(("aider",)), workdir, {}, moment, "") == AgentSession("aider", second_stamp, path)
    earlier = datetime.strptime(first_stamp, "%Y-%m-%d %H:%M:%S").astimezone()
    assert ADAPTER.find_session(Launch(("aider",)), workdir, {}, earlier, "") == AgentSession("aider", first_stamp, path)


def test_reads_a_real_history_with_an_edit_a_command_and_a_pasted_prompt() -> None:
    path = REAL / "0.86.2-edit.aider.chat.history.md"
    edit, tokens, pasted = ADAPTER.read_exchanges(AgentSession("aider", "2026-12-03 16:37:33", path))
    assert edit.prompt == "create hello.py that prints hello"
    assert edit.answer == 'I\'ll create it.\n\nhello.py\n```\nprint("hello")\n```'
    assert edit.usage == Usage(input=597, output=16)
    assert edit.tool_results == (
        "hello.py; Create new file? (Y)es/(N)o [Yes]: y; Applied edit to hello.py; Commit e5105b8 feat: Add hello.py; "
        "You can use /undo to undo and discard each aider commit.",
    )
    assert (tokens.prompt, tokens.answer, tokens.usage) == ("/tokens", "", None)
    assert tokens.tool_results[0].startswith("Approximate context window usage for openai/mock-model, in tokens:; ")
    assert (pasted.prompt, pasted.answer) == ("first line\n\nlast line", "Two lines noted: last line")
    assert pasted.usage == Usage(input=788, output=6)
