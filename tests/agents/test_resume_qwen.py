"""Resume the real Qwen Code after a crash and a closed terminal, and keep an answer it wrote late.

``shellkeep qwen`` runs against the OpenAI-compatible chat-completions stand-in
(``standin_openai``); shellkeep pre-assigns the session id (``--session-id``). Two exchanges are
asked, then the session is cut short: kill -9 of Qwen Code's whole process group (entry,
cli.js and its relaunch) or SIGHUP to shellkeep (a closed terminal: shellkeep ends the whole
group, no node process is left on the pty). ``shellkeep resume`` runs ``qwen -r <id>``, the next
chat completion carries the earlier prompts and answers, and a third exchange is recorded in a
new session whose ``parent`` is the first, with exchanges and token usage in both.

Qwen Code writes an answer to its chat file up to about a second after it shows it: a kill -9
right after the answer showed leaves the transcript without it
(``test_an_answer_qwen_never_wrote_is_taken_from_the_screen``); shellkeep then takes that
answer from the recording.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path
from typing import Any, Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import exchanges_of, meta_of, process_gone, session_folders, SK, stored_copy
from tests.recordings import last_screen

from .agent_processes import group_members, processes_using
from .screen_driver import ScreenDriver
from .test_resume_gemini import drawn_so_far
from .standin_chat import usage_of as chat_usage_of
from .standin_openai import OpenAIRequest, OpenAIStandin

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

WAIT_S = 90.0
"""Generous: Qwen Code takes 5 s to its prompt on a quiet machine, far more with both cores busy."""
READY = "Type your message or @path/to/file"
EXIT_AGAIN = "Press Ctrl+C again to exit"
RESUME_HINT = re.compile(r"qwen --resume ([0-9a-f-]{36})")
PROMPTS = ("the first word is lemon", "the second word is peach")
ANSWERS = ("STANDIN-ANSWER-1: lemon", "STANDIN-ANSWER-2: peach")
THIRD_PROMPT, THIRD_ANSWER = "the third word is melon", "STANDIN-ANSWER-3: melon"

Drive = Callable[..., ScreenDriver]


def wait_ready(driver: ScreenDriver, drawn_before: int = 0) -> None:
    """Wait until Qwen Code itself drew its input box (see ``test_resume_gemini.wait_ready``)."""
    marker = READY.encode()
    driver.wait_until(lambda: bytes(driver.raw).count(marker) > drawn_before, WAIT_S, "qwen's input box")
    driver.wait_for_quiet(0.5, WAIT_S)


def ask(driver: ScreenDriver, standin: OpenAIStandin, prompt: str, answer: str) -> None:
    """Type *prompt*, press Enter (again if no request came) and wait until *answer* shows."""
    for attempt in range(3):
        driver.type(prompt)
        try:
            driver.wait_for_screen(prompt, 10 if attempt < 2 else WAIT_S)
            break
        except TimeoutError:
            continue
    driver.wait_for_quiet(0.5, WAIT_S)
    for _ in range(3):
        driver.press("enter")
        try:
            driver.wait_until(lambda: any(r.last_user_text() == prompt for r in standin.conversation_requests()), 15, "request")
            break
        except TimeoutError:
            continue
    driver.wait_for_screen(answer, WAIT_S)


def quit_qwen(driver: ScreenDriver) -> str:
    """Exit with Ctrl-C twice; return the session id of the resume hint it prints."""
    driver.wait_for_quiet(0.5, WAIT_S)
    driver.press("ctrl-c")
    driver.wait_for_screen(EXIT_AGAIN, WAIT_S)
    driver.press("ctrl-c")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    match = RESUME_HINT.search(re.sub(r"\s+", " ", bytes(driver.raw).decode("utf-8", "replace")))
    assert match, f"no resume hint:\n{driver.dump()}"
    return match.group(1)


def chat_texts(path: Path) -> list[tuple[str, str]]:
    """Return ``(type, text)`` of the user and assistant records of a Qwen chat file."""
    found = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("type") in ("user", "assistant"):
            parts = (record.get("message") or {}).get("parts") or []
            found.append((record["type"], "".join(p.get("text", "") for p in parts if not p.get("thought"))))
    return found


def chat_request(standin: OpenAIStandin, prompt: str) -> OpenAIRequest:
    return standin.wait_for_request(lambda r: r.is_conversation and r.last_user_text() == prompt, WAIT_S)


def turns(request: OpenAIRequest) -> list[tuple[str, str]]:
    """Return the typed prompts and the answers of a chat request (system and reminders left out)."""
    return [(role, text.strip()) for role, text in request.texts() if role in ("user", "assistant") and not text.lstrip().startswith("<")]


def expected_usage(standin: OpenAIStandin, prompts: tuple[str, ...], answers: tuple[str, ...]) -> dict[str, int]:
    counts = [chat_usage_of(chat_request(standin, p), a) for p, a in zip(prompts, answers)]
    return {
        "input": sum(c["prompt_tokens"] for c in counts),
        "output": sum(c["completion_tokens"] for c in counts),
        "cache_read": 0,
        "cache_write": 0,
    }


def start_two_exchanges(
    home: Paths, drive: Drive, env: dict[str, str], standin: OpenAIStandin, project_dir: Path, *, stored: bool = True
) -> tuple[ScreenDriver, Path, dict[str, Any], Path]:
    """Run ``shellkeep qwen`` through two exchanges; return driver, folder, meta and chat file.

    stored: wait until the second answer is in Qwen Code's chat file (it writes late).
    """
    first = drive([*SK, "qwen"], env=env, cwd=project_dir)
    wait_ready(first)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, standin, prompt, answer)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert meta["command"][:2] == ["qwen", "--session-id"] and meta["agent"] == "qwen"
    session_id = meta["command"][2]
    assert meta["agent_session_id"] == session_id
    chats = Path(env["HOME"]) / ".qwen" / "projects"
    chat = first.wait_until(lambda: next(chats.glob(f"*/chats/{session_id}.jsonl"), None), WAIT_S, "chat file")
    assert chat is not None
    if stored:
        first.wait_until(lambda: ("assistant", ANSWERS[1]) in chat_texts(chat), WAIT_S, "answer 2 stored")
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")
    return first, folder, meta, chat


@pytest.mark.parametrize("cut", ["kill-group", pytest.param("hangup", marks=pytest.mark.newest_only)])
def test_resume_qwen_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    qwen_env: dict[str, str],
    openai_standin: OpenAIStandin,
    qwen_home: Path,
    project_dir: Path,
    cut: str,
) -> None:
    env = {**qwen_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, chat = start_two_exchanges(home, drive, env, openai_standin, project_dir)
    group = meta["child_pid"]
    assert len(group_members(group)) >= 2, "Qwen Code no longer relaunches itself: the test loses its point"
    if cut == "kill-group":
        os.killpg(group, signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    else:
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    first.wait_until(lambda: process_gone(group), WAIT_S, "qwen gone")
    first.wait_until(lambda: not group_members(group), WAIT_S, "the agent's process group ended")
    first.wait_until(lambda: not processes_using(qwen_home), WAIT_S, "no process left using the agent's HOME")
    status = {"kill-group": "killed", "hangup": "hangup"}[cut]
    assert meta_of(folder)["status"] == status

    second = drive([*SK, "resume"], env=env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    wait_ready(second, drawn_before=drawn_so_far(second, READY))
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # Qwen Code redraws the conversation it resumed
    ask(second, openai_standin, THIRD_PROMPT, THIRD_ANSWER)
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]
    assert turns(chat_request(openai_standin, THIRD_PROMPT)) == [*earlier, ("user", THIRD_PROMPT)]
    second.wait_until(lambda: ("assistant", THIRD_ANSWER) in chat_texts(chat), WAIT_S, "answer 3 stored")
    assert quit_qwen(second) == meta["agent_session_id"]

    old = meta_of(folder)
    assert old["status"] == status
    assert (old["agent_session_id"], old["agent_transcript"]) == (meta["agent_session_id"], str(chat))
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    assert old["usage"] == expected_usage(openai_standin, PROMPTS, ANSWERS)
    assert stored_copy(folder, chat.name)
    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["qwen", "-r", meta["agent_session_id"]]
    assert (new["agent"], new["status"], new["exit_code"]) == ("qwen", "finished", 0)
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["usage"] == expected_usage(openai_standin, (THIRD_PROMPT,), (THIRD_ANSWER,))


def cut_last_answer(chat: Path, answer: str) -> bool:
    """Remove the assistant record holding *answer* and what follows it; return whether it was there.

    What a kill -9 within the second Qwen Code takes to write an answer leaves.
    """
    lines = chat.read_bytes().splitlines(keepends=True)
    for n, line in enumerate(lines):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        parts = (record.get("message") or {}).get("parts") or []
        if record.get("type") == "assistant" and answer in "".join(p.get("text", "") for p in parts):
            chat.write_bytes(b"".join(lines[:n]))
            return True
    return False


def test_an_answer_qwen_never_wrote_is_taken_from_the_screen(
    home: Paths, drive: Drive, qwen_env: dict[str, str], openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    env = {**qwen_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, chat = start_two_exchanges(home, drive, env, openai_standin, project_dir, stored=False)
    # The machine goes down right after the answer showed: shellkeep and Qwen Code die at once.
    os.kill(meta["pid"], signal.SIGKILL)
    os.killpg(meta["child_pid"], signal.SIGKILL)
    first.wait_exit(WAIT_S)
    first.wait_until(lambda: not group_members(meta["child_pid"]), WAIT_S, "the agent's process group ended")
    cut_last_answer(chat, ANSWERS[1])  # Qwen Code had not written it yet (or it is cut as if so)
    assert ("user", PROMPTS[1]) in chat_texts(chat) and ("assistant", ANSWERS[1]) not in chat_texts(chat)

    second = drive([*SK, "resume"], env=env, cwd=project_dir)  # recovers the interrupted session first
    second.wait_until(lambda: meta_of(folder).get("exchange_count") == 2, WAIT_S, "the interrupted session collected")
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    old = meta_of(folder)
    assert (old["status"], old["exchange_count"]) == ("interrupted", 2)
    wait_ready(second, drawn_before=1)
    quit_qwen(second)


@pytest.mark.newest_only
def test_reinjection_into_qwen_reaches_the_model_in_a_terminal_that_answers_no_queries(
    home: Paths,
    drive: Drive,
    qwen_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    """As Gemini CLI's (test_resume_gemini): the block typed by ``resume --inject`` where no
    terminal query is answered reaches the model with the earlier prompts and answers."""
    from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX

    env = {**qwen_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, _ = start_two_exchanges(home, drive, env, openai_standin, project_dir)
    os.killpg(meta["child_pid"], signal.SIGKILL)
    assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL

    second = drive([*SK, "resume", "--inject", "--no-screen"], env=env, cwd=project_dir, answer_queries=False)

    def injected() -> OpenAIRequest | None:
        return next((r for r in openai_standin.requests() if r.is_conversation and INJECTED_CONTEXT_PREFIX in r.last_user_text()), None)

    request = second.wait_until(injected, WAIT_S, "the re-injected block sent to the model")
    assert request is not None
    block = request.last_user_text()
    for prompt, answer in zip(PROMPTS, ANSWERS):
        assert f"User: {prompt}" in block and f"Assistant: {answer}" in block, block
    second.wait_for_quiet(0.5, WAIT_S)
    second.press("ctrl-c")
    second.wait_for_screen(EXIT_AGAIN, WAIT_S)
    second.press("ctrl-c")
    assert second.wait_exit(WAIT_S) == 0, second.dump()
