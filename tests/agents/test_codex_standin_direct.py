"""Drive the real Codex CLI (no shellkeep) against the OpenAI Responses stand-in.

What these tests pin about Codex 0.171.0 (the facts shellkeep relies on):

- Ready: the composer shows the placeholder ``Ask Codex to do anything`` (and a footer
  ``? for shortcuts``) about 0.3 s after start; it shows again after every answer. The
  first answer takes about 2 s more (the app-server daemon starts first).
- Requests: ``POST /v1/responses`` (``stream: true``, ``Authorization: Bearer <env_key's
  value>``, headers ``session-id`` / ``thread-id`` = the session id). The first prompt starts
  a conversation request (13 tools; ``input`` = developer messages, a user
  ``<environment_context>`` message, then the prompt as a user ``input_text``) and a title
  request (``tools: []``, ``text.format`` json_schema ``{"title": string}``, its own
  ``session-id``). Nothing else is requested from the provider.
- Exit: one Ctrl-C at an idle prompt ends the TUI (status 0) and prints
  ``To reconnect, run:`` / ``codex resume <uuid v7>``.
- It leaves ``codex app-server --listen unix:// --managed-daemon`` and
  ``codex app-server daemon pid-update-loop`` running (parent PID 1), started from a copy of
  the binary that it puts under ``$CODEX_HOME/packages/app-server-daemon/`` (~400 MB per
  HOME); pids in ``$CODEX_HOME/app-server-daemon/*.pid``. The ``codex_home`` fixture ends them.
- The footer shows ``⚠ 2 warnings``: no ``bwrap`` on PATH, and no helper aliases made
  under ``/tmp`` (the daemon's stderr log says so); neither stops a plain answer.
- Rollout: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl``; first line
  ``type: session_meta`` with ``payload.id`` and ``payload.cwd``; the exchange is in
  ``response_item`` lines (``payload.type == "message"``, ``role`` user/assistant,
  ``content`` of ``input_text``/``output_text``). ``session_index.jsonl`` gets the title.
- Resume (daemon ended first, as after a reboot): ``codex resume <id>`` redraws the earlier
  exchange, and the next request keeps the ``session-id`` and sends ``input`` = developer
  messages, user ``<environment_context>``, user earlier prompt, assistant earlier answer
  (``output_text``), user new prompt. No title request is sent on resume.

Each test takes about 3 s on a 2-core machine; the timeouts below are only ceilings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Callable

import pytest

from .agent_processes import processes_using, reap
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIRequest, OpenAIStandin

pytestmark = [pytest.mark.agent, pytest.mark.timeout(120)]

READY = "Ask Codex to do anything"
RESUME_HINT = re.compile(r"codex resume ([0-9a-f-]{36})")
WAIT_S = 60.0

Drive = Callable[..., ScreenDriver]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Return the JSON objects of a JSONL file, skipping a torn or blank line."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def find_rollout(codex_home: Path, session_id: str) -> Path | None:
    """Return the rollout file of *session_id* under ``$CODEX_HOME/sessions``, if any."""
    found = sorted((codex_home / "sessions").glob(f"*/*/*/rollout-*-{session_id}.jsonl"))
    return found[0] if found else None


def rollout_texts(path: Path) -> list[tuple[str, str]]:
    """Return ``(role, text)`` for the user/assistant message items of a Codex rollout."""
    out: list[tuple[str, str]] = []
    for record in read_jsonl(path):
        payload = record.get("payload", {})
        if record.get("type") != "response_item" or payload.get("type") != "message":
            continue
        if payload.get("role") not in ("user", "assistant"):
            continue
        for part in payload.get("content", []):
            if part.get("type") in ("input_text", "output_text"):
                out.append((payload["role"], part["text"]))
    return out


def ask(driver: ScreenDriver, prompt: str, answer: str) -> None:
    """Type *prompt*, press Enter and wait until *answer* shows on the screen."""
    driver.type(prompt)
    driver.wait_for_screen(prompt, WAIT_S)
    driver.press("enter")
    driver.wait_for_screen(answer, WAIT_S)
    driver.wait_for_screen(READY, WAIT_S)  # the turn is over, the composer is back


STILL_RUNNING = "Task is still running"


def quit_codex(driver: ScreenDriver) -> str:
    """Exit with Ctrl-C at the idle prompt; return the id from the resume hint.

    On a loaded machine Codex can still be finishing the turn when its composer is back; a
    Ctrl-C then opens its "Task is still running" choice instead of exiting. Enter takes the
    highlighted "Cancel task" (stay in Codex), and the next Ctrl-C at the idle prompt exits.
    """
    for _ in range(3):
        driver.press("ctrl-c")
        driver.wait_until(
            lambda: (driver.eof and not driver.is_alive()) or STILL_RUNNING in driver.text(), WAIT_S, "codex exit"
        )
        if not driver.is_alive():
            break
        driver.press("enter")
        driver.wait_until(lambda: STILL_RUNNING not in driver.text(), WAIT_S, "the task choice closed")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    match = RESUME_HINT.search(driver.text())
    assert match, f"no resume hint on screen:\n{driver.dump()}"
    return match.group(1)


def turns(request: OpenAIRequest) -> list[tuple[str, str]]:
    """Return the (role, text) of the user and assistant messages a request sent, Codex's own
    context (texts starting with ``<`` or ``#``) left out."""
    return [(role, text) for role, text in request.texts() if role in ("user", "assistant") and not text.startswith(("<", "#"))]


def request_with_prompt(standin: OpenAIStandin, prompt: str) -> OpenAIRequest:
    """Return the conversation request whose last user text is *prompt*."""
    return standin.wait_for_request(
        lambda r: r.is_conversation and r.last_user_text() == prompt, timeout_s=WAIT_S
    )


def test_codex_answers_a_prompt_and_writes_its_rollout(
    drive: Drive,
    codex_bin: Path,
    codex_env: dict[str, str],
    codex_home: Path,
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    prompt = "please remember the word papaya"
    driver = drive([codex_bin], env=codex_env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)

    ask(driver, prompt, "STANDIN-ANSWER-1: papaya")
    session_id = quit_codex(driver)

    request = request_with_prompt(openai_standin, prompt)
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer " + codex_env["SHELLKEEP_STANDIN_OPENAI_KEY"]
    assert request.headers["session-id"] == session_id
    assert request.body_dict()["stream"] is True

    codex_dir = Path(codex_env["CODEX_HOME"])
    rollout = driver.wait_until(lambda: find_rollout(codex_dir, session_id), WAIT_S, "rollout")
    assert rollout is not None
    meta = read_jsonl(rollout)[0]
    assert meta["type"] == "session_meta"
    assert meta["payload"]["id"] == session_id
    assert meta["payload"]["cwd"] == str(project_dir)
    driver.wait_until(
        lambda: ("assistant", "STANDIN-ANSWER-1: papaya") in rollout_texts(rollout),
        WAIT_S, f"answer in {rollout}",
    )
    texts = rollout_texts(rollout)
    assert ("user", prompt) in texts

    # The TUI is gone but its app-server daemon is not; ending it leaves nothing behind.
    assert processes_using(codex_home), "expected codex's app-server daemon to outlive the TUI"
    reap(codex_home)
    assert processes_using(codex_home) == []


def test_codex_resume_sends_the_earlier_exchange(
    drive: Drive,
    codex_bin: Path,
    codex_env: dict[str, str],
    codex_home: Path,
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    first = drive([codex_bin], env=codex_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, "the first word is plum", "STANDIN-ANSWER-1: plum")
    session_id = quit_codex(first)
    reap(codex_home)  # as after a reboot: the second run must start from the rollout

    second = drive([codex_bin, "resume", session_id], env=codex_env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    # The earlier exchange is drawn again from the rollout.
    second.wait_for_screen("the first word is plum", WAIT_S)
    second.wait_for_screen("STANDIN-ANSWER-1: plum", WAIT_S)
    ask(second, "the second word is pear", "STANDIN-ANSWER-2: pear")
    assert quit_codex(second) == session_id

    request = request_with_prompt(openai_standin, "the second word is pear")
    assert request.headers["session-id"] == session_id
    exchange = turns(request)
    assert exchange == [
        ("user", "the first word is plum"),
        ("assistant", "STANDIN-ANSWER-1: plum"),
        ("user", "the second word is pear"),
    ]
    # The first run's first prompt was titled; Codex asks again on resume when the first run
    # ended before it stored the title (a race inside Codex), so one or two title requests.
    titles = [r for r in openai_standin.requests() if r.is_responses and not r.is_conversation]
    assert 1 <= len(titles) <= 2
    rollout = find_rollout(Path(codex_env["CODEX_HOME"]), session_id)
    assert rollout is not None
    assert ("assistant", "STANDIN-ANSWER-2: pear") in rollout_texts(rollout)
