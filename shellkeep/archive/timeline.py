"""Place markers and exchanges on a recording's time line (float seconds since its start).

Used to start a replay at a marker or an exchange, to date search hits and to pick the
screens of an HTML export. Markers are the recording's ``m`` events (asciicast v2/v3) and
the session's checkpoints the recording does not hold (``checkpoints.jsonl``: those of
exchanges, or added once the session had ended), numbered from 1 in time order; exchanges
are numbered from 1 as ``show`` lists them. A checkpoint's marker is ``checkpoint N`` or
``checkpoint N: LABEL``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.asciicast.reader import Cast
from shellkeep.errors import UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.checkpoints import Checkpoint, read_checkpoints
from shellkeep.store.session import SessionMeta, parse_iso
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import read_exchanges

if TYPE_CHECKING:
    from shellkeep.agents.base import Exchange

__all__ = ["CLI_POINTS", "Marker", "PointNames", "exchange_offset_s", "read_markers", "read_session_markers", "start_time", "with_checkpoints"]

log = get_logger(__name__)

_CHECKPOINT_MARKER = re.compile(r"checkpoint (\d+)(?:: |$)")


@dataclass(frozen=True, slots=True)
class PointNames:
    """How ``start_time``'s errors name its points: the command's options, or an MCP tool's arguments.

    use_at: what to do instead when an exchange or marker has no time; see_exchanges: where the
    exchanges are listed (``{id}``: the session's id).
    """

    at: str
    marker: str
    exchange: str
    use_at: str
    see_exchanges: str


CLI_POINTS = PointNames("--at", "--marker", "--exchange", "replay it with --at SECONDS", "see 'shellkeep show {id}'")


@dataclass(frozen=True, slots=True)
class Marker:
    """A marker of a recording: ``n`` 1-based, ``time_s`` seconds since start, ``label``."""

    n: int
    time_s: float
    label: str


def read_markers(cast: Cast) -> list[Marker]:
    """Return the markers of the recording ``cast`` in order; raises DataError if corrupt."""
    found: list[Marker] = []
    for event in cast.events():
        if event.code == "m":
            found.append(Marker(len(found) + 1, event.time, event.data))
    return found


def with_checkpoints(markers: Sequence[Marker], checkpoints: Sequence[Checkpoint]) -> list[Marker]:
    """Return ``markers`` with the markers of the ``checkpoints`` they lack, renumbered in time order."""
    recorded = {int(m.group(1)) for marker in markers if (m := _CHECKPOINT_MARKER.match(marker.label))}
    timed = [(marker.time_s, marker.label) for marker in markers]
    timed += [(c.time_s, c.marker_label) for c in checkpoints if c.n not in recorded]
    timed.sort(key=lambda item: item[0])  # stable: markers of one time keep their order
    return [Marker(n, time_s, label) for n, (time_s, label) in enumerate(timed, 1)]


def read_session_markers(meta: SessionMeta, vault: Vault) -> list[Marker]:
    """Return the markers of ``meta``'s recording and checkpoints (see the module doc).

    A session that kept no recording has its checkpoints' markers only.

    An unreadable ``checkpoints.jsonl`` is logged and left out; raises DataError when the
    recording is corrupt, OSError when it cannot be read.
    """
    try:
        checkpoints = read_checkpoints(meta.folder)
    except OSError as exc:
        log.warning("could not read the checkpoints of %s: %s", meta.id, exc)
        checkpoints = []
    if meta.detail != "full" and not Path(meta.cast).exists():  # record.detail, or an agent's own session imported
        return with_checkpoints([], checkpoints)
    return with_checkpoints(read_markers(vault.open_recording(Path(meta.cast))), checkpoints)


def exchange_offset_s(meta: SessionMeta, exchange: Exchange) -> float | None:
    """Return when ``exchange`` was sent, in float seconds since the session's start (>= 0),
    or None when the exchange or the session has no usable time."""
    if not exchange.time:
        return None
    try:
        return max(0.0, (parse_iso(exchange.time) - parse_iso(meta.started_at)).total_seconds())
    except ValueError:
        return None


def start_time(
    meta: SessionMeta,
    vault: Vault,
    *,
    at: float | None = None,
    marker: str | None = None,
    exchange: int | None = None,
    names: PointNames = CLI_POINTS,
) -> float:
    """Return where a replay starts: ``at`` seconds, a marker (its label or its checkpoint's
    label, else its 1-based number) or the 1-based exchange ``exchange``; 0.0 when none is given. vault: reads the
    recording and exchanges; names: how the errors name the points.

    Raises UserInputError when more than one is given or the marker or exchange is unknown;
    DataError when the recording is corrupt.
    """
    points = ((names.at, at), (names.marker, marker), (names.exchange, exchange))
    given = [name for name, value in points if value is not None]
    if len(given) > 1:
        raise UserInputError(f"give only one of {', '.join(given)}")
    if at is not None:
        return max(0.0, at)
    if marker is not None:
        return _marker_time(meta, vault, marker, names)
    if exchange is not None:
        return _exchange_time(meta, vault, exchange, names)
    return 0.0


def _marker_time(meta: SessionMeta, vault: Vault, ref: str, names: PointNames) -> float:
    markers = read_session_markers(meta, vault)
    for m in markers:
        if m.label == ref:
            return m.time_s
    for m in markers:  # a checkpoint's own label
        if _CHECKPOINT_MARKER.match(m.label) and m.label.partition(": ")[2] == ref:
            return m.time_s
    if ref.isdigit() and 1 <= int(ref) <= len(markers):
        return markers[int(ref) - 1].time_s
    if not markers:
        raise UserInputError(f"session {meta.id} has no markers; {names.use_at}")
    shown = ", ".join(f"{m.n} '{m.label}'" for m in markers[:5])
    raise UserInputError(f"no marker '{ref}' in session {meta.id}; it has {len(markers)}: {shown}")


def _exchange_time(meta: SessionMeta, vault: Vault, number: int, names: PointNames) -> float:
    exchanges = read_exchanges(meta, vault)
    if not 1 <= number <= len(exchanges):
        if not exchanges:
            raise UserInputError(f"session {meta.id} has no exchanges; {names.use_at}")
        see = names.see_exchanges.format(id=meta.id)
        raise UserInputError(f"session {meta.id} has exchanges 1 to {len(exchanges)}, not {number}; {see}")
    offset = exchange_offset_s(meta, exchanges[number - 1])
    if offset is None:
        raise UserInputError(f"exchange {number} of session {meta.id} has no time; {names.use_at}")
    return offset
