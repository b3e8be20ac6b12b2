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

from tests.factory import make_session

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
    meta = session(home, tmp_path)
    path = Path(meta.cast)
    plain = path.read_bytes()
    # A folder where the compressed file would go: its rename fails, for root too (a read-only
    # folder would not stop root; tests/e2e/test_disk.py covers a full disk).
    blocker = path.with_name("session.cast.zst")
    blocker.mkdir()
    (blocker / "in-the-way").touch()
    compress_after_session(meta, vault())  # never raises
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


# -- every state a crash can leave, and folders of earlier versions -------------------------


def _earlier_version_folder(home: Paths, tmp_path: Path, *, sealed: bool) -> SessionMeta:
    """A folder as shellkeep before session.cast.zst left it: ``session.cast`` holding the
    zstd seekable stream (sealed around it when ``sealed``), meta.json naming session.cast."""
    import zstandard

    from shellkeep.store.atomic import write_bytes_atomic
    from shellkeep.vault.crypto import write_records_atomic
    from shellkeep.vault.keys import current_key
    from shellkeep.vault.seekable import compressed_frames

    meta = session(home, tmp_path)
    path = Path(meta.cast)
    frames = list(compressed_frames(zstandard.ZstdCompressor(level=9, write_checksum=True), io.BytesIO(path.read_bytes())))
    if sealed:
        write_records_atomic(path, frames, current_key(home, create=True))
    else:
        write_bytes_atomic(path, frames)
    assert json.loads((path.parent / "meta.json").read_text())["cast"].endswith("/session.cast")
    return meta


def _crash_state(home: Paths, tmp_path: Path, state: str) -> tuple[SessionMeta, bytes]:
    """Build the folder a compression cut at ``state`` leaves, from a real run's files.

    written: session.cast.zst complete, meta.json still naming session.cast (cut before
    the metadata step); adopted: meta.json naming the .zst, session.cast not yet removed;
    stale: only the .zst, but the metadata read (an index row, a meta.json written from
    metadata read earlier) names session.cast.
    """
    from shellkeep.store.session import write_meta

    meta = session(home, tmp_path)
    plain = Path(meta.cast).read_bytes()
    done = compress_recording(meta, vault()).meta
    assert done is not None and Path(done.cast).name == "session.cast.zst"
    if state in ("written", "adopted"):
        (meta.folder / "session.cast").write_bytes(plain)  # what was there before the removal
    if state in ("written", "stale"):
        write_meta(meta)  # names session.cast, as before the metadata step
    return meta, plain


STATES = ["written", "adopted", "stale", "earlier-plain", "earlier-sealed"]


def _state(home: Paths, tmp_path: Path, state: str) -> tuple[SessionMeta, bytes]:
    if state.startswith("earlier"):
        if state == "earlier-sealed":
            pytest.importorskip("cryptography")
        meta = _earlier_version_folder(home, tmp_path, sealed=state == "earlier-sealed")
        with open_binary(Path(meta.cast)) as fh:
            return meta, fh.read()
    return _crash_state(home, tmp_path, state)


@pytest.mark.parametrize("state", STATES)
def test_every_reader_reads_every_state_a_crash_or_an_earlier_version_leaves(home: Paths, tmp_path: Path, state: str) -> None:
    from shellkeep.archive.export.formats import write_cast, write_txt
    from shellkeep.archive.index import index_session
    from shellkeep.archive.search import SearchRequest, search
    from shellkeep.store.session import list_sessions, recording_path
    from shellkeep.vault.crypto import private_files
    from tests.recordings import last_screen

    meta, plain = _state(home, tmp_path, state)
    fresh = read_meta(meta.folder)
    assert Path(fresh.cast).exists() and Path(fresh.cast) == recording_path(meta.folder, Path(fresh.cast).name)
    assert [m.cast for m in list_sessions(home, None) if m.id == meta.id] == [fresh.cast]
    for stale in (meta, fresh):  # metadata read before the crash, and after
        exported = io.BytesIO()
        write_cast(read_meta(stale.folder), exported, vault())
        assert exported.getvalue() == plain
    text = io.BytesIO()
    write_txt(fresh, text, vault())
    assert b"All tests pass." in text.getvalue()
    assert "All tests pass." in last_screen(fresh.cast).to_text()
    assert [e.code for e in open_cast(fresh.cast).events()][-3:] == ["r", "m", "o"]
    on_disk = {p for p in meta.folder.iterdir() if p.name.startswith("session.cast")}
    assert Path(fresh.cast) in on_disk and set(private_files(meta.folder)) >= on_disk  # redact and key rotate see both
    index_session(home, meta, vault=vault())  # with the metadata read before the crash
    assert meta.id in {hit.session_id for hit in search(home, SearchRequest('"tests pass"'), vault=vault())}


