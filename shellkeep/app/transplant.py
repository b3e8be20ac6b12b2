"""Continue here a session recorded on another machine: this machine's checkout, the agent's transcript.

A session pulled with ``sync pull`` (``app.remote``) names directories of the machine that
recorded it. To resume it here:

- ``checkout_for``: the directory to run in: ``--cwd``, else this machine's work tree of the
  same git repository (``GitIdentity.matches`` on the origin remote and root commit): the
  current project, a project this machine recorded sessions in, or the recorded path when it
  exists here too; the same subdirectory when it exists;
- ``transplant_transcript``: the agent's transcript (shellkeep's copy, fetched with the
  session) written where the agent started in that directory looks for it (Claude Code:
  ``~/.claude/projects/<dash-encoded cwd>/<id>.jsonl``; Codex: ``~/.codex/sessions/YYYY/MM/DD/``),
  its records' directories rewritten (the adapter's ``cwd_fields``), never over a file that
  is there: one with the same conversation (or the same one continued here) is used, another
  one is left alone and the caller re-injects.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentSession
from shellkeep.app.context import Context
from shellkeep.app.conversation import adapter_of
from shellkeep.app.listing import project_identity
from shellkeep.app.remote import remote_of, safe_name
from shellkeep.archive.listing import git_projects
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.git.identity import GitIdentity
from shellkeep.git.info import git_root
from shellkeep.logs import get_logger
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import SessionMeta
from shellkeep.vault.copies import copy_names, open_copy

__all__ = ["Transplant", "checkout_for", "is_from_another_machine", "transcript_target", "transplant_transcript"]

log = get_logger(__name__)

_PIECE_BYTES = 1 << 20


def is_from_another_machine(meta: SessionMeta) -> bool:
    """Return whether ``meta`` is a session pulled from another machine (``app.remote``)."""
    return remote_of(meta) is not None


def checkout_for(ctx: Context, meta: SessionMeta, cwd: Path | None) -> tuple[Path, str]:
    """Return where to resume the pulled session ``meta`` on this machine, and a line saying so.

    ``cwd`` (``--cwd``) wins. Else the first work tree of the session's repository (its
    ``git_identity``) among: the current project, the projects this machine recorded
    sessions in (their root still on disk and still that repository), and the recorded
    project root when the same path holds it here. The session's subdirectory of its project
    is used when it exists in the checkout, else the checkout's root.
    Raises UserInputError when ``cwd`` is not a directory, or no checkout matches (the line
    names the remote and root commit looked for and suggests ``--cwd``).
    """
    remote = remote_of(meta) or {}
    host = remote.get("host") or meta.host or "another machine"
    if cwd is not None:
        target = cwd.expanduser().resolve()
        if not target.is_dir():
            raise UserInputError(f"--cwd '{cwd}' is not a directory; give the folder to resume the session in")
        return target, f"resuming {host}'s session in {target} (it ran in {meta.cwd} there)"
    theirs = GitIdentity.from_json(meta.git_identity)
    if theirs is None:
        raise UserInputError(
            f"session {meta.id} ran on {host} in {meta.cwd}, outside a git repository, so no checkout here can be "
            "matched to it; resume it with --cwd DIR"
        )
    for root in _candidate_roots(ctx, theirs, meta):
        mine = project_identity(root)
        if mine is not None and mine.matches(theirs):
            target = _same_subdirectory(meta, root)
            return target, f"resuming {host}'s session in {target}, this machine's checkout of {_described(theirs)}"
    raise UserInputError(
        f"no checkout of {_described(theirs)} (where session {meta.id} ran on {host}) is known here; "
        "run 'shellkeep resume' inside your clone of it, or give --cwd DIR"
    )


def _candidate_roots(ctx: Context, theirs: GitIdentity, meta: SessionMeta) -> Iterator[Path]:
    """Yield the work trees that may hold the repository ``theirs``, most likely first, each once."""
    seen: set[Path] = set()

    def fresh(path: Path) -> bool:
        if path in seen or not path.is_dir():
            return False
        seen.add(path)
        return True

    if fresh(ctx.project_root):
        yield ctx.project_root
    try:
        known = git_projects(ctx.paths, theirs, vault=ctx.vault, recover=ctx.recover)
    except ShellkeepError as exc:
        log.warning("cannot look for this machine's checkouts of %s: %s", _described(theirs), exc)
        known = []
    for project in known:
        if fresh(Path(project.project_root)):
            yield Path(project.project_root)
    if fresh(Path(meta.project_root)):  # the same path on both machines (the same user name and layout)
        yield Path(meta.project_root)


def _same_subdirectory(meta: SessionMeta, root: Path) -> Path:
    """Return ``root`` joined with the session's directory relative to its project, when that exists."""
    try:
        inner = root / Path(meta.cwd).relative_to(meta.project_root)
    except ValueError:
        return root
    return inner if inner.is_dir() else root


