"""Own the key table: every dotted key's spec, read from the model, and how a value is checked.

``specs()`` lists each key (``record.input``) with its kind, default, doc and rules, in
declaration order; ``coerce`` checks a parsed TOML value against its key, ``parse_raw`` a
string from the environment or ``config set``.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Union

from shellkeep.config.messages import Origin, bad_value, suggest
from shellkeep.config.model import Config, ConfigValue, RedactPattern, Check
from shellkeep.config.toml import TomlError, toml_loads
from shellkeep.errors import ConfigError

@dataclass(frozen=True, slots=True)
class Spec:
    """What the loader knows about one dotted key."""

    key: str
    section: str
    name: str
    kind: str  # "bool", "int", "float", "str", "strings" or "patterns"
    optional: bool
    default: ConfigValue
    doc: str
    expect: str
    check: Check | None
    project: bool
    append: bool
    example: object
    private: tuple[ConfigValue, ...]  # from the least private value to the most; () for most keys


_KIND_EXPECT = {
    "bool": "true or false",
    "int": "an integer",
    "float": "a number",
    "str": "a string",
    "strings": "a list of strings",
    "patterns": "a list of {name, pattern} tables",
}


def _kind_of(hint: object) -> tuple[str, bool]:
    """Return (kind, optional) for a section field's type hint."""
    optional = False
    if typing.get_origin(hint) in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        optional = len(args) != len(typing.get_args(hint))
        (hint,) = args
    if hint is bool:
        return "bool", optional
    if hint is int:
        return "int", optional
    if hint is float:
        return "float", optional
    if hint is str:
        return "str", optional
    if typing.get_origin(hint) is tuple:
        item = typing.get_args(hint)[0]
        if item is str:
            return "strings", optional
        if item is RedactPattern:
            return "patterns", optional
    raise TypeError(f"config type {hint!r} has no loader")  # a bug in this module


@cache
def sections() -> dict[str, type]:
    """Return the table name → section class map, in declaration order.

    A nested table's name is dotted (``export.otlp``); its ``Config`` attribute is the name
    with ``_`` for ``.`` (``attribute``).
    """
    hints = typing.get_type_hints(Config)
    return {
        f.metadata.get("section", f.name): hints[f.name] for f in dataclasses.fields(Config) if not f.metadata.get("table")
    }


def attribute(section: str) -> str:
    """Return the ``Config`` attribute that holds table ``section`` (``export.otlp``: ``export_otlp``)."""
    return section.replace(".", "_")


def flat_tables(doc: Mapping[str, object]) -> typing.Iterator[tuple[str, object]]:
    """Yield (table name, value) for a parsed document, nested tables by dotted name.

    ``[export.otlp]`` parses as ``{"export": {"otlp": {...}}}``; a table that only holds
    nested tables (``export``) is walked into, so its sub-tables are checked by name.
    """
    tables = sections()
    for name, value in doc.items():
        nested = [s for s in tables if s.startswith(name + ".")]
        if name not in tables and nested and isinstance(value, dict):
            for sub, table in value.items():
                yield f"{name}.{sub}", table
        else:
            yield name, value


@cache
def specs() -> dict[str, Spec]:
    """Return every dotted key's spec, in declaration order (built on first use)."""
    found: dict[str, Spec] = {}
    for section, cls in sections().items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            kind, optional = _kind_of(hints[f.name])
            key = f"{section}.{f.name}"
            found[key] = Spec(
                key=key,
                section=section,
                name=f.name,
                kind=kind,
                optional=optional,
                default=f.default,  # type: ignore[arg-type]
                doc=f.metadata["doc"],
                expect=f.metadata["expect"] or _KIND_EXPECT[kind],
                check=f.metadata["check"],
                project=f.metadata["project"],
                append=f.metadata["append"],
                example=f.metadata["example"],
                private=f.metadata["private"],
            )
    return found


def config_keys() -> tuple[str, ...]:
    """Return every dotted config key ("record.input", ...) in declaration order."""
    return tuple(specs())


def spec_for(dotted_key: str) -> Spec:
    """Return the spec of ``dotted_key``; raise ConfigError naming the closest key."""
    spec = specs().get(dotted_key)
    if spec is None:
        hint = suggest(dotted_key, specs()) or "; run 'shellkeep config show' to list the keys"
        raise ConfigError(f"unknown config key '{dotted_key}'{hint}")
    return spec



def coerce(spec: Spec, value: object, origin: Origin) -> ConfigValue:
    """Check a parsed TOML (or flag) value against ``spec``; return it in the field's type."""
    kind = spec.kind
    result: ConfigValue
    if kind == "bool" and isinstance(value, bool):
        result = value
    elif kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        result = value
    elif (
        kind == "float"
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    ):
        result = float(value)
    elif kind == "str" and isinstance(value, str):
        result = value
    elif kind == "strings" and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        result = tuple(value)
    elif kind == "patterns" and isinstance(value, (list, tuple)):
        result = tuple(_coerce_pattern(spec, i, item, origin) for i, item in enumerate(value))
    else:
        raise bad_value(origin, spec.key, spec.expect, value)
    if spec.check is not None:
        try:
            spec.check(result)
        except ValueError as exc:
            raise bad_value(origin, spec.key, str(exc), value) from None
    return result


def _coerce_pattern(spec: Spec, index: int, item: object, origin: Origin) -> RedactPattern:
    """Turn one ``{name, pattern}`` table into a RedactPattern."""
    where = f"{spec.key}[{index}]"
    if isinstance(item, RedactPattern):
        return item
    if not isinstance(item, dict):
        raise bad_value(origin, where, "a {name, pattern} table", item)
    for extra in item:
        if extra not in ("name", "pattern"):
            hint = suggest(extra, ("name", "pattern"))
            raise ConfigError(f"unknown key '{where}.{extra}' in {origin.label}{hint}")
    for needed in ("name", "pattern"):
        if not isinstance(item.get(needed), str) or not item[needed]:
            raise bad_value(origin, f"{where}.{needed}", "a non-empty string", item.get(needed))
    return RedactPattern(name=item["name"], pattern=item["pattern"])


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def parse_raw(spec: Spec, raw: str, origin: Origin) -> ConfigValue:
    """Convert a string from the environment or ``config set`` to the key's type.

    An empty string unsets a key that may be unset. Lists are written as TOML arrays;
    ``redact.allowlist`` also takes a single bare string.
    """
    text = raw.strip()
    if spec.optional and text == "":
        return None
    if spec.kind == "bool":
        if text.lower() in _TRUE:
            return coerce(spec, True, origin)
        if text.lower() in _FALSE:
            return coerce(spec, False, origin)
        raise bad_value(origin, spec.key, "true or false (or 1/0, yes/no, on/off)", raw)
    if spec.kind == "int":
        try:
            return coerce(spec, int(text), origin)
        except ValueError:
            raise bad_value(origin, spec.key, spec.expect, raw) from None
    if spec.kind == "float":
        try:
            return coerce(spec, float(text), origin)
        except ValueError:
            raise bad_value(origin, spec.key, spec.expect, raw) from None
    if spec.kind == "str":
        return coerce(spec, raw, origin)
    if spec.kind == "strings" and not text.startswith("["):
        return coerce(spec, [raw], origin)
    try:
        parsed = toml_loads(f"value = {text}")["value"]
    except TomlError:
        raise bad_value(origin, spec.key, f"{spec.expect} written as a TOML array", raw) from None
    return coerce(spec, parsed, origin)
