"""Opening zstd recordings frame by frame, and naming the byte where one is damaged:
shellkeep/vault/recording.py. Real zstd frames, really cut and really flipped."""

from __future__ import annotations

from pathlib import Path

import pytest
import zstandard

from shellkeep.errors import DataError
from shellkeep.vault.recording import open_recording, open_stream

HEADER = b'{"version": 2, "width": 80, "height": 24}\n'
FIRST = b"".join(b'[%d.5, "o", "line %d\\r\\n"]\n' % (i, i) for i in range(50))
SECOND = b"".join(b'[%d.5, "o", "more %d %s\\r\\n"]\n' % (i, i, b"x" * (i % 40)) for i in range(50, 4000))


def frames(*parts: bytes) -> list[bytes]:
    """Compress each part as its own zstd frame with a checksum, as ``compress`` writes them."""
    return [zstandard.ZstdCompressor(level=3, write_checksum=True).compress(p) for p in parts]


def flipped(frame: bytes) -> bytes:
    """Flip 16 bytes in the middle of ``frame``."""
    mid = len(frame) // 2
    return frame[:mid] + bytes(b ^ 0xFF for b in frame[mid : mid + 16]) + frame[mid + 16 :]


def read_all(path: Path) -> bytes:
    with open_stream(path) as fh:
        return fh.read()


def test_every_frame_of_a_multi_frame_recording_is_read(tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    path.write_bytes(b"".join(frames(HEADER + FIRST, SECOND)))
    assert read_all(path) == HEADER + FIRST + SECOND
    assert len(list(open_recording(path).events())) == 4000


def test_a_flipped_frame_is_named_by_the_byte_it_starts_at_after_the_frames_before(tmp_path: Path) -> None:
    one, two = frames(HEADER + FIRST, SECOND)
    path = tmp_path / "session.cast"
    path.write_bytes(one + flipped(two))
    with open_stream(path) as fh:
        assert fh.read(len(HEADER + FIRST)) == HEADER + FIRST
        with pytest.raises(DataError, match=r"session.cast: recording is damaged at byte \d+ \(zstd: ") as raised:
            fh.read()
    at = int(str(raised.value).split(" at byte ")[1].split()[0])
    assert len(one) + len(two) // 2 <= at + 2 * 4096 and at <= len(one) + len(two)  # where decoding stopped
    assert f"in the zstd frame from byte {len(one)})" in str(raised.value)


def test_a_recording_cut_inside_a_frame_is_damaged_at_its_end(tmp_path: Path) -> None:
    one, two = frames(HEADER + FIRST, SECOND)
    path = tmp_path / "session.cast"
    path.write_bytes(one + two[: len(two) // 2])
    events = open_recording(path).events()
    got = [next(events) for _ in range(49)]  # the reader yields an event once the next line is read
    assert got[-1].data == "line 48\r\n"
    with pytest.raises(DataError, match=rf"damaged at byte {len(one) + len(two) // 2} \(the file ends, in the zstd frame from byte {len(one)}\)"):
        list(events)


def test_bytes_after_the_last_frame_that_are_no_frame_are_damage(tmp_path: Path) -> None:
    (one,) = frames(HEADER + FIRST)
    path = tmp_path / "session.cast"
    path.write_bytes(one + b"not zstd at all")
    with pytest.raises(DataError, match=rf"damaged at byte {len(one)} .*in the zstd frame from byte {len(one)}\)"):
        read_all(path)
