"""Garbage collection of old sessions: the user's and each project's retention limits applied.

The policy itself (what goes, what is protected) is ``store.retention``'s; this module reads
the limits from the config files and runs it, by hand (``shellkeep gc``) or once a day after
a session (``retention.auto_gc``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.config import load_config
from shellkeep.errors import ConfigError
from shellkeep.logs import get_logger
from shellkeep.store.paths import PROJECT_FILE_NAME, Paths
from shellkeep.store.retention import AUTO_GC_INTERVAL_S, STAMP_FILE, GcResult, RetentionPolicy, collect_garbage
from shellkeep.store.session import list_sessions, read_meta
from shellkeep.vault.compress import settle_session

log = get_logger(__name__)


def project_policies(paths: Paths, env: Mapping[str, str]) -> dict[str, RetentionPolicy]:
    """Return the retention limits each project's ``.shellkeep.toml`` sets, by project key.

    A project's root is read from one of its sessions' metadata; projects without a project
    file, or whose file sets no limit, are left out. A project file that does not load is
    skipped with a logged warning (gc then applies the user's limits only).
    """
    found: dict[str, RetentionPolicy] = {}
    try:
        projects = [p for p in paths.projects.iterdir() if p.is_dir()]
    except FileNotFoundError:
        return found
    for project in projects:
        root: Path | None = None
        for folder in project.iterdir():
            try:
                root = Path(read_meta(folder).project_root)
                break
            except Exception:  # noqa: BLE001 - any readable session will do
                continue
        if root is None or not (root / PROJECT_FILE_NAME).is_file():
            continue
        try:
            policy = RetentionPolicy.from_config(load_config(paths, root, env).retention)
        except ConfigError as exc:
            log.warning("ignoring the retention limits of %s: %s", root / PROJECT_FILE_NAME, exc)
            continue
        if not policy.is_empty:
            found[project.name] = policy
    return found


@dataclass(frozen=True, slots=True)
class Limits:
    """The retention limits in force: the user's (``policy``) and each project's, by project key."""

    policy: RetentionPolicy
    per_project: Mapping[str, RetentionPolicy]

    @property
    def is_empty(self) -> bool:
        """Whether no limit is set anywhere (gc then removes nothing)."""
        return self.policy.is_empty and not self.per_project


def retention_limits(ctx: Context) -> Limits:
    """Return the user's ``[retention]`` limits and those each project's ``.shellkeep.toml`` adds.

    Raises ConfigError when the user's config does not load.
    """
    config = load_config(ctx.paths, None, ctx.env)  # the user's limits, for every project
    return Limits(RetentionPolicy.from_config(config.retention), project_policies(ctx.paths, ctx.env))


def run_gc(ctx: Context, limits: Limits, *, dry_run: bool = False, this_project: bool = False) -> GcResult:
    """Apply ``limits`` (see ``store.retention.collect_garbage``); only this project's sessions with ``this_project``.

    Then (not with ``dry_run``) each remaining session's recording is settled
    (``vault.compress.settle_session``): a compression cut by a crash is finished or undone,
    and a recording an earlier version compressed in place is renamed ``session.cast.zst``.
    """
    project_root = ctx.project_root if this_project else None
    result = collect_garbage(
        ctx.paths,
        limits.policy,
        dry_run=dry_run,
        project_root=project_root,
        project_policies=limits.per_project,
        recover=ctx.recover,
    )
    if not dry_run:
        for meta in list_sessions(ctx.paths, project_root):
            settle_session(meta, ctx.vault)
    return result


def maybe_auto_gc(ctx: Context, *, now_s: float | None = None) -> GcResult | None:
    """Run gc with the user's ``[retention]`` limits if ``auto_gc`` is on and a day has passed.

    The stamp file is touched before gc runs, so sessions ending together run it once.
    Never raises (logs a warning); returns None when it did not run.
    """
    paths = ctx.paths
    try:
        config = load_config(paths, None, ctx.env)  # the user's limits, for every project
        if not config.retention.auto_gc:
            return None
        policy = RetentionPolicy.from_config(config.retention)
        per_project = project_policies(paths, ctx.env)
        if policy.is_empty and not per_project:
            return None
        stamp = paths.home / STAMP_FILE
        now_s = time.time() if now_s is None else now_s
        try:
            if now_s - stamp.stat().st_mtime < AUTO_GC_INTERVAL_S:
                return None
        except FileNotFoundError:
            pass
        fd = os.open(stamp, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        os.utime(stamp, (now_s, now_s))
        result = collect_garbage(paths, policy, project_policies=per_project, recover=ctx.recover)
    except Exception as exc:  # noqa: BLE001 - gc is housekeeping; the session is already safe
        log.warning("automatic gc failed: %s", exc)
        return None
    if result.removed:
        log.info("automatic gc removed %d sessions, freed %d bytes", len(result.removed), result.freed_bytes)
    return result
