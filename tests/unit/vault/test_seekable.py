"""Seekable zstd recordings (shellkeep/vault/seekable.py): frames with a seek table, the last
screen read from the end, a damaged frame losing only its span, older files still read.
Real zstd frames written by the code under test, really flipped and really cut."""

from __future__ import annotations

import io
import logging
import random
from pathlib import Path

import pytest
import zstandard

from shellkeep.errors import DataError
from shellkeep.termsize import TermSize
from shellkeep.vault.recording import open_stream, tail_source
from shellkeep.vault.seekable import FRAME_BYTES, SeekableFrames, compressed_frames, read_seek_table
from tests.recordings import last_screen, read_tail
from tests.unit.terminal.helpers import SIZE, full_render, write_cast
from tests.unit.terminal.test_tail import RECORDINGS

FRAME = 16 << 10  # small frames, so that modest recordings span many


def seekable_copy(plain: Path, target: Path, frame_bytes: int = FRAME) -> Path:
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
    with open(plain, "rb") as src:
        target.write_bytes(b"".join(compressed_frames(compressor, src, frame_bytes=frame_bytes)))
    return target


def read_all(path: Path) -> bytes:
    with open_stream(path) as fh:
        return fh.read()


def big_plain(tmp_path: Path, rows: int = 6000) -> Path:
    """A recording of about 100 bytes a row: numbered lines, then near the end a full-screen
    program and a resize (which the tail reader searches back for), a clear, the final screen."""
    rng = random.Random(7)
    events = [("o", f"row {n} {'x' * rng.randint(0, 120)}\r\n") for n in range(rows)]
    events += [("o", "\x1b[?1049hless\x1b[?1049l"), ("r", "50x12")]
    events += [("o", f"row {n}\r\n") for n in range(200)]
    events += [("o", "\x1b[H\x1b[2Jfinal screen\r\n"), ("o", "$ ")]
    return write_cast(tmp_path / "plain.cast", SIZE, events)


@pytest.mark.parametrize("name", list(RECORDINGS), ids=list(RECORDINGS))
def test_the_tail_of_a_seekable_file_equals_the_plain_files(tmp_path: Path, name: str) -> None:
    build, _ = RECORDINGS[name]
    plain = write_cast(tmp_path / "plain.cast", SIZE, build(random.Random(name)))
    packed = seekable_copy(plain, tmp_path / "packed.cast")
    source = tail_source(packed)
    assert isinstance(source, SeekableFrames)
    assert source[:] == plain.read_bytes()
    assert last_screen(packed) == last_screen(plain) == full_render(plain)
    mapped, seek = read_tail(plain), read_tail(packed)
    assert (seek.events, seek.size, seek.alternate, seek.reason) == (mapped.events, mapped.size, mapped.alternate, mapped.reason)
    assert seek.bytes_read == mapped.bytes_read


def test_only_the_frames_near_the_end_are_decompressed(tmp_path: Path) -> None:
    plain = big_plain(tmp_path, rows=80_000)  # 8 MB
    packed = seekable_copy(plain, tmp_path / "packed.cast", frame_bytes=FRAME_BYTES)
    with open(packed, "rb") as fh:
        frames = read_seek_table(fh)
    assert frames is not None and len(frames) >= 7
    source = tail_source(packed)
    assert isinstance(source, SeekableFrames)
    assert last_screen(packed) == last_screen(plain)
    from shellkeep.terminal.replay import last_screen as render_last_screen
    from tests.recordings import open_cast

    snap = render_last_screen(open_cast(packed), mapped=source)
    assert snap.to_text() == "final screen\n$"
    assert 1 <= source.frames_read <= 3
    assert snap.size == TermSize(50, 12)


def test_frames_hold_whole_lines_and_any_zstd_decoder_reads_the_file(tmp_path: Path) -> None:
    plain = big_plain(tmp_path)
    packed = seekable_copy(plain, tmp_path / "packed.cast")
    data = packed.read_bytes()
    with open(packed, "rb") as fh:
        frames = read_seek_table(fh)
    assert frames is not None
    dctx = zstandard.ZstdDecompressor()
    for frame in frames:
        assert dctx.decompress(data[frame.at : frame.at + frame.size]).endswith(b"\n")
    with dctx.stream_reader(io.BytesIO(data), read_across_frames=True) as reader:
        assert reader.read() == plain.read_bytes()  # the seek table is a skippable frame
    assert read_all(packed) == plain.read_bytes()


