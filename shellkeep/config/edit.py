"""Own writing config.toml: ``config set`` and ``config edit``'s template, with tomli-w.

A file is validated whole before it is written, and written atomically (0600, its folder
0700). tomli-w is imported where it is used: recording never loads it.
"""

from __future__ import annotations

import typing
from pathlib import Path

from shellkeep.config.document import FIX_USER, file_origin, validate_document
from shellkeep.config.keys import parse_raw, spec_for
from shellkeep.config.messages import Origin
from shellkeep.config.model import ConfigValue, RedactPattern
from shellkeep.config.template import render_config_template
from shellkeep.config.toml import read_document
from shellkeep.errors import ConfigError, ShellkeepError
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import ensure_dir


def _to_toml(value: ConfigValue) -> object:
    """Return a value in the shape tomli-w writes."""
    if isinstance(value, tuple):
        return [{"name": v.name, "pattern": v.pattern} if isinstance(v, RedactPattern) else v for v in value]
    return value


def _save_config_file(path: Path, data: bytes) -> None:
    """Write ``path`` with the store's atomic writer (``store.atomic.write_bytes_atomic``: file
    0600, the old file or the new one after a crash), making its folder (0700) if missing.

    This adds no writing of its own: only the folder and the error. A symlinked config file is
    followed, so the link's target is replaced, not the link. Raises ShellkeepError naming the
    file when it cannot be written.
    """
    try:
        ensure_dir((path.resolve() if path.is_symlink() else path).parent)
        write_bytes_atomic(path, data, follow_symlink=True)
    except OSError as exc:
        raise ShellkeepError(
            f"cannot write config file '{path}': {exc.strerror or exc}; check the folder's permissions"
        ) from None


def set_config_value(path: Path, dotted_key: str, raw_value: str) -> ConfigValue:
    """Set one key in the config file at ``path``, keeping its other keys; return the value.

    ``raw_value`` is converted to the key's type as for environment variables: booleans
    take true/false/1/0/yes/no/on/off, lists a TOML array (``'["a", "b"]'``), and "" unsets
    a key that may be unset. The file is rewritten with tomli-w (comments are not kept)
    atomically, mode 0600, its folder made 0700 if missing.

    Raises:
        ConfigError: the key is unknown, the value is wrong, or the existing file is not
            valid (the whole file is checked before it is written).
        ShellkeepError: the file cannot be written.
    """
    import tomli_w

    spec = spec_for(dotted_key)
    value = parse_raw(spec, raw_value, Origin(""))
    doc = read_document(path, FIX_USER) or {}
    parents: list[dict[str, typing.Any]] = []
    table: dict[str, typing.Any] = doc
    for part in spec.section.split("."):  # [export.otlp] is doc["export"]["otlp"]
        parents.append(table)
        child = table.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"invalid config in '{path}': '{spec.section}' must be a [{spec.section}] table")
        table = child
    if value is None:
        table.pop(spec.name, None)
        for parent, part in zip(reversed(parents), reversed(spec.section.split("."))):
            if not parent[part]:
                del parent[part]
    else:
        table[spec.name] = _to_toml(value)
    validate_document(doc, file_origin(path, project=False), project=False)
    _save_config_file(path, tomli_w.dumps(doc).encode("utf-8"))
    return value


def create_config_file(path: Path) -> bool:
    """Write the documented template (every key commented out) to ``path`` if it is missing.

    Returns True when the file was created. Same file modes as ``set_config_value``.
    """
    if path.exists():
        return False
    _save_config_file(path, render_config_template(commented=True).encode("utf-8"))
    return True

