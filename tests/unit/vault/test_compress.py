"""Compression of finished recordings: zstd into ``session.cast.zst``, read transparently by every
reader; every state a crash can leave between its steps reads, and settles to one file."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import stat
from pathlib import Path

import pytest

from tests.recordings import open_binary, open_cast
from shellkeep.vault.compress import compress_after_session, compress_recording
from shellkeep.vault.recording import ZSTD_MAGIC, is_compressed
from tests.recordings import vault
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta, read_meta

from tests.unit.store.factory import make_session

EVENTS = [(0.1 * i, "o", f"\x1b[2K\x1b[1G⠋ Thinking… ({i}s · esc to interrupt)\r\n") for i in range(400)] + [
    (41.0, "r", "100x30"),
    (41.5, "m", "done"),
    (42.0, "o", "\x1b[1mAll tests pass.\x1b[0m\r\n$ "),
]


pytestmark = pytest.mark.usefixtures("no_os_keyring")  # tests/conftest.py


def session(home: Paths, tmp_path: Path) -> SessionMeta:
    return make_session(home, tmp_path / "project", 1, events=EVENTS)


def test_compress_to_session_cast_zst_and_read_back_the_same_events(home: Paths, tmp_path: Path) -> None:
    meta = session(home, tmp_path)
    plain = Path(meta.cast).read_bytes()
    before = list(open_cast(Path(meta.cast)).events())
    result = compress_recording(meta, vault())
    path = Path(result.path)
    assert result.compressed and result.before_bytes == len(plain)
    assert path.read_bytes()[:4] == ZSTD_MAGIC and path.name == "session.cast.zst"
    assert sorted(p.name for p in path.parent.iterdir()) == ["meta.json", "session.cast.zst"]
    assert read_meta(path.parent).cast == str(path) == result.meta.cast  # type: ignore[union-attr]
    assert json.loads((path.parent / "meta.json").read_text())["cast"] == str(path)
    assert result.after_bytes == path.stat().st_size and result.after_bytes * 5 < len(plain)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(open_cast(path).events()) == before
    with open_binary(path) as fh:
        assert fh.read() == plain
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_second_run_and_a_running_session_are_skipped(home: Paths, tmp_path: Path) -> None:
    meta = session(home, tmp_path)
    assert compress_recording(meta, vault()).compressed
    again = compress_recording(meta, vault())  # with the metadata read before: it finds the .zst
    assert not again.compressed and again.reason == "already compressed"
    running = make_session(home, tmp_path / "project", 2, events=EVENTS, status="running")
    assert compress_recording(running, vault()).reason == "the session is still running"
    assert Path(running.cast).read_bytes()[:1] == b"{"


def test_every_reader_reads_a_compressed_recording(home: Paths, tmp_path: Path) -> None:
    from shellkeep.archive.export.formats import write_cast, write_txt
    from tests.recordings import last_screen

    meta = session(home, tmp_path)
    path = Path(meta.cast)
    plain = path.read_bytes()
    screen_before = last_screen(path).to_text()
    txt_before = io.BytesIO()
    write_txt(meta, txt_before, vault())
    meta = compress_recording(meta, vault()).meta  # type: ignore[assignment]
    path = Path(meta.cast)
    assert path.name == "session.cast.zst"
    assert last_screen(path).to_text() == screen_before
    txt_after = io.BytesIO()
    write_txt(meta, txt_after, vault())
    assert txt_after.getvalue() == txt_before.getvalue()
    exported = io.BytesIO()
    write_cast(meta, exported, vault())  # export --format cast: plain asciicast again
    assert exported.getvalue() == plain


def test_an_encrypted_recording_is_compressed_inside_its_encryption(home: Paths, tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from shellkeep.vault.crypto import is_encrypted, split_records, write_records_atomic
    from shellkeep.vault.keys import current_key

    meta = session(home, tmp_path)
    path = Path(meta.cast)
    plain = path.read_bytes()
    write_records_atomic(path, split_records(plain), current_key(home, create=True))
    sealed_size = path.stat().st_size
    result = compress_recording(meta, vault())
    path = Path(result.path)
    assert path.name == "session.cast.zst" and not (path.parent / "session.cast").exists()
    assert result.compressed and is_encrypted(path) and is_compressed(path, vault())
    assert path.stat().st_size * 5 < sealed_size
    with open_binary(path) as fh:
        assert fh.read() == plain


def test_a_failure_leaves_the_recording_as_it_was(home: Paths, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders; the tmpfs test in tests/e2e/test_disk.py covers a full disk")
    meta = session(home, tmp_path)
    path = Path(meta.cast)
    plain = path.read_bytes()
    path.parent.chmod(0o500)
    try:
        compress_after_session(meta, vault())  # never raises
    finally:
        path.parent.chmod(0o700)
    assert path.read_bytes() == plain
    assert "stays uncompressed" in caplog.text


def test_a_missing_recording_is_skipped(home: Paths, tmp_path: Path) -> None:
    meta = session(home, tmp_path)
    Path(meta.cast).unlink()
    assert compress_recording(dataclasses.replace(meta), vault()).reason == "no recording"


def test_a_rewrite_never_replaces_a_file_changed_meanwhile(tmp_path: Path) -> None:
    from shellkeep.store.atomic import FileChanged, file_identity, write_bytes_atomic

    path = tmp_path / "session.cast"
    path.write_bytes(b"old\n")
    seen = file_identity(path)
    write_bytes_atomic(path, b"newer, by redact\n")  # another process rewrites it meanwhile
    with pytest.raises(FileChanged):
        write_bytes_atomic(path, b"stale, compressed from old\n", expect=seen)
    assert path.read_bytes() == b"newer, by redact\n"
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left
    write_bytes_atomic(path, b"fine\n", expect=file_identity(path))
    assert path.read_bytes() == b"fine\n"
