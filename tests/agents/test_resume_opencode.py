"""Resume the real OpenCode CLI after a crash and after a closed terminal.

``shellkeep opencode`` runs against the chat-completions stand-in (``standin_chat``; the
provider is ``@ai-sdk/openai-compatible`` in ``~/.config/opencode/opencode.json``); two
exchanges are asked, then the session is cut short:

- ``kill-group``: kill -9 of OpenCode's whole process group (meta.json ``child_pid`` leads
  it), as a crash does; shellkeep lives on and records status ``killed``;
- ``hangup``: SIGHUP to shellkeep (meta.json ``pid``), as when the terminal is closed; status
  ``hangup``, and no process of OpenCode's group is left (killed and reaped).

OpenCode takes no session id up front: shellkeep finds it in OpenCode's SQLite database
(``~/.local/share/opencode/opencode.db``, read-only), and the test reads it there too.
``shellkeep resume`` redraws the last screen, runs ``opencode -s <ses_…>``, the next chat
request carries the earlier prompts and answers, and a third exchange is recorded in a new
session whose ``parent`` is the first. Exchanges and token usage (the stand-in's numbers)
are in both sessions' metadata.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sqlite3
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from shellkeep.agents.opencode import OpenCodeAdapter
from shellkeep.store.paths import Paths
from tests.helpers import exchanges_of, meta_of, process_gone, session_folders, SK
from tests.recordings import last_screen

from .agent_processes import group_members, reap
from .conftest import _search_path
from .screen_driver import ScreenDriver
from .standin_chat import ChatRequest, ChatStandin, usage_of
from .test_resume_claude import _restored_screen

pytestmark = [pytest.mark.agent, pytest.mark.timeout(420)]

READY = "Ask anything"
"""The empty input box of a new session (its placeholder)."""
RESUMED = "ctrl+p commands"
"""The footer below the input box; a resumed session shows no placeholder."""
WAIT_S = 90.0
TEST_KEY = "sk-test-shellkeep-standin-opencode"
PROMPTS = ("the first word is plum", "the second word is pear")
ANSWERS = tuple(f"Echo: {p}" for p in PROMPTS)
THIRD_PROMPT = "the third word is quince"
THIRD_ANSWER = f"Echo: {THIRD_PROMPT}"

Drive = Callable[..., ScreenDriver]


def opencode_config(api_base: str, model: str) -> dict[str, Any]:
    """Return an ``opencode.json`` whose only provider is the stand-in (no update, no sharing)."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": api_base, "apiKey": TEST_KEY},
                "models": {model: {"name": "Mock Model"}},
            }
        },
        "model": f"mock/{model}",
        "autoupdate": False,
        "share": "disabled",
    }


@pytest.fixture
def opencode_home(tmp_path: Path, chat_standin: ChatStandin) -> Iterator[Path]:
    """Yield a temporary HOME whose OpenCode config points at the stand-in; its processes end after."""
    home = tmp_path / "opencode-home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text(json.dumps(opencode_config(chat_standin.api_base, chat_standin.model)))
    yield home
    reap(home)


@pytest.fixture
def opencode_env(opencode_home: Path, opencode_bin: Path, shellkeep_home: Path) -> dict[str, str]:
    """Return the whole environment for running OpenCode against the stand-in."""
    return {
        "HOME": str(opencode_home),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",  # else it tries models.dev first (an error, ~2.6 s)
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
        "PATH": _search_path(opencode_bin),
    }


def database(home: Path) -> Path:
    """Return OpenCode's database under *home* (it may not exist yet)."""
    return home / ".local" / "share" / "opencode" / "opencode.db"


def latest_session(db: Path, directory: Path) -> str | None:
    """Return the newest top-level OpenCode session of *directory*, read-only, or None."""
    if not db.exists():
        return None
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        row = connection.execute(
            "SELECT id FROM session WHERE directory = ? AND parent_id IS NULL ORDER BY time_created DESC LIMIT 1",
            (str(directory),),
        ).fetchone()
    except sqlite3.OperationalError:  # the schema is not made yet
        return None
    finally:
        connection.close()
    return None if row is None else str(row[0])


def session_version(db: Path, session_id: str) -> str:
    """Return the OpenCode version that made the session (its ``version`` column), read-only."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        [(version,)] = connection.execute("SELECT version FROM session WHERE id = ?", (session_id,)).fetchall()
    finally:
        connection.close()
    return str(version)


def stored_answers(db: Path, session_id: str) -> list[str]:
    """Return the texts of the session's assistant text parts, read-only, in order."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        rows = connection.execute(
            "SELECT part.data FROM part JOIN message ON part.message_id = message.id "
            "WHERE part.session_id = ? ORDER BY part.id",
            (session_id,),
        ).fetchall()
    finally:
        connection.close()
    parts = [json.loads(data) for (data,) in rows]
    return [p.get("text", "") for p in parts if p.get("type") == "text"]


