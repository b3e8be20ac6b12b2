"""Resume the real Claude Code CLI after a crash, a closed terminal and a killed recorder.

``shellkeep claude`` runs against the Anthropic stand-in; two exchanges are asked, then the
session is cut short one of three ways:

- ``kill-claude``: kill -9 of the Claude process (meta.json ``child_pid``); shellkeep lives on,
  records status ``killed`` and collects the conversation at the end;
- ``hangup``: SIGHUP to shellkeep (meta.json ``pid``), as when the terminal is closed;
  status ``hangup``, conversation collected at the end;
- ``kill-shellkeep``: kill -9 of shellkeep itself; Claude dies with its pty, meta.json still
  says ``running`` and the next command finds the session ``interrupted``;
  ``shellkeep resume`` collects its exchanges then.

In every case ``shellkeep resume`` (no SESSION) in a new terminal redraws the last screen
(showing the last answer) before Claude draws anything, starts ``claude --resume <id>`` with
the id shellkeep pre-assigned, the next request carries the earlier prompts and answers, and
a third exchange is recorded in a new session whose ``parent`` is the first. Exchanges and
token usage (the stand-in's numbers) are in both sessions' metadata.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.errors import DataError
from shellkeep.terminal.emulator import Terminal
from tests.recordings import last_screen
from shellkeep.store.paths import Paths
from tests.helpers import load_session, meta_of, process_gone, session_folders, SK, stored_copy

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicRequest, AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, request_with_prompt, turn_stored, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

PROMPTS = ("the first word is kiwi", "the second word is lime")
ANSWERS = ("STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime")
THIRD_PROMPT, THIRD_ANSWER = "the third word is fig", "STANDIN-ANSWER-3: fig"

Drive = Callable[..., ScreenDriver]


def _usage_of(requests: list[AnthropicRequest], answers: list[str]) -> dict[str, int]:
    """Return the usage the stand-in reported for *requests* (see ``AnthropicStandin._message``)."""
    return {
        "input": sum(max(1, len(r.raw_body) // 4) for r in requests),
        "output": sum(max(1, len(a.split())) for a in answers),
        "cache_read": 0,
        "cache_write": 0,
    }


def _conversation_requests(standin: AnthropicStandin, prompt: str) -> list[AnthropicRequest]:
    return [r for r in standin.conversation_requests() if r.last_user_text() == prompt]


def _restored_screen(driver: ScreenDriver, folder: Path) -> str:
    """Return the screen as it was when Claude's first byte arrived: shellkeep's redraw alone."""
    def first_output() -> str:
        try:
            _, _, events = load_session(folder)
        except DataError:  # the folder is made before the writer thread writes the header
            return ""
        data = next((e.data for e in events if e.code == "o"), "")
        # On disk before this terminal read it, on a loaded machine: wait for both.
        return data if data.encode("utf-8")[:24] in driver.raw else ""

    first = driver.wait_until(first_output, WAIT_S, "the resumed session's first output on disk and on screen")
    raw = bytes(driver.raw)
    cut = raw.find(first.encode("utf-8")[:24])
    assert cut > 0, "Claude's first output is not in what the terminal got"
    terminal = Terminal(driver.size)
    terminal.feed(raw[:cut].decode("utf-8", errors="replace"))
    return terminal.snapshot().to_text()


@pytest.mark.parametrize("cut", ["kill-claude", pytest.param("hangup", marks=pytest.mark.newest_only), "kill-shellkeep"])
def test_resume_claude_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    cut: str,
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first = drive([*SK, "claude"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert meta["command"][:2] == ["claude", "--session-id"]
    claude_id = meta["command"][2]
    assert meta["agent_session_id"] == claude_id and meta["agent"] == "claude"
    transcript = next((Path(agent_env["HOME"]) / ".claude" / "projects").glob(f"*/{claude_id}.jsonl"))
    first.wait_until(lambda: turn_stored(transcript, ANSWERS[1]), WAIT_S, "answer 2 stored")
    # What reached the screen reaches the disk within about a second.
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")

    if cut == "kill-claude":
        os.kill(meta["child_pid"], signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    elif cut == "hangup":
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    else:
        os.kill(meta["pid"], signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    first.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "claude gone")

    cut_meta = meta_of(folder)
    expected_status = {"kill-claude": "killed", "hangup": "hangup", "kill-shellkeep": "running"}[cut]
    assert cut_meta["status"] == expected_status
    assert (folder / "exchanges.jsonl").exists() == (cut != "kill-shellkeep")

    # -- resume in a new terminal ---------------------------------------------------------
    second = drive([*SK, "resume"], env=env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    restored = _restored_screen(second, new_folder)
    assert ANSWERS[1] in restored and PROMPTS[1] in restored, restored
    assert f"── shellkeep: {meta['id']} · claude · " in restored and "native resume" in restored
    second.wait_for_screen(READY, WAIT_S)
    ask(second, THIRD_PROMPT, THIRD_ANSWER)

    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == claude_id
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]
    assert turns(request) == [*earlier, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == claude_id  # exit status 0 through shellkeep

    # -- what shellkeep kept ----------------------------------------------------------------
    old = meta_of(folder)
    assert old["status"] == {"kill-claude": "killed", "hangup": "hangup", "kill-shellkeep": "interrupted"}[cut]
    assert old["exchange_count"] == 2
    old_requests = [r for p in PROMPTS for r in _conversation_requests(anthropic_standin, p)]
    assert old["usage"] == _usage_of(old_requests, list(ANSWERS))
    assert stored_copy(folder, f"{claude_id}.jsonl")
    old_exchanges = [json.loads(line) for line in (folder / "exchanges.jsonl").read_text().splitlines()]
    assert [(e["prompt"], e["answer"]) for e in old_exchanges] == list(zip(PROMPTS, ANSWERS))

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["claude", "--resume", claude_id]
    assert (new["agent"], new["agent_session_id"], new["status"], new["exit_code"]) == ("claude", claude_id, "finished", 0)
    assert new["cwd"] == str(project_dir)
    assert new["exchange_count"] == 1
    assert new["usage"] == _usage_of(_conversation_requests(anthropic_standin, THIRD_PROMPT), [THIRD_ANSWER])
    new_exchanges = [json.loads(line) for line in (new_folder / "exchanges.jsonl").read_text().splitlines()]
    assert [(e["prompt"], e["answer"]) for e in new_exchanges] == [(THIRD_PROMPT, THIRD_ANSWER)]
