"""Tests for shellkeep/app/transplant.py: a session of another machine resumed in this machine's checkout.

Real git work trees, a real data folder and shellkeep's real copy store; the agents are not
run (tests/agents/test_resume_remote_claude.py runs Claude Code itself).
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest

from shellkeep.app.context import Context, open_context
from shellkeep.app.resume import ResumeMode, plan_resume
from shellkeep.app.transplant import checkout_for, transplant_transcript
from shellkeep.errors import UserInputError
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from shellkeep.vault.copies import store_copy

CLAUDE_ID = "3f2a9c1e-0b7d-4e2f-9a61-5c8d7e6f1a2b"
THREAD_ID = "019ad2c4-7a1e-7c3b-9f0e-1d2c3b4a5f60"
A_ROOT, A_CWD = "/home/alice/src/orchard", "/home/alice/src/orchard/web"
REMOTE = "https://github.com/acme/orchard.git"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True
    )


def _repo(path: Path, remote: str = REMOTE) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "remote", "add", "origin", remote)
    _git(path, "commit", "-q", "--allow-empty", "-m", "first")
    return path


def _root_commit(path: Path) -> str:
    return subprocess.run(["git", "rev-list", "--max-parents=0", "HEAD"], cwd=path, capture_output=True, text=True).stdout.strip()


def _ctx(tmp_path: Path, cwd: Path) -> Context:
    data = tmp_path / "data"
    return open_context(paths=Paths(data, tmp_path / "config.toml"), cwd=cwd, env={"SHELLKEEP_HOME": str(data)})


def _pulled(ctx: Context, agent: str, transcript: str, session_id: str, identity: dict[str, object] | None) -> SessionMeta:
    folder = ctx.paths.remotes / "m1" / "projects" / "orchard-0000" / "20261203-101500-000aa"
    folder.mkdir(parents=True)
    return SessionMeta(
        id=folder.name, project="orchard-0000", project_root=A_ROOT, cwd=A_CWD, command=[agent], agent=agent,
        started_at="2026-12-03T10:15:00.000Z", status="finished", host="desk", cast=str(folder / "session.cast.zst"),
        agent_session_id=session_id, agent_transcript=transcript, git_identity=identity,
        extra={"remote": {"url": "s3://b/team", "machine": "m1", "host": "desk"}},
    )  # fmt: skip


CLAUDE_LINES = [
    json.dumps({"type": "user", "cwd": A_CWD, "sessionId": CLAUDE_ID, "message": {"role": "user", "content": "hi ünï"}},
               ensure_ascii=False, separators=(",", ":")),
    json.dumps({"type": "assistant", "cwd": f"{A_ROOT}/lib", "message": {"content": [{"type": "text", "text": A_CWD}]}},
               separators=(",", ":")),
    '{"type":"file-history-snapshot", "cwd":"/elsewhere"}',  # not the project's: kept byte for byte
    '{"type":"permission-mode","permissionMode":"default"}',
    "not json at all",
]  # fmt: skip


def _claude_target(home: Path, cwd: Path) -> Path:
    return home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(cwd)) / f"{CLAUDE_ID}.jsonl"


def test_claude_transcript_is_placed_with_this_machines_paths_and_never_over_another_file(tmp_path: Path) -> None:
    clone = _repo(tmp_path / "laptop" / "orchard")
    (clone / "web").mkdir()
    ctx = _ctx(tmp_path, clone)
    meta = _pulled(ctx, "claude", f"/home/alice/.claude/projects/x/{CLAUDE_ID}.jsonl", CLAUDE_ID, None)
    store_copy(ctx.vault, meta.folder, f"{CLAUDE_ID}.jsonl", [(line + "\n").encode() for line in CLAUDE_LINES])
    env = {"HOME": str(tmp_path / "laptop-home")}
    cwd = clone / "web"

    placed = transplant_transcript(ctx, meta, cwd, env)
    target = _claude_target(tmp_path / "laptop-home", cwd)
    assert placed.usable and placed.meta.agent_transcript == str(target) and placed.note and str(target) in placed.note
    lines = target.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["cwd"] == str(cwd) and "ünï" in lines[0]  # compact, non-ASCII kept as it is
    assert json.loads(lines[1])["cwd"] == str(clone / "lib")  # below the project root: same place below the clone's
    assert json.loads(lines[1])["message"]["content"][0]["text"] == A_CWD  # only the cwd fields
    assert lines[2:] == CLAUDE_LINES[2:]
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no staging file left

    again = transplant_transcript(ctx, meta, cwd, env)  # the same file is there: used, nothing said
    assert again.usable and again.note is None
    with open(target, "ab") as fh:
        fh.write(b'{"type":"user","cwd":"x","message":{"content":"continued here"}}\n')
    continued = transplant_transcript(ctx, meta, cwd, env)
    assert continued.usable and continued.note and "continued here" in continued.note

    target.write_bytes(b'{"type":"user","message":{"content":"another conversation"}}\n')
    other = transplant_transcript(ctx, meta, cwd, env)
    assert not other.usable and other.note and "left it as it is" in other.note
    assert other.meta.agent_transcript == meta.agent_transcript
    assert target.read_bytes() == b'{"type":"user","message":{"content":"another conversation"}}\n'


def test_codex_rollout_goes_to_its_date_folder_with_session_meta_cwd_rewritten(tmp_path: Path) -> None:
    clone = _repo(tmp_path / "laptop" / "orchard")
    ctx = _ctx(tmp_path, clone)
    name = f"rollout-2026-12-03T10-15-02-{THREAD_ID}.jsonl"
    meta = _pulled(ctx, "codex", f"/home/alice/.codex/sessions/2026/12/03/{name}", THREAD_ID, None)
    records = [
        {"type": "session_meta", "payload": {"id": THREAD_ID, "cwd": A_CWD, "git": {"repository_url": REMOTE}}},
        {"type": "turn_context", "payload": {"cwd": A_CWD, "model": "m"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"text": "hi"}]}},
    ]
    store_copy(ctx.vault, meta.folder, name, [(json.dumps(r) + "\n").encode() for r in records])
    codex_home = tmp_path / "laptop-home" / ".codex"

    placed = transplant_transcript(ctx, meta, clone, {"HOME": str(tmp_path / "laptop-home")})
    target = codex_home / "sessions" / "2026" / "12" / "03" / name
    assert placed.usable and placed.meta.agent_transcript == str(target)
    written = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["payload"].get("cwd") for r in written] == [str(clone), str(clone), None]  # run in the clone
    assert written[2] == records[2]


def test_without_a_copy_or_a_known_layout_it_says_to_re_inject(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, tmp_path)
    env = {"HOME": str(tmp_path / "laptop-home")}
    missing = _pulled(ctx, "claude", f"/home/alice/.claude/projects/x/{CLAUDE_ID}.jsonl", CLAUDE_ID, None)
    result = transplant_transcript(ctx, missing, tmp_path, env)
    assert not result.usable and result.note and "holds no copy" in result.note
    assert not (tmp_path / "laptop-home").exists()  # nothing made for nothing
    gemini = SessionMeta(**{**_fields(missing), "agent": "gemini", "command": ["gemini"]})
    result = transplant_transcript(ctx, gemini, tmp_path, env)
    assert not result.usable and result.note and "cannot be moved" in result.note


def _fields(meta: SessionMeta) -> dict[str, object]:
    return {f.name: getattr(meta, f.name) for f in dataclasses.fields(meta)}


def test_the_checkout_is_the_current_project_of_the_same_repository_else_a_clear_line(tmp_path: Path) -> None:
    clone = _repo(tmp_path / "laptop" / "orchard")
    (clone / "web").mkdir()
    identity = {"remote": "github.com/acme/orchard", "root_commit": _root_commit(clone)}
    ctx = _ctx(tmp_path, clone)
    meta = _pulled(ctx, "claude", "/x.jsonl", CLAUDE_ID, identity)
    target, note = checkout_for(ctx, meta, None)
    assert target == clone / "web" and "this machine's checkout of" in note and "desk" in note

    fork = _repo(tmp_path / "laptop" / "fork", "https://github.com/someone/orchard.git")
    with pytest.raises(UserInputError) as refused:
        checkout_for(_ctx(tmp_path, fork), meta, None)  # another repository: not its checkout
    line = str(refused.value)
    assert "\n" not in line and "github.com/acme/orchard" in line and identity["root_commit"][:12] in line  # type: ignore[index]
    assert "--cwd" in line

    chosen, note = checkout_for(_ctx(tmp_path, fork), meta, fork)  # --cwd: the user's choice
    assert chosen == fork and A_CWD in note
    with pytest.raises(UserInputError, match="is not a directory"):
        checkout_for(ctx, meta, tmp_path / "nowhere")
    outside = _pulled(_ctx(tmp_path / "b", clone), "claude", "/x.jsonl", CLAUDE_ID, None)
    with pytest.raises(UserInputError, match="outside a git repository.*--cwd"):
        checkout_for(ctx, outside, None)


def test_plan_resume_of_a_pulled_claude_session_is_native_in_the_clone_and_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    clone = _repo(tmp_path / "laptop" / "orchard")
    (clone / "web").mkdir()
    ctx = _ctx(tmp_path, clone)
    identity = {"remote": "github.com/acme/orchard", "root_commit": _root_commit(clone)}
    meta = _pulled(ctx, "claude", f"/home/alice/.claude/projects/x/{CLAUDE_ID}.jsonl", CLAUDE_ID, identity)
    store_copy(ctx.vault, meta.folder, f"{CLAUDE_ID}.jsonl", [(line + "\n").encode() for line in CLAUDE_LINES])
    env = {"HOME": str(tmp_path / "laptop-home")}
    target = _claude_target(tmp_path / "laptop-home", clone / "web")

    dry = plan_resume(ctx, meta, env=env, dry_run=True)
    assert dry.mode is ResumeMode.NATIVE and dry.cwd == clone / "web" and not (tmp_path / "laptop-home").exists()

    plan = plan_resume(ctx, meta, env=env)
    assert plan.mode is ResumeMode.NATIVE and plan.argv == ("claude", "--resume", CLAUDE_ID) and plan.cwd == clone / "web"
    assert plan.session.agent_transcript == str(target) and target.is_file()
    assert plan.note and "this machine's checkout of" in plan.note and str(target) in plan.note

    target.write_bytes(b'{"type":"user","message":{"content":"another conversation"}}\n')
    fallback = plan_resume(ctx, meta, env=env)
    assert fallback.mode is not ResumeMode.NATIVE and fallback.argv == ("claude",)
    assert fallback.note and "re-injecting instead" in fallback.note
