"""``shellkeep resume SESSION`` on machine B for a session pulled from machine A (file:// share).

Two data folders on one box; A's checkout and B's clone of one repository (same origin, same
root commit) at different paths. The agents themselves are run in
tests/agents/test_resume_remote_claude.py and test_resume_remote_codex.py; here a plain
command's session shows where B resumes it: a project B recorded sessions in is found from
any folder, and B without a checkout says so in one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import invoke_sk, run_sk, wait_for_background

pytestmark = pytest.mark.timeout(240)

REMOTE = "https://github.com/acme/orchard.git"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def _sk(*args: str, env: dict[str, str], cwd: Path, ok: bool = True) -> subprocess.CompletedProcess[bytes]:
    call = run_sk if args[0] == "run" else invoke_sk  # only run records: the rest in this process
    result = call(*args, env=env, cwd=cwd, timeout_s=120)
    if ok:
        assert result.returncode == 0, (args, result.stderr.decode())
    return result


def test_b_resumes_in_a_project_it_knows_of_the_same_repository_else_says_there_is_none(home: Paths, tmp_path: Path) -> None:
    checkout = tmp_path / "desk" / "orchard"
    checkout.mkdir(parents=True)
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "remote", "add", "origin", REMOTE)
    _git(checkout, "commit", "-q", "--allow-empty", "-m", "first")
    (checkout / "web").mkdir()
    clone = tmp_path / "laptop" / "src" / "orchard"
    subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True, capture_output=True)
    _git(clone, "remote", "set-url", "origin", REMOTE)
    (clone / "web").mkdir()
    elsewhere = tmp_path / "laptop" / "elsewhere"
    elsewhere.mkdir()
    env_a = dict(os.environ)
    data_b = tmp_path / "laptop" / "data"
    env_b = {**os.environ, "SHELLKEEP_HOME": str(data_b), "SHELLKEEP_CONFIG": str(tmp_path / "laptop" / "config.toml")}
    share = (tmp_path / "share").as_uri()

    _sk("run", "--", sys.executable, "-c", "print('persimmon')", env=env_a, cwd=checkout / "web")
    wait_for_background(home)  # the upkeep adds the root commit
    [listed] = json.loads(_sk("ls", "--all", "--json", env=env_a, cwd=checkout).stdout)
    session_id = str(listed["id"])
    _sk("sync", "push", "--remote", share, env=env_a, cwd=checkout)
    _sk("sync", "pull", "--remote", share, env=env_b, cwd=elsewhere)
    checkout.rename(checkout.with_name("machine-a-only"))  # B has no folder at A's path

    refused = _sk("resume", "--dry-run", session_id, env=env_b, cwd=elsewhere, ok=False)
    said = refused.stderr.decode()
    assert refused.returncode == 2 and said.count("\n") == 1 and "Traceback" not in said, said
    assert "github.com/acme/orchard" in said and "--cwd" in said

    _sk("run", "--", sys.executable, "-c", "print('fig')", env=env_b, cwd=clone)  # B now knows its clone
    wait_for_background(Paths(data_b, data_b / "none.toml"))
    planned = _sk("resume", "--dry-run", session_id, env=env_b, cwd=elsewhere)
    out = planned.stdout.decode()
    assert f"in: {clone / 'web'}\n" in out and f"parent: {session_id}\n" in out, out
    assert "this machine's checkout of the git repository with remote github.com/acme/orchard" in planned.stderr.decode()

    chosen = _sk("resume", "--dry-run", "--cwd", str(elsewhere), session_id, env=env_b, cwd=clone)
    assert f"in: {elsewhere}\n" in chosen.stdout.decode()
