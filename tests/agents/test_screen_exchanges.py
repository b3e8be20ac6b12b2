"""Exchanges rebuilt from the real Claude Code, Codex, Gemini CLI, OpenCode and Copilot CLI screens hold the answers, not the chrome.

A real session with two exchanges is recorded under ``shellkeep claude`` / ``shellkeep codex``
against the loopback stand-ins; then the agent's transcript is deleted (as if the agent lost
it) together with shellkeep's copy, and the conversation is gathered again as ``resume`` and
the picker do (``app.conversation.gather``): the exchanges come from the recording alone.
Each answer must be the stand-in's reply and nothing the agent draws around it.

What the screens show (pinned here; the adapters' ``screen_chrome`` says it in patterns):

Claude's second reply is taller than the screen, so its start is rebuilt from the lines that
scrolled off the top. (Codex draws a reply that arrives at once in one frame, its start never
on screen: its replies here are short.)

- Claude Code 2.1.197 and 2.1.332 draw inline (no alternate screen): the conversation, the
  prompt echoed as ``❯ <prompt>``, the reply as ``● <text>``, a status line ``✻ Brewed for
  0s`` (2.1.332: ``✻ Cogitated for 0s · done 5:13 PM``), then the input box: a rule, ``❯``,
  a rule and the footer (``? for shortcuts`` / ``⏵⏵ auto mode on (shift+tab to cycle)``,
  ``● high · /effort``); on exit ``Resume this session with:`` ``claude --resume <id>``.
- Gemini CLI 0.61.0 boxes the prompt's echo (`` > <prompt>`` between a row of ``▄`` and one of
  ``▀``), marks the reply ``✦ <text>``, then draws ``? for shortcuts``, a rule, ``Shift+Tab to
  accept edits``, its boxed input box and a footer; on exit a goodbye box with its statistics
  and ``gemini --resume <id>``. (The transcript lost here stands for a chat file it never wrote.)
- OpenCode 1.18.33 draws on the alternate screen: the prompt's echo in a box edged with ``┃``
  (``┃  <prompt>`` between two ``┃`` lines), the reply indented below it, ``▣  Build · <model> ·
  23.5s``, then its input box (``┃`` lines, ``┃  Build · <model> <provider>``, a row of ``▀``)
  and a footer (``ctrl+p commands``); on exit ``Continue  opencode -s <id>``. Its database is
  deleted with its -wal and -shm (every session of the HOME is in it). ``shellkeep resume``
  then starts it anew and types the block in once ``Ask anything`` shows (its ready_prompt):
  the stand-in's next request carries the answers (checked for Copilot CLI too).
- Copilot CLI 1.0.102 draws inline: the echo ``❯ <prompt>`` with the time at the right edge,
  the reply ``● <text>``, then the folder, its input line ``❯`` between two rules and a status
  line (``● Working · 29 B esc esc interrupt``, the model); on exit a summary box with
  ``copilot --resume=<id>``. It ends a reply with its last word and an escape sequence cut by
  the read, which shellkeep's redaction holds back: the next prompt's keys must not be
  recorded before it (capture/recorder.py).
- aider 0.86.2 is line-based: below the prompt typed after ``> ``, the reply, ``Tokens: 596
  sent, 10 received. Cost: ...``, a rule and the next ``>``. Its ``.aider.chat.history.md``
  is deleted: the exchanges come from the screen, read line by line.
- Codex 0.171.0 draws on the alternate screen: the echo ``› <prompt>``, the reply
  ``• <text>``, ``Worked for <1s • 17:13``, the composer ``› Ask Codex to do anything``, a
  status line (model · folder · title) and a footer (``? for shortcuts``, ``⚠ 2 warnings``).
  On Ctrl-C it erases the screen and leaves the alternate screen, so the last answer is no
  longer on the final screen.

With ``SHELLKEEP_TEST_SAVE_SCREENS=DIR`` each test also writes its recording, paths
anonymised, to ``DIR/<agent>-<version>.cast``: that is how ``tests/data/agents/screens/`` was made.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.app.context import open_context
from shellkeep.app.conversation import Conversation, gather
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.app.resume import inject_text
from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.store.paths import Paths
from shellkeep.store.session import read_meta
from tests.helpers import SK, session_folders
from tests.recordings import last_screen, open_cast

from . import test_claude_standin_direct as claude
from . import test_codex_standin_direct as codex
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .standin_chat import ChatStandin
from .test_resume_copilot import copilot_cache, copilot_env, copilot_home  # noqa: F401 - fixtures
from .test_resume_opencode import opencode_env, opencode_home  # noqa: F401 - fixtures
from .test_resume_aider import aider_env, aider_home, aider_standin  # noqa: F401 - fixtures

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]

LONG_REPLY = "STANDIN-ANSWER-2: lime\n\n" + "\n\n".join(f"paragraph {n:02d} of a long answer" for n in range(1, 31))
"""Taller than the 40-row screen: its start scrolls off the top while Claude Code draws it."""
CLAUDE_EXCHANGES = (("the first word is kiwi", "STANDIN-ANSWER-1: kiwi"), ("the second word is lime", LONG_REPLY))
CODEX_EXCHANGES = (("the first word is plum", "STANDIN-ANSWER-1: plum"), ("the second word is pear", "STANDIN-ANSWER-2: pear"))

CLAUDE_CHROME = (
    re.compile(r"─{5}"),  # the input box's rules
    re.compile(r"❯"),  # its prompt sign (and the prompt's echo)
    re.compile(r"\? for shortcuts|shift\+tab to cycle|/effort|← for agents"),  # footer
    re.compile(r"[✻✢✳✶✽·] \S+ for \d"),  # status line: "✻ Brewed for 0s"
    re.compile(r"Press Ctrl-C again|Resume this session|claude --resume"),  # exit
    re.compile(r"●"),  # the reply's bullet
)
CODEX_CHROME = (
    re.compile(r"›"),  # composer and echo
    re.compile(r"Ask Codex to do anything"),
    re.compile(r"\? for shortcuts|← for agents|warnings|f2 to view"),  # footer
    re.compile(r"standin-model|Standin title"),  # status line: model · folder · title
    re.compile(r"Worked for"),
    re.compile(r"codex resume|To reconnect|Token usage|Shutting down"),  # exit
    re.compile(r"•"),  # the reply's bullet
)


def _start(drive: Drive, agent_env: dict[str, str], project_dir: Path, agent: str, ready: str | re.Pattern[str]) -> ScreenDriver:
    """Start ``shellkeep <agent>`` in ``project_dir`` and wait for the agent's input box."""
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, agent], env=env, cwd=project_dir)
    driver.wait_for_screen(ready, 60.0)
    return driver


