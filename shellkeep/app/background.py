"""Start a shellkeep module as a detached background process (housekeeping, notifiers).

One ``posix_spawn`` of ``python -m MODULE``: no copy of this process, no wait, its own session,
stdin/stdout/stderr on ``/dev/null``, and an environment whose ``SHELLKEEP_HOME`` and
``SHELLKEEP_CONFIG`` name the command's ``Paths`` (settings are resolved again there).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from shellkeep.store.paths import Paths

SPAWN_ERRORS = (OSError, AttributeError, NotImplementedError, ValueError)
"""What ``spawn_detached`` raises when the process cannot be started (no posix_spawn on this
platform, a refused exec, an environment value holding a NUL)."""


def spawn_detached(paths: Paths, module: str, args: Sequence[str] = (), *, env: Mapping[str, str] | None = None) -> None:
    """Start ``python -m module args`` detached; ``env`` (default: this process's) is passed on
    with ``paths``' home and config file. Raises one of ``SPAWN_ERRORS``."""
    child_env = {**(os.environ if env is None else env), "SHELLKEEP_HOME": str(paths.home), "SHELLKEEP_CONFIG": str(paths.config_file)}
    os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", module, *args],
        child_env,
        file_actions=[(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)],
        setsid=True,
    )
