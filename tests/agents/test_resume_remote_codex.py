"""Continue on machine B, with the real Codex CLI, a thread recorded on machine A and synced.

As ``test_resume_remote_claude``, for Codex: A's rollout (shellkeep's copy, pushed to a file://
share) is written to ``B-HOME/.codex/sessions/YYYY/MM/DD/<the same name>`` with the cwd of its
``session_meta`` and ``turn_context`` records rewritten to B's clone, and
``codex --cd <clone> resume <id>`` runs there: the next request carries the earlier exchange
under the same thread id, and Codex works in B's clone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import meta_of, run_sk, session_folders, SK

from .agent_processes import reap
from .conftest import CODEX_KEY_ENV, TEST_OPENAI_KEY, codex_config
from .screen_driver import ScreenDriver
from .standin_openai import OpenAIStandin
from .test_codex_standin_direct import READY, WAIT_S, ask, read_jsonl, request_with_prompt
from .test_resume_codex import _quit_codex

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]
PROMPT, ANSWER = "the first word is plum", "STANDIN-ANSWER-1: plum"
NEXT_PROMPT, NEXT_ANSWER = "the second word is fig", "STANDIN-ANSWER-2: fig"
REMOTE = "https://github.com/acme/orchard.git"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def _sk(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    result = run_sk(*args, env=env, timeout_s=120)
    assert result.returncode == 0, (args, result.stderr.decode())
    return result


@pytest.fixture
def laptop_home(tmp_path: Path) -> Iterator[Path]:
    """Machine B's HOME; its Codex daemon is ended and the binary copy it installs removed at teardown."""
    home = tmp_path / "laptop-home"
    (home / ".codex").mkdir(parents=True)
    yield home
    reap(home)
    shutil.rmtree(home / ".codex" / "packages", ignore_errors=True)


def test_a_codex_thread_pushed_from_machine_a_resumes_natively_in_machine_bs_clone(
    tmp_path: Path,
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
    laptop_home: Path,
) -> None:
    _git(project_dir, "init", "-q", "-b", "main")
    _git(project_dir, "remote", "add", "origin", REMOTE)
    _git(project_dir, "commit", "-q", "--allow-empty", "-m", "first")
    clone = tmp_path / "laptop" / "src" / "orchard"
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(project_dir), str(clone)], check=True, capture_output=True)
    _git(clone, "remote", "set-url", "origin", REMOTE)
    (laptop_home / ".codex" / "config.toml").write_text(codex_config(openai_standin.api_base, [clone], openai_standin.model))
    env_a = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    env_b = {
        **env_a,
        "HOME": str(laptop_home),
        "CODEX_HOME": str(laptop_home / ".codex"),
        "SHELLKEEP_HOME": str(tmp_path / "laptop" / "data"),
        "SHELLKEEP_CONFIG": str(tmp_path / "laptop" / "config.toml"),
    }
    assert env_b[CODEX_KEY_ENV] == TEST_OPENAI_KEY

    first = drive([*SK, "codex"], env=env_a, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, PROMPT, ANSWER)
    thread_id = _quit_codex(first)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    # Codex's daemon outlives the session: wait for the upkeep's results, not for the processes.
    first.wait_until(lambda: (meta_of(folder).get("git_identity") or {}).get("root_commit"), WAIT_S, "root commit")
    first.wait_until(lambda: (folder / "exchanges.jsonl").is_file() and any((folder / "agent").glob("*")), WAIT_S, "copy")
    meta = meta_of(folder)
    assert meta["agent_session_id"] == thread_id
    a_rollout = Path(meta["agent_transcript"])

    share = (tmp_path / "share").as_uri()
    assert json.loads(_sk("sync", "push", "--remote", share, "--json", env=env_a).stdout)["sessions_pushed"] == 1
    assert json.loads(_sk("sync", "pull", "--remote", share, "--json", env=env_b).stdout)["sessions_pulled"] == 1
    project_dir.rename(project_dir.with_name("machine-a-only"))  # B has no folder at A's path

    second = drive([*SK, "resume", "--yes", meta["id"]], env=env_b, cwd=clone)
    second.wait_for_screen(ANSWER, WAIT_S)  # the thread is redrawn
    second.wait_for_screen(READY, WAIT_S)
    assert "Working directory" not in second.text()
    ask(second, NEXT_PROMPT, NEXT_ANSWER)
    request = request_with_prompt(openai_standin, NEXT_PROMPT)
    assert request.headers["session-id"] == thread_id
    texts = request.texts()
    assert ("user", PROMPT) in texts and ("assistant", ANSWER) in texts
    assert _quit_codex(second) == thread_id

    b_rollout = laptop_home / ".codex" / "sessions" / Path(*a_rollout.parts[-4:])
    heads = [r for r in read_jsonl(b_rollout) if r.get("type") == "session_meta"]
    assert heads and heads[0]["payload"]["cwd"] == str(clone)
    [run] = [meta_of(p.parent) for p in session_folders(Paths(Path(env_b["SHELLKEEP_HOME"]), Path("none")))]
    assert run["command"] == ["codex", "--cd", str(clone), "resume", thread_id]
    assert run["parent"] == meta["id"] and run["resumed_from"]["session"] == meta["id"]
