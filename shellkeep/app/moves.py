"""Follow a project that was moved or renamed on disk: its git identity, its sessions, resuming there.

A project's data folder is named after its path (``store.paths.project_key``), so a moved
work tree starts a new project folder. What stays the same is the repository: its origin
remote and root commit (``git.identity.GitIdentity``), kept in each session's ``meta.json`` as
``git_identity`` and in the index. From here:

- ``moved_projects`` (in ``app.listing``, light enough for ``ls`` and ``search``): the project
  folders of the same repository recorded at a former path that no longer exists (``ls`` and
  a bare ``resume`` include their sessions);
- ``resume_dir``: where a session is resumed: its own directory, the one ``--cwd`` names, or,
  when its directory is gone, the current project when it is the same repository;
- ``relocate_transcript``: the agent's transcript copied to where the agent looks for it in
  the new directory (agents that key their store by directory, as Claude Code does).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentSession
from shellkeep.app.context import Context
from shellkeep.app.conversation import adapter_of
from shellkeep.app.listing import _former_projects, moved_projects, project_identity
from shellkeep.errors import UserInputError
from shellkeep.git.identity import GitIdentity, root_commit
from shellkeep.git.info import git_root, origin_remote
from shellkeep.logs import get_logger
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import SessionMeta, list_sessions, write_meta

__all__ = [
    "complete_git_identity",
    "moved_projects",
    "project_identity",
    "project_sessions",
    "relocate_transcript",
    "resume_dir",
]

log = get_logger(__name__)


def complete_git_identity(meta: SessionMeta) -> SessionMeta:
    """Add the root commit to a session's ``git_identity`` while its project is still on disk.

    Recording reads only the origin remote at start (no git process there); this runs in the
    upkeep after the session. The updated ``meta.json`` is written; a session outside git,
    one already complete, or one whose project is gone is returned as it is. Never raises.
    """
    if meta.git_start is None:
        return meta
    known = GitIdentity.from_json(meta.git_identity)
    if known is not None and known.root_commit:
        return meta
    root = Path(meta.project_root)
    if not root.is_dir():
        return meta
    commit = root_commit(root)
    if commit is None:
        return meta
    identity = GitIdentity(known.remote if known else origin_remote(root), commit)
    updated = dataclasses.replace(meta, git_identity=dict(identity.to_json()))
    try:
        write_meta(updated)
    except OSError as exc:
        log.warning("could not store the git identity of %s: %s", meta.id, exc)
        return meta
    return updated


def project_sessions(ctx: Context) -> list[SessionMeta]:
    """Return this project's sessions and those recorded at its former paths, newest first."""
    sessions = ctx.sessions()
    for former in _former_projects(ctx):
        known = {m.id for m in sessions}
        more = list_sessions(ctx.paths, Path(former.project_root), recover=ctx.recover)
        sessions += [m for m in more if m.id not in known]
    sessions.sort(key=lambda m: (m.started_at, m.id), reverse=True)
    return sessions


def resume_dir(ctx: Context, meta: SessionMeta, cwd: Path | None) -> tuple[Path, str | None]:
    """Return the directory to resume ``meta`` in, and a line for the user when it is not its own.

    ``cwd`` (``--cwd``) wins. Else the session's own directory while it exists; when it is
    gone and the current project is the same git repository (``GitIdentity.matches``), the
    same subdirectory of the current project (its root when that subdirectory is missing).
    Raises UserInputError when ``cwd`` is not a directory, or when the session's directory
    is gone and the current project is not its repository.
    """
    if cwd is not None:
        target = cwd.expanduser().resolve()
        if not target.is_dir():
            raise UserInputError(f"--cwd '{cwd}' is not a directory; give the folder to resume the session in")
        note = None if str(target) == meta.cwd else f"resuming in {target} (the session ran in {meta.cwd})"
        return target, note
    recorded = Path(meta.cwd)
    if recorded.is_dir():
        return recorded, None
    theirs = GitIdentity.from_json(meta.git_identity)
    here = ctx.project_root
    mine = project_identity(here) if theirs is not None else None
    if theirs is None or mine is None or not mine.matches(theirs):
        raise UserInputError(
            f"the session's directory {meta.cwd} no longer exists; resume it with --cwd DIR, "
            "or run 'shellkeep resume' in the project's new folder"
        )
    target = here
    try:
        inner = here / recorded.relative_to(meta.project_root)
        target = inner if inner.is_dir() else here
    except ValueError:
        pass
    return target, f"the session's directory {meta.cwd} is gone; resuming in {target}, the same git repository"


