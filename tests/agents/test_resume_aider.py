"""Resume the real aider (PyPI ``aider-chat``) after a crash and after a closed terminal.

``shellkeep aider`` runs in a git repository against the chat-completions stand-in
(``standin_chat``; aider talks to it through litellm as ``openai/<model>`` with
``OPENAI_API_BASE``). Nothing reaches the internet: litellm's bundled cost map
(``LITELLM_LOCAL_MODEL_COST_MAP``), an empty aider model cache younger than its 24 h TTL, and
a model metadata file for the stand-in's model (else aider asks about an unknown context
window); first-run questions are switched off with ``AIDER_*`` settings (no .gitignore edit,
no update check, no release notes, no analytics). Two exchanges are asked, then the session
is cut short:

- ``kill-group``: kill -9 of aider's whole process group (meta.json ``child_pid`` leads it),
  as a crash does; shellkeep lives on and records status ``killed``;
- ``hangup``: SIGHUP to shellkeep (meta.json ``pid``), as when the terminal is closed; status
  ``hangup``, and no process of aider's group is left (killed and reaped).

aider's transcript is its chat history (``.aider.chat.history.md`` at the git top-level); the
session is its ``# aider chat started at`` section. ``shellkeep resume`` redraws the last
screen and re-injects: a new aider gets the two exchanges typed in as one paste, so the next
request that reaches the stand-in carries the earlier prompts and answers; a third exchange
is recorded in a new session whose ``parent`` is the first. Exchanges and token usage (as
aider shows them: it counts tokens itself) are in both sessions' metadata.

``SHELLKEEP_TEST_SAVE_AIDER=DIR`` copies the chat history each run leaves to
``DIR/aider-<version>-<cut>.md`` (tests/data/agents/aider holds them, paths anonymised).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

from shellkeep.agents.aider import AiderAdapter
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX
from shellkeep.store.paths import Paths
from tests.helpers import exchanges_of, meta_of, process_gone, session_folders, SK
from tests.recordings import last_screen

from .agent_processes import group_members, reap
from .conftest import CI_AIDER_VENVS, CI_CACHE, _search_path
from .screen_driver import ScreenDriver
from .standin_chat import ChatRequest, ChatStandin
from .standin_server import last_word
from .test_resume_claude import _restored_screen

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

WAIT_S = 90.0
MODEL = "mock-model"
TEST_KEY = "sk-test-shellkeep-standin-aider"
PROMPTS = ("the first word is plum", "the second word is pear")
ANSWERS = ("STANDIN-ANSWER-1: plum", "STANDIN-ANSWER-2: pear")
THIRD_PROMPT = "the third word is quince"
THIRD_ANSWER = "STANDIN-ANSWER-4: quince"  # the 3rd answer is to the re-injected block
HISTORY = ".aider.chat.history.md"

Drive = Callable[..., ScreenDriver]


class AiderRequest(ChatRequest):
    """A chat request from aider: every one is a conversation turn (aider offers no tools)."""

    @property
    def is_conversation(self) -> bool:
        """Tell whether this is a ``POST …/chat/completions`` (aider's every model call)."""
        return self.is_chat

    def typed_text(self) -> str:
        """Return what was typed: the last user message without the reminder aider appends."""
        return self.last_user_text().split("\n\nTo suggest changes to a file", 1)[0].strip()


class AiderStandin(ChatStandin):
    """The chat stand-in answering ``STANDIN-ANSWER-<n>: <last word of the typed first line>``."""

    request_type = AiderRequest

    def default_answer(self, n: int, request: ChatRequest) -> str:
        """Answer the n-th conversation request (1-based) after the first line typed."""
        assert isinstance(request, AiderRequest)
        return f"STANDIN-ANSWER-{n}: {last_word(request.typed_text().splitlines()[0])}"


@pytest.fixture
def aider_standin() -> Iterator[AiderStandin]:
    """Yield a started stand-in for aider on loopback."""
    with AiderStandin(model=MODEL) as standin:
        yield standin


@pytest.fixture
def aider_home(tmp_path: Path, project_dir: Path) -> Iterator[Path]:
    """Yield a HOME that keeps aider offline, and make ``project_dir`` a git repository."""
    home = tmp_path / "aider-home"
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True)
    (caches / "model_prices_and_context_window.json").write_text("{}")  # fresh: not fetched
    metadata = {
        f"openai/{MODEL}": {
            "max_input_tokens": 128000, "max_tokens": 4096, "max_output_tokens": 4096,
            "input_cost_per_token": 0.000001, "output_cost_per_token": 0.000002,
            "litellm_provider": "openai", "mode": "chat",
        }
    }  # fmt: skip
    (home / "model-metadata.json").write_text(json.dumps(metadata))
    (home / ".gitconfig").write_text("[user]\n\tname = Test\n\temail = test@example.com\n")
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True, env={"HOME": str(home), "PATH": os.defpath})
    yield home
    reap(home)


