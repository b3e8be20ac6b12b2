"""Resume the real GitHub Copilot CLI after a crash and after a closed terminal.

``shellkeep copilot`` runs against the chat-completions stand-in (``standin_chat``; offline
mode, ``COPILOT_PROVIDER_BASE_URL``), with the project folder trusted in
``~/.copilot/config.json``; shellkeep pre-assigns ``--session-id``. Two exchanges, then:

- ``kill-group``: kill -9 of Copilot's whole process group (the node loader and the native
  binary it starts; a kill of the loader alone leaves the binary running), as a crash does;
- ``hangup``: SIGHUP to shellkeep, as when the terminal is closed; no process of Copilot's
  group is left (killed and reaped).

``shellkeep resume`` redraws the last screen, runs ``copilot --resume <uuid>``, the next chat
request carries the earlier prompts and answers, and a third exchange is recorded in a new
session whose ``parent`` is the first. Exchanges and token usage (the stand-in's numbers,
from ``session.usage_record`` events) are in both sessions' metadata.

Copilot unpacks about 235 MB into ``~/.cache/copilot`` on the first start in each HOME (about
5 s); every test HOME links ``.cache/copilot`` to one folder prepared once per version under
``~/.cache/shellkeep-ci/copilot-cache/<version>`` (see ``copilot_cache``): a test HOME then
starts in about 0.6 s instead of 6 s and adds nothing to the disk.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from shellkeep.agents.copilot import CopilotAdapter
from shellkeep.store.paths import Paths
from tests.helpers import exchanges_of, meta_of, process_gone, session_folders, SK, stored_copy
from tests.recordings import last_screen

from .agent_processes import group_members, reap
from .conftest import CI_NPM_PREFIX, _search_path
from .screen_driver import ScreenDriver
from .standin_chat import ChatStandin
from .test_resume_claude import _restored_screen
from .test_resume_opencode import ask, expected_usage, request_with_prompt

pytestmark = [pytest.mark.agent, pytest.mark.timeout(420)]

READY = "/ commands"
"""Part of the footer below Copilot's input line (``… · / commands · ? help · …``)."""
WAIT_S = 90.0
TEST_KEY = "sk-test-shellkeep-standin-copilot"
PROMPTS = ("the first word is plum", "the second word is pear")
ANSWERS = tuple(f"Echo: {p}" for p in PROMPTS)
THIRD_PROMPT = "the third word is quince"
THIRD_ANSWER = f"Echo: {THIRD_PROMPT}"
CACHE_ROOT = CI_NPM_PREFIX.parent / "copilot-cache"

Drive = Callable[..., ScreenDriver]


def _version(copilot_bin: Path, home: Path) -> str:
    out = subprocess.run(
        [str(copilot_bin), "--version"], capture_output=True, text=True, timeout=300,
        env={"HOME": str(home), "PATH": _search_path(copilot_bin), "COPILOT_AUTO_UPDATE": "false"}, cwd=home,
    ).stdout
    return out.split()[3].rstrip(".")  # "GitHub Copilot CLI 1.0.102."


@pytest.fixture(scope="session")
def copilot_cache(copilot_bin: Path) -> Path:
    """Return a ``.cache/copilot`` folder holding ``copilot_bin``'s unpacked runtime.

    Prepared once per version (``copilot --version`` with the folder's parent as HOME) and
    shared by every test HOME, across runs and xdist workers (a file lock orders the first
    start). One folder per version: Copilot's loader runs the newest package it finds there
    unless ``COPILOT_AUTO_UPDATE=false``.
    """
    package = json.loads((copilot_bin.resolve().parent / "package.json").read_text())
    root = CACHE_ROOT.expanduser() / str(package["version"])
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _version(copilot_bin, root)  # unpacks into root/.cache/copilot when missing
    return root / ".cache" / "copilot"


@pytest.fixture
def copilot_home(tmp_path: Path, project_dir: Path, copilot_cache: Path) -> Iterator[Path]:
    """Yield a temporary HOME that trusts the project folder and shares the unpacked runtime."""
    home = tmp_path / "copilot-home"
    (home / ".copilot").mkdir(parents=True)
    (home / ".copilot" / "config.json").write_text(json.dumps({"trustedFolders": [str(project_dir)]}))
    (home / ".cache").mkdir()
    (home / ".cache" / "copilot").symlink_to(copilot_cache)
    yield home
    reap(home)


@pytest.fixture
def copilot_env(copilot_home: Path, copilot_bin: Path, chat_standin: ChatStandin, shellkeep_home: Path) -> dict[str, str]:
    """Return the whole environment for running Copilot CLI offline against the stand-in."""
    return {
        "HOME": str(copilot_home),
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": chat_standin.api_base,
        "COPILOT_PROVIDER_API_KEY": TEST_KEY,
        "COPILOT_MODEL": chat_standin.model,
        "COPILOT_AUTO_UPDATE": "false",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
        "PATH": _search_path(copilot_bin),
    }


