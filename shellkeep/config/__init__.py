"""Own config.toml: the settings model, loading and layering, the broken-file rule, editing.

- ``model``: one frozen dataclass per table, defaults and checks in code (``Config``).
- ``keys``: the key table read from the model, and how a value is checked.
- ``toml``, ``messages``, ``prices``, ``document``: reading a file, wording its errors, the
  ``[prices]`` table, checking one parsed file.
- ``load``: the layers (defaults → user file → project ``.shellkeep.toml`` → ``SHELLKEEP_*``
  environment → flags), resolved in one place; loading is pure.
- ``fallback``: a file that does not parse or validate never lowers privacy: its last good
  copy applies, else the strictest privacy settings.
- ``edit``, ``template``: ``config set`` and the documented template (``config.example.toml``).

Format: TOML 1.0 (toml.io/en/v1.0.0), read with tomllib (tomli on Python 3.10) and written
with tomli-w.
"""

from __future__ import annotations

from shellkeep.config.edit import create_config_file, set_config_value
from shellkeep.config.fallback import GoodFile, save_last_good
from shellkeep.config.keys import config_keys
from shellkeep.config.load import (
    ConfigProblem,
    LoadedConfig,
    check_config_file,
    config_files,
    explain_config,
    get_config_value,
    load_config,
    load_config_with_fallback,
)
from shellkeep.config.model import (
    AUTO_IMPORT_CHOICES,
    DETAIL_LEVELS,
    ENV_VARS,
    NOTIFY_EVENTS,
    NOTIFY_FORMATS,
    Config,
    ConfigEntry,
    ConfigValue,
    EncryptionConfig,
    HistoryConfig,
    NotifyConfig,
    OtlpConfig,
    RecordConfig,
    RedactConfig,
    RedactPattern,
    ResumeConfig,
    RetentionConfig,
    ShellConfig,
    SyncConfig,
    parse_size,
)
from shellkeep.config.prices import PRICE_FIELDS, PRICES_FILE, PRICES_TABLE, ModelPrice, PriceTable, default_prices
from shellkeep.config.template import format_toml_value, render_config_template
from shellkeep.store.paths import PROJECT_FILE_NAME

__all__ = [
    "AUTO_IMPORT_CHOICES",
    "DETAIL_LEVELS",
    "ENV_VARS",
    "NOTIFY_EVENTS",
    "NOTIFY_FORMATS",
    "PRICES_FILE",
    "PRICES_TABLE",
    "PRICE_FIELDS",
    "PROJECT_FILE_NAME",
    "Config",
    "ConfigEntry",
    "ConfigProblem",
    "ConfigValue",
    "EncryptionConfig",
    "GoodFile",
    "HistoryConfig",
    "LoadedConfig",
    "ModelPrice",
    "NotifyConfig",
    "OtlpConfig",
    "PriceTable",
    "RecordConfig",
    "RedactConfig",
    "RedactPattern",
    "ResumeConfig",
    "RetentionConfig",
    "ShellConfig",
    "SyncConfig",
    "check_config_file",
    "config_files",
    "config_keys",
    "create_config_file",
    "default_prices",
    "explain_config",
    "format_toml_value",
    "get_config_value",
    "load_config",
    "load_config_with_fallback",
    "parse_size",
    "render_config_template",
    "save_last_good",
    "set_config_value",
]
