"""``shellkeep replay``: play a session's recording (or any asciicast file) in the terminal."""

from __future__ import annotations

from pathlib import Path

import click

from shellkeep.cli.console import warn
from shellkeep.cli.options import context, count, number, require_ref, session_argument


@click.command()
@session_argument
@click.option("--speed", type=number(min=0.01, max=1e6), default=1.0, show_default=True, help="Playback speed factor.")
@click.option("--idle-limit", type=number(), default=None, help="Cap pauses at this many seconds.")
@click.option("--at", "at_s", type=number(), default=None, metavar="SECONDS", help="Start this many seconds in (a search hit's time).")
@click.option("--marker", default=None, metavar="LABEL|N", help="Start at the marker with this label, or the Nth marker.")
@click.option("--exchange", type=count(), default=None, metavar="N", help="Start where exchange N (from 1) was sent.")
def replay(
    ref: str | None,
    last: bool,
    speed: float,
    idle_limit: float | None,
    at_s: float | None,
    marker: str | None,
    exchange: int | None,
) -> None:
    """Play a recording in this terminal: space pauses, . steps, ] jumps to the next marker,
    Ctrl-C stops. Output before the start point is drawn at once.

    SESSION is an id, a unique prefix, a name, --last, or the path of an asciicast v1, v2
    or v3 file (also a compressed session.cast.zst).

    Example: shellkeep replay --last --exchange 2 --speed 2 --idle-limit 1
    """
    from shellkeep.app.reads import read_file, read_session
    from shellkeep.app.replay import play
    from shellkeep.archive.timeline import start_time

    require_ref(ref, last)
    ctx = context()
    if ref and not last and ("/" in ref or ref.endswith((".cast", ".cast.zst", ".json"))) and Path(ref).is_file():
        if marker is not None or exchange is not None:
            raise click.UsageError("--marker and --exchange need a session; for a file use --at")
        path = Path(ref).resolve()
        play(read_file(ctx, path, command="replay", detail=f"at={at_s:.2f}" if at_s else None), speed=speed, idle_limit=idle_limit, start_at=at_s or 0.0)
        return
    if ref and not last and "/" in ref and not Path(ref).exists():
        raise click.UsageError(f"no such file: {ref}; give a recording's path, or a session id or name")
    meta = ctx.resolve(ref, last=last)
    start = start_time(meta, ctx.vault, at=at_s, marker=marker, exchange=exchange)
    if at_s is not None and meta.duration is not None and at_s > meta.duration:
        warn(f"session {meta.id} is {meta.duration:.1f}s long; --at {at_s:g} is past its end, so its last screen is shown")
    _, cast = read_session(ctx, meta, command="replay", detail=f"at={start:.2f}" if start else None)
    play(cast, speed=speed, idle_limit=idle_limit, start_at=start)