def _lose_transcript(transcript: Path, folder: Path) -> None:
    """Delete the agent's transcript and shellkeep's copy of it, as if both were never kept."""
    assert transcript.is_file(), transcript
    transcript.unlink()
    shutil.rmtree(folder / "agent", ignore_errors=True)


def _rebuilt(home: Paths, folder: Path, env: dict[str, str]) -> Conversation:
    """Gather the session's conversation again, as ``resume`` does when nothing was collected."""
    ctx = open_context(paths=home, cwd=Path(read_meta(folder).cwd))
    return gather(read_meta(folder), ctx.vault, env)


def _assert_answers(conversation: Conversation, expected: tuple[tuple[str, str], ...], chrome: tuple[re.Pattern[str], ...]) -> None:
    got = [(e.prompt, e.answer) for e in conversation.exchanges]
    for (prompt, answer), (_, reply) in zip(got, expected):
        assert reply in answer, f"{prompt!r}: the reply is not in the answer {answer!r}"
        for pattern in chrome:
            assert not pattern.search(answer), f"{prompt!r}: the answer holds chrome {pattern.pattern!r}: {answer!r}"
    assert got == list(expected)


def _save(folder: Path, name: str, tmp_path: Path) -> None:
    """Write the session's recording, paths anonymised, under ``$SHELLKEEP_TEST_SAVE_SCREENS``."""
    target = os.environ.get("SHELLKEEP_TEST_SAVE_SCREENS")
    if not target:
        return
    real = os.path.realpath(tmp_path)
    # Same length, so that text a TUI places after a path keeps its columns.
    anonymous = "/home/user/" + "w" * max(len(real) - len("/home/user/"), 1)
    cast = open_cast(folder / "session.cast")
    with open(Path(target) / f"{name}.cast", "wb") as out:
        out.write(encode_header(cast.header).replace(real.encode(), anonymous.encode()))
        for event in cast.events():
            out.write(encode_event(event.time, event.code, event.data.replace(real, anonymous)))