@pytest.fixture
def aider_env(aider_home: Path, aider_bin: Path, aider_standin: AiderStandin, shellkeep_home: Path) -> dict[str, str]:
    """Return the whole environment for running aider against the stand-in."""
    return {
        "HOME": str(aider_home),
        "OPENAI_API_KEY": TEST_KEY,
        "OPENAI_API_BASE": aider_standin.api_base,
        "AIDER_MODEL": f"openai/{MODEL}",
        "AIDER_MODEL_METADATA_FILE": str(aider_home / "model-metadata.json"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "AIDER_GITIGNORE": "false",
        "AIDER_CHECK_UPDATE": "false",
        "AIDER_SHOW_RELEASE_NOTES": "false",
        "AIDER_ANALYTICS": "false",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
        "PATH": _search_path(aider_bin),
    }


def at_prompt(driver: ScreenDriver) -> bool:
    """Tell whether aider waits at an empty ``>`` prompt (the screen's last non-blank line)."""
    lines = [line.rstrip() for line in driver.lines() if line.strip()]
    return bool(lines) and lines[-1] == ">"


def ask(driver: ScreenDriver, prompt: str, answer: str) -> None:
    """Type *prompt* at aider's prompt, press Enter, wait for *answer* and the next prompt."""
    driver.wait_until(lambda: at_prompt(driver), WAIT_S, "aider's prompt")
    driver.type(prompt)
    driver.wait_for_screen(f"> {prompt}", WAIT_S)
    driver.press("enter")
    driver.wait_for_screen(answer, WAIT_S)
    driver.wait_until(lambda: at_prompt(driver), WAIT_S, "aider's prompt after the answer")


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_TOKENS = re.compile(r"Tokens: ([\d.]+)(k?) sent, ([\d.]+)(k?) received")


def token_reports(driver: ScreenDriver) -> list[dict[str, int]]:
    """Return the usage of each token line aider showed on *driver*'s terminal (``1.2k`` is 1200).

    aider counts the tokens itself (litellm's tokenizer), not from the stand-in's ``usage``.
    Lines of a screen shellkeep redrew are in the list too.
    """
    text = _ANSI.sub("", bytes(driver.raw).decode("utf-8", "replace"))
    return [
        {
            "input": round(float(sent) * (1000 if sent_k else 1)),
            "output": round(float(received) * (1000 if received_k else 1)),
            "cache_read": 0,
            "cache_write": 0,
        }
        for sent, sent_k, received, received_k in _TOKENS.findall(text)
    ]


def summed(reports: list[dict[str, int]]) -> dict[str, int]:
    """Return the sum of usage reports, field by field."""
    return {key: sum(r[key] for r in reports) for key in ("input", "output", "cache_read", "cache_write")}


def requests_typed(standin: AiderStandin, *typed: str) -> list[AiderRequest]:
    """Return the conversation requests whose typed text is one of *typed*."""
    return [r for r in standin.conversation_requests() if isinstance(r, AiderRequest) and r.typed_text() in typed]


def _version(aider_bin: Path) -> str:
    out = subprocess.run([str(aider_bin), "--version"], capture_output=True, text=True, timeout=120).stdout
    return out.split()[-1]


@pytest.mark.parametrize("cut", ["kill-group", pytest.param("hangup", marks=pytest.mark.newest_only)])
def test_resume_aider_after_its_session_was_cut_short(
    home: Paths,
    drive: Drive,
    aider_env: dict[str, str],
    aider_bin: Path,
    aider_standin: AiderStandin,
    project_dir: Path,
    cut: str,
) -> None:
    history = project_dir / HISTORY
    first = drive([*SK, "aider"], env=aider_env, cwd=project_dir)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    assert (meta["command"], meta["agent"]) == (["aider"], "aider")
    assert "> Tokens: " in history.read_text().rsplit(f"#### {PROMPTS[1]}", 1)[1]  # the answer is stored
    first.wait_until(lambda: ANSWERS[1] in last_screen(folder / "session.cast").to_text(), WAIT_S, "answer on disk")

    first_reports = token_reports(first)
    assert len(first_reports) == 2 and all(r["input"] and r["output"] for r in first_reports)
    child = meta["child_pid"]
    if cut == "kill-group":
        os.killpg(child, signal.SIGKILL)
        assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    else:
        os.kill(meta["pid"], signal.SIGHUP)
        first.wait_exit(WAIT_S)
    first.wait_until(lambda: process_gone(child), WAIT_S, "aider gone")
    first.wait_until(lambda: not group_members(child), WAIT_S, "aider's process group gone")
    assert meta_of(folder)["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]

    # -- resume in a new terminal: re-injection ---------------------------------------------
    second = drive([*SK, "resume"], env=aider_env, cwd=project_dir)
    new_folder = second.wait_until(
        lambda: next((f.parent for f in session_folders(home) if f.parent != folder), None), WAIT_S, "new session"
    )
    assert new_folder is not None
    restored = _restored_screen(second, new_folder)
    assert ANSWERS[1] in restored and PROMPTS[1] in restored, restored
    assert f"── shellkeep: {meta['id']} · aider · " in restored and "re-injecting 2 exchanges" in restored, restored
    block = aider_standin.wait_for_request(
        lambda r: isinstance(r, AiderRequest) and r.typed_text().startswith(INJECTED_CONTEXT_PREFIX), WAIT_S
    )
    assert isinstance(block, AiderRequest)
    assert f"User: {PROMPTS[0]}\nAssistant: {ANSWERS[0]}\nUser: {PROMPTS[1]}\nAssistant: {ANSWERS[1]}" in (
        block.typed_text()
    ), block.typed_text()  # one paste, submitted once, its line breaks kept
    second.wait_for_screen("STANDIN-ANSWER-3: there", WAIT_S)
    ask(second, THIRD_PROMPT, THIRD_ANSWER)
    [third] = requests_typed(aider_standin, THIRD_PROMPT)
    assert block.typed_text() in [text for role, text in third.exchange_texts() if role == "user"][-2]
    second.press("ctrl-d")  # aider exits at an empty prompt
    assert second.wait_exit(WAIT_S) == 0, second.dump()

    # -- what shellkeep kept ----------------------------------------------------------------
    old = meta_of(folder)
    assert old["status"] == {"kill-group": "killed", "hangup": "hangup"}[cut]
    assert old["agent_transcript"] == str(history)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", old["agent_session_id"])
    assert old["exchange_count"] == 2
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(folder)] == list(zip(PROMPTS, ANSWERS))
    assert {e["model"] for e in exchanges_of(folder)} == {f"openai/{MODEL}"}
    assert old["usage"] == summed(first_reports)

    new = meta_of(new_folder)
    assert new["parent"] == meta["id"]
    assert new["command"] == ["aider"]
    assert (new["agent"], new["status"], new["exit_code"]) == ("aider", "finished", 0)
    assert new["agent_transcript"] == str(history) and new["agent_session_id"] != old["agent_session_id"]
    assert [(e["prompt"], e["answer"]) for e in exchanges_of(new_folder)] == [(THIRD_PROMPT, THIRD_ANSWER)]
    assert new["exchange_count"] == 1
    # the block's answer is no exchange of the new session (shellkeep typed it), nor is its usage
    assert new["usage"] == token_reports(second)[-1], second.dump()
    save = os.environ.get("SHELLKEEP_TEST_SAVE_AIDER")
    if save:  # for tests/data/agents/aider (paths anonymised by hand)
        shutil.copyfile(history, Path(save) / f"aider-{_version(aider_bin)}-{cut}.md")


def test_adapter_states_the_versions_it_was_tested_with(aider_bin: Path) -> None:
    version = _version(aider_bin)
    assert version in AiderAdapter.tested_versions
    venv = next((v for v, folder in CI_AIDER_VENVS.items() if aider_bin.parent.parent == folder.expanduser()), None)
    assert venv in (None, version)  # each CI venv holds the version it is named for


@pytest.mark.parametrize("script", ["scripts/test", ".ci/run"])
def test_the_scripts_install_the_aider_versions_the_tests_name(script: str) -> None:
    script = (Path(__file__).resolve().parents[2] / script).read_text()
    pairs = re.search(r"for AIDER in ([^;]+); do", script)
    assert pairs is not None
    installed = {
        version: CI_CACHE / folder
        for version, folder in (pair.split(":") for pair in pairs.group(1).split())
    }
    assert installed == CI_AIDER_VENVS
    assert set(installed) == set(AiderAdapter.tested_versions)
