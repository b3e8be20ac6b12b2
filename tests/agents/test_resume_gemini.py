"""Resume the real Gemini CLI after a crash and a closed terminal, and survive its resume trap.

``shellkeep gemini`` runs against the Gemini API stand-in (``standin_gemini``); shellkeep
pre-assigns the session id (``--session-id``). Two exchanges are asked, then the session is
cut short:

- ``kill-group``: kill -9 of Gemini's whole process group (a crash: the launcher and the
  node process it relaunched both die); shellkeep records ``killed``;
- ``hangup``: SIGHUP to shellkeep, as when the terminal is closed; shellkeep ends the
  agent's whole process group, so no node process is left on the pty, re-parented to PID 1.

Then ``shellkeep resume`` runs ``gemini -r <id>``, the next ``streamGenerateContent`` carries
the earlier prompts and answers, and a third exchange is recorded in a new session whose
``parent`` is the first; exchanges and token usage (the stand-in's numbers) are in both
sessions' metadata.

The trap (google-gemini/gemini-cli#27368, #29198): ``gemini --resume`` in a later UTC minute
than the session's start leaves a second, content-less ``session-<minute>-<id8>.jsonl``, and
the next start of Gemini CLI deletes it *and* the real transcript (session-retention cleanup
of every file with that suffix). ``test_gemini_resume_trap`` plants that file as Gemini
leaves it, lets the real ``gemini --list-sessions`` delete the transcript, and shows that shellkeep
restores its copy, resumes, and after the resumed run removes the content-less duplicate
so that the next start of Gemini CLI keeps the transcript.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.store.paths import Paths
from shellkeep.store.session import read_meta, title_of
from tests.helpers import exchanges_of, invoke_sk, meta_of, process_gone, session_folders, SK, stored_copy
from tests.recordings import last_screen

from .agent_processes import group_members, processes_using
from .screen_driver import ScreenDriver
from .standin_gemini import GeminiRequest, GeminiStandin, usage_of

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

WAIT_S = 90.0
"""Generous: Gemini CLI takes 3 s to its prompt on a quiet machine, 12 s with both cores busy."""
READY = "Type your message or @path/to/file"
EXIT_AGAIN = "Press Ctrl+C again to exit"
RESUME_HINT = re.compile(r"gemini --resume ([0-9a-f-]{36})")
PROMPTS = ("the first word is olive", "the second word is mango")
ANSWERS = ("STANDIN-ANSWER-1: olive", "STANDIN-ANSWER-2: mango")
THIRD_PROMPT, THIRD_ANSWER = "the third word is guava", "STANDIN-ANSWER-3: guava"

Drive = Callable[..., ScreenDriver]


def ask(driver: ScreenDriver, standin: GeminiStandin, prompt: str, answer: str) -> None:
    """Type *prompt*, press Enter and wait until *answer* shows on the screen.

    Gemini CLI sometimes takes an Enter that follows the text closely for part of it (the
    text stays in the box): the text is given time to settle, and Enter is pressed again
    when no request for the prompt reached the stand-in.
    """
    for attempt in range(3):
        driver.type(prompt)
        try:
            driver.wait_for_screen(prompt, 10 if attempt < 2 else WAIT_S)
            break
        except TimeoutError:  # typed while Gemini CLI was still switching the terminal to raw mode
            continue
    driver.wait_for_quiet(0.5, WAIT_S)
    for _ in range(3):
        driver.press("enter")
        try:
            driver.wait_until(lambda: _asked(standin, prompt), 15, f"request for {prompt!r}")
            break
        except TimeoutError:
            continue
    driver.wait_for_screen(answer, WAIT_S)


def drawn_so_far(driver: ScreenDriver, ready: str) -> int:
    """Return how often *ready* was drawn before the agent runs: once output is quiet, the times
    shellkeep's redraw of the last screen showed it (none when the cut left a screen without it,
    as a hangup may)."""
    driver.wait_for_quiet(0.3, WAIT_S)
    return bytes(driver.raw).count(ready.encode())


def wait_ready(driver: ScreenDriver, drawn_before: int = 0) -> None:
    """Wait until Gemini CLI itself drew its input box (*drawn_before*: times it was drawn by others).

    The ready text is looked for in the bytes the terminal got: after a resume, shellkeep's
    redraw of the last screen shows it too, before Gemini CLI runs (and keys typed then are
    lost when it switches the terminal to raw mode).
    """
    marker = READY.encode()
    driver.wait_until(lambda: bytes(driver.raw).count(marker) > drawn_before, WAIT_S, "gemini's input box")
    driver.wait_for_quiet(0.5, WAIT_S)


def _asked(standin: GeminiStandin, prompt: str) -> bool:
    return any(r.last_user_text() == prompt for r in standin.requests() if r.method == "POST")


def quit_gemini(driver: ScreenDriver) -> str:
    """Exit with Ctrl-C twice; return the session id from the resume hint it prints."""
    driver.wait_for_quiet(0.5, WAIT_S)
    driver.press("ctrl-c")
    driver.wait_for_screen(EXIT_AGAIN, WAIT_S)
    driver.press("ctrl-c")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    match = RESUME_HINT.search(re.sub(r"\s+", " ", driver.text()))
    assert match, f"no resume hint on screen:\n{driver.dump()}"
    return match.group(1)


def chat_file(gemini_home: Path, session_id: str) -> Path | None:
    """Return the chat file Gemini CLI writes the session's messages to (the largest with its id), or None."""
    found = [p for p in (gemini_home / ".gemini" / "tmp").glob(f"*/chats/session-*-{session_id[:8]}.jsonl")]
    return max(found, key=lambda p: p.stat().st_size) if found else None


