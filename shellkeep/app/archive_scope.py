"""The scope of an archive reader that is not a person (``shellkeep mcp``): which sessions it may see.

A ``Scope`` is the project of the reader's working directory (with the same repository's
sessions recorded at a former path, as ``shellkeep search`` counts them), every local
project with ``all_projects``, plus the sessions pulled from other machines with
``remote`` (of the same repository, by git identity, unless ``all_projects``).

``find_in_scope`` resolves a reference among the sessions in scope only: a session
outside it is answered exactly as an unknown one (``SessionNotFound``, the same line), so
that no reader can tell the two apart or reach it by its exact id.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.app.listing import moved_projects, project_identity
from shellkeep.app.remote import pulled_machines, remote_of
from shellkeep.errors import AmbiguousSession, DataError, SessionNotFound
from shellkeep.git.identity import GitIdentity
from shellkeep.store.paths import project_key
from shellkeep.store.session import META_FILE, SessionMeta, is_interrupted, read_meta, readable_text

__all__ = ["Scope", "find_in_scope", "not_found", "open_scope"]

_MAX_REF_CHARS = 200


@dataclass(frozen=True, slots=True)
class Scope:
    """Which sessions a reader may see.

    projects: the local project keys in scope (folder names under ``projects/``); None for
    every project. remote: the sessions pulled from other machines are in scope too.
    identity: the git identity of the reader's project, which a pulled session's must match
    (None with ``projects`` None: any pulled session; None otherwise: none matches).
    """

    projects: tuple[str, ...] | None
    remote: bool = False
    identity: GitIdentity | None = None

    def holds(self, meta: SessionMeta) -> bool:
        """Return whether ``meta`` (local or pulled) is in this scope."""
        if remote_of(meta) is not None:
            if not self.remote:
                return False
            if self.projects is None:
                return True
            theirs = GitIdentity.from_json(meta.git_identity)
            return self.identity is not None and theirs is not None and self.identity.matches(theirs)
        return self.projects is None or meta.folder.parent.name in self.projects


def open_scope(ctx: Context, *, all_projects: bool = False, remote: bool = False) -> Scope:
    """Return the scope of a reader started in ``ctx.project_root``; runs git once or twice."""
    if all_projects:
        return Scope(None, remote)
    projects = (project_key(ctx.project_root), *moved_projects(ctx))
    return Scope(tuple(dict.fromkeys(projects)), remote, project_identity(ctx.project_root) if remote else None)


def not_found(ref: str) -> SessionNotFound:
    """Return the one error of a reference no session in scope answers (unknown or out of scope alike)."""
    shown = readable_text(ref)[:_MAX_REF_CHARS]
    return SessionNotFound(f"no session '{shown}' in this scope; search_sessions or list_sessions give the ids")


def find_in_scope(ctx: Context, scope: Scope, ref: str) -> SessionMeta:
    """Return the session in scope whose id, name or unique id prefix is ``ref``.

    An exact id is looked for in the folders in scope first (no listing); then names and
    prefixes among the sessions in scope only. An interrupted session is repaired first
    (``Context.recover``). Raises SessionNotFound (``not_found``) for a reference no session
    in scope matches, also when a session outside the scope would; AmbiguousSession for a
    prefix of several sessions in scope; DataError for an unreadable ``meta.json``.
    """
    ref = ref.strip()
    if not ref or len(ref) > _MAX_REF_CHARS or not ref.isprintable():
        raise not_found(ref)
    found = _exact(_candidates(ctx, scope), ref) if "/" not in ref and ref not in (".", "..") else None
    if found is None:
        listed = _in_scope(ctx, scope)
        found = next((m for m in listed if m.name in (ref, readable_text(ref))), None)
        prefixed = [m for m in listed if m.id.startswith(ref)] if found is None else []
        if len(prefixed) > 1:  # among the sessions in scope only: nothing outside it is told
            raise AmbiguousSession(f"'{readable_text(ref)}' matches {len(prefixed)} sessions in this scope; give more of the id")
        found = found or (prefixed[0] if prefixed else None)
    if found is None or not scope.holds(found):
        raise not_found(ref)
    return ctx.recover(found) if is_interrupted(found) else found


def _candidates(ctx: Context, scope: Scope) -> list[Path]:
    """Return the folders whose children are the sessions in scope (projects, pulled projects)."""
    roots: list[Path] = []
    if scope.projects is None:
        roots += _children(ctx.paths.projects)
    else:
        roots += [ctx.paths.projects / p for p in scope.projects]
    if scope.remote:
        for machine in pulled_machines(ctx.paths):
            roots += _children(ctx.paths.remote_paths(machine).projects)
    return roots


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def _exact(roots: list[Path], session_id: str) -> SessionMeta | None:
    for root in roots:
        folder = root / session_id
        if (folder / META_FILE).is_file():
            return read_meta(folder)
    return None


def _in_scope(ctx: Context, scope: Scope) -> list[SessionMeta]:
    """Return the metadata of every session in scope, newest first (unreadable folders skipped)."""
    found: list[SessionMeta] = []
    for root in _candidates(ctx, scope):
        for folder in _children(root):
            if not (folder / META_FILE).is_file():
                continue
            try:
                meta = read_meta(folder)
            except (OSError, DataError):
                continue
            if scope.holds(meta):
                found.append(meta)
    found.sort(key=lambda m: (m.started_at, m.id), reverse=True)
    return found
