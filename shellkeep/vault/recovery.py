"""Recover a session whose recorder is gone: cut its recording back to whole events, repair meta.json.

A recorder killed mid-write (kill -9, power loss) leaves a cut last line (or, sealed, a cut
last record) and a ``meta.json`` still marked running. Both are repaired here, once, by the
next command that lists the session.
"""

from __future__ import annotations

import dataclasses
import os
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.live import LIVE_FILE, remove_live_status
from shellkeep.store.session import LIVE_SOCKET, META_FILE, SessionMeta, Status, iso, parse_iso, write_meta
from shellkeep.store.space import release_space
from shellkeep.vault.crypto import is_encrypted, repair_tail
from shellkeep.vault.recording import open_recording

if TYPE_CHECKING:
    from shellkeep.vault.access import Vault

log = get_logger(__name__)


def recover(meta: SessionMeta, vault: Vault | None) -> SessionMeta:
    """Repair an interrupted session from its recording and store the repaired metadata.

    Drops a cut last line from the recording (it was never a whole event; in an encrypted
    recording, a cut last record), gives back the space the recorder held for its last
    metadata write (``space.release_space``) and removes the dead recorder's ``live.json``
    (``store.live``) and ``live.sock`` (``capture.live``), then sets status ``interrupted``,
    byte counts from the events and ``ended_at`` and ``duration`` from the best evidence of
    when it stopped: its last event, or the last change to its recording, ``live.json`` or
    ``meta.json``, whichever is later (a lower bound: a recorder killed while its program was
    quiet leaves no later trace). Never raises for an
    unreadable recording (an encrypted one whose key is missing included): the metadata
    is repaired as far as possible. vault: the keys to read a sealed recording with.
    """
    cast_path = Path(meta.cast)
    seen_s = _last_sign_of_life_s(meta)
    release_space(meta.folder)
    remove_live_status(meta.folder)
    try:
        os.unlink(meta.folder / LIVE_SOCKET)
    except OSError:
        pass
    last_time = 0.0
    out_bytes = 0
    in_bytes = 0
    try:
        if is_encrypted(cast_path):
            repair_tail(cast_path)  # no key needed: records are cut, not decrypted
        else:
            _truncate_cut_tail(cast_path)
        for event in open_recording(cast_path, vault).events():
            last_time = event.time
            if event.code == "o":
                out_bytes += len(event.data.encode("utf-8"))
            elif event.code == "i":
                in_bytes += len(event.data.encode("utf-8"))
    except (OSError, ShellkeepError) as exc:
        log.warning("could not read %s while recovering: %s", cast_path, exc)
    last_time = max(last_time, seen_s)  # a quiet program wrote no event: the files tell more
    try:
        ended = parse_iso(meta.started_at) + timedelta(seconds=last_time)
        ended_at: str | None = iso(ended)
    except ValueError:
        ended_at = None
    repaired = dataclasses.replace(
        meta,
        status=Status.INTERRUPTED.value,
        ended_at=ended_at,
        duration=round(last_time, 3),
        output_bytes=max(out_bytes, meta.output_bytes),
        input_bytes=max(in_bytes, meta.input_bytes),
    )
    try:
        write_meta(repaired)
    except OSError as exc:
        log.warning("could not store repaired metadata of %s: %s", meta.id, exc)
    return repaired


def _last_sign_of_life_s(meta: SessionMeta) -> float:
    """Return seconds from the session's start to the last change of its files (0.0 when unknown)."""
    try:
        started = parse_iso(meta.started_at).timestamp()
    except ValueError:
        return 0.0
    latest = started
    for path in (Path(meta.cast), meta.folder / LIVE_FILE, meta.folder / META_FILE):
        try:
            latest = max(latest, path.stat().st_mtime)
        except OSError:
            pass
    return latest - started


def _truncate_cut_tail(path: Path) -> None:
    """Cut a recording back to its last newline if it ends inside a line."""
    with open(path, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return
        block = 65536
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                fh.truncate(start + nl + 1)
                return
            pos = start
