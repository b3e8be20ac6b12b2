"""Opening a recording for reading from its end (shellkeep/vault/recording.py: open_tail_source):
a plain file mapped, seekable zstd frames, a single-frame zstd or missing file streamed instead."""

from __future__ import annotations

from pathlib import Path

import zstandard

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Header
from shellkeep.termsize import TermSize
from shellkeep.vault.recording import open_tail_source
from shellkeep.vault.seekable import SeekableFrames, compressed_frames


def plain(path: Path) -> Path:
    path.write_bytes(encode_header(Header(size=TermSize(40, 10))) + encode_event(0.5, "o", "hello"))
    return path


def test_a_plain_recording_is_mapped_and_unmapped_after(tmp_path: Path) -> None:
    path = plain(tmp_path / "session.cast")
    with open_tail_source(path) as mapped:
        assert mapped is not None
        assert mapped[0 : len(path.read_bytes())] == path.read_bytes()
        assert mapped.rfind(b"hello", 0, len(mapped)) > 0
    assert getattr(mapped, "closed", True)


def test_an_empty_file_gives_empty_bytes(tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    path.write_bytes(b"")
    with open_tail_source(path) as mapped:
        assert mapped == b""


def test_a_seekable_zstd_recording_gives_its_frames(tmp_path: Path) -> None:
    source = plain(tmp_path / "plain.cast")
    path = tmp_path / "session.cast.zst"
    with open(source, "rb") as src:
        path.write_bytes(b"".join(compressed_frames(zstandard.ZstdCompressor(), src)))
    with open_tail_source(path) as mapped:
        assert isinstance(mapped, SeekableFrames)
        assert mapped[0 : len(mapped)] == source.read_bytes()


def test_a_single_frame_zstd_or_missing_recording_gives_none(tmp_path: Path) -> None:
    path = tmp_path / "session.cast.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(plain(tmp_path / "plain.cast").read_bytes()))
    with open_tail_source(path) as mapped:
        assert mapped is None
    with open_tail_source(tmp_path / "gone.cast") as mapped:
        assert mapped is None