def test_claude_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    claude_version: tuple[int, ...],
    tmp_path: Path,
) -> None:
    anthropic_standin.script([reply for _, reply in CLAUDE_EXCHANGES])
    driver = _start(drive, agent_env, project_dir, "claude", claude.READY)
    for prompt, answer in CLAUDE_EXCHANGES:
        claude.ask(driver, prompt, answer.split("\n")[-1])
        driver.wait_for_screen(claude.READY, claude.WAIT_S)
    session_id = claude.quit_claude(driver)
    [folder] = [meta.parent for meta in session_folders(home)]
    # What the screen showed besides the replies, pinned: the answers must hold none of it.
    seen = driver.text()
    assert "❯ the second word is lime" not in seen, "the long answer did not push the prompt off the screen"
    assert "claude --resume" in seen
    assert re.search(r"✻ \S+ for \d+s", seen), seen

    _lose_transcript(claude.transcript_path(Path(agent_env["HOME"]), project_dir, session_id), folder)
    conversation = _rebuilt(home, folder, agent_env)
    _assert_answers(conversation, CLAUDE_EXCHANGES, CLAUDE_CHROME)
    _save(folder, f"claude-{'.'.join(map(str, claude_version))}", tmp_path)


def test_codex_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    openai_standin: object,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    driver = _start(drive, codex_env, project_dir, "codex", codex.READY)
    for prompt, answer in CODEX_EXCHANGES:
        codex.ask(driver, prompt, answer)
    shown = driver.text()  # the alternate screen, before Codex erases it on exit
    assert "› the second word is pear" in shown and "Worked for" in shown and "? for shortcuts" in shown, shown
    session_id = codex.quit_codex(driver)
    [folder] = [meta.parent for meta in session_folders(home)]
    assert "STANDIN-ANSWER-2" not in driver.text()  # gone from the final screen with the alternate one

    rollout = codex.find_rollout(Path(codex_env["CODEX_HOME"]), session_id)
    assert rollout is not None
    _lose_transcript(rollout, folder)
    conversation = _rebuilt(home, folder, codex_env)
    _assert_answers(conversation, CODEX_EXCHANGES, CODEX_CHROME)
    _save(folder, "codex-0.171.0", tmp_path)


GEMINI_CHROME = (
    re.compile(r"[▄▀]{5}"),  # the input box's top and bottom edges
    re.compile(r"Type your message"),
    re.compile(r"workspace \(/directory\)|no sandbox|/model"),  # footer
    re.compile(r"\? for shortcuts|Shift\+Tab"),
    re.compile(r"Goodbye|Interaction Summary|Session ID|Tool Calls|Performance|gemini --resume|Press Ctrl\+C"),  # exit
    re.compile(r"✦"),  # the reply's mark
)


