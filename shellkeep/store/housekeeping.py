"""Upkeep after a session has ended: compress its recording, index it, automatic gc.

Compression and indexing take seconds on a long session, so ``runner`` starts this module
as its own detached process (``python -m shellkeep.store.housekeeping``, new session, no
terminal, stdio on /dev/null) and returns the prompt at once: ``start`` spawns it.
``run`` does the work in-process; it never raises.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths, resolve_paths

log = get_logger(__name__)


def start(paths: Paths, folder: Path, *, compress: bool, auto_gc: bool) -> None:
    """Start the upkeep of the session in ``folder`` as a detached process; never raises.

    One ``posix_spawn`` (no copy of this process); the environment is passed on with
    ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG`` naming ``paths``. When it cannot be started
    the work is done here and now.
    """
    env = {**os.environ, "SHELLKEEP_HOME": str(paths.home), "SHELLKEEP_CONFIG": str(paths.config_file)}
    argv = [sys.executable, "-m", __name__, str(folder)]
    argv += ["--compress"] if compress else []
    argv += ["--auto-gc"] if auto_gc else []
    try:
        os.posix_spawn(
            sys.executable,
            argv,
            env,
            file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
            setsid=True,
        )
    except (OSError, AttributeError, NotImplementedError) as exc:
        log.warning("could not start housekeeping in the background (%s); doing it now", exc)
        run(paths, folder, compress=compress, auto_gc=auto_gc)


def run(paths: Paths, folder: Path, *, compress: bool, auto_gc: bool) -> None:
    """Compress, index and garbage-collect after the session in ``folder``; never raises."""
    try:
        from shellkeep.store.session import read_meta

        meta = read_meta(folder)
        if compress:
            from shellkeep.store.compress import compress_after_session

            compress_after_session(meta)
        from shellkeep.store.index import index_ended_session

        index_ended_session(paths, meta)
        if auto_gc:
            from shellkeep.store.retention import maybe_auto_gc

            maybe_auto_gc(paths)
    except Exception as exc:  # noqa: BLE001 - the session is stored; this is only upkeep
        log.warning("housekeeping after %s failed: %s", folder.name, exc)


def main(argv: Sequence[str]) -> int:
    """``python -m shellkeep.store.housekeeping FOLDER [--compress] [--auto-gc]``; returns 0."""
    if not argv:
        return 2
    run(resolve_paths(), Path(argv[0]), compress="--compress" in argv[1:], auto_gc="--auto-gc" in argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
