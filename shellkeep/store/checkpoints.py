"""Own a session's ``checkpoints.jsonl``: its checkpoints, numbered from 1, appended under a lock.

Format: JSON Lines, one object a line: ``n`` (1-based), ``time_s`` (float seconds since the
session's start), ``label``, ``auto`` (true for the checkpoint of an exchange), ``exchange``
(its 1-based number, or null), ``head``, ``branch``, ``snapshot`` (the snapshot commit) and
``ref`` (the git ref keeping it), the last four null for a marker-only checkpoint (outside a
git work tree), plus ``git_root``. A cut last line is ignored; a malformed line is skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from shellkeep.logs import get_logger
from shellkeep.store.paths import FILE_MODE

__all__ = ["CHECKPOINTS_FILE", "Checkpoint", "append_checkpoint", "read_checkpoints"]

log = get_logger(__name__)

CHECKPOINTS_FILE = "checkpoints.jsonl"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One checkpoint of a session (see the module doc for the fields)."""

    n: int
    time_s: float
    label: str
    auto: bool = False
    exchange: int | None = None
    head: str | None = None
    branch: str | None = None
    snapshot: str | None = None
    ref: str | None = None
    git_root: str | None = None

    @property
    def has_snapshot(self) -> bool:
        """Whether the checkpoint holds a snapshot of the files (else it is a marker only)."""
        return self.snapshot is not None and self.git_root is not None

    @property
    def marker_label(self) -> str:
        """The recording's marker for it: ``checkpoint N`` or ``checkpoint N: LABEL``."""
        return f"checkpoint {self.n}: {self.label}" if self.label else f"checkpoint {self.n}"

    def to_json(self) -> dict[str, object]:
        """Return the checkpoint as one ``checkpoints.jsonl`` object."""
        return asdict(self)


def read_checkpoints(folder: Path) -> list[Checkpoint]:
    """Return the checkpoints of the session in ``folder`` in order; [] when it has none.

    A line that is not a checkpoint object (a cut last line) is skipped. Raises OSError
    when the file exists but cannot be read.
    """
    try:
        raw = (folder / CHECKPOINTS_FILE).read_bytes()
    except FileNotFoundError:
        return []
    return _parse(raw)


def append_checkpoint(folder: Path, make: Callable[[int], Checkpoint | None]) -> Checkpoint | None:
    """Append the checkpoint ``make(n)`` returns, ``n`` being the next number; return it.

    ``make`` runs while the file is locked (``flock``), so two writers never draw the same
    number; it returns None to append nothing. Raises OSError.
    """
    fd = os.open(folder / CHECKPOINTS_FILE, os.O_RDWR | os.O_CREAT | os.O_APPEND, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with open(fd, "rb", closefd=False) as existing:
            raw = existing.read()
        if raw and not raw.endswith(b"\n"):
            os.write(fd, b"\n")  # a line cut by a crash stays a line of its own, skipped
        known = _parse(raw)
        checkpoint = make(max((c.n for c in known), default=0) + 1)
        if checkpoint is None:
            return None
        os.write(fd, json.dumps(checkpoint.to_json(), ensure_ascii=False).encode("utf-8") + b"\n")
        os.fsync(fd)
        return checkpoint
    finally:
        os.close(fd)  # releases the lock


def _parse(raw: bytes) -> list[Checkpoint]:
    found: list[Checkpoint] = []
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            found.append(
                Checkpoint(
                    n=int(obj["n"]),
                    time_s=float(obj["time_s"]),
                    label=str(obj.get("label") or ""),
                    auto=bool(obj.get("auto")),
                    exchange=_opt_int(obj.get("exchange")),
                    head=_opt_str(obj.get("head")),
                    branch=_opt_str(obj.get("branch")),
                    snapshot=_opt_str(obj.get("snapshot")),
                    ref=_opt_str(obj.get("ref")),
                    git_root=_opt_str(obj.get("git_root")),
                )
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("skipping malformed line %d of %s", number, CHECKPOINTS_FILE)
    return found


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]
