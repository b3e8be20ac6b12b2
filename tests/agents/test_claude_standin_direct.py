"""Drive the real Claude Code CLI (no shellkeep) against the Anthropic stand-in.

These tests prove the harness itself: the stand-in, the HOME that skips first-run screens,
and the rendered screen. They pin what shellkeep relies on in Claude Code 2.1.197:

- Ready: the prompt box's footer shows ``? for shortcuts`` (full line
  ``? for shortcuts · ← for agents`` … ``● high · /effort``), about 0.6 s after start.
- Requests: ``HEAD /`` first. The first prompt starts two ``POST /v1/messages?beta=true``
  that race: a title request (no tools, structured output ``{"title": string}``, the prompt
  inside ``<session>`` tags) and the conversation request (28 tools; the user message is a
  ``<system-reminder>`` text block, then the typed prompt as its own text block). Every request
  carries ``x-claude-code-session-id``. Later prompts send no title request.
- Exit: the first Ctrl-C shows ``Press Ctrl-C again to exit`` in the footer; the second exits
  with status 0 and prints ``Resume this session with:`` then ``claude --resume <uuid>``.
- Transcript: ``$HOME/.claude/projects/<real cwd, every non-alphanumeric as '-'>/<uuid>.jsonl``;
  lines of ``type`` ``user`` (``message.content`` the prompt as a string) and ``assistant``
  (``message`` is the stand-in's message as received, ``content`` a list of text blocks),
  among ``mode``, ``permission-mode``, ``file-history-snapshot``, ``attachment`` lines.
  Also written: ``$HOME/.claude/history.jsonl``, a ``.claude.json`` backup under
  ``.claude/backups/``, and ``.claude/telemetry/1p_failed_events.*.json`` (telemetry to the
  real service fails offline; it costs no visible delay).
- Resume: ``claude --resume <id>`` redraws the earlier exchange (ready as fast as a new
  session), and the next conversation request carries the same session id and ``messages``
  = user [``<system-reminder>``, earlier prompt], system ["Available agent types ...": a
  mid-conversation system message with string content], assistant [earlier answer], user
  [new prompt]. No title request is sent on resume.
- Conversation requests also hold ``role: system`` messages inside ``messages`` (beta
  ``mid-conversation-system-2026-04-07``): count turns by user/assistant roles only.

Each test takes about 1–2.5 s on a 2-core machine; the timeouts below are only ceilings.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicRequest, AnthropicStandin

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

READY = re.compile(r"\? for shortcuts|shift\+tab to cycle")
"""The prompt box is ready: its footer (2.1.197: ``? for shortcuts``; 2.1.332: ``⏵⏵ auto mode on (shift+tab to cycle)``)."""
EXIT_AGAIN = "Press Ctrl-C again to exit"
RESUME_HINT = re.compile(r"claude --resume ([0-9a-f-]{36})")
WAIT_S = 60.0

Drive = Callable[..., ScreenDriver]


def encoded_project(cwd: Path) -> str:
    """Return Claude Code's folder name for a working directory (short paths only)."""
    return re.sub(r"[^a-zA-Z0-9]", "-", str(cwd.resolve()))


def transcript_path(home: Path, cwd: Path, session_id: str) -> Path:
    """Return where Claude Code keeps the transcript of *session_id* started in *cwd*."""
    return home / ".claude" / "projects" / encoded_project(cwd) / f"{session_id}.jsonl"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the JSON objects of a JSONL file, skipping a torn or blank line."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def transcript_texts(path: Path) -> list[tuple[str, str]]:
    """Return ``(type, text)`` for the user and assistant lines of a Claude transcript."""
    return [text for record in read_jsonl(path) if record.get("type") in ("user", "assistant") for text in _texts(record)]


def turn_stored(path: Path, answer: str) -> bool:
    """Return whether Claude's transcript holds the turn answered ``answer`` whole, as ``--resume`` reads it.

    Claude Code 2.1.197 appends a turn's entries out of order (the answer and its
    ``turn_duration`` can precede the prompt and its attachments), and a crash in between
    resumes without the answer ("Continue from where you left off."). The turn is whole once
    the answer's chain of ``parentUuid``s reaches its prompt's root with no entry missing, a
    ``turn_duration`` entry follows the answer, and a ``last-prompt`` entry written after the
    last message (the leaf ``--resume`` would start from) leads through the answer.
    """
    records = read_jsonl(path)
    by_uuid = {record["uuid"]: record for record in records if isinstance(record.get("uuid"), str)}

    def chain(key: str | None) -> list[str] | None:
        seen: list[str] = []
        while key is not None:
            record = by_uuid.get(key)
            if record is None or key in seen:
                return None  # a parent not written yet
            seen.append(key)
            key = record.get("parentUuid")
        return seen

    answered = [key for key, record in by_uuid.items() if record.get("type") == "assistant" and ("assistant", answer) in _texts(record)]
    whole = chain(answered[-1]) if answered else None
    if whole is None or not any(by_uuid[key].get("type") == "user" for key in whole):
        return False
    ends = [key for key, record in by_uuid.items() if record.get("subtype") == "turn_duration" and answered[-1] in (chain(key) or [])]
    last_message = max((n for n, record in enumerate(records) if "uuid" in record), default=-1)
    leaves = [record.get("leafUuid") for record in records[last_message + 1 :] if record.get("type") == "last-prompt"]
    return bool(ends) and all(answered[-1] in (chain(leaf) or []) for leaf in leaves)


