"""Play a recording in the terminal with asciinema's player (v1, v2 and v3 files).

Our reader parses the file (any version, zstd or plain, a cut last line tolerated) and
hands asciinema 2.4's ``Player`` an object shaped like its own v2 asciicast.
"""

from __future__ import annotations

from collections.abc import Iterator

from shellkeep.asciicast.reader import Cast

# Keys as asciinema 2.4 reads them from the terminal in raw mode.
KEY_BINDINGS = {"pause": b" ", "step": b".", "next_marker": b"]"}


class _PlayerCast:
    """Adapt a ``Cast`` to what ``asciinema.player.Player`` reads (duck-typed)."""

    def __init__(self, cast: Cast, start_at: float) -> None:
        self._cast = cast
        self._start_at = start_at
        header = cast.header
        self.idle_time_limit = header.idle_time_limit
        self.v2_header: dict[str, object] = {"version": 2, "width": header.size.cols, "height": header.size.rows}

    def events(self) -> Iterator[list[object]]:
        for event in self._cast.events():
            if event.code == "x":
                continue
            # Everything before the start point is drawn at once, then playback goes on.
            at = max(0.0, event.time - self._start_at)
            yield [at, event.code, event.data]


def play(cast: Cast, *, speed: float = 1.0, idle_limit: float | None = None, start_at: float = 0.0) -> None:
    """Play the recording ``cast`` (opened by ``app.reads``, audited) on stdout; blocks until it ends or Ctrl-C.

    speed: playback factor; idle_limit: float seconds, longest pause shown;
    start_at: float seconds since session start to begin at (earlier output is drawn at once).
    Raises DataError for a corrupt recording.
    """
    from asciinema.player import Player

    player_cast = _PlayerCast(cast, start_at)
    Player().play(player_cast, idle_time_limit=idle_limit, speed=speed, key_bindings=KEY_BINDINGS)