def _described(identity: GitIdentity) -> str:
    """Return a repository as the user knows it: ``remote github.com/a/b, root commit 1a2b3c4d5e6f``."""
    parts = []
    if identity.remote:
        parts.append(f"remote {identity.remote}")
    if identity.root_commit:
        parts.append(f"root commit {identity.root_commit[:12]}")
    return "the git repository with " + " and ".join(parts)


@dataclass(frozen=True, slots=True)
class Transplant:
    """What ``transplant_transcript`` did.

    meta: the session with ``agent_transcript`` naming the file the agent reads here.
    usable: the native resume may go ahead (else the caller re-injects).
    note: one line for the user, None when there is nothing to say.
    """

    meta: SessionMeta
    usable: bool
    note: str | None = None


def transcript_target(meta: SessionMeta, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """Return where the session's agent, started in ``cwd`` with ``env``, looks for its transcript.

    None when the adapter does not know (no store by directory or date, no id) or cannot
    rewrite its transcript's directories (``CommandAdapter.cwd_fields`` empty).
    """
    adapter = adapter_of(meta)
    if not isinstance(adapter, CommandAdapter) or not adapter.cwd_fields or not meta.agent_session_id:
        return None
    recorded = Path(meta.agent_transcript) if meta.agent_transcript else None
    session = AgentSession(agent=adapter.name, session_id=meta.agent_session_id, transcript=recorded)
    try:
        target = adapter.transcript_path_in(session, cwd, env)
    except Exception as exc:  # noqa: BLE001 - an adapter bug: re-inject
        log.warning("could not tell where %s looks for its transcript in %s: %s", adapter.name, cwd, exc)
        return None
    if target is not None and target.name.endswith(".jsonl.zst"):
        target = target.with_name(target.name.removesuffix(".zst"))  # written plain: agents read both
    return target


def transplant_transcript(ctx: Context, meta: SessionMeta, cwd: Path, env: Mapping[str, str]) -> Transplant:
    """Write the pulled session's transcript where its agent, started in ``cwd``, looks for it.

    Source: shellkeep's copy in the session's folder (``agent/<name>``, fetched by
    ``sync``), streamed; each JSONL record naming the recorded directory (or one below the
    recorded project root) gets this machine's (``cwd``, below its git top-level). The file is
    written beside the target and linked into place, so it never replaces a file: when one is
    there already, it is used when it holds the same conversation (equal, or the same
    continued here), and left alone otherwise (``usable`` False, the note says so).
    Never raises: a failure to read or write makes the transcript unusable, with the reason.
    """
    adapter = adapter_of(meta)
    target = transcript_target(meta, cwd, env)
    if target is None or not meta.agent_transcript or not isinstance(adapter, CommandAdapter):
        return Transplant(meta, False, f"{meta.agent}'s transcript cannot be moved to this machine; re-injecting instead")
    placed = dataclasses.replace(meta, agent_transcript=str(target))
    name = Path(meta.agent_transcript).name
    remap = _remapper(meta, cwd)
    try:
        staged = _stage(ctx, meta, name, target, lambda record: adapter.relocate_record(record, remap))
    except FileNotFoundError:
        return Transplant(meta, False, f"session {meta.id} holds no copy of {meta.agent}'s transcript; re-injecting instead")
    except (OSError, ShellkeepError) as exc:
        log.warning("could not write %s: %s", target, exc)
        return Transplant(meta, False, f"could not write the agent's transcript to {target} ({getattr(exc, 'strerror', None) or exc}); re-injecting instead")
    try:
        try:
            os.link(staged, target)  # fails when a file is there: it is never replaced
        except FileExistsError:
            done = _existing(placed, meta, staged, target)
        except OSError as exc:
            return Transplant(meta, False, f"could not write the agent's transcript to {target} ({exc.strerror or exc}); re-injecting instead")
        else:
            done = Transplant(placed, True, f"put the agent's transcript at {target}, with this machine's paths")
    finally:
        staged.unlink(missing_ok=True)
    if done.usable:
        _place_side_folder(ctx, meta, target, lambda record: adapter.relocate_record(record, remap))
    return done


def _place_side_folder(ctx: Context, meta: SessionMeta, target: Path, relocate: Callable[[dict[str, object]], bool]) -> None:
    """Write the copies of the transcript's side folder (Claude Code's ``<id>/``: subagents'
    transcripts, large tool results) beside ``target``, as the agent keeps them; never raises.

    A file already there is left as it is; a JSONL file has its records' directories
    rewritten as the transcript's, other files are written as they are.
    """
    side = Path(meta.agent_transcript or "").stem + "/"
    for name in copy_names(meta.folder):
        if not name.startswith(side) or not safe_name(name):
            continue
        dest = target.parent / name
        if dest.exists():
            continue
        try:
            staged = _stage(ctx, meta, name, dest, relocate if name.endswith(".jsonl") else lambda record: False)
            try:
                os.link(staged, dest)
            except FileExistsError:
                pass  # the agent wrote it meanwhile: its own file wins
            finally:
                staged.unlink(missing_ok=True)
        except (OSError, ShellkeepError) as exc:
            log.warning("could not write %s: %s", dest, exc)


def _existing(placed: SessionMeta, meta: SessionMeta, staged: Path, target: Path) -> Transplant:
    """Judge the file already at ``target`` against the transcript ``staged`` would have put there."""
    try:
        relation = _compare(staged, target)
    except OSError as exc:
        return Transplant(meta, False, f"cannot read {target} ({exc.strerror or exc}); left it as it is and re-injecting instead")
    if relation == "same":
        return Transplant(placed, True)
    if relation == "continued":
        return Transplant(placed, True, f"{target} holds this conversation continued here; resuming from it")
    return Transplant(
        meta, False, f"{target} holds another version of this conversation; left it as it is and re-injecting instead"
    )


def _stage(ctx: Context, meta: SessionMeta, name: str, target: Path, relocate: Callable[[dict[str, object]], bool]) -> Path:
    """Write the relocated copy to a new private file beside ``target`` (its folder made); return its path.

    Raises FileNotFoundError when the session holds no copy ``name``; OSError, DataError,
    KeyUnavailable while reading or writing (the partial file is removed).
    """
    source = open_copy(ctx.vault, meta.folder, name)  # first: no folder is made for a copy that is not there
    try:
        ensure_dir(target.parent)
    except BaseException:
        source.close()
        raise
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".shellkeep-tmp", dir=target.parent)
    staged = Path(tmp)
    try:
        with source, os.fdopen(fd, "wb") as out:
            for line in source:
                out.write(_relocated(line, relocate))
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return staged