@pytest.mark.newest_only
def test_gemini_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: object,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    from . import test_resume_gemini as gemini

    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    driver = drive([*SK, "gemini"], env=env, cwd=project_dir)
    gemini.wait_ready(driver)
    for prompt, answer in zip(gemini.PROMPTS, gemini.ANSWERS):
        gemini.ask(driver, gemini_standin, prompt, answer)  # type: ignore[arg-type]
    session_id = gemini.quit_gemini(driver)
    [folder] = [meta.parent for meta in session_folders(home)]
    chat = gemini.chat_file(Path(gemini_env["HOME"]), session_id)
    assert chat is not None
    _lose_transcript(chat, folder)  # as if Gemini CLI never wrote it
    conversation = _rebuilt(home, folder, gemini_env)
    _save(folder, "gemini-0.61.0", tmp_path)
    _assert_answers(conversation, tuple(zip(gemini.PROMPTS, gemini.ANSWERS)), GEMINI_CHROME)
    block = inject_text(read_meta(folder), conversation.exchanges) or ""  # what a resume types in
    assert all(f"User: {p}\nAssistant: {a}" in block for p, a in zip(gemini.PROMPTS, gemini.ANSWERS)), block



def _assert_injected(folder: Path, conversation: Conversation, expected: tuple[tuple[str, str], ...]) -> None:
    """The block a resume types in carries each prompt with its answer."""
    block = inject_text(read_meta(folder), conversation.exchanges) or ""
    assert all(f"User: {p}\nAssistant: {a}" in block for p, a in expected), block



def _resume_sends_the_answers(
    drive: Drive, env: dict[str, str], project_dir: Path, folder: Path, standin: ChatStandin, expected: tuple[tuple[str, str], ...]
) -> ScreenDriver:
    """Run ``shellkeep resume ID``: the block it types into the agent reaches the stand-in with the answers."""
    driver = drive([*SK, "resume", read_meta(folder).id], env={**env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}, cwd=project_dir)
    try:
        request = standin.wait_for_request(lambda r: INJECTED_CONTEXT_PREFIX in r.last_user_text(), 120.0)
    except TimeoutError as exc:
        raise AssertionError(f"the re-injected block never reached the model; the screen:\n{driver.text()}") from exc
    text = request.last_user_text()
    assert all(f"User: {p}\nAssistant: {a}" in text for p, a in expected), text
    return driver


OPENCODE_CHROME = (
    re.compile(r"[┃╹▀]"),  # the boxes' edges: around the prompt's echo and the input box
    re.compile(r"▣|Build · |Mock Model"),  # below an answer, and the input box's agent · model line
    re.compile(r"ctrl\+p commands|esc interrupt|Ask anything"),  # footer, placeholder
    re.compile(r"opencode -s|Continue|Session"),  # exit banner
)


@pytest.mark.newest_only
def test_opencode_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    opencode_env: dict[str, str],
    opencode_home: Path,
    chat_standin: ChatStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    from . import test_resume_opencode as opencode

    driver = drive([*SK, "opencode"], env=opencode_env, cwd=project_dir)
    driver.wait_for_screen(opencode.READY, opencode.WAIT_S)
    for prompt, answer in zip(opencode.PROMPTS, opencode.ANSWERS):
        opencode.ask(driver, prompt, answer, chat_standin)
    shown = driver.text()  # the alternate screen, before OpenCode leaves it on exit
    assert "┃  the second word is pear" in shown and "▣  Build · " in shown and "ctrl+p commands" in shown, shown
    session_id = opencode.latest_session(opencode.database(opencode_home), project_dir)
    assert f"opencode -s {session_id}" in opencode.quit_opencode(driver)
    [folder] = [meta.parent for meta in session_folders(home)]
    db = opencode.database(opencode_home)
    for path in db.parent.glob(db.name + "*"):  # the database with its -wal and -shm
        path.unlink()
    shutil.rmtree(folder / "agent", ignore_errors=True)
    conversation = _rebuilt(home, folder, opencode_env)
    _save(folder, "opencode-1.18.33", tmp_path)
    expected = tuple(zip(opencode.PROMPTS, opencode.ANSWERS))
    _assert_answers(conversation, expected, OPENCODE_CHROME)
    _assert_injected(folder, conversation, expected)
    # A resume starts OpenCode anew (its database is made again: 20 s with both cores busy) and
    # types the block in once its input box is drawn (its ready_prompt).
    resumed = _resume_sends_the_answers(drive, opencode_env, project_dir, folder, chat_standin, expected)
    opencode.quit_opencode(resumed)


