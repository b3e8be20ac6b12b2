"""Check one parsed config file: its tables, keys and values, and what a project file may set."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from shellkeep.config.keys import coerce, flat_tables, sections, specs
from shellkeep.config.messages import Origin, show, suggest
from shellkeep.config.model import ConfigValue
from shellkeep.config.prices import PRICES_TABLE, ModelPrice, default_prices, parse_prices
from shellkeep.errors import ConfigError

FIX_USER = "fix it with 'shellkeep config edit'"
FIX_PROJECT = "fix or remove that file"


def file_origin(path: Path, *, project: bool) -> Origin:
    """Return the origin of the values of config file ``path``, for messages."""
    return Origin(f"'{path}'", FIX_PROJECT if project else FIX_USER)


def validate_document(
    doc: Mapping[str, object], origin: Origin, *, project: bool, prices: dict[str, ModelPrice] | None = None
) -> dict[str, ConfigValue]:
    """Check a parsed config file; return its values by dotted key.

    ``origin`` names the file in messages; ``project`` refuses keys a project may not set
    (and the ``[prices]`` table), and a privacy key set to its least private value;
    ``prices`` receives the models of its ``[prices]`` table.

    Raises:
        ConfigError: an unknown table or key, a value of the wrong type or out of range, or
            a key a project may not set; naming the file and key.
    """
    values: dict[str, ConfigValue] = {}
    tables = sections()
    for section, table in flat_tables(doc):
        if section == PRICES_TABLE:
            if project:
                raise ConfigError(
                    f"[{PRICES_TABLE}] cannot be set in a project file ({origin.label}); "
                    "set prices in your own config with 'shellkeep config edit'"
                )
            found = parse_prices(table, origin, default_prices())
            if prices is not None:
                prices.update(found)
            continue
        if section not in tables:
            if not isinstance(table, dict):
                homes = [s.key for s in specs().values() if s.name == section]
                hint = f"; put it in its table, as {homes[0]}" if homes else f"; the tables are {', '.join(tables)}"
                raise ConfigError(f"unknown key '{section}' in {origin.label}{hint}")
            hint = suggest(section, tables) or f"; the tables are {', '.join(tables)}"
            raise ConfigError(f"unknown table [{section}] in {origin.label}{hint}")
        if not isinstance(table, dict):
            raise ConfigError(f"invalid config in {origin.label}: '{section}' must be a [{section}] table")
        for name, value in table.items():
            key = f"{section}.{name}"
            values[key] = _checked(key, section, name, value, origin, project=project)
    return values


def _checked(key: str, section: str, name: str, value: object, origin: Origin, *, project: bool) -> ConfigValue:
    """Return one key's value of a config file, checked against its spec."""
    spec = specs().get(key)
    if spec is None:
        names = [s.name for s in specs().values() if s.section == section]
        hint = suggest(name, names).replace("'", f"'{section}.", 1) or f"; [{section}] has {', '.join(names)}"
        raise ConfigError(f"unknown key '{key}' in {origin.label}{hint}")
    if project and not spec.project:
        raise ConfigError(
            f"{key} cannot be set in a project file ({origin.label}); "
            f"set it in your own config with 'shellkeep config set {key} ...'"
        )
    coerced = coerce(spec, value, origin)
    if project and spec.private and coerced == spec.private[0]:
        raise ConfigError(
            f"{key} = {show(coerced)} cannot be set in a project file ({origin.label}): "
            f"a project may only make it stricter; set it in your own config with "
            f"'shellkeep config set {key} ...'"
        )
    return coerced
