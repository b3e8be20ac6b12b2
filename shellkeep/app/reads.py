"""Every read of a recording, by any command or view, goes through here and is audited.

``read_session`` resolves the session (a reference or metadata already found), appends the
audit entry (``store.audit``) and opens the recording through the vault; ``last_screen``
does the same for a redraw or a preview; ``read_file`` for a recording outside the store.
``missing_key`` / ``missing_keys`` tell the sessions no read can open now: sealed with a key
no store holds (shown as suspended, ``SUSPENDED_KEY_MISSING``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.app.context import Context
from shellkeep.asciicast.reader import Cast
from shellkeep.store.audit import record_file_read, record_read
from shellkeep.errors import ShellkeepError
from shellkeep.store.session import SessionMeta, read_meta
from shellkeep.terminal.screen import ScreenSnapshot
from shellkeep.terminal.screen import last_screen as render_last_screen
from shellkeep.termsize import TermSize
from shellkeep.vault.recording import open_recording, tail_source

if TYPE_CHECKING:
    from shellkeep.archive.index import ListedSession


def resolve_for_read(ctx: Context, ref: str | SessionMeta | None, *, last: bool = False) -> SessionMeta:
    """Return the session ``ref`` names (an id, prefix, name, or metadata already found)."""
    return ref if isinstance(ref, SessionMeta) else ctx.resolve(ref, last=last)


def read_session(
    ctx: Context, ref: str | SessionMeta | None, *, command: str, last: bool = False, detail: str | None = None
) -> tuple[SessionMeta, Cast]:
    """Resolve a session, record that ``command`` read it, and open its recording.

    Returns the metadata and the opened recording (header parsed; events read lazily).
    Raises SessionNotFound / AmbiguousSession for a bad reference, DataError for a corrupt
    recording, KeyUnavailable when a sealed one's key is missing.
    """
    meta = resolve_for_read(ctx, ref, last=last)
    record_read(ctx.paths, command, meta, detail=detail)
    return meta, ctx.vault.open_recording(Path(meta.cast))


def last_screen(
    ctx: Context, ref: str | SessionMeta | None, *, command: str, size_hint: TermSize | None = None
) -> ScreenSnapshot:
    """Return a session's last screen (read from the end when its file is plain), audited.

    Raises as ``read_session``.
    """
    meta, cast = read_session(ctx, ref, command=command, detail="last screen")
    return render_last_screen(cast, size_hint, mapped=tail_source(Path(meta.cast)))


def read_file(ctx: Context, path: Path, *, command: str, detail: str | None = None) -> Cast:
    """Record that ``command`` read the recording file ``path`` (outside the store) and open it.

    Raises FileNotFoundError, DataError for a file that is not asciicast.
    """
    record_file_read(ctx.paths, command, path, detail=detail)
    return open_recording(path, ctx.vault)


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