COPILOT_CHROME = (
    re.compile(r"❯|─{5}"),  # the prompt's echo, the input line between its rules
    re.compile(r"●"),  # the answer's mark (and the status line's)
    re.compile(r"\d{1,2}:\d{2}"),  # the time right of the echo
    re.compile(r"/project|/ commands|\? help|Interactive · |Working|esc interrupt|mock-model"),  # folder, footer, status
    re.compile(r"Changes|Duration|Tokens|Resume|copilot --resume|again to exit"),  # exit
)


@pytest.mark.newest_only
def test_copilot_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    copilot_env: dict[str, str],
    copilot_home: Path,
    chat_standin: ChatStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    from . import test_resume_copilot as copilot
    from . import test_resume_opencode as opencode

    driver = drive([*SK, "copilot"], env=copilot_env, cwd=project_dir)
    driver.wait_for_screen(copilot.READY, copilot.WAIT_S)
    for prompt, answer in zip(copilot.PROMPTS, copilot.ANSWERS):
        opencode.ask(driver, prompt, answer, chat_standin)
    shown = driver.text()
    assert re.search(r"❯ the second word is pear +\d{1,2}:\d{2}", shown) and "● Echo: the second word is pear" in shown, shown
    [folder] = [meta.parent for meta in session_folders(home)]
    # The answer's last word may be held back by redaction for a second of quiet before it is
    # recorded; under load the quit keys typed before then would be recorded ahead of it.
    # Copilot draws an answer in pieces at addressed cells ("Echo: the se", later "cond word is
    # pear"): wait for the screen replayed from the recording, not for the text in one piece.
    answer = copilot.ANSWERS[1]
    driver.wait_until(lambda: answer in last_screen(folder / "session.cast").to_text(), copilot.WAIT_S, "the last word recorded")
    session_id = read_meta(folder).agent_session_id
    assert session_id and f"copilot --resume={session_id}" in copilot.quit_copilot(driver)
    shutil.rmtree(copilot_home / ".copilot" / "session-state" / session_id)
    shutil.rmtree(folder / "agent", ignore_errors=True)
    conversation = _rebuilt(home, folder, copilot_env)
    _save(folder, "copilot-1.0.102", tmp_path)
    expected = tuple(zip(copilot.PROMPTS, copilot.ANSWERS))
    _assert_answers(conversation, expected, COPILOT_CHROME)
    _assert_injected(folder, conversation, expected)
    resumed = _resume_sends_the_answers(drive, copilot_env, project_dir, folder, chat_standin, expected)
    copilot.quit_copilot(resumed)


AIDER_CHROME = (
    re.compile(r"Tokens: |Cost: "),  # its report after each answer
    re.compile(r"─{5}"),  # the rule before each prompt
    re.compile(r"^>", re.MULTILINE),  # the prompt
)


@pytest.mark.newest_only
def test_aider_exchanges_rebuilt_from_its_screen(
    home: Paths,
    drive: Drive,
    aider_env: dict[str, str],
    aider_standin: ChatStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    from . import test_resume_aider as aider

    driver = drive([*SK, "aider"], env=aider_env, cwd=project_dir)
    for prompt, answer in zip(aider.PROMPTS, aider.ANSWERS):
        aider.ask(driver, prompt, answer)
    shown = driver.text()
    assert re.search(r"STANDIN-ANSWER-2: pear\n+Tokens: \d+ sent, \d+ received\. Cost: .*\n─{20,}\n>", shown), shown
    driver.press("ctrl-d")
    assert driver.wait_exit(aider.WAIT_S) == 0, driver.dump()
    [folder] = [meta.parent for meta in session_folders(home)]
    (project_dir / aider.HISTORY).unlink()
    shutil.rmtree(folder / "agent", ignore_errors=True)
    conversation = _rebuilt(home, folder, aider_env)
    _save(folder, "aider-0.86.2", tmp_path)
    expected = tuple(zip(aider.PROMPTS, aider.ANSWERS))
    _assert_answers(conversation, expected, AIDER_CHROME)
    _assert_injected(folder, conversation, expected)
