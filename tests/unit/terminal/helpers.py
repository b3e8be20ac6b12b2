"""Helpers the terminal tests share: a test recording written from events, a text rendered alone."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Event, Header
from shellkeep.terminal.replay import render_events
from shellkeep.terminal.snapshot import ScreenSnapshot
from shellkeep.termsize import TermSize
from tests.recordings import screen_at

SIZE = TermSize(40, 10)
CLEAR = "\x1b[H\x1b[2J"


def write_cast(path: Path, size: TermSize, events: Sequence[tuple[str, str]], *, tail: bytes = b"") -> Path:
    """Write an asciicast v2 file with events 10 ms apart; ``tail`` is appended raw."""
    with open(path, "wb") as fh:
        fh.write(encode_header(Header(size=size)))
        for n, (code, data) in enumerate(events):
            fh.write(encode_event(n * 0.01, code, data))
        fh.write(tail)
    return path


def render(text: str, size: TermSize = SIZE) -> ScreenSnapshot:
    return render_events([Event(0.0, "o", text)], size)


def full_render(path: Path) -> ScreenSnapshot:
    return screen_at(path, math.inf)

