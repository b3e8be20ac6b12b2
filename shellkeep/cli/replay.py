"""``shellkeep replay``: play a session's recording in the terminal."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, paths, require_ref, session_argument


@click.command()
@session_argument
@click.option("--speed", type=click.FloatRange(min=0.01), default=1.0, show_default=True, help="Playback speed factor.")
@click.option("--idle-limit", type=click.FloatRange(min=0.0), default=None, help="Cap pauses at this many seconds.")
def replay(ref: str | None, last: bool, speed: float, idle_limit: float | None) -> None:
    """Play a session's recording in this terminal (space pauses, . steps, Ctrl-C stops).

    Example: shellkeep replay --last --speed 2 --idle-limit 1
    """
    from shellkeep.replay import play
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.session import resolve_session

    require_ref(ref, last)
    meta = resolve_session(paths(), project_root_of(cwd()), ref, last=last)
    play(meta.cast, speed=speed, idle_limit=idle_limit)
