"""Own the rule for a broken config file: its last good copy applies, else the strictest privacy settings.

A config file that does not parse or validate never lowers privacy. The loader hands back
each file that parsed and validated (``GoodFile``); the command that records keeps it as that
file's last good copy (``save_last_good``, 0600, at ``Paths.last_good_config``); loading
itself writes nothing. While a file is broken, its last good copy applies in its place
(``stand_in``), if one is kept and still validates. Without one, the strictest privacy
settings apply: the most private value of each key that bears on privacy (the last of its
``private`` values: ``record.input = false``, ``record.detail = 'metadata'``, so that no
secret a lost ``redact.patterns`` rule would have caught is stored), laid again over the
other file's layer (a variable or flag still wins: it is said at this very run), with the
defaults for the rest (every built-in redaction rule on, no allowlist). The broken
file's encryption settings cannot be known (they need its key): none apply, and the one
line said about the file says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.config.document import FIX_PROJECT, FIX_USER, validate_document
from shellkeep.config.keys import specs
from shellkeep.config.messages import Origin
from shellkeep.config.model import ConfigValue
from shellkeep.config.prices import ModelPrice
from shellkeep.config.toml import parse_document
from shellkeep.errors import ConfigError
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import ensure_dir


@dataclass(frozen=True, slots=True)
class GoodFile:
    """A config file that parsed and validated, to keep as its last good copy.

    source: the config file. copy: where its copy is kept. data: the bytes that validated.
    mtime: the file's modification time then, float seconds since the epoch.
    """

    source: Path
    copy: Path
    data: bytes
    mtime: float


@dataclass(frozen=True, slots=True)
class StandIn:
    """What applies in place of a broken config file.

    values: by dotted key, the copy's or the strictest privacy settings. prices: the copy's
    ``[prices]`` models. strictest: the values are the strictest privacy settings, which
    stay over the layers of the other files. what: says what applies, for the one warning
    ("its last good copy from 2026-12-06 01:53 UTC").
    """

    values: dict[str, ConfigValue]
    what: str
    strictest: bool = False
    prices: dict[str, ModelPrice] = field(default_factory=dict)


def _header(source: Path) -> bytes:
    """Return the first line of the copy of ``source``: it names the file it copies."""
    return f"# shellkeep: the last good copy of {json.dumps(str(source))}, used while that file is broken\n".encode()


def stand_in(source: Path, copy: Path, *, project: bool) -> StandIn:
    """Return what applies while config file ``source`` is broken: its last good copy at ``copy``,
    else the strictest privacy settings. Reads only; raises nothing."""
    origin = Origin(f"'{copy}'", FIX_PROJECT if project else FIX_USER)
    try:
        data = copy.read_bytes()
        saved_at = os.stat(copy).st_mtime
        header = _header(source)
        if data.startswith(header):
            prices: dict[str, ModelPrice] = {}
            doc = parse_document(data, copy, origin.fix)
            values = validate_document(doc, origin, project=project, prices=prices)
            when = datetime.fromtimestamp(saved_at, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            return StandIn(values, f"its last good copy from {when} ('{copy}')", prices=prices)
    except (OSError, ConfigError, ValueError, OverflowError):
        pass  # no copy, or one that no longer validates: the strictest settings
    strictest = {spec.key: spec.private[-1] for spec in specs().values() if spec.private and (spec.project or not project)}
    shown = ", ".join(f"{key} = {_toml(value)}" for key, value in strictest.items())
    base = "your own settings" if project else "the default settings"
    return StandIn(
        strictest,
        f"{base} and the strictest privacy settings, as no good copy of it is kept ({shown}; "
        "its encryption settings cannot be known, so none apply)",
        strictest=True,
    )


def _toml(value: ConfigValue) -> str:
    """Render a privacy value as TOML, for the warning."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"'{value}'"


def save_last_good(good: Iterable[GoodFile]) -> None:
    """Keep each file as its last good copy (0600, atomically, its folder made 0700).

    A copy whose content is unchanged is not rewritten; its time is set to the file's
    modification time, the time the warning names. Called by the command that records.
    Raises OSError when a copy cannot be written.
    """
    for item in good:
        content = _header(item.source) + item.data
        try:
            same = item.copy.read_bytes() == content
        except OSError:
            same = False
        if not same:
            ensure_dir(item.copy.parent)
            write_bytes_atomic(item.copy, content)
        os.utime(item.copy, (item.mtime, item.mtime))
