"""An imported Codex thread resumes natively with the real CLI, after its rollout was deleted.

Codex runs on its own (not under shellkeep) against the OpenAI stand-in and answers a prompt;
``shellkeep import --agent codex`` brings the thread in; its rollouts folder is then deleted;
``shellkeep resume <session>`` puts shellkeep's copy back and starts ``codex resume <id>``, and
the next request the stand-in gets carries the earlier exchange.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .agent_processes import reap
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, quit_codex, request_with_prompt, turns

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]


def test_an_imported_codex_thread_resumes_natively_from_shellkeep_s_copy(
    home: Paths,
    drive: Callable[..., ScreenDriver],
    codex_bin: Path,
    codex_env: dict[str, str],
    codex_home: Path,
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    first = drive([codex_bin], env=codex_env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, "the first word is plum", "STANDIN-ANSWER-1: plum")
    thread_id = quit_codex(first)
    reap(codex_home)  # its app-server daemon writes the rollout; it is gone once the rollout is whole

    imported = subprocess.run(
        [*SK, "import", "--agent", "codex", "--json"], env=env, cwd=project_dir, capture_output=True, timeout=120
    )
    assert imported.returncode == 0, imported.stderr
    [result] = [r for r in json.loads(imported.stdout) if r["agent_session_id"] == thread_id]
    assert result["action"] == "imported" and result["exchanges"] == 1

    shutil.rmtree(Path(codex_env["CODEX_HOME"]) / "sessions")

    second = drive([*SK, "resume", result["session_id"]], env=env, cwd=project_dir)
    second.wait_for_screen(READY, WAIT_S)
    ask(second, "the second word is pear", "STANDIN-ANSWER-2: pear")
    request = request_with_prompt(openai_standin, "the second word is pear")
    assert request.headers["session-id"] == thread_id
    exchange = turns(request)
    assert exchange == [
        ("user", "the first word is plum"),
        ("assistant", "STANDIN-ANSWER-1: plum"),
        ("user", "the second word is pear"),
    ]
    assert quit_codex(second) == thread_id
