"""Check, before a native resume, that the agent will find its transcript; help it when it will not.

An agent resumes a conversation from its own store (Claude Code's
``~/.claude/projects/<dir>/<id>.jsonl``, Codex's rollout file). When that file is gone (the
agent pruned it, the user cleaned up), cut (a crash mid-write left a torn last line) or
unreadable, the native resume fails or silently starts an empty conversation; when a block of
it was lost in the middle (NUL bytes over records, as a crash of the file system leaves it), the
agent silently drops the exchanges after the damage. shellkeep
keeps a redacted copy (in its chunk store, referenced from the session folder's ``agent/``,
read as a stream): it is put back where the agent looks, never over an existing file; a damaged file is backed up first
(``<name>.shellkeep-backup-<time>``) and replaced by the copy when the copy holds more.
When no usable transcript can be had, the caller re-injects instead.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from shellkeep.agents.base import AgentSession
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import SessionMeta, iso, utc_now
from shellkeep.vault.access import Vault
from shellkeep.vault.copies import open_copy

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class TranscriptCheck:
    """What the check found: ``usable`` (native resume may go ahead) and a one-line ``note``
    for the user (what was wrong, what was done), None when all was well."""

    usable: bool
    note: str | None = None
    restores: bool = False
    """A dry run only: the real check would write shellkeep's copy where the agent looks."""


def check_transcript(meta: SessionMeta, vault: Vault, *, dry_run: bool = False) -> TranscriptCheck:
    """Make sure ``meta``'s agent transcript is where the agent looks, restoring shellkeep's copy.

    Sessions whose agent keeps no single transcript file (``agent_transcript`` unset: a
    database, or nothing known) are taken as usable. Never raises: a copy that cannot be read
    or written makes the transcript unusable, with the reason in ``note``. With ``dry_run``
    nothing is written: the check says what a real one would do (``restores`` set when it
    would put the copy back), so that ``resume --dry-run`` plans what ``resume`` runs.
    """
    if not meta.agent_transcript:
        return TranscriptCheck(True)
    target = Path(meta.agent_transcript)
    state = _state_of(target)
    if state == "ok":
        return TranscriptCheck(True)
    try:
        saved = _copy_records(vault, meta.folder, target.name)
    except (OSError, ShellkeepError) as exc:
        log.warning("cannot read shellkeep's copy of %s: %s", target.name, exc)
        saved = None
    if saved is None or saved == 0:
        return TranscriptCheck(False, f"the agent's transcript {target} is {state} and shellkeep holds no copy of it")
    if dry_run:
        return _planned_restore(target, state, saved)
    try:
        if state == "missing":
            ensure_dir(target.parent)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # never over a file
            with os.fdopen(fd, "wb") as fh:
                for piece in _copy_pieces(vault, meta.folder, target):
                    fh.write(piece)
            return TranscriptCheck(True, f"the agent's transcript {target} was gone; restored shellkeep's copy")
        with open(target, "rb") as fh:
            if _records(_lines_without_nul(fh)) >= saved:  # damaged, yet it holds as much as the copy: leave it
                if state == "damaged":  # the agent drops what follows the damage: it must be typed in
                    return TranscriptCheck(False, f"the agent's transcript {target} is damaged (NUL bytes over records) and shellkeep's copy holds no more")
                return TranscriptCheck(True)
        backup = target.with_name(f"{target.name}.shellkeep-backup-{iso(utc_now()).replace(':', '')}")
        os.link(target, backup)  # the damaged file stays, under another name
        write_bytes_atomic(target, _copy_pieces(vault, meta.folder, target))
        return TranscriptCheck(True, f"the agent's transcript {target} was {state}; kept it as {backup.name} and restored shellkeep's copy")
    except FileExistsError:
        return TranscriptCheck(True)  # the agent wrote it meanwhile: its own file wins
    except (OSError, ShellkeepError) as exc:
        return TranscriptCheck(False, f"the agent's transcript {target} is {state} and could not be restored ({getattr(exc, 'strerror', None) or exc})")


def native_resume_problem(adapter: object, session: AgentSession, env: Mapping[str, str]) -> str | None:
    """Return why ``adapter``'s agent would resume ``session`` with no conversation although its
    transcript is whole (Codex's thread list pointing elsewhere, ``agents.codex_state``), else None.

    Adapters without ``native_resume_problem`` see none. Never raises: a failure is logged and
    taken as no problem.
    """
    check = getattr(adapter, "native_resume_problem", None)
    if not callable(check):
        return None
    try:
        problem = check(session, env)
    except Exception as exc:  # noqa: BLE001 - a check must never stop a resume
        log.warning("could not check the agent's own state for %s: %s", session.session_id, exc)
        return None
    return problem if isinstance(problem, str) else None


def no_transcript_found(adapter: object, session_id: str, cwd: Path, env: Mapping[str, str]) -> TranscriptCheck | None:
    """Return an unusable check when ``adapter``'s agent (``missing_transcript_reinjects``),
    started in ``cwd``, keeps its transcripts in files and holds none of ``session_id`` (Gemini CLI's chat file moved away
    before the session was collected: ``gemini -r`` would only say "No previous sessions
    found"), else None. Never raises: a failure is logged and taken as nothing known."""
    layout_of = getattr(adapter, "transcript_layout", None)
    if not getattr(adapter, "missing_transcript_reinjects", False):
        return None
    try:
        layout = layout_of(cwd, env) if callable(layout_of) else None
        if layout is None or layout.path_of(session_id) is not None:
            return None
    except Exception as exc:  # noqa: BLE001 - a check must never stop a resume
        log.warning("could not look for the transcript of %s: %s", session_id, exc)
        return None
    return TranscriptCheck(False, f"the agent holds no transcript of session {session_id} and shellkeep no copy of it")


