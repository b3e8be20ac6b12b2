"""Resume the real Codex CLI after its project folder was renamed (and its Codex was killed).

``codex resume <id>`` in a directory other than the thread's recorded cwd first asks
"Working directory · resume", defaulting to the thread's directory, which is gone here.
shellkeep, resuming in the renamed folder (found by its git remote and root commit), passes
``--cd <new folder>``: Codex resumes at once, works in the new folder, and the next request
carries the earlier exchange.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, process_gone, session_folders, SK

from .conftest import codex_config
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, request_with_prompt
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]
PROMPT, ANSWER = "the first word is plum", "STANDIN-ANSWER-1: plum"
NEXT_PROMPT, NEXT_ANSWER = "the second word is fig", "STANDIN-ANSWER-2: fig"


def test_codex_resumes_in_the_renamed_folder_without_asking(
    home: Paths, drive: Drive, codex_env: dict[str, str], codex_home: Path, openai_standin: OpenAIStandin, project_dir: Path
) -> None:
    renamed = project_dir.with_name("project-renamed")
    config = codex_config(openai_standin.api_base, [project_dir, renamed], openai_standin.model)
    (codex_home / ".codex" / "config.toml").write_text(config)  # both folders trusted
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", *args], cwd=project_dir, check=True)
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}

    first = drive([*SK, "codex"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, PROMPT, ANSWER)
    thread_id = request_with_prompt(openai_standin, PROMPT).headers["session-id"]
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    child = meta_of(folder)["child_pid"]
    os.kill(child, signal.SIGKILL)
    assert first.wait_exit(WAIT_S) == 128 + signal.SIGKILL
    first.wait_until(lambda: process_gone(child), WAIT_S, "codex gone")
    # The upkeep after the session adds the root commit (Codex's daemon outlives the session,
    # so wait for the metadata, not for the processes).
    first.wait_until(lambda: (meta_of(folder).get("git_identity") or {}).get("root_commit"), WAIT_S, "root commit")
    assert meta_of(folder)["agent_session_id"] == thread_id

    subprocess.run(["mv", str(project_dir), str(renamed)], check=True)
    second = drive([*SK, "resume"], env=env, cwd=renamed)
    second.wait_for_screen(ANSWER, WAIT_S)  # the thread is redrawn: no working-directory question
    second.wait_for_screen(READY, WAIT_S)
    assert "Working directory" not in second.text()
    ask(second, NEXT_PROMPT, NEXT_ANSWER)
    request = request_with_prompt(openai_standin, NEXT_PROMPT)
    assert request.headers["session-id"] == thread_id
    texts = request.texts()
    assert ("user", PROMPT) in texts and ("assistant", ANSWER) in texts
    assert any(role == "user" and f"<cwd>{renamed}</cwd>" in text for role, text in texts)
    assert _quit_codex(second) == thread_id

    [new] = [meta_of(p.parent) for p in session_folders(home) if p.parent != folder]
    assert new["command"] == ["codex", "--cd", str(renamed), "resume", thread_id]
    assert new["cwd"] == str(renamed) and new["parent"] == meta_of(folder)["id"]
