"""Render the documented config.toml: every key with its doc and default (``config.example.toml``)."""

from __future__ import annotations

import typing

from shellkeep.config.keys import sections, specs
from shellkeep.config.model import ENV_VARS, ConfigValue, RedactPattern
from shellkeep.config.prices import PRICE_FIELDS, PRICES_TABLE, default_prices
from shellkeep.config.toml import toml_string

def format_toml_value(value: ConfigValue) -> str:
    """Render a setting as a TOML value ("true", "250", '"5GB"', '["a"]')."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, tuple):
        items = [
            f"{{ name = {toml_string(v.name)}, pattern = {toml_string(v.pattern)} }}"
            if isinstance(v, RedactPattern)
            else toml_string(v)
            for v in value
        ]
        return "[" + ", ".join(items) + "]"
    return ""



_TEMPLATE_HEAD = """\
# shellkeep configuration: config.toml
#
# Where it is: `shellkeep config path`. What is in effect and why: `shellkeep config show`.
# Later layers win: these defaults < this file < a project's .shellkeep.toml (only the
# [record] and [resume] keys, and extra redact.patterns) < SHELLKEEP_* environment
# variables < command-line flags. Every key is listed with its default.
# A file with an error never lowers privacy: each recording keeps a copy of the last version
# of this file that loaded (config.last-good.toml in the data folder), and while the file is
# broken, recordings use that copy and say so once. With no copy, they use the defaults and
# the strictest privacy settings: record.detail = 'metadata' (nothing but metadata is kept)
# and record.input = false; encryption cannot be known then, so it is off. Other commands
# go on the same way, with a warning; 'shellkeep config validate' shows what is wrong.
"""

_EXAMPLE_PATTERN = '{ name = "corp-token", pattern = \'corp_[A-Za-z0-9]{32}\' }'


def render_config_template(*, commented: bool = False) -> str:
    """Return config.toml text documenting every key with its default.

    With ``commented`` every setting line is commented out, so the file changes nothing
    until a line is uncommented (the template ``config edit`` starts from). Without it,
    the text parses to the defaults (it is ``config.example.toml``).
    """
    lines = [_TEMPLATE_HEAD.rstrip("\n")]
    env_of = {key: var for var, key in ENV_VARS.items()}
    for section, cls in sections().items():
        lines += ["", f"[{section}]", f"# {(cls.__doc__ or '').strip().splitlines()[0]}"]
        for spec in specs().values():
            if spec.section != section:
                continue
            lines.append("")
            lines += [f"# {line}" for line in _wrap(spec.doc, 94)]
            if spec.key in env_of:
                lines.append(f"# env: {env_of[spec.key]}")
            if spec.key == "redact.patterns":
                lines.append(f"# patterns = [{_EXAMPLE_PATTERN}]")
            if spec.default is None:
                example = typing.cast(ConfigValue, spec.example)
                lines.append(f"# {spec.name} = {format_toml_value(example)}  # unset by default")
            else:
                prefix = "# " if commented else ""
                lines.append(f"{prefix}{spec.name} = {format_toml_value(spec.default)}")
    lines += _prices_template(commented)
    return "\n".join(lines) + "\n"


_PRICES_DOC = """\
# The estimated cost in `shellkeep stats`: USD per million tokens for each model (prompt
# input, output, cached input read, prompt-cache write), shipped with the vendors' public
# prices (dated in shellkeep/prices.toml). Change a model's prices or add a model with its
# own table; a model stated here with only some keys keeps the shipped values of the others,
# a new model needs input and output (its cache prices default to its input price). A model
# with no price shows its cost as "?". Only in your own config, not a project's."""


def _prices_template(commented: bool) -> list[str]:
    """Return the ``[prices]`` part of the template: the doc and every shipped model."""
    prefix = "# " if commented else ""
    lines = ["", f"[{PRICES_TABLE}]", *_PRICES_DOC.splitlines(), f'# example: [{PRICES_TABLE}."my-model"] with input = 1.0 and output = 4.0']
    for model, price in default_prices().items():
        lines += ["", f"{prefix}[{PRICES_TABLE}.{toml_string(model)}]"]
        lines += [f"{prefix}{name} = {format_toml_value(getattr(price, name))}" for name in PRICE_FIELDS]
    return lines


def _wrap(text: str, width: int) -> list[str]:
    """Wrap ``text`` into lines of at most ``width`` characters."""
    import textwrap

    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)
