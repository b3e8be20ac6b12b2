"""What ``ls`` and ``search`` need besides the index, kept light for their start-up.

- ``moved_projects``: the project folders of this project's repository recorded at a former
  path that no longer exists (``app.moves`` follows such a project further: resuming there);
- ``missing_keys``: the listed sessions sealed with a key no store holds, shown as
  ``SUSPENDED_KEY_MISSING``.

Nothing here imports the agents, the terminal emulator or the conversation code: a new
``shellkeep ls`` over 10,000 sessions is mostly interpreter start (bench/index_bench.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.archive.listing import GitProject, ListedSession, git_projects
from shellkeep.errors import ShellkeepError
from shellkeep.git.identity import GitIdentity, root_commit
from shellkeep.git.info import git_root, origin_remote
from shellkeep.logs import get_logger
from shellkeep.store.paths import project_key
from shellkeep.store.session import SessionMeta, read_meta

__all__ = ["SUSPENDED_KEY_MISSING", "missing_key", "missing_keys", "moved_projects", "project_identity"]

log = get_logger(__name__)


def project_identity(project_root: Path) -> GitIdentity | None:
    """Return the git identity of the work tree at ``project_root`` (runs git once), or None outside git."""
    try:
        if git_root(project_root) != project_root:
            return None
    except OSError:
        return None
    identity = GitIdentity(origin_remote(project_root), root_commit(project_root))
    return identity if identity.remote or identity.root_commit else None




def moved_projects(ctx: Context) -> tuple[str, ...]:
    """Return the keys of the project folders of this project's repository at former paths.

    They are the projects whose sessions hold a git identity this project's matches
    (``GitIdentity.matches``) and whose recorded root no longer exists: a moved or renamed
    work tree. Another clone or worktree that is still on disk is a project of its own.
    () outside git; an index that cannot be read gives () with a logged warning.
    """
    return tuple(dict.fromkeys(p.project for p in _former_projects(ctx)))


def _former_projects(ctx: Context) -> list[GitProject]:
    identity = project_identity(ctx.project_root)
    if identity is None:
        return []
    own = project_key(ctx.project_root)
    try:
        found = git_projects(ctx.paths, identity, vault=ctx.vault, recover=ctx.recover)
    except ShellkeepError as exc:
        log.warning("cannot look for this project's sessions at former paths: %s", exc)
        return []
    return [p for p in found if p.project != own and not os.path.isdir(p.project_root)]




SUSPENDED_KEY_MISSING = "suspended: key missing"
"""How a session sealed with a key no store holds is shown (``ls``, ``show``)."""


def missing_key(ctx: Context, meta: SessionMeta) -> str | None:
    """Return the id of the missing key a session's recording is sealed with, or None.

    None when it is plain or its key is found. Reads the recording's header only; not audited
    (nothing is decrypted). Never raises.
    """
    return ctx.vault.missing_key(Path(meta.cast))


def missing_keys(ctx: Context, sessions: Iterable[ListedSession]) -> dict[str, str]:
    """Return session id -> missing key id for the listed sessions that cannot be opened now.

    Only sessions the index does not know to be plain are looked at (their ``meta.json`` and
    recording header are read); a plain listing costs nothing. Never raises.
    """
    found: dict[str, str] = {}
    for item in sessions:
        if item.plain:
            continue
        try:
            meta = item.meta() if item.meta_json is not None else read_meta(Path(item.folder))
        except (OSError, ValueError, ShellkeepError):
            continue
        key_id = missing_key(ctx, meta)
        if key_id is not None:
            found[item.id] = key_id
    return found