def test_find_and_rfind_match_bytes_across_frame_boundaries(tmp_path: Path) -> None:
    plain = big_plain(tmp_path)
    packed = seekable_copy(plain, tmp_path / "packed.cast", frame_bytes=4 << 10)
    source = tail_source(packed)
    assert isinstance(source, SeekableFrames)
    text = plain.read_bytes()
    assert len(source) == len(text)
    for needle in (b"\n", b'"o"', b"row 3999 ", b"final screen", b"absent"):
        for start, end in ((0, len(text)), (4090, 4110), (10, len(text) - 10), (len(text) // 2, len(text))):
            assert source.find(needle, start, end) == text.find(needle, start, end)
            assert source.rfind(needle, start, end) == text.rfind(needle, start, end)
    assert source[4090:8200] == text[4090:8200]


def test_a_damaged_middle_frame_loses_only_its_span(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    plain = big_plain(tmp_path)
    packed = seekable_copy(plain, tmp_path / "packed.cast")
    with open(packed, "rb") as fh:
        frames = read_seek_table(fh)
    assert frames is not None
    bad = frames[len(frames) // 2]
    data = bytearray(packed.read_bytes())
    mid = bad.at + bad.size // 2
    data[mid : mid + 16] = bytes(b ^ 0xFF for b in data[mid : mid + 16])
    packed.write_bytes(bytes(data))
    text = plain.read_bytes()
    expected = text[: bad.start] + text[bad.start + bad.length :]

    with open_stream(packed) as fh:  # everything else is read, then the damage is named
        got = b""
        with pytest.raises(DataError, match=rf"recording is damaged at byte {bad.at} .*zstd frame from byte {bad.at}"):
            while chunk := fh.read1(1 << 16):
                got += chunk
    assert got == expected

    caplog.set_level(logging.WARNING)
    assert last_screen(packed) == last_screen(plain)  # the tail does not touch the damage
    source = tail_source(packed)
    assert isinstance(source, SeekableFrames)
    assert source[:] == text[: bad.start] + b"\n" * bad.length + text[bad.start + bad.length :]
    assert f"recording is damaged at byte {bad.at}" in caplog.text


def test_a_cut_seekable_file_is_streamed_and_named_where_it_ends(tmp_path: Path) -> None:
    plain = big_plain(tmp_path)
    packed = seekable_copy(plain, tmp_path / "packed.cast")
    data = packed.read_bytes()
    packed.write_bytes(data[: len(data) // 2])  # the seek table is gone with the end
    assert tail_source(packed) is None
    with open_stream(packed) as fh, pytest.raises(DataError, match="the file ends"):
        fh.read()


def test_an_old_single_frame_file_is_still_read_whole(tmp_path: Path) -> None:
    plain = big_plain(tmp_path)
    packed = tmp_path / "old.cast"
    packed.write_bytes(zstandard.ZstdCompressor(level=9, write_checksum=True).compress(plain.read_bytes()))
    assert tail_source(packed) is None
    assert read_all(packed) == plain.read_bytes()
    assert last_screen(packed) == last_screen(plain)
    tail = read_tail(packed)
    assert tail.bytes_read == tail.bytes_total  # streamed from the start: correct, slower


def test_the_default_frame_is_about_a_mebibyte(tmp_path: Path) -> None:
    rng = random.Random(3)
    events = [("o", f"{n} {rng.random()}\r\n") for n in range(150_000)]
    plain = write_cast(tmp_path / "plain.cast", SIZE, events)
    packed = seekable_copy(plain, tmp_path / "packed.cast", frame_bytes=FRAME_BYTES)
    with open(packed, "rb") as fh:
        frames = read_seek_table(fh)
    assert frames is not None and len(frames) >= 3
    assert all(FRAME_BYTES // 2 < f.length < FRAME_BYTES + 100 for f in frames[:-1])  # + a cut line


@pytest.mark.usefixtures("no_os_keyring")  # tests/conftest.py
def test_a_sealed_compressed_recording_is_streamed_through_its_encryption(home: object, tmp_path: Path) -> None:
    """Sealing wraps the whole seekable stream: the tail is not read from the end, but it is right."""
    pytest.importorskip("cryptography")
    from shellkeep.store.paths import Paths
    from shellkeep.vault.compress import compress_recording
    from shellkeep.vault.crypto import is_encrypted, split_records, write_records_atomic
    from shellkeep.vault.keys import current_key
    from tests.recordings import open_binary, vault
    from tests.factory import make_session

    assert isinstance(home, Paths)
    events = [(0.01 * n, "o", f"row {n} {'y' * (n % 90)}\r\n") for n in range(30_000)]
    events += [(400.0, "o", "\x1b[H\x1b[2Jsealed final\r\n")]
    meta = make_session(home, tmp_path / "project", 1, events=events)
    cast = Path(meta.cast)
    plain = tmp_path / "plain.cast"
    plain.write_bytes(cast.read_bytes())
    write_records_atomic(cast, split_records(plain.read_bytes()), current_key(home, create=True))
    result = compress_recording(meta, vault())
    cast = Path(result.path)
    assert result.compressed and cast.name == "session.cast.zst" and is_encrypted(cast)
    assert tail_source(cast) is None  # sealed: streamed from the start
    with vault().open_plain(cast) as fh:  # decrypted, still compressed: seekable frames inside
        inner = read_seek_table(io.BytesIO(fh.read()))
    assert inner is not None and len(inner) >= 2
    with open_binary(cast) as fh:
        assert fh.read() == plain.read_bytes()
    assert last_screen(cast) == last_screen(plain)
    assert "sealed final" in last_screen(cast).to_text()