def ask(driver: ScreenDriver, prompt: str, answer: str, standin: ChatStandin) -> None:
    """Type *prompt*, wait until the input box shows it, press Enter, wait for *answer*.

    An Enter that a busy agent took before it was ready to submit is pressed again, up to
    twice, when no request with *prompt* reached *standin* within 30 s.
    """
    driver.type(prompt)
    driver.wait_for_screen(prompt, WAIT_S)
    for _ in range(3):
        driver.press("enter")
        try:
            driver.wait_until(lambda: any(r.last_user_text() == prompt for r in standin.conversation_requests()), 30, "request")
            break
        except TimeoutError:
            continue
    driver.wait_for_screen(answer, WAIT_S)


def request_with_prompt(standin: ChatStandin, prompt: str) -> ChatRequest:
    """Wait for the conversation request whose last user text is *prompt*."""
    return standin.wait_for_request(lambda r: r.is_conversation and r.last_user_text() == prompt, WAIT_S)


def expected_usage(standin: ChatStandin, prompts: tuple[str, ...]) -> dict[str, int]:
    """Return the usage the stand-in reported for the conversation requests of *prompts*."""
    total = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for request in standin.conversation_requests():
        if request.last_user_text() in prompts:
            usage = usage_of(request, standin.answer_to(request))
            total["input"] += usage["prompt_tokens"]
            total["output"] += usage["completion_tokens"]
    return total


def quit_opencode(driver: ScreenDriver) -> str:
    """Exit OpenCode with one Ctrl-C at an empty input box; return all it printed (its exit banner last)."""
    driver.press("ctrl-c")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    return bytes(driver.raw).decode("utf-8", "replace")


@pytest.mark.parametrize("cut", ["kill-group", pytest.param("hangup", marks=pytest.mark.newest_only)])
def test_resume_opencode_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    opencode_env: dict[str, str],
    opencode_home: Path,
    opencode_bin: Path,
    chat_standin: ChatStandin,
    project_dir: Path,
    cut: str,
) -> None:
    db = database(opencode_home)
    first = drive([*SK, "opencode"], env=opencode_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer, chat_standin)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert (meta["command"], meta["agent"]) == (["opencode"], "opencode")
    session_id = latest_session(db, project_dir)
    assert session_id is not None and session_id.startswith("ses_")
    version = subprocess.run([str(opencode_bin), "--version"], capture_output=True, text=True, timeout=120).stdout
    assert session_version(db, session_id) == version.strip()
    # The replies are in the database when they show (the reference saw it; the test waits anyway).
    first.wait_until(lambda: ANSWERS[1] in stored_answers(db, session_id), WAIT_S, "answer 2 stored")
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")

    child = meta["child_pid"]
    if cut == "kill-group":
        os.killpg(child, signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    else:
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    first.wait_until(lambda: process_gone(child), WAIT_S, "opencode gone")
    first.wait_until(lambda: not group_members(child), WAIT_S, "opencode's process group gone")
    assert meta_of(folder)["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]

    # -- resume in a new terminal ---------------------------------------------------------
    second = drive([*SK, "resume"], env=opencode_env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    restored = _restored_screen(second, new_folder)
    if cut == "kill-group":  # the last screen is the conversation
        assert ANSWERS[1] in restored and PROMPTS[1] in restored, restored
    else:  # a SIGHUP makes OpenCode leave its alternate screen and print its exit banner there
        assert f"Continue  opencode -s {session_id}" in restored, restored
    assert f"── shellkeep: {meta['id']} · opencode · " in restored and "native resume" in restored
    second.wait_for_screen(RESUMED, WAIT_S)
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # OpenCode redraws the session from its database
    ask(second, THIRD_PROMPT, THIRD_ANSWER, chat_standin)

    request = request_with_prompt(chat_standin, THIRD_PROMPT)
    assert request.exchange_texts() == [
        ("user", PROMPTS[0]),
        ("assistant", ANSWERS[0]),
        ("user", PROMPTS[1]),
        ("assistant", ANSWERS[1]),
        ("user", THIRD_PROMPT),
    ]
    second.wait_until(lambda: THIRD_ANSWER in stored_answers(db, session_id), WAIT_S, "answer 3 stored")
    assert f"opencode -s {session_id}" in quit_opencode(second)  # exit status 0 through shellkeep

    # -- what shellkeep kept ----------------------------------------------------------------
    old = meta_of(folder)
    assert old["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]
    assert (old["agent_session_id"], old["agent_transcript"]) == (session_id, str(db))
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    assert old["usage"] == expected_usage(chat_standin, PROMPTS)

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["opencode", "-s", session_id]
    assert (new["agent"], new["agent_session_id"], new["status"], new["exit_code"]) == (
        "opencode", session_id, "finished", 0,
    )
    assert new["exchange_count"] == 1
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["usage"] == expected_usage(chat_standin, (THIRD_PROMPT,))
    save = os.environ.get("SHELLKEEP_TEST_SAVE_OPENCODE")
    if save:  # for tests/data/agents/opencode: scripts/opencode-fixture.py anonymises the copy
        source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        copy = sqlite3.connect(Path(save) / f"opencode-{session_version(db, session_id)}-{cut}.db")
        source.backup(copy)
        copy.close()
        source.close()


def test_adapter_states_the_versions_it_was_tested_with(opencode_bin: Path) -> None:
    out = subprocess.run([str(opencode_bin), "--version"], capture_output=True, text=True, timeout=120).stdout
    assert out.strip() in OpenCodeAdapter.tested_versions
