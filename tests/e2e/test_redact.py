"""``shellkeep redact SESSION``: the current rules applied again to a stored session, every
file rewritten atomically in the form it had (compressed, encrypted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.recordings import open_binary, open_cast
from shellkeep.vault.recording import is_compressed, tail_source
from shellkeep.vault.seekable import SeekableFrames
from tests.recordings import vault
from shellkeep.store.paths import Paths
from tests.e2e.test_secrets import wait_for_housekeeping
from tests.helpers import invoke_sk, only_session, run_sk
from tests.factory import make_session

pytestmark = pytest.mark.timeout(120)

GITHUB = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
STRIPE = "sk_live_51FAKEexampleKEY0000000000"
CORP = "corp_" + "A1b2C3d4" * 4  # matched only by a user rule added later


def plain_text(path: Path) -> str:
    """Return a stored file's text: decrypted and decompressed as needed."""
    data = vault().read_private(path)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        with open_binary(path) as fh:
            data = fh.read()
    return data.decode("utf-8", "replace")


def all_text(root: Path) -> str:
    return "\n".join(plain_text(p) for p in root.rglob("*") if p.is_file() and "keys" not in p.parts)


def test_redact_a_no_redact_session(home: Paths) -> None:
    child = f"print('token {GITHUB} and key {STRIPE}')"
    recorded = run_sk("run", "--no-redact", "--", sys.executable, "-c", child, STRIPE)
    assert recorded.returncode == 0
    wait_for_housekeeping(home)
    meta, _, _ = only_session(home)
    folder = Path(str(meta["cast"])).parent
    assert meta["redacted"] is False and STRIPE in list(meta["command"])  # type: ignore[call-overload]
    (folder / "exchanges.jsonl").write_text(json.dumps({"index": 0, "time": None, "prompt": f"use {GITHUB}", "answer": "ok"}) + "\n")
    (folder / "agent").mkdir()
    (folder / "agent" / "transcript.jsonl").write_text(
        json.dumps({"type": "user", "message": {"content": f"my key is {STRIPE}"}}, separators=(",", ":")) + "\n"
        + "not json: " + GITHUB + "\n"
    )
    cast = folder / "session.cast.zst"
    assert str(cast) == meta["cast"] and is_compressed(cast, vault())
    assert GITHUB in all_text(folder)
    assert invoke_sk("search", "token").returncode == 0  # the index now holds the transcript

    result = invoke_sk("redact", "--last", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report["files"]) == {"session.cast.zst", "exchanges.jsonl", "agent/transcript.jsonl"}
    assert report["meta_changed"] is True and report["secrets"] >= 6 and report["reindexed"] is True

    text = all_text(home.home)  # every file: casts, exchanges, copies, meta, the index
    assert GITHUB not in text and STRIPE not in text
    assert "[REDACTED:github-token]" in plain_text(cast)
    assert "[REDACTED:stripe-key]" in plain_text(folder / "agent" / "transcript.jsonl")
    copy_line = (folder / "agent" / "transcript.jsonl").read_text().splitlines()[0]
    assert '":"' in copy_line and '": "' not in copy_line  # the copy's compact JSON is kept compact
    assert is_compressed(cast, vault())  # rewritten in the form it had
    assert isinstance(tail_source(cast), SeekableFrames)  # with its seek table
    assert not (folder / "session.cast").exists()
    new_meta = json.loads((folder / "meta.json").read_text())
    assert new_meta["redacted"] is True and "[REDACTED:stripe-key]" in new_meta["command"]
    header = open_cast(cast).header
    assert header.command is not None and STRIPE not in header.command
    assert not list(folder.rglob("*.tmp"))

    again = invoke_sk("redact", "--last")
    assert again.returncode == 0 and "nothing changed" in again.stdout.decode()


def test_a_rule_added_later_and_a_secret_split_across_two_events(home: Paths, tmp_path: Path) -> None:
    meta = make_session(
        home,
        tmp_path / "project",
        1,
        events=[(0.1, "o", f"first {GITHUB[:10]}"), (0.2, "o", f"{GITHUB[10:]} then\r\n"), (0.3, "i", CORP), (0.4, "m", f"note {CORP}")],
    )
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text(f'[redact]\npatterns = [{{ name = "corp", pattern = "corp_[A-Za-z0-9]{{32}}" }}]\n')
    result = invoke_sk("redact", meta.id, "--json")
    assert result.returncode == 0, result.stderr
    events = list(open_cast(Path(meta.cast)).events())
    out = "".join(e.data for e in events if e.code == "o")
    pad = " " * (len(GITHUB) - len("[REDACTED:github-token]"))  # output markers keep the token's columns
    assert out == f"first [REDACTED:github-token]{pad} then\r\n"
    assert [e.data for e in events if e.code == "i"] == ["[REDACTED:corp]"]
    assert [e.data for e in events if e.code == "m"] == ["note [REDACTED:corp]"]
    assert json.loads(result.stdout)["secrets"] == 3


def test_an_encrypted_session_stays_encrypted(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("cryptography")
    from shellkeep.vault.crypto import is_encrypted, key_id_of_file

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    assert run_sk("run", "--no-redact", "--", sys.executable, "-c", f"print('{GITHUB}')").returncode == 0
    wait_for_housekeeping(home)
    meta, _, _ = only_session(home)
    cast = Path(str(meta["cast"]))
    assert cast.name == "session.cast.zst"  # sealed and compressed inside: named .zst
    key_id = key_id_of_file(cast)
    assert GITHUB in plain_text(cast)
    assert invoke_sk("redact", "--last").returncode == 0
    assert is_encrypted(cast) and key_id_of_file(cast) == key_id and is_compressed(cast, vault())
    assert GITHUB not in plain_text(cast) and "[REDACTED:github-token]" in plain_text(cast)


def test_a_running_session_is_refused(home: Paths, tmp_path: Path) -> None:
    meta = make_session(home, tmp_path / "project", 1, status="running", host="another-host", events=[(0.1, "o", GITHUB)])
    before = Path(meta.cast).read_bytes()
    result = invoke_sk("redact", meta.id)
    assert result.returncode == 1
    assert "still recording" in result.stderr.decode() and result.stderr.decode().count("\n") == 1
    assert Path(meta.cast).read_bytes() == before


def test_redact_after_a_cut_compression_cleans_both_files_and_gc_leaves_one(home: Paths, tmp_path: Path) -> None:
    """A crash after meta.json named session.cast.zst, before session.cast was removed: both
    hold the secret; redact rewrites both, and gc then removes the leftover."""
    from shellkeep.vault.compress import compress_recording

    meta = make_session(home, tmp_path / "project", 1, name="cut", events=[(0.5, "o", f"token {GITHUB}\r\n")])
    plain = Path(meta.cast).read_bytes()
    assert compress_recording(meta, vault()).compressed
    (meta.folder / "session.cast").write_bytes(plain)  # the leftover of the cut run
    result = invoke_sk("redact", "cut", "--json")
    assert result.returncode == 0, result.stderr
    assert {"session.cast", "session.cast.zst"} <= set(json.loads(result.stdout)["files"])
    assert GITHUB not in all_text(meta.folder)
    assert invoke_sk("gc").returncode == 0
    assert sorted(p.name for p in meta.folder.iterdir() if p.name.startswith("session.cast")) == ["session.cast.zst"]
    assert "[REDACTED:github-token]" in plain_text(meta.folder / "session.cast.zst")
