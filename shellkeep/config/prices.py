"""Own the ``[prices]`` table: the shipped per-model prices and the user's models over them."""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from shellkeep.config.messages import Origin, bad_value, suggest
from shellkeep.config.toml import TomlError, toml_loads, toml_string
from shellkeep.errors import ConfigError


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """What one model costs, in USD per million tokens: prompt input, output, cached input
    read (a cache hit) and prompt-cache writes."""

    input: float
    output: float
    cache_read: float
    cache_write: float


PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")
"""The keys of one model's table under ``[prices]``."""

PRICES_FILE = "prices.toml"
"""The shipped price table, package data of ``shellkeep`` (dated inside)."""

PRICES_TABLE = "prices"
"""The table of per-model prices (``[prices."claude-sonnet-4-5"]``), keyed by model id."""


@cache
def default_prices() -> Mapping[str, ModelPrice]:
    """Return the shipped price table (``shellkeep/prices.toml``): model id -> ``ModelPrice``.

    Read once per process with importlib.resources. Raises ConfigError naming the file if
    the installed copy is damaged (a packaging bug).
    """
    from importlib.resources import files

    origin = Origin(f"the shipped price table {PRICES_FILE}", "reinstall shellkeep")
    try:
        doc = toml_loads(files("shellkeep").joinpath(PRICES_FILE).read_text(encoding="utf-8"))
    except (OSError, TomlError) as exc:
        raise ConfigError(f"cannot read the shipped price table {PRICES_FILE} ({exc}); reinstall shellkeep") from None
    return types.MappingProxyType(parse_prices(doc, origin, {}))


class PriceTable(Mapping[str, ModelPrice]):
    """The shipped price table with the user's models over it: model id -> ``ModelPrice``.

    The shipped table is read on first use, so loading a config for a recording never
    reads it (only a user file with a ``[prices]`` table does, to check it).
    """

    __slots__ = ("_merged", "_user")

    def __init__(self, user: Mapping[str, ModelPrice] | None = None) -> None:
        self._user = dict(user or {})
        self._merged: dict[str, ModelPrice] | None = None

    def _table(self) -> dict[str, ModelPrice]:
        if self._merged is None:
            self._merged = {**default_prices(), **self._user}
        return self._merged

    def __getitem__(self, model: str) -> ModelPrice:
        return self._table()[model]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"PriceTable({self._user!r} over the shipped prices)"


def parse_prices(table: object, origin: Origin, base: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
    """Return the models of a ``[prices]`` table as ``ModelPrice``, over ``base``.

    Each model is a table of ``PRICE_FIELDS`` (non-negative numbers, USD per million
    tokens). A model of ``base`` may set only some of them (the rest are kept); a new one
    needs ``input`` and ``output``, its cache prices default to its input price.
    Raises ConfigError naming the model and key.
    """
    fix = f"; {origin.fix}" if origin.fix else ""
    if not isinstance(table, dict):
        raise ConfigError(f"invalid config in {origin.label}: '{PRICES_TABLE}' must be a [{PRICES_TABLE}] table{fix}")
    found: dict[str, ModelPrice] = {}
    for model, entry in table.items():
        where = f"{PRICES_TABLE}.{toml_string(model)}"
        if not isinstance(entry, dict):
            raise ConfigError(
                f"invalid config in {origin.label}: {where} must be a table of {', '.join(PRICE_FIELDS)} "
                f"(USD per million tokens){fix}"
            )
        numbers: dict[str, float] = {}
        for name, value in entry.items():
            if name not in PRICE_FIELDS:
                hint = suggest(name, PRICE_FIELDS).replace("'", f"'{where}.", 1) or f"; a model has {', '.join(PRICE_FIELDS)}"
                raise ConfigError(f"unknown key '{where}.{name}' in {origin.label}{hint}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise bad_value(origin, f"{where}.{name}", "a number >= 0 (USD per million tokens)", value)
            numbers[name] = float(value)
        known = base.get(model)
        if known is None:
            missing = [name for name in ("input", "output") if name not in numbers]
            if missing:
                raise ConfigError(
                    f"invalid config in {origin.label}: {where} needs {' and '.join(missing)} "
                    f"(a model without a shipped price){fix}"
                )
            known = ModelPrice(numbers["input"], numbers["output"], numbers["input"], numbers["input"])
        found[model] = dataclasses.replace(known, **numbers)
    return found
