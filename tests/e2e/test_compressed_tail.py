"""A real session's recording, compressed by the upkeep as seekable zstd, read from its end:
the last screen equals the uncompressed recording's, with only the tail decoded as events."""

from __future__ import annotations

import sys
from pathlib import Path

from shellkeep.store.paths import Paths
from shellkeep.vault.recording import ZSTD_MAGIC, tail_source
from shellkeep.vault.seekable import SeekableFrames, read_seek_table
from tests.helpers import run_sk, session_folders, wait_for_background
from tests.recordings import last_screen, open_binary, read_tail

PROGRAM = r"""
import sys
out = sys.stdout
for n in range(40000):
    out.write(f"row {n} " + "abcdefghij" * (n % 12) + "\n")
out.write("\x1b[H\x1b[2Jthe final screen\ndone\n")
out.flush()
"""


def test_the_last_screen_of_a_compressed_session_is_read_from_its_end(home: Paths, tmp_path: Path) -> None:
    result = run_sk("run", "--name", "long", "--", sys.executable, "-c", PROGRAM)
    assert result.returncode == 0, result.stderr
    wait_for_background(home)  # the upkeep compresses the finished recording
    cast = session_folders(home)[0].parent / "session.cast.zst"
    assert not cast.with_name("session.cast").exists()  # renamed: no tool takes it for plain asciicast
    assert cast.read_bytes()[:4] == ZSTD_MAGIC
    with open(cast, "rb") as fh:
        frames = read_seek_table(fh)
    assert frames is not None and len(frames) >= 3  # about 3 MB in frames of 1 MiB

    plain = tmp_path / "plain.cast"
    with open_binary(cast) as fh:
        plain.write_bytes(fh.read())
    assert tail_source(plain) == plain
    expected = last_screen(plain)
    assert "the final screen" in expected.to_text()
    assert last_screen(cast) == expected

    source = tail_source(cast)
    assert isinstance(source, SeekableFrames)
    from shellkeep.terminal.tail import read_tail as read_tail_of
    from tests.recordings import open_cast

    tail = read_tail_of(open_cast(cast), mapped=source)
    assert (tail.events, tail.reason) == (read_tail(plain).events, read_tail(plain).reason)
    assert tail.reason == "clear" and tail.bytes_read < len(source) // 4  # events decoded from the end only
    # No resize and no alternate screen in this session: the searches for them go back to the
    # start, so every frame is decompressed once (tests/unit/vault/test_seekable.py shows a
    # recording where only the last frames are).
    assert source.frames_read == len(frames)