def _relocated(line: bytes, relocate: Callable[[dict[str, object]], bool]) -> bytes:
    """Return a JSONL line with its record's directories rewritten; a line that is not a JSON object as it is."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    if not isinstance(record, dict) or not relocate(record):
        return line
    end = b"\n" if line.endswith(b"\n") else b""
    # The agents write compact JSON (JavaScript's JSON.stringify, serde_json): so is the rewritten line.
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + end


def _remapper(meta: SessionMeta, cwd: Path) -> Callable[[str], str]:
    """Return old directory -> new one: the recorded cwd becomes ``cwd``, a path below the
    recorded project root the same path below ``cwd``'s git top-level; others stay."""
    old_cwd, old_root = meta.cwd.rstrip("/") or "/", meta.project_root.rstrip("/") or "/"
    try:
        new_root = git_root(cwd) or cwd
    except OSError:
        new_root = cwd

    def remap(path: str) -> str:
        if path.rstrip("/") == old_cwd:
            return str(cwd)
        try:
            inside = Path(path).relative_to(old_root)
        except ValueError:
            return path
        return str(new_root / inside)

    return remap


def _compare(ours: Path, theirs: Path) -> str:
    """Return ``same``, ``continued`` (``theirs`` starts with all of ``ours``) or ``other``."""
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        while True:
            mine = a.read(_PIECE_BYTES)
            other = b.read(len(mine)) if mine else b.read(1)
            if not mine:
                return "same" if not other else "continued"
            if mine != other:
                return "other"
