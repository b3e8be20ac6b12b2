"""Own loading: read the config files, validate them, and layer them with the environment and flags.

The layers, later ones winning, resolved in one place (``_resolve``): defaults → the user's
``config.toml`` (``Paths.config_file``) → the project's ``.shellkeep.toml`` at its root →
``SHELLKEEP_*`` environment variables (``ENV_VARS``) → command-line flags. A project file
may only set the keys its spec allows (``project``), a privacy key only to a stricter value;
``redact.patterns`` of a later file add to the earlier ones.

``load_config`` raises on a broken file; ``load_config_with_fallback`` (commands that go on
despite one, recording above all) applies instead what ``config.fallback`` says: the file's
last good copy, else the strictest privacy settings. Loading is pure: it reads files and the
mapping it is given, and creates nothing.
"""

from __future__ import annotations

import os
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.config.document import FIX_PROJECT, FIX_USER, file_origin, validate_document
from shellkeep.config.fallback import GoodFile, stand_in
from shellkeep.config.keys import attribute, coerce, parse_raw, sections, spec_for, specs
from shellkeep.config.messages import Origin
from shellkeep.config.model import ENV_VARS, Config, ConfigEntry, ConfigValue, RedactPattern
from shellkeep.config.prices import ModelPrice, PriceTable
from shellkeep.config.toml import parse_document, read_bytes, read_document
from shellkeep.errors import ConfigError
from shellkeep.store.paths import PROJECT_FILE_NAME, Paths


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A layer that did not load, and what applies in its place.

    error: what is wrong, one line naming the file (or variable or flag), the key and the fix.
    stand_in: what applies instead ("its last good copy from ..."); for a bad variable or
    flag, "the settings without it".
    """

    error: ConfigError
    stand_in: str

    def line(self, applying: str) -> str:
        """Return the one-line warning, ``applying`` saying what is done ("recording with", "using")."""
        return f"{self.error}; {applying} {self.stand_in}"


@dataclass(frozen=True, slots=True)
class LoadedConfig:
    """The settings of a command that goes on despite a broken config.

    problems: one per broken file, variable or flag, in layer order. good: the config files
    that parsed and validated, for the command that records to keep (``save_last_good``).
    """

    config: Config
    problems: tuple[ConfigProblem, ...] = ()
    good: tuple[GoodFile, ...] = ()


class _Collect:
    """What loading with a fallback gathers besides the layers: problems and good files."""

    def __init__(self) -> None:
        self.problems: list[ConfigProblem] = []
        self.good: list[GoodFile] = []


_Layer = tuple[str, dict[str, ConfigValue]]


def _file_layers(
    paths: Paths, project_root: Path | None, collect: _Collect | None, prices: dict[str, ModelPrice]
) -> list[_Layer]:
    """Return (source, values) of the user's file and the project's, in that order.

    collect: None raises the first ConfigError; else a broken file is said in
    ``collect.problems`` and its stand-in applies (``config.fallback``), and each file that
    loads is added to ``collect.good``. A broken file's strictest settings are laid again
    over the other file's.
    """
    files: list[tuple[Path, Path, bool]] = [(paths.config_file, paths.last_good_config(), False)]
    if project_root is not None:
        project_file = project_root / PROJECT_FILE_NAME
        if project_file.absolute() != paths.config_file.absolute():
            files.append((project_file, paths.last_good_config(project_root), True))
    layers: list[_Layer] = []
    floors: list[_Layer] = []
    for path, copy, project in files:
        fix = FIX_PROJECT if project else FIX_USER
        try:
            data = read_bytes(path, fix)
            if data is None:
                continue
            found: dict[str, ModelPrice] = {}
            values = validate_document(parse_document(data, path, fix), file_origin(path, project=project), project=project, prices=found)
        except ConfigError as exc:
            if collect is None:
                raise
            instead = stand_in(path, copy, project=project)
            collect.problems.append(ConfigProblem(exc, instead.what))
            values, found = instead.values, instead.prices
            if instead.strictest:
                floors.append((str(path), values))
        else:
            if collect is not None:
                collect.good.append(GoodFile(path, copy, data, _mtime(path)))
        prices.update(found)
        layers.append((str(path), values))
    return layers + floors


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _layers(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None,
    collect: _Collect | None,
    prices: dict[str, ModelPrice],
) -> list[_Layer]:
    """Return (source, values) per layer above the defaults, lowest precedence first.

    prices: receives the ``[prices]`` models of the user's file (or of what stands in for it).
    collect: None raises the first ConfigError; else a bad variable or flag is left out
    and said in ``collect.problems``.
    """

    def checked(read: Callable[[], dict[str, ConfigValue]]) -> dict[str, ConfigValue]:
        try:
            return read()
        except ConfigError as exc:
            if collect is None:
                raise
            collect.problems.append(ConfigProblem(exc, "the settings without it"))
            return {}

    layers = _file_layers(paths, project_root, collect, prices)
    for var, key in ENV_VARS.items():
        raw = env.get(var)
        if raw:
            env_origin = Origin(f"environment variable {var}", f"fix or unset {var}")
            env_value = checked(lambda: {key: parse_raw(specs()[key], raw, env_origin)})
            if env_value:
                layers.append((var, env_value))
    flags: dict[str, ConfigValue] = {}
    for key, value in (overrides or {}).items():
        if value is not None:
            flags.update(checked(lambda: {key: coerce(spec_for(key), value, Origin("a command-line flag"))}))
    if flags:
        layers.append(("flag", flags))
    return layers


def _resolve(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None,
    collect: _Collect | None = None,
) -> tuple[Config, dict[str, ConfigEntry]]:
    """Apply the layers over the defaults; the one place precedence is decided."""
    entries = {key: ConfigEntry(key, spec.default, "default") for key, spec in specs().items()}
    user_prices: dict[str, ModelPrice] = {}
    for source, values in _layers(paths, project_root, env, overrides, collect, user_prices):
        for key, value in values.items():
            old = entries[key]
            if specs()[key].append and source != "flag":
                combined = typing.cast("tuple[RedactPattern, ...]", old.value) + typing.cast("tuple[RedactPattern, ...]", value)
                joined = source if old.source == "default" else f"{old.source} + {source}"
                entries[key] = ConfigEntry(key, combined, joined)
            else:
                entries[key] = ConfigEntry(key, value, source)
    tables: dict[str, object] = {}
    for section, cls in sections().items():
        kwargs = {specs()[e.key].name: e.value for e in entries.values() if specs()[e.key].section == section}
        tables[attribute(section)] = cls(**kwargs)
    return Config(**tables, prices=PriceTable(user_prices)), entries  # type: ignore[arg-type]


def load_config(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None = None,
) -> Config:
    """Return the settings: defaults, user file, project file, environment, then flags.

    Args:
        paths: where the user's config.toml is (``paths.config_file``; may not exist).
        project_root: the project whose ``.shellkeep.toml`` applies, or None.
        env: the environment to read ``ENV_VARS`` from (pass ``os.environ``).
        overrides: command-line flags by dotted key ("record.input"); None values are
            flags that were not given.

    Raises:
        ConfigError: a file is not TOML, or a key is unknown, of the wrong type, out of
            range or not allowed in a project file. The message names the file (or
            variable or flag), the key and what it must be.
    """
    return _resolve(paths, project_root, env, overrides)[0]


def load_config_with_fallback(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None = None,
) -> LoadedConfig:
    """Return the settings as ``load_config`` does, what went wrong, and the files that loaded.

    Nothing raises: a config file that does not parse or validate is replaced by its last
    good copy, else by the strictest privacy settings (``config.fallback``); a bad variable
    or flag is left out. For a command that must go on despite a broken config, recording
    above all: nothing the broken file would have kept out of a recording gets in. Reads
    only; the command that records keeps the good files (``save_last_good``).
    """
    collect = _Collect()
    config = _resolve(paths, project_root, env, overrides, collect)[0]
    return LoadedConfig(config, tuple(collect.problems), tuple(collect.good))


def explain_config(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None = None,
) -> tuple[ConfigEntry, ...]:
    """Return every key's resolved value and the layer it came from, in declaration order.

    Same arguments and errors as ``load_config``.
    """
    return tuple(_resolve(paths, project_root, env, overrides)[1].values())


def config_files(paths: Paths, project_root: Path | None) -> tuple[Path, ...]:
    """Return the config files that exist and apply, user file first."""
    found = [paths.config_file] if paths.config_file.is_file() else []
    if project_root is not None:
        project_file = project_root / PROJECT_FILE_NAME
        if project_file.is_file() and project_file.absolute() != paths.config_file.absolute():
            found.append(project_file)
    return tuple(found)


def check_config_file(path: Path, *, project: bool = False) -> None:
    """Validate one config file (a missing file is valid).

    Raises:
        ConfigError: as ``load_config`` would for this file.
    """
    doc = read_document(path, FIX_PROJECT if project else FIX_USER)
    if doc is not None:
        validate_document(doc, file_origin(path, project=project), project=project)


def get_config_value(config: Config, dotted_key: str) -> ConfigValue:
    """Return one setting by dotted key ("record.input").

    Raises:
        ConfigError: the key is unknown (with the closest key, if any).
    """
    spec = spec_for(dotted_key)
    value: ConfigValue = getattr(getattr(config, attribute(spec.section)), spec.name)
    return value
