"""Continue on machine B, with the real Claude Code, a session recorded on machine A and synced.

Two machines on one box: each its own HOME (Claude Code's ``~/.claude``) and its own
SHELLKEEP_HOME and config; A's checkout of the repository at one path, B's clone at another
(same origin remote, same root commit). A records a real ``shellkeep claude`` conversation of
two exchanges and runs ``sync push`` (to moto's S3 on loopback, or a file:// share); B runs
``sync pull`` and ``shellkeep resume <id>``. shellkeep must find B's clone, write the
transcript to ``B-HOME/.claude/projects/<B's clone, dash-encoded>/<id>.jsonl`` with the
records' ``cwd`` rewritten to B's path, and start ``claude --resume <id>`` there: the
stand-in's next request then carries the two earlier exchanges. Also: no checkout here is one
clear line (exit 2) naming the repository looked for; ``--cwd`` picks the folder; a different
transcript already at the target is left alone and the conversation is re-injected instead;
with encryption on (the team key shared) the same works.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto")

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from tests.e2e.test_sync import S3Server, bucket_url, s3_server  # noqa: E402,F401 - fixtures
from tests.helpers import SK, load_session, run_sk, session_folders, wait_for_background  # noqa: E402

from .agent_processes import reap  # noqa: E402
from .conftest import claude_state  # noqa: E402
from .screen_driver import ScreenDriver  # noqa: E402
from .standin_anthropic import AnthropicStandin  # noqa: E402
from .test_claude_standin_direct import (  # noqa: E402
    READY,
    WAIT_S,
    ask,
    quit_claude,
    read_jsonl,
    request_with_prompt,
    transcript_path,
    turns,
)

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

PROMPTS = ("the first word is plum", "the second word is pear")
ANSWERS = ("STANDIN-ANSWER-1: plum", "STANDIN-ANSWER-2: pear")
THIRD_PROMPT, THIRD_ANSWER = "the third word is quince", "STANDIN-ANSWER-3: quince"
REMOTE = "https://github.com/acme/orchard.git"
EARLIER = [turn for p, a in zip(PROMPTS, ANSWERS) for turn in (("user", p), ("assistant", a))]

Drive = Callable[..., ScreenDriver]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True
    )


def _sk(*args: str, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess[bytes]:
    result = run_sk(*args, env=env, timeout_s=120)
    if ok:
        assert result.returncode == 0, (args, result.stderr.decode())
    return result


@dataclass
class Machines:
    """Machine A (where the session was recorded) and machine B (a laptop), on one box."""

    env_a: dict[str, str]
    env_b: dict[str, str]
    checkout_a: Path
    clone_b: Path
    home_b: Path
    data_b: Paths
    session_id: str
    claude_id: str


@pytest.fixture
def laptop_home(tmp_path: Path) -> Iterator[Path]:
    """Machine B's HOME (its own ``~/.claude``); its processes are ended at teardown."""
    home = tmp_path / "laptop-home"
    home.mkdir()
    yield home
    reap(home)


def _aws() -> dict[str, str]:
    """The variables obstore reads (set by the ``bucket_url`` fixture), for the complete agent envs."""
    return {k: v for k, v in os.environ.items() if k.startswith("AWS_") or k == "PYTHON_KEYRING_BACKEND"}


