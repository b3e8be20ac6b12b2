"""Every read of a recording, by any command or view, goes through here and is audited.

``read_session`` resolves the session (a reference or metadata already found), appends the
audit entry (``store.audit``) and opens the recording through the vault; ``last_screen``
does the same for a redraw or a preview; ``read_file`` for a recording outside the store.
``missing_key`` / ``missing_keys`` (from ``app.listing``) tell the sessions no read can open
now: sealed with a key no store holds (shown as suspended, ``SUSPENDED_KEY_MISSING``).
"""

from __future__ import annotations

import os
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.asciicast.reader import Cast
from shellkeep.errors import ShellkeepError
from shellkeep.store.audit import record_file_read, record_read
from shellkeep.store.session import SessionMeta
from shellkeep.terminal.replay import last_screen as render_last_screen
from shellkeep.terminal.snapshot import ScreenSnapshot
from shellkeep.termsize import TermSize
from shellkeep.vault.recording import open_recording, open_tail_source


class NoRecording(ShellkeepError):
    """The session kept no terminal recording (``record.detail`` below ``full``, or its
    recording was suspended before anything was written: ``recording_error``)."""


def resolve_for_read(ctx: Context, ref: str | SessionMeta | None, *, last: bool = False) -> SessionMeta:
    """Return the session ``ref`` names (an id, prefix, name, or metadata already found)."""
    return ref if isinstance(ref, SessionMeta) else ctx.resolve(ref, last=last)


def read_session(
    ctx: Context, ref: str | SessionMeta | None, *, command: str, last: bool = False, detail: str | None = None
) -> tuple[SessionMeta, Cast]:
    """Resolve a session, record that ``command`` read it, and open its recording.

    Returns the metadata and the opened recording (header parsed; events read lazily).
    Raises SessionNotFound / AmbiguousSession for a bad reference, DataError for a corrupt
    recording, KeyUnavailable when a sealed one's key is missing, NoRecording (exit 1) for a
    session that kept none (``record.detail``).
    """
    meta = resolve_for_read(ctx, ref, last=last)
    agent = meta.extra.get("imported_from_agent")  # app.history_import: no terminal was recorded
    if isinstance(agent, str) and not os.path.exists(meta.cast):
        raise NoRecording(
            f"session {meta.id} was imported from {agent}'s own history and has no terminal recording; "
            f"'shellkeep show {meta.id}' has its exchanges"
        )
    if meta.detail != "full" and not os.path.exists(meta.cast):
        raise NoRecording(
            f"session {meta.id} kept no terminal recording (record.detail = {meta.detail!r}); "
            f"'shellkeep show {meta.id}' has what it kept"
        )
    if meta.recording_error and _is_empty(Path(meta.cast)):
        raise NoRecording(
            f"session {meta.id} recorded nothing ({meta.recording_error}); "
            f"'shellkeep show {meta.id}' has what was kept"
        )
    record_read(ctx.paths, command, meta, detail=detail)
    return meta, ctx.vault.open_recording(Path(meta.cast))


def read_kept(
    ctx: Context, ref: str | SessionMeta | None, *, command: str, last: bool = False, detail: str | None = None
) -> SessionMeta:
    """Resolve a session and record that ``command`` read what it kept besides its recording
    (exchanges, metadata, the agent transcript's copy): for a session that may have no
    recording (``record.detail``, an agent's own session imported). Raises as ``resolve``."""
    meta = resolve_for_read(ctx, ref, last=last)
    record_read(ctx.paths, command, meta, detail=detail)
    return meta


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except FileNotFoundError:
        return True


def last_screen(
    ctx: Context, ref: str | SessionMeta | None, *, command: str, size_hint: TermSize | None = None
) -> ScreenSnapshot:
    """Return a session's last screen (read from the end when its file is plain), audited.

    Raises as ``read_session``.
    """
    meta, cast = read_session(ctx, ref, command=command, detail="last screen")
    with open_tail_source(Path(meta.cast)) as mapped:
        return render_last_screen(cast, size_hint, mapped=mapped)


def read_file(ctx: Context, path: Path, *, command: str, detail: str | None = None) -> Cast:
    """Record that ``command`` read the recording file ``path`` (outside the store) and open it.

    Raises FileNotFoundError, DataError for a file that is not asciicast.
    """
    record_file_read(ctx.paths, command, path, detail=detail)
    return open_recording(path, ctx.vault)