def relocate_transcript(meta: SessionMeta, cwd: Path, env: Mapping[str, str]) -> tuple[SessionMeta, str | None]:
    """Put the agent's transcript where the agent, started in ``cwd``, looks for it.

    A transcript inside the session's project (aider's chat history) moved with it: its path
    is rebased onto ``cwd``'s project. One the agent keeps by directory elsewhere (Claude
    Code's ``projects/<dash-encoded cwd>/<id>.jsonl``, Qwen's, Gemini's) is copied there from
    where it was, never over an existing file (the agent's own wins, and the original stays
    where it was, as the backup). A side folder named after the transcript (Claude Code's
    ``<id>/`` with ``subagents/`` and ``tool-results/``) is copied beside it the same way,
    file by file, never over a file that exists. Returns ``meta`` with ``agent_transcript`` naming the file
    the agent will read (``app.native.check_transcript`` restores shellkeep's copy there
    when there was nothing to copy), and a line for the user when a file was copied.
    Never raises: a copy that fails is logged and the note says so.
    """
    if not meta.agent_transcript or not meta.agent_session_id or str(cwd) == meta.cwd:
        return meta, None
    old = Path(meta.agent_transcript)
    try:
        inside = old.relative_to(meta.project_root)
    except ValueError:
        inside = None
    if inside is not None:
        new_root = git_root(cwd) or cwd
        return dataclasses.replace(meta, agent_transcript=str(new_root / inside)), None
    adapter = adapter_of(meta)
    if not isinstance(adapter, CommandAdapter):
        return meta, None
    session = AgentSession(agent=adapter.name, session_id=meta.agent_session_id, transcript=old)
    try:
        target = adapter.transcript_path_in(session, cwd, env)
    except Exception as exc:  # noqa: BLE001 - an adapter bug: resume as if nothing moved
        log.warning("could not tell where %s looks for its transcript in %s: %s", adapter.name, cwd, exc)
        return meta, None
    if target is None or target == old:
        return meta, None
    moved = dataclasses.replace(meta, agent_transcript=str(target))
    if target.exists() or not old.is_file():
        return moved, None
    try:
        ensure_dir(target.parent)
        _copy_new(old, target)
        _copy_side_folder(old.with_suffix(""), target.with_suffix(""))
    except FileExistsError:
        return moved, None  # the agent wrote it meanwhile: its own file wins
    except OSError as exc:
        log.warning("could not copy %s to %s: %s", old, target, exc)
        return moved, f"could not copy the agent's transcript to {target} ({exc.strerror or exc})"
    return moved, f"copied the agent's transcript to {target}, where it looks for it in the new folder"


def _copy_side_folder(source: Path, target: Path) -> None:
    """Copy the files under ``source`` (if it is a folder) below ``target``, skipping any that exist."""
    if not source.is_dir() or source.is_symlink():
        return
    for folder, _dirs, files in os.walk(source):
        here = target / Path(folder).relative_to(source)
        ensure_dir(here)
        for name in files:
            try:
                _copy_new(Path(folder) / name, here / name)
            except FileExistsError:
                continue


def _copy_new(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target``, which must not exist (``O_EXCL``); a partial copy is removed."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    try:
        shutil.copystat(source, target)
    except OSError:
        pass