def _record_and_sync(
    tmp_path: Path,
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    project_dir: Path,
    laptop_home: Path,
    url: str,
    *,
    encrypted: bool = False,
    trusted_b: tuple[Path, ...] = (),
) -> Machines:
    """Record a two-exchange Claude session on A in ``project_dir``, push it, pull it on B."""
    _git(project_dir, "init", "-q", "-b", "main")
    _git(project_dir, "remote", "add", "origin", REMOTE)
    _git(project_dir, "commit", "-q", "--allow-empty", "-m", "first")
    env_a = {**agent_env, **_aws(), "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    clone_b = tmp_path / "laptop" / "src" / "orchard"
    clone_b.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(project_dir), str(clone_b)], check=True, capture_output=True)
    _git(clone_b, "remote", "set-url", "origin", REMOTE)
    (laptop_home / ".claude.json").write_text(json.dumps(claude_state([clone_b, *trusted_b]), indent=2))
    data_b = tmp_path / "laptop" / "data"
    env_b = {
        **env_a,
        "HOME": str(laptop_home),
        "SHELLKEEP_HOME": str(data_b),
        "SHELLKEEP_CONFIG": str(tmp_path / "laptop" / "config.toml"),
    }
    if encrypted:
        _sk("key", "init", env=env_a)
        _sk("config", "set", "encryption.encrypt", "true", env=env_a)
        data_b.mkdir(parents=True)
        _sk("config", "set", "encryption.encrypt", "true", env=env_b)
        key_file = tmp_path / "team.key"  # the team's key, as the README says: exported on A, imported on B
        _sk("key", "export", str(key_file), env=env_a)
        _sk("key", "import", "--make-current", str(key_file), env=env_b)

    first = drive([*SK, "claude"], env=env_a, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    for prompt, answer in zip(PROMPTS, ANSWERS):
        ask(first, prompt, answer)
    _write_side_folder(Path(agent_env["HOME"]), project_dir)
    claude_id = quit_claude(first)
    wait_for_background(home)  # the upkeep: exchanges, the transcript's copy, the root commit
    [meta_path] = session_folders(home)
    meta, _, _ = load_session(meta_path.parent)
    assert meta["agent_session_id"] == claude_id and meta["git_identity"]["root_commit"]  # type: ignore[index]

    pushed = json.loads(_sk("sync", "push", "--remote", url, "--json", env=env_a).stdout)
    assert pushed["sessions_pushed"] == 1
    pulled = json.loads(_sk("sync", "pull", "--remote", url, "--json", env=env_b).stdout)
    assert pulled["sessions_pulled"] == 1
    project_dir.rename(project_dir.with_name("machine-a-only"))  # B has no folder at A's path
    return Machines(env_a, env_b, project_dir, clone_b, laptop_home, Paths(data_b, data_b / "none.toml"), str(meta["id"]), claude_id)


SUBAGENT = "subagents/agent-a1b2c3d4.jsonl"
TOOL_RESULT = "tool-results/toolu_01SIDEFOLDER.txt"
TOOL_OUTPUT = "".join(f"line {i} of a large Bash output, SIDEWORD-{i}\n" for i in range(2000))


def _write_side_folder(claude_home: Path, cwd: Path) -> None:
    """Lay out the conversation's side folder ``<id>/`` as Claude Code keeps it while it runs: a
    subagent's transcript (its records carry the cwd) and a tool result too large to keep inline."""
    [transcript] = (claude_home / ".claude" / "projects").glob("*/*.jsonl")
    side = transcript.with_suffix("")
    (side / "subagents").mkdir(parents=True)
    record = {"type": "user", "isSidechain": True, "cwd": str(cwd), "message": {"role": "user", "content": "look around"}}
    (side / SUBAGENT).write_text(json.dumps(record) + "\n")
    (side / "tool-results").mkdir()
    (side / TOOL_RESULT).write_text(TOOL_OUTPUT)


def _resumed_runs(m: Machines) -> list[dict[str, object]]:
    return [load_session(f.parent)[0] for f in session_folders(m.data_b)]


def test_a_session_pushed_from_machine_a_resumes_natively_in_machine_bs_clone(
    tmp_path: Path,
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    claude_home: Path,
    laptop_home: Path,
    bucket_url: str,  # noqa: F811 - moto's S3 on loopback
) -> None:
    m = _record_and_sync(tmp_path, home, drive, agent_env, project_dir, laptop_home, bucket_url)
    a_transcript = transcript_path(claude_home, m.checkout_a, m.claude_id)
    a_bytes = a_transcript.read_bytes()
    b_transcript = transcript_path(laptop_home, m.clone_b, m.claude_id)

    elsewhere = tmp_path / "laptop" / "elsewhere"
    elsewhere.mkdir()
    refused = subprocess.run(
        [*SK, "resume", m.session_id], env=m.env_b, cwd=elsewhere, capture_output=True, stdin=subprocess.DEVNULL, timeout=120
    )
    said = refused.stderr.decode()
    assert refused.returncode == 2 and said.count("\n") == 1, said
    assert "github.com/acme/orchard" in said and "--cwd" in said and "Traceback" not in said
    assert not b_transcript.exists() and not session_folders(m.data_b)

    second = drive([*SK, "resume", "--yes", m.session_id], env=m.env_b, cwd=m.clone_b)
    second.wait_for_screen(READY, WAIT_S)
    ask(second, THIRD_PROMPT, THIRD_ANSWER)
    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == m.claude_id
    assert turns(request) == [*EARLIER, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == m.claude_id
    shown = bytes(second.raw).decode("utf-8", errors="replace")
    assert "this machine's checkout of" in shown and "native resume" in shown

    records = read_jsonl(b_transcript)
    cwds = {r["cwd"] for r in records if "cwd" in r}
    assert cwds == {str(m.clone_b)}, cwds  # A's path rewritten, and Claude's own new records agree
    side_b = b_transcript.with_suffix("")  # the side folder came along: subagents and large tool results
    assert (side_b / TOOL_RESULT).read_text() == TOOL_OUTPUT
    assert [r["cwd"] for r in read_jsonl(side_b / SUBAGENT)] == [str(m.clone_b)]
    assert a_transcript.read_bytes() == a_bytes  # A's own file is not touched

    [run] = _resumed_runs(m)
    assert run["parent"] == m.session_id and run["cwd"] == str(m.clone_b)
    assert run["command"] == ["claude", "--resume", m.claude_id] and run["agent_session_id"] == m.claude_id
    resumed_from = run["resumed_from"]
    assert isinstance(resumed_from, dict) and resumed_from["session"] == m.session_id
    assert resumed_from["url"] == bucket_url and resumed_from["machine"]


def test_cwd_encryption_and_an_existing_transcript_on_machine_b(
    tmp_path: Path,
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    laptop_home: Path,
    no_os_keyring: None,
) -> None:
    scratch = tmp_path / "laptop" / "scratch"  # not a git work tree: only --cwd leads there
    other = tmp_path / "laptop" / "other"
    share = tmp_path / "share"
    share.mkdir()
    m = _record_and_sync(
        tmp_path, home, drive, agent_env, project_dir, laptop_home, share.as_uri(), encrypted=True, trusted_b=(scratch, other)
    )
    stored = [p.read_bytes() for p in share.rglob("*") if p.is_file()]
    assert not any(b"plum" in data or b"SIDEWORD" in data for data in stored)  # sealed in the share, the side folder too

    # Another transcript of the same conversation id is already where Claude looks in 'other'.
    other.mkdir()
    taken = transcript_path(laptop_home, other, m.claude_id)
    taken.parent.mkdir(parents=True)
    mine = json.dumps({"type": "user", "cwd": str(other), "message": {"role": "user", "content": "mine"}}) + "\n"
    taken.write_text(mine)
    third = drive([*SK, "resume", "--yes", "--cwd", str(other), m.session_id], env=m.env_b, cwd=tmp_path)
    injected = anthropic_standin.wait_for_request(
        lambda r: r.is_conversation and INJECTED_CONTEXT_PREFIX in (r.last_user_text() or ""), timeout_s=WAIT_S
    )
    typed = str(injected.last_user_text())
    assert all(text in typed for text in (*PROMPTS, *ANSWERS))
    third.wait_for_screen(READY, WAIT_S)
    quit_claude(third)
    said = bytes(third.raw).decode("utf-8", errors="replace")
    assert "holds another version of this conversation" in said
    assert taken.read_text() == mine  # never overwritten

    scratch.mkdir()
    second = drive([*SK, "resume", "--yes", "--cwd", str(scratch), m.session_id], env=m.env_b, cwd=tmp_path)
    second.wait_for_screen(READY, WAIT_S)
    ask(second, THIRD_PROMPT, re.compile(r"STANDIN-ANSWER-\d+: quince"))  # type: ignore[arg-type] - numbered by the stand-in's count
    request = request_with_prompt(anthropic_standin, THIRD_PROMPT)
    assert request.session_id == m.claude_id and turns(request) == [*EARLIER, ("user", THIRD_PROMPT)]
    assert quit_claude(second) == m.claude_id
    placed = transcript_path(laptop_home, scratch, m.claude_id)
    assert {r["cwd"] for r in read_jsonl(placed) if "cwd" in r} == {str(scratch)}
    assert (placed.with_suffix("") / TOOL_RESULT).read_text() == TOOL_OUTPUT  # opened from the sealed copy

    runs = _resumed_runs(m)
    assert {r["cwd"] for r in runs} == {str(other), str(scratch)}
    assert all(r["parent"] == m.session_id for r in runs)