@pytest.mark.parametrize("how", ["compress", "settle"])
@pytest.mark.parametrize("state", STATES)
def test_compress_or_gc_again_leaves_one_recording_named_for_what_it_holds(home: Paths, tmp_path: Path, state: str, how: str) -> None:
    from shellkeep.vault.compress import settle_session

    meta, plain = _state(home, tmp_path, state)
    if how == "compress":
        result = compress_recording(meta, vault())  # with the metadata read before the crash
        assert result.compressed == (state == "written")  # a cut before meta.json named the .zst: redone
    else:
        settle_session(meta, vault())
    names = sorted(p.name for p in meta.folder.iterdir())
    stored = read_meta(meta.folder)
    if how == "settle" and state == "written":  # the .zst meta.json never named is dropped
        assert names == ["meta.json", "session.cast"]
    else:
        assert names == ["meta.json", "session.cast.zst"]
        assert is_compressed(Path(stored.cast), vault())
    assert json.loads((meta.folder / "meta.json").read_text())["cast"] == stored.cast  # names the file there is
    with open_binary(Path(stored.cast)) as fh:
        assert fh.read() == plain  # nothing lost
    assert compress_recording(stored, vault()).reason in ("", "already compressed")
    assert sorted(p.name for p in meta.folder.iterdir()) == ["meta.json", "session.cast.zst"]


def test_an_earlier_version_folder_is_renamed_and_meta_json_names_it(home: Paths, tmp_path: Path) -> None:
    from shellkeep.vault.compress import settle_session

    meta = _earlier_version_folder(home, tmp_path, sealed=False)
    settled = settle_session(meta, vault())
    assert Path(settled.cast).name == "session.cast.zst"
    assert json.loads((meta.folder / "meta.json").read_text())["cast"] == settled.cast
    assert not (meta.folder / "session.cast").exists()


def test_a_sealed_uncompressed_recording_stays_session_cast(home: Paths, tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    from shellkeep.vault.compress import settle_session
    from shellkeep.vault.crypto import split_records, write_records_atomic
    from shellkeep.vault.keys import current_key

    meta = session(home, tmp_path)
    path = Path(meta.cast)
    write_records_atomic(path, split_records(path.read_bytes()), current_key(home, create=True))
    assert settle_session(meta, vault()).cast == str(path)
    assert sorted(p.name for p in meta.folder.iterdir()) == ["meta.json", "session.cast"]


def test_the_session_lock_excludes_another_process(home: Paths, tmp_path: Path) -> None:
    """Compression, redact and key rotate hold it; a second holder is refused while it is held."""
    import subprocess
    import sys

    from shellkeep.store.session import session_lock

    meta = session(home, tmp_path)
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('free')\n"
        "except BlockingIOError:\n    print('held')\n"
    )
    with session_lock(meta.folder):
        held = subprocess.run([sys.executable, "-c", probe, str(meta.folder)], capture_output=True, text=True)
    after = subprocess.run([sys.executable, "-c", probe, str(meta.folder)], capture_output=True, text=True)
    assert (held.stdout.strip(), after.stdout.strip()) == ("held", "free")


def test_exports_racing_a_real_compression_of_a_sealed_recording_each_read_one_whole_file(home: Paths, tmp_path: Path) -> None:
    """``export --format cast`` while the upkeep compresses the sealed recording: every export
    reads the old file whole or the new one whole (CI once got a header without events).

    Exports run until several of them spanned the switch (``session.cast`` there before,
    ``session.cast.zst`` after) with a compression on another thread; no sleeps.
    """
    import shutil
    import threading

    from shellkeep.vault.crypto import split_records, write_records_atomic
    from shellkeep.vault.keys import current_key
    from tests.helpers import invoke_sk

    lines = [(0.01 * i, "o", f"line {i:05d} of the build log, {'x' * (i % 50)}\r\n") for i in range(4000)]
    meta = make_session(home, tmp_path / "project", 1, events=lines)
    cast = Path(meta.cast)
    write_records_atomic(cast, split_records(cast.read_bytes()), current_key(home, create=True))
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    expected = invoke_sk("export", meta.id, "--format", "cast")
    assert expected.returncode == 0 and b"line 03999" in expected.stdout, expected.stderr
    backup = tmp_path / "backup"
    shutil.copytree(meta.folder, backup)
    spanned = rounds = 0
    while spanned < 3:
        rounds += 1
        assert rounds <= 200, f"the switch was spanned {spanned} times in 200 compressions"
        shutil.rmtree(meta.folder)
        shutil.copytree(backup, meta.folder)
        worker = threading.Thread(target=compress_recording, args=(read_meta(meta.folder), vault()))
        worker.start()
        while worker.is_alive():
            before = cast.exists()
            exported = invoke_sk("export", meta.id, "--format", "cast")
            after = (meta.folder / "session.cast.zst").exists()
            assert exported.returncode == 0, exported.stderr
            assert exported.stdout == expected.stdout, f"round {rounds}: {len(exported.stdout)} bytes of {len(expected.stdout)}"
            spanned += before and after
        worker.join()
        assert is_compressed(meta.folder / "session.cast.zst", vault())