def _planned_restore(target: Path, state: str, saved: int) -> TranscriptCheck:
    """Return what ``check_transcript`` would do to the damaged or missing ``target``, writing nothing."""
    if state == "missing":
        return TranscriptCheck(True, f"the agent's transcript {target} is gone; shellkeep's copy would be restored", restores=True)
    try:
        with open(target, "rb") as fh:
            if _records(_lines_without_nul(fh)) >= saved:  # as check_transcript judges it
                if state == "damaged":
                    return TranscriptCheck(False, f"the agent's transcript {target} is damaged (NUL bytes over records) and shellkeep's copy holds no more")
                return TranscriptCheck(True)
    except OSError:
        pass
    return TranscriptCheck(True, f"the agent's transcript {target} is {state}; it would be kept as a backup and shellkeep's copy restored", restores=True)


def remove_resume_leftovers(adapter: object, session: AgentSession) -> list[Path]:
    """Have ``adapter`` delete what the agent's own resume left that would make it delete
    ``session``'s transcript later (Gemini CLI's content-less second chat file); return it.

    Adapters without ``remove_resume_leftovers`` leave nothing. Never raises: an adapter
    failure is logged and nothing more is done.
    """
    remove = getattr(adapter, "remove_resume_leftovers", None)
    if not callable(remove):
        return []
    try:
        removed = list(remove(session))
    except Exception as exc:  # noqa: BLE001 - a protection must never stop a resume or a collection
        log.warning("could not tidy the resume leftovers of %s: %s", session.session_id, exc)
        return []
    for path in removed:
        log.info("removed %s, left by the agent's resume: its next start would delete the transcript", path)
    return removed


def _copy_records(vault: Vault, folder: Path, name: str) -> int | None:
    """Return how many whole records shellkeep's copy of ``name`` holds (-1: not JSONL), None: no copy.

    Streamed through the chunk store (``vault.copies.open_copy``). Raises OSError,
    DataError, KeyUnavailable.
    """
    try:
        fh = open_copy(vault, folder, name)
    except FileNotFoundError:
        return None
    with fh:
        if not name.endswith((".jsonl", ".jsonl.zst")):
            return -1 if fh.read(1) else 0
        return _records(fh)


def _copy_pieces(vault: Vault, folder: Path, target: Path) -> Iterator[bytes]:
    """Yield shellkeep's copy of ``target`` in pieces, zstd-compressed again for a ``.zst`` target."""
    with open_copy(vault, folder, target.name) as fh:
        if target.suffix == ".zst":
            import zstandard

            compressor = zstandard.ZstdCompressor().compressobj()
            for piece in iter(lambda: fh.read(1 << 20), b""):
                yield compressor.compress(piece)
            yield compressor.flush()
            return
        yield from iter(lambda: fh.read(1 << 20), b"")


def _state_of(path: Path) -> str:
    """Return ``ok``, ``missing``, ``empty``, ``cut`` (a torn last line), ``damaged`` (NUL
    bytes inside: a block lost over records) or ``unreadable``.

    Only a JSONL transcript (``*.jsonl``) is judged by its records; another file (aider's
    Markdown chat history, Gemini's older JSON document) is ``ok`` whenever it can be opened.
    """
    if path.suffix != ".jsonl":
        try:
            with open(path, "rb"):
                return "ok"
        except FileNotFoundError:
            return "missing"
        except OSError:
            return "unreadable"
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return "empty"
            fh.seek(max(0, size - 1))
            last = fh.read(1)
            fh.seek(0)
            head = fh.readline()
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"
    if _records([head]) == 0:
        return "unreadable"
    if last != b"\n":
        return "cut"
    return "damaged" if _holds_nul(path) else "ok"


def _holds_nul(path: Path) -> bool:
    """Return whether the file at ``path`` holds a NUL byte; read in 1 MiB pieces (memory stays
    small whatever its size). A JSONL transcript never holds one: JSON escapes it."""
    try:
        with open(path, "rb") as fh:
            return any(b"\0" in piece for piece in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return False


def _lines_without_nul(fh: IO[bytes], piece_bytes: int = 1 << 20) -> Iterator[bytes]:
    """Yield the lines of ``fh`` that hold no NUL byte, read in pieces of ``piece_bytes``.

    A line holding one is no record (JSON escapes NUL) and is skipped without being held:
    a block of NUL bytes of any size (a sparse hole) costs one piece of memory, not its size.
    """
    while True:
        piece = fh.readline(piece_bytes)
        if not piece:
            return
        parts, damaged = [piece], b"\0" in piece
        while not piece.endswith(b"\n"):
            piece = fh.readline(piece_bytes)
            if not piece:
                break
            damaged = damaged or b"\0" in piece
            if damaged:
                parts.clear()  # nothing of it is kept
            else:
                parts.append(piece)
        if not damaged:
            yield b"".join(parts)


def _records(lines: Iterable[bytes]) -> int:
    """Return how many of ``lines`` are whole JSON objects (a JSONL transcript's records), streamed."""
    count = 0
    for line in lines:
        try:
            if isinstance(json.loads(line), dict):
                count += 1
        except ValueError:
            continue
    return count