def _texts(record: dict[str, Any]) -> list[tuple[str, str]]:
    content = record.get("message", {}).get("content")
    if isinstance(content, str):
        return [(record["type"], content)]
    return [(record["type"], block["text"]) for block in content or [] if isinstance(block, dict) and block.get("type") == "text"]


def ask(driver: ScreenDriver, prompt: str, answer: str) -> None:
    """Type *prompt*, press Enter and wait until *answer* shows on the screen."""
    driver.type(prompt)
    driver.wait_for_screen(prompt, WAIT_S)  # the prompt box has taken every key
    driver.press("enter")
    driver.wait_for_screen(answer, WAIT_S)


def quit_claude(driver: ScreenDriver) -> str:
    """Exit with Ctrl-C twice; return the session id from the resume hint it prints."""
    driver.press("ctrl-c")
    driver.wait_for_screen(EXIT_AGAIN, WAIT_S)
    driver.press("ctrl-c")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    match = RESUME_HINT.search(driver.text())
    assert match, f"no resume hint on screen:\n{driver.dump()}"
    return match.group(1)


def turns(request: AnthropicRequest) -> list[tuple[str, str]]:
    """Return the user and assistant texts of a conversation request, Claude's ``<...>`` reminders left out."""
    return [(role, text) for role, text in request.texts() if role in ("user", "assistant") and not text.startswith("<")]


def request_with_prompt(standin: AnthropicStandin, prompt: str) -> AnthropicRequest:
    """Return the conversation request whose last user text is *prompt*."""
    return standin.wait_for_request(
        lambda r: r.is_conversation and r.last_user_text() == prompt, timeout_s=WAIT_S
    )


def test_claude_answers_a_prompt_and_writes_its_transcript(
    drive: Drive,
    claude_bin: Path,
    claude_version: tuple[int, ...],
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    prompt = "please remember the word pineapple"
    driver = drive([claude_bin], env=agent_env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)

    ask(driver, prompt, "STANDIN-ANSWER-1: pineapple")
    session_id = quit_claude(driver)

    request = request_with_prompt(anthropic_standin, prompt)
    assert request.query == "beta=true"
    assert request.headers["x-api-key"] == agent_env["ANTHROPIC_API_KEY"]
    assert request.session_id == session_id
    assert request.body_dict()["stream"] is True
    if claude_version <= (2, 1, 197):  # later versions skip the connectivity check
        assert any(r.method == "HEAD" and r.path == "/" for r in anthropic_standin.requests())

    transcript = transcript_path(Path(agent_env["HOME"]), project_dir, session_id)
    driver.wait_until(lambda: transcript.exists() and transcript_texts(transcript),
                      WAIT_S, f"transcript {transcript}")
    texts = transcript_texts(transcript)
    assert ("user", prompt) in texts
    assert ("assistant", "STANDIN-ANSWER-1: pineapple") in texts
    assert all(r.get("sessionId", session_id) == session_id for r in read_jsonl(transcript))


def test_claude_session_id_flag_names_the_transcript(
    drive: Drive,
    claude_bin: Path,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    session_id = str(uuid.uuid4())
    driver = drive([claude_bin, "--session-id", session_id], env=agent_env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)

    ask(driver, "name this session mango", "STANDIN-ANSWER-1: mango")
    transcript = transcript_path(Path(agent_env["HOME"]), project_dir, session_id)
    # The transcript is written while the session runs, not only at exit.
    driver.wait_until(
        lambda: transcript.exists()
        and ("assistant", "STANDIN-ANSWER-1: mango") in transcript_texts(transcript),
        WAIT_S, f"answer in {transcript}",
    )
    assert quit_claude(driver) == session_id

    assert request_with_prompt(anthropic_standin, "name this session mango").session_id == (
        session_id
    )
    assert [p.name for p in transcript.parent.glob("*.jsonl")] == [f"{session_id}.jsonl"]


def test_claude_resume_sends_the_earlier_exchange(
    drive: Drive,
    claude_bin: Path,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    session_id = str(uuid.uuid4())
    first = drive([claude_bin, "--session-id", session_id], env=agent_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, "the first word is kiwi", "STANDIN-ANSWER-1: kiwi")
    assert quit_claude(first) == session_id

    second = drive([claude_bin, "--resume", session_id], env=agent_env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    # The earlier exchange is drawn again from the transcript.
    second.wait_for_screen("the first word is kiwi", WAIT_S)
    second.wait_for_screen("STANDIN-ANSWER-1: kiwi", WAIT_S)
    ask(second, "the second word is lime", "STANDIN-ANSWER-2: lime")
    assert quit_claude(second) == session_id

    request = request_with_prompt(anthropic_standin, "the second word is lime")
    assert request.session_id == session_id
    # Seen: messages = user [<system-reminder> block, "the first word is kiwi"],
    # system "Available agent types ..." (a mid-conversation system message, string content),
    # assistant ["STANDIN-ANSWER-1: kiwi"], user ["the second word is lime"] (no reminder).
    roles = [m["role"] for m in request.messages if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]
    exchange = [
        (role, text) for role, text in request.texts()
        if role in ("user", "assistant") and not text.startswith("<")
    ]
    assert exchange == [
        ("user", "the first word is kiwi"),
        ("assistant", "STANDIN-ANSWER-1: kiwi"),
        ("user", "the second word is lime"),
    ]
    # Resuming sends no new title request: only the first run's prompt was titled.
    assert len(anthropic_standin.side_requests()) == 1
    transcript = transcript_path(Path(agent_env["HOME"]), project_dir, session_id)
    assert ("assistant", "STANDIN-ANSWER-2: lime") in transcript_texts(transcript)