def chat_messages(path: Path) -> list[tuple[str, str]]:
    """Return ``(type, text)`` of the user and gemini records of a chat file (last write wins)."""
    found: dict[str, tuple[str, str]] = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("type") in ("user", "gemini") and "id" in record:
            content = record.get("content")
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
            found[record["id"]] = (record["type"], text)
    return list(found.values())


def conversation_request(standin: GeminiStandin, prompt: str) -> GeminiRequest:
    """Return the main-turn request whose last prompt is *prompt*."""
    return standin.wait_for_request(lambda r: r.is_conversation and r.last_user_text() == prompt, WAIT_S)


def expected_usage(standin: GeminiStandin, prompts: tuple[str, ...], answers: tuple[str, ...]) -> dict[str, int]:
    """Return the usage the stand-in reported for the main turns of *prompts*."""
    counts = [usage_of(conversation_request(standin, p), a) for p, a in zip(prompts, answers)]
    return {
        "input": sum(c["promptTokenCount"] for c in counts),
        "output": sum(c["candidatesTokenCount"] for c in counts),
        "cache_read": 0,
        "cache_write": 0,
    }


def start_two_exchanges(
    home: Paths, drive: Drive, env: dict[str, str], standin: GeminiStandin, project_dir: Path
) -> tuple[ScreenDriver, Path, dict[str, Any], Path]:
    """Run ``shellkeep gemini`` through two exchanges; return driver, folder, meta and chat file."""
    first = drive([*SK, "gemini"], env=env, cwd=project_dir)
    wait_ready(first)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, standin, prompt, answer)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert meta["command"][:2] == ["gemini", "--session-id"] and meta["agent"] == "gemini"
    session_id = meta["command"][2]
    assert meta["agent_session_id"] == session_id
    chat = first.wait_until(lambda: chat_file(Path(env["HOME"]), session_id), WAIT_S, "chat file")
    assert chat is not None
    # A reply is in Gemini's chat file by the time it shows.
    first.wait_until(lambda: ("gemini", ANSWERS[1]) in chat_messages(chat), WAIT_S, "answer 2 stored")
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")
    return first, folder, meta, chat


def resume_and_ask_third(
    home: Paths, drive: Drive, env: dict[str, str], standin: GeminiStandin, project_dir: Path, folder: Path
) -> tuple[ScreenDriver, Path]:
    """Run ``shellkeep resume``, check the stand-in gets the earlier turns, ask the third prompt."""
    second = drive([*SK, "resume"], env=env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    wait_ready(second, drawn_before=drawn_so_far(second, READY))
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # Gemini CLI redraws the conversation it resumed
    ask(second, standin, THIRD_PROMPT, THIRD_ANSWER)
    request = conversation_request(standin, THIRD_PROMPT)
    earlier = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("model", a))]
    assert request.turns() == [*earlier, ("user", THIRD_PROMPT)]
    return second, new_folder


def check_kept(standin: GeminiStandin, folder: Path, new_folder: Path, meta: dict[str, Any], chat: Path, status: str) -> None:
    """Check both sessions' exchanges, usage and links, and shellkeep's copy of the chat file."""
    session_id = meta["agent_session_id"]
    old = meta_of(folder)
    assert old["status"] == status
    assert (old["agent_session_id"], old["agent_transcript"]) == (session_id, str(chat))
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    assert old["usage"] == expected_usage(standin, PROMPTS, ANSWERS)
    assert stored_copy(folder, chat.name)

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["gemini", "-r", session_id]
    assert (new["agent"], new["agent_session_id"], new["status"], new["exit_code"]) == ("gemini", session_id, "finished", 0)
    assert new["exchange_count"] == 1
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["usage"] == expected_usage(standin, (THIRD_PROMPT,), (THIRD_ANSWER,))


