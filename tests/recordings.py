"""Path-based ways to read a recording in tests, through the vault as the commands do.

The terminal and archive layers take opened recordings (``Cast``); tests mostly hold paths.
The vault is built from the environment the ``home`` fixture sets (``SHELLKEEP_HOME``), with
the default key stores, so sealed recordings open as they do for a command.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from shellkeep.asciicast.reader import Cast
from shellkeep.store.paths import resolve_paths
from shellkeep.terminal import replay, tail, transcript
from shellkeep.terminal.snapshot import ScreenSnapshot
from shellkeep.termsize import TermSize
from shellkeep.vault.access import Vault
from shellkeep.vault.recording import open_tail_source


def vault() -> Vault:
    """Return the vault of this test's shellkeep home (default key stores, no sealing)."""
    return Vault(resolve_paths())


def open_cast(path: Path | str) -> Cast:
    """Open the recording at ``path`` (plain, zstd or sealed)."""
    return vault().open_recording(Path(path))


def open_binary(path: Path | str) -> IO[bytes]:
    """Open the plain asciicast bytes of the recording at ``path``."""
    return vault().open_stream(Path(path))


def read_events(path: Path | str) -> Iterator[object]:
    """Yield the events of the recording at ``path``."""
    return open_cast(path).events()


def last_screen(path: Path | str, size_hint: TermSize | None = None) -> ScreenSnapshot:
    """Return the last screen of the recording at ``path`` (read from its end when plain)."""
    cast = open_cast(path)
    with open_tail_source(Path(path)) as mapped:
        return replay.last_screen(cast, size_hint, mapped=mapped)


def read_tail(path: Path | str, **kwargs: object) -> tail.Tail:
    """Return the tail of the recording at ``path`` (see ``terminal.tail.read_tail``)."""
    cast = open_cast(path)
    with open_tail_source(Path(path)) as mapped:
        return tail.read_tail(cast, mapped=mapped, **kwargs)  # type: ignore[arg-type]


def screen_at(path: Path | str, time_s: float) -> ScreenSnapshot:
    """Return the screen of the recording at ``path`` at ``time_s``."""
    return replay.screen_at(open_cast(path), time_s)


def iter_screens(path: Path | str, times: Iterable[float]) -> Iterator[ScreenSnapshot]:
    """Yield the screens of the recording at ``path`` at each of ``times``."""
    return replay.iter_screens(open_cast(path), times)


def read_transcript(path: Path | str) -> Iterator[transcript.TranscriptLine]:
    """Yield the transcript lines of the recording at ``path``."""
    return transcript.read_transcript(open_cast(path))


def transcript_text(path: Path | str) -> Iterator[str]:
    """Yield the transcript of the recording at ``path`` as text lines."""
    return transcript.transcript_text(open_cast(path))
