"""Transcript copies: stored once per content, followed by every reader; damaged ones reported.

Tests app/conversation.py's collect with vault/copies.py and store/chunks.py under it: a
resume chain over one transcript stores its chunks once, gc keeps what another session names,
key rotation and redaction store copies again and sweep what nobody names; a damaged
transcript (a NUL block written over its middle) keeps every intact exchange in the stored
exchanges, the copy and the re-injected block, and ``show`` says where it was damaged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.app.conversation import collect
from shellkeep.app.resume import plan_resume
from shellkeep.store.chunks import chunk_path, read_ref, ref_path, sweep
from shellkeep.store.paths import Paths
from shellkeep.store.retention import RetentionPolicy, collect_garbage
from shellkeep.store.session import SessionMeta, read_meta
from shellkeep.vault.access import Vault
from shellkeep.vault.copies import CHUNK_TARGET_BYTES
from shellkeep.vault.exchanges import read_exchanges
from shellkeep.vault.rotation import rotate_key
from shellkeep.vault.scrubber import redact_session
from shellkeep.capture.redaction import build_redactor
from shellkeep.config import RedactConfig
from tests.helpers import run_sk, stored_copy
from tests.transcripts import claude_lines
from tests.unit.test_resume import CLAUDE_ID, T0, _ctx, make_session, project  # noqa: F401 - a fixture

GITHUB = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    return tmp_path / "agent-home"


def _transcript(agent_home: Path, project: Path) -> Path:
    folder = agent_home / ".claude" / "projects" / re.sub(r"[^a-zA-Z0-9]", "-", str(project))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{CLAUDE_ID}.jsonl"


def _write(path: Path, exchanges: int, *, first: int = 0, filler_bytes: int = 20_000, secret: str = "") -> None:
    lines = claude_lines(exchanges, session_id=CLAUDE_ID, cwd=str(path.parent), start=T0 + timedelta(minutes=20 + first),
                         filler_bytes=filler_bytes, first=first)  # fmt: skip
    with path.open("ab") as fh:
        for line in lines:
            fh.write(line.replace(b"looking", f"looking {secret}".encode()) if secret else line)


def _session(home: Paths, project: Path, minute: int, **kw: object) -> SessionMeta:
    return make_session(
        home, project, minute, command=("claude", "--resume", CLAUDE_ID), agent="claude", agent_session_id=CLAUDE_ID, **kw  # type: ignore[arg-type]
    )


def _stored_files(home: Paths) -> set[str]:
    return {p.name for p in home.copies.rglob("*") if p.is_file() and not p.name.startswith(".")}


def test_a_chain_of_two_sessions_over_one_transcript_stores_its_chunks_once(
    home: Paths, project: Path, agent_home: Path
) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 250)  # about 11 MB: three chunks
    env = {"HOME": str(agent_home)}
    first = collect(_session(home, project, 1), Vault(home), None, env)
    second = collect(_session(home, project, 2, parent=first.id), Vault(home), None, env)
    refs = [read_ref(ref_path(m.folder, transcript.name)) for m in (first, second)]
    assert refs[0].chunks == refs[1].chunks and len(refs[0].chunks) >= 2
    assert _stored_files(home) == refs[0].addresses  # one blob set for both
    assert sum(p.stat().st_size for p in home.copies.rglob("*") if p.is_file()) <= transcript.stat().st_size
    assert stored_copy(second.folder, transcript.name, home) == transcript.read_bytes()
    assert not (first.folder / "agent" / transcript.name).exists()  # a reference, no second copy

    _write(transcript, 3, first=250)  # the conversation resumed natively: appended to
    third = collect(_session(home, project, 3, parent=second.id), Vault(home), None, env)
    ref3 = read_ref(ref_path(third.folder, transcript.name))
    shared = ref3.addresses & refs[0].addresses
    assert len(shared) == len(refs[0].chunks) - 1  # all but the shorter copy's last chunk
    assert ref3.size == transcript.stat().st_size and stored_copy(third.folder, transcript.name, home) == transcript.read_bytes()
    assert _stored_files(home) == ref3.addresses | refs[0].addresses


def test_gc_of_one_session_keeps_the_chunks_the_other_names(home: Paths, project: Path, agent_home: Path) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 150)
    env = {"HOME": str(agent_home)}
    older = collect(_session(home, project, 1), Vault(home), None, env)
    newer = collect(_session(home, project, 2), Vault(home), None, env)
    before = _stored_files(home)
    result = collect_garbage(home, RetentionPolicy(max_sessions=1))
    assert [e.session_id for e in result.removed] == [older.id]
    assert _stored_files(home) == before  # the newer session names every chunk
    assert stored_copy(newer.folder, transcript.name, home) == transcript.read_bytes()
    (newer.folder / "agent" / f"{transcript.name}.ref").unlink()  # the last reference goes
    assert sweep(home).removed == len(before) and _stored_files(home) == set()


def test_sealed_copies_have_keyed_addresses_and_survive_key_rotation(
    home: Paths, project: Path, agent_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    transcript = _transcript(agent_home, project)
    _write(transcript, 150)
    env = {"HOME": str(agent_home)}
    vault = Vault(home, encrypt=True)
    sessions = [collect(_session(home, project, minute), vault, None, env) for minute in (1, 2)]
    ref = read_ref(ref_path(sessions[0].folder, transcript.name))
    assert ref.sealed and ref == read_ref(ref_path(sessions[1].folder, transcript.name))
    plain = transcript.read_bytes()
    first_chunk = plain[: ref.chunks[0][1]]
    assert ref.chunks[0][0] != hashlib.sha256(first_chunk).hexdigest()  # the name tells nothing of the content
    assert first_chunk[:200] not in chunk_path(home, ref.chunks[0][0]).read_bytes()  # sealed
    old_files = _stored_files(home)

    result = rotate_key(home)
    assert result.complete and result.files >= 2
    rotated = [read_ref(ref_path(m.folder, transcript.name)) for m in sessions]
    assert rotated[0] == rotated[1] and rotated[0].addresses.isdisjoint(ref.addresses)
    assert _stored_files(home) == rotated[0].addresses and not (old_files & _stored_files(home))  # old ones swept
    for meta in sessions:
        assert stored_copy(meta.folder, transcript.name, home) == plain


def test_redact_stores_the_copy_again_and_sweeps_the_secret(home: Paths, project: Path, agent_home: Path) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 120, secret=GITHUB)
    env = {"HOME": str(agent_home)}
    sessions = [collect(dataclasses.replace(_session(home, project, m), redacted=False), Vault(home), None, env) for m in (1, 2)]
    assert GITHUB.encode() in stored_copy(sessions[0].folder, transcript.name, home)  # type: ignore[operator]
    redactor = build_redactor(RedactConfig())
    result = redact_session(Vault(home), sessions[0], redactor)
    assert f"agent/{transcript.name}" in result.files and result.secrets >= 120
    copy = stored_copy(sessions[0].folder, transcript.name, home) or b""
    assert GITHUB.encode() not in copy and b"[REDACTED:github-token]" in copy
    assert [json.loads(line)["type"] for line in copy.splitlines()[:2]] == ["permission-mode", "user"]
    assert GITHUB.encode() in stored_copy(sessions[1].folder, transcript.name, home)  # type: ignore[operator]  # not redacted yet
    redact_session(Vault(home), sessions[1], redactor)
    on_disk = b"".join(p.read_bytes() for p in home.copies.rglob("*") if p.is_file())
    assert GITHUB.encode() not in on_disk  # no chunk holding it is left


def test_a_damaged_transcript_keeps_every_intact_exchange_and_show_says_where(
    home: Paths, project: Path, agent_home: Path
) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 6, filler_bytes=300)
    lines = transcript.read_bytes().splitlines(keepends=True)
    hole_start = sum(map(len, lines[:10])) + 40  # exchange 2's tool call and result (lines 10, 11 from 0)
    hole_end = sum(map(len, lines[:11])) + 40
    fd = os.open(transcript, os.O_WRONLY)
    try:
        os.pwrite(fd, b"\x00" * (hole_end - hole_start), hole_start)
    finally:
        os.close(fd)
    meta = collect(_session(home, project, 1, status="killed"), Vault(home), None, {"HOME": str(agent_home)})
    prompts = [e.prompt for e in read_exchanges(meta, None)]
    assert prompts == [f"prompt {i}" for i in range(6)]
    damage = read_meta(meta.folder).agent_transcript_damage
    assert damage is not None and damage["records"] == len(lines) - 2
    summary = str(damage["summary"])
    assert summary.startswith("1 record unreadable at line 11 (bytes ")
    assert f"{hole_end - hole_start} NUL bytes at line 11 (bytes {hole_start}-{hole_end - 1})" in summary
    assert "1 record links to a missing parent at line 12" in summary
    copy = stored_copy(meta.folder, transcript.name, home)
    assert copy == transcript.read_bytes()  # the copy is the file as it was: its whole records all there

    shown = run_sk("show", meta.id)
    assert f"agent transcript damaged: {summary} in {transcript}" in shown.stdout.decode()
    as_json = json.loads(run_sk("show", meta.id, "--json").stdout)
    assert as_json["agent_transcript_damage"]["summary"] == summary

    transcript.unlink()  # the agent lost it: re-injection from what shellkeep kept
    plan = plan_resume(_ctx(home, meta), meta, exchanges=6, env={"HOME": str(agent_home)}, force_inject=True)
    for i in range(6):
        assert f"User: prompt {i}" in (plan.inject_text or "")
    assert "Assistant: looking 3" in (plan.inject_text or "")


def test_a_big_transcript_is_collected_in_the_background_not_at_the_end_of_the_run(
    home: Paths, project: Path, agent_home: Path
) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 400)  # about 17 MB: above what is copied in the user's terminal
    meta = _session(home, project, 1)
    deferred = collect(meta, Vault(home), None, {"HOME": str(agent_home)}, from_recording=False, defer_above=CHUNK_TARGET_BYTES)
    assert not (meta.folder / "exchanges.jsonl").exists() and not (meta.folder / "agent").exists()
    assert (deferred.agent_transcript, deferred.agent_transcript_bytes) == (str(transcript), transcript.stat().st_size)
    _write(transcript, 2, first=400)  # the agent went on (a resumed run): not this session's part
    done = collect(read_meta(meta.folder), Vault(home), None, {"HOME": str(agent_home)})
    assert done.exchange_count == 400
    assert read_ref(ref_path(meta.folder, transcript.name)).size == deferred.agent_transcript_bytes


def test_export_follows_the_reference_to_the_stored_copy(home: Paths, project: Path, agent_home: Path) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 120)
    meta = collect(_session(home, project, 1), Vault(home), None, {"HOME": str(agent_home)})
    out = project / "agent.jsonl"
    result = run_sk("export", meta.id, "--format", "agent", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == transcript.read_bytes()
    bare = make_session(home, project, 2)
    refused = run_sk("export", bare.id, "--format", "agent")
    assert refused.returncode == 2 and b"holds no copy of an agent transcript" in refused.stderr


def test_claude_codes_side_folder_is_copied_kept_by_sweep_and_redacted(home: Paths, project: Path, agent_home: Path) -> None:
    transcript = _transcript(agent_home, project)
    _write(transcript, 2, filler_bytes=300)
    side = transcript.with_suffix("")
    (side / "tool-results").mkdir(parents=True)
    (side / "tool-results" / "toolu_01.txt").write_text(f"a large output\nwith {GITHUB} in it\n")
    (side / "subagents").mkdir()
    (side / "subagents" / "agent-1.jsonl").write_text(json.dumps({"type": "user", "cwd": str(project)}) + "\n")
    meta = collect(dataclasses.replace(_session(home, project, 1), redacted=False), Vault(home), None, {"HOME": str(agent_home)})
    names = [f"{CLAUDE_ID}/subagents/agent-1.jsonl", f"{CLAUDE_ID}/tool-results/toolu_01.txt"]
    assert [stored_copy(meta.folder, name, home) for name in names] == [(side / n.split("/", 1)[1]).read_bytes() for n in names]
    assert sweep(home).removed == 0  # the side folder's references are followed into their subfolders
    assert stored_copy(meta.folder, names[1], home) == (side / "tool-results" / "toolu_01.txt").read_bytes()
    result = redact_session(Vault(home), meta, build_redactor(RedactConfig()))
    assert f"agent/{names[1]}" in result.files
    assert b"[REDACTED:github-token]" in (stored_copy(meta.folder, names[1], home) or b"")
    sweep(home)
    assert GITHUB.encode() not in b"".join(p.read_bytes() for p in home.copies.rglob("*") if p.is_file())