@pytest.mark.parametrize("cut", ["kill-group", pytest.param("hangup", marks=pytest.mark.newest_only)])
def test_resume_gemini_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: GeminiStandin,
    gemini_home: Path,
    project_dir: Path,
    cut: str,
) -> None:
    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, chat = start_two_exchanges(home, drive, env, gemini_standin, project_dir)
    group = meta["child_pid"]  # the agent leads its own session and process group
    assert len(group_members(group)) >= 2, "Gemini CLI no longer relaunches itself: the test loses its point"

    if cut == "kill-group":
        os.killpg(group, signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    else:
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    first.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "gemini gone")
    # Nothing of the agent is left running (re-parented to PID 1, holding the pty).
    first.wait_until(lambda: not group_members(group), WAIT_S, "the agent's process group ended")
    first.wait_until(lambda: not processes_using(gemini_home), WAIT_S, "no process left using the agent's HOME")
    assert meta_of(folder)["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]

    second, new_folder = resume_and_ask_third(home, drive, env, gemini_standin, project_dir, folder)
    assert quit_gemini(second) == meta["agent_session_id"]
    check_kept(gemini_standin, folder, new_folder, meta, chat, {"kill-group": "killed", "hangup": "hangup"}[cut])


def _list_sessions(gemini_bin: Path, env: dict[str, str], project_dir: Path) -> str:
    done = subprocess.run(
        [str(gemini_bin), "--list-sessions"], env=env, cwd=project_dir, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=WAIT_S,
    )
    return done.stdout + done.stderr


def plant_resume_leftover(chat: Path) -> Path:
    """Write the content-less chat file ``gemini --resume`` leaves in a later minute; return it.

    Its name is the chat file's with the minute moved on by one; it holds what Gemini CLI
    0.57.0 and 0.61.0 write there when they open a resumed session: the metadata line and a
    ``$set`` of the injected ``<session_context>`` message (the chat file's first two lines).
    """
    match = re.fullmatch(r"session-(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\w{8})\.jsonl", chat.name)
    assert match, chat.name
    hour, minute, short = match.groups()
    later = chat.with_name(f"session-{hour}-{(int(minute) + 1) % 60:02d}-{short}.jsonl")
    head, context = chat.read_text().splitlines()[:2]
    assert "<session_context>" in json.loads(context)["$set"]["messages"][0]["content"][0]["text"]
    later.write_text(head + "\n" + context + "\n")
    return later


def test_gemini_resume_trap(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: GeminiStandin,
    gemini_bin: Path,
    project_dir: Path,
) -> None:
    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, chat = start_two_exchanges(home, drive, env, gemini_standin, project_dir)
    os.killpg(meta["child_pid"], signal.SIGKILL)
    assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    assert stored_copy(folder, chat.name)

    # The trap, for real: the next start of Gemini CLI deletes the transcript.
    leftover = plant_resume_leftover(chat)
    listed = _list_sessions(gemini_bin, gemini_env, project_dir)
    assert not chat.exists(), listed  # (0.61.0 keeps the content-less leftover itself)
    assert "No previous sessions found for this project." in listed

    # shellkeep puts its copy back and resumes the conversation.
    second, new_folder = resume_and_ask_third(home, drive, env, gemini_standin, project_dir, folder)
    assert b"was gone; restored shellkeep's copy" in bytes(second.raw)
    # The resumed run leaves its content-less file again (planted here: the minute may not have
    # turned); shellkeep removes it when the run ends, so the next start deletes nothing.
    again = plant_resume_leftover(chat)
    assert quit_gemini(second) == meta["agent_session_id"]
    assert not again.exists() and not leftover.exists()
    assert list(chat.parent.glob(f"session-*-{chat.name[-14:]}")) == [chat]
    listed = _list_sessions(gemini_bin, gemini_env, project_dir)
    assert chat.exists() and meta["agent_session_id"] in listed, listed
    assert ("gemini", THIRD_ANSWER) in chat_messages(chat)
    check_kept(gemini_standin, folder, new_folder, meta, chat, "killed")


@pytest.mark.newest_only
def test_reinjection_waits_for_geminis_prompt_in_a_terminal_that_answers_no_queries(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: GeminiStandin,
    project_dir: Path,
) -> None:
    """Gemini CLI waits about 1.2 s for answers to its terminal queries before it draws its
    prompt; a terminal that answers none (CI ptys, script(1)) sees it quiet meanwhile. The
    re-injected block is typed once Gemini's own prompt is on screen (its adapter's
    ``ready_prompt``), not after the first quiet spell, and reaches the model."""
    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, _ = start_two_exchanges(home, drive, env, gemini_standin, project_dir)
    os.killpg(meta["child_pid"], signal.SIGKILL)
    assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL

    second = drive([*SK, "resume", "--inject", "--no-screen"], env=env, cwd=project_dir, answer_queries=False)
    def injected() -> GeminiRequest | None:
        return next((r for r in gemini_standin.requests() if r.is_conversation and INJECTED_CONTEXT_PREFIX in r.last_user_text()), None)

    request = second.wait_until(injected, WAIT_S, "the re-injected block sent to the model")  # reading the screen meanwhile
    assert request is not None
    block = request.last_user_text()
    for prompt, answer in zip(PROMPTS, ANSWERS):
        assert f"User: {prompt}" in block and f"Assistant: {answer}" in block, block
    second.wait_for_quiet(0.5, WAIT_S)
    second.press("ctrl-c")
    second.wait_for_screen(EXIT_AGAIN, WAIT_S)
    second.press("ctrl-c")
    assert second.wait_exit(WAIT_S) == 0, second.dump()
    [new_folder] = [f.parent for f in session_folders(home) if f.parent != folder]
    assert meta_of(new_folder)["parent"] == meta["id"]


@pytest.mark.newest_only
def test_gemini_chat_file_gone_after_shellkeep_was_killed(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: GeminiStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    """kill -9 of shellkeep itself, then Gemini's chat file moved away before any command
    collected the session: Gemini CLI holds no chat of the id and shellkeep no copy. The dry run
    and the resume both re-inject straight away, rather than running ``gemini -r`` into "No
    previous sessions found" (exit 42) first. The new session's ``/quit`` is no prompt: not
    listed, not its title, never offered to send again."""
    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first, folder, meta, chat = start_two_exchanges(home, drive, env, gemini_standin, project_dir)
    group = meta["child_pid"]
    os.kill(meta["pid"], signal.SIGKILL)
    first.wait_exit(WAIT_S)
    # Gemini CLI outlives the pty's hangup (its launcher is the session leader and survives it);
    # it is ended here as a user would, so that the session no longer counts as running.
    os.killpg(group, signal.SIGKILL)
    first.wait_until(lambda: not group_members(group), WAIT_S, "the agent's process group ended")
    chat.rename(tmp_path / chat.name)

    dry = invoke_sk("resume", "--dry-run", env=env, cwd=project_dir)
    out = re.sub(r"\s+", " ", dry.stdout.decode() + dry.stderr.decode())
    assert dry.returncode == 0 and "mode: inject" in out, out
    assert "holds no transcript of session" in out, out

    second = drive([*SK, "resume"], env=env, cwd=project_dir)
    def injected() -> GeminiRequest | None:
        return next((r for r in gemini_standin.requests() if r.is_conversation and INJECTED_CONTEXT_PREFIX in r.last_user_text()), None)

    assert second.wait_until(injected, WAIT_S, "the re-injected block sent to the model") is not None
    assert b"No previous sessions found" not in bytes(second.raw)  # no failed gemini -r first
    second.wait_for_screen("STANDIN-ANSWER-3", WAIT_S)
    second.wait_for_quiet(0.5, WAIT_S)
    second.type("/quit")
    second.wait_for_screen("/quit", WAIT_S)
    second.wait_for_quiet(0.5, WAIT_S)
    second.press("enter")
    assert second.wait_exit(WAIT_S) == 0, second.dump()
    [new_folder] = [f.parent for f in session_folders(home) if f.parent != folder]
    new = meta_of(new_folder)
    assert new["parent"] == meta["id"] and new["command"][:2] == ["gemini", "--session-id"]
    # Gemini CLI writes "/quit" to its chat as a user message: it ends the agent, it is no prompt.
    assert new["exchange_count"] == 0 and new.get("unanswered_prompt") is None, new
    assert (new.get("title") or "") != "/quit"
    # No prompt of its own: its title is the command as typed, not the id shellkeep added.
    assert title_of(read_meta(new_folder)) == "gemini"
    shown = invoke_sk("show", new["id"], env=env).stdout.decode()
    assert "never answered" not in shown and "/quit" not in shown, shown
    again = invoke_sk("resume", "--dry-run", new["id"], env=env, cwd=project_dir)
    assert again.returncode == 0 and "/quit" not in again.stdout.decode() + again.stderr.decode()