def events(path: Path) -> list[dict[str, Any]]:
    """Return the whole lines of a Copilot ``events.jsonl`` ([] while it is missing)."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    found = []
    for line in lines:
        try:
            found.append(json.loads(line))
        except ValueError:
            continue  # a line still being written
    return found


def stored_answers(path: Path) -> list[str]:
    """Return the contents of the ``assistant.message`` events of an ``events.jsonl``."""
    return [e["data"].get("content", "") for e in events(path) if e.get("type") == "assistant.message"]


def turns_over(path: Path) -> bool:
    """Tell whether every prompt in an ``events.jsonl`` has its ``assistant.turn_end``."""
    kinds = [e.get("type") for e in events(path)]
    return kinds.count("assistant.turn_end") >= kinds.count("user.message") > 0


def quit_copilot(driver: ScreenDriver) -> str:
    """Exit Copilot with Ctrl-C twice (the first asks for the second); return what it printed.

    A Ctrl-C that lands while Copilot still redraws after a turn can be taken for something
    else: press it again until the second-press hint shows.
    """
    for _ in range(3):
        driver.press("ctrl-c")
        try:
            driver.wait_until(lambda: "again to exit" in driver.text() or not driver.is_alive(), 15, "exit hint")
            break
        except TimeoutError:
            continue
    if driver.is_alive():
        driver.press("ctrl-c")
    assert driver.wait_exit(WAIT_S) == 0, driver.dump()
    return bytes(driver.raw).decode("utf-8", "replace")


@pytest.mark.parametrize("cut", ["kill-group", pytest.param("hangup", marks=pytest.mark.newest_only)])
def test_resume_copilot_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    copilot_env: dict[str, str],
    copilot_home: Path,
    copilot_bin: Path,
    chat_standin: ChatStandin,
    project_dir: Path,
    cut: str,
) -> None:
    first = drive([*SK, "copilot"], env=copilot_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer, chat_standin)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert meta["command"][:2] == ["copilot", "--session-id"] and meta["agent"] == "copilot"
    session_id = meta["command"][2]
    assert meta["agent_session_id"] == session_id
    log = copilot_home / ".copilot" / "session-state" / session_id / "events.jsonl"
    first.wait_until(lambda: ANSWERS[1] in stored_answers(log), WAIT_S, "answer 2 stored")
    installed = json.loads((copilot_bin.resolve().parent / "package.json").read_text())["version"]
    assert events(log)[0]["data"]["copilotVersion"] == installed  # not a newer package from the cache
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")

    child = meta["child_pid"]
    members = group_members(child)
    assert len(members) >= 2, members  # the loader and the native binary
    if cut == "kill-group":
        os.killpg(child, signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    else:
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    first.wait_until(lambda: all(process_gone(pid) for pid in members), WAIT_S, "copilot gone")
    first.wait_until(lambda: not group_members(child), WAIT_S, "copilot's process group gone")
    assert meta_of(folder)["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]
    dead_locks = {f"inuse.{pid}.{kind}" for pid in members for kind in ("lock", "hold")}

    # -- resume in a new terminal ---------------------------------------------------------
    second = drive([*SK, "resume"], env=copilot_env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    restored = _restored_screen(second, new_folder)
    assert f"── shellkeep: {meta['id']} · copilot · " in restored and "native resume" in restored
    if cut == "kill-group":
        assert ANSWERS[1] in restored and PROMPTS[1] in restored, restored
    second.wait_for_screen(READY, WAIT_S)
    # the crashed run's in-use locks are gone (else: a "Session in use ... Resume anyway?" dialog)
    assert not dead_locks & {p.name for p in log.parent.iterdir()}, sorted(log.parent.iterdir())
    second.wait_for_screen(ANSWERS[1], WAIT_S)  # Copilot redraws the session from its event log
    ask(second, THIRD_PROMPT, THIRD_ANSWER, chat_standin)

    request = request_with_prompt(chat_standin, THIRD_PROMPT)
    assert request.exchange_texts() == [
        ("user", PROMPTS[0]),
        ("assistant", ANSWERS[0]),
        ("user", PROMPTS[1]),
        ("assistant", ANSWERS[1]),
        ("user", THIRD_PROMPT),
    ]
    second.wait_until(lambda: THIRD_ANSWER in stored_answers(log) and turns_over(log), WAIT_S, "turn 3 over")
    assert f"copilot --resume={session_id}" in quit_copilot(second)  # exit status 0 through shellkeep

    # -- what shellkeep kept ----------------------------------------------------------------
    old = meta_of(folder)
    assert old["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]
    assert (old["agent_session_id"], old["agent_transcript"]) == (session_id, str(log))
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    assert old["usage"] == expected_usage(chat_standin, PROMPTS)
    assert stored_copy(folder, "events.jsonl")

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["copilot", "--resume", session_id]
    assert (new["agent"], new["agent_session_id"], new["status"], new["exit_code"]) == (
        "copilot", session_id, "finished", 0,
    )
    assert new["exchange_count"] == 1
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["usage"] == expected_usage(chat_standin, (THIRD_PROMPT,))
    save = os.environ.get("SHELLKEEP_TEST_SAVE_COPILOT")
    if save:  # for tests/data/agents/copilot (paths made anonymous by hand)
        target = Path(save) / f"copilot-{installed}-{cut}"
        target.mkdir(parents=True, exist_ok=True)
        for name in ("events.jsonl", "workspace.yaml"):
            (target / name).write_bytes((log.parent / name).read_bytes())
        store = sqlite3.connect(f"file:{copilot_home / '.copilot' / 'session-store.db'}?mode=ro", uri=True)
        [(schema,)] = store.execute("SELECT sql FROM sqlite_master WHERE name = 'assistant_usage_events'")
        rows = store.execute("SELECT * FROM assistant_usage_events WHERE session_id = ? ORDER BY id", (session_id,))
        inserts = [
            "INSERT INTO assistant_usage_events VALUES ("
            + ", ".join(store.execute("SELECT quote(?)", (v,)).fetchone()[0] for v in row) + ");"
            for row in rows.fetchall()
        ]
        (target / "session-store.sql").write_text("\n".join([schema + ";", *inserts]) + "\n")
        store.close()


def test_adapter_states_the_versions_it_was_tested_with(copilot_bin: Path, copilot_home: Path) -> None:
    assert _version(copilot_bin, copilot_home) in CopilotAdapter.tested_versions
