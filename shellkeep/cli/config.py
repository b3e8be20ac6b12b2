"""``shellkeep config``: show, check and change the settings in config.toml."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import complete_config_key, cwd, json_option, paths, warn
from shellkeep.cli.output import print_json
from shellkeep.errors import ConfigError
from shellkeep.store.paths import project_root_of

if TYPE_CHECKING:
    from shellkeep import config as settings


@click.group(name="config")
def config() -> None:
    """Show, check and change shellkeep's settings.  Example: shellkeep config show"""


@config.command(name="path")
def path() -> None:
    """Print where your config.toml is (it may not exist yet).

    Example: shellkeep config path
    """
    click.echo(str(paths().config_file))


@config.command(name="show")
@json_option
def show(as_json: bool) -> None:
    """Show every setting in effect and where it comes from.

    A source is "default", a config file, an environment variable or "flag".

    Example: shellkeep config show --json
    """
    from shellkeep import config as settings

    entries = settings.explain_config(paths(), project_root_of(cwd()), os.environ)
    if as_json:
        print_json({e.key: {"value": e.value, "source": e.source} for e in entries})
        return
    rendered = [(e, f"{e.key} = {_render(e.value)}") for e in entries]
    width = max(len(text) for _, text in rendered)
    for entry, text in rendered:
        click.echo(f"{text.ljust(width)}  # {entry.source}")


@config.command(name="get")
@click.argument("key", shell_complete=complete_config_key)
def get(key: str) -> None:
    """Print the value in effect of one setting (nothing when it is unset).

    Strings print as they are, other values as written in TOML.

    Example: shellkeep config get record.flush_interval_ms
    """
    from shellkeep import config as settings

    loaded = settings.load_config(paths(), project_root_of(cwd()), os.environ)
    value = settings.get_config_value(loaded, key)
    if value is not None:
        click.echo(value if isinstance(value, str) else settings.format_toml_value(value))


@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("key", shell_complete=complete_config_key)
@click.argument("value")
def set_(key: str, value: str) -> None:
    """Set one setting in your config.toml, keeping the others.

    Booleans take true/false (or 1/0, yes/no, on/off); a list takes a TOML array such as
    '["a", "b"]'; "" unsets a setting that may be unset; a value may start with "-" (-1).
    Comments in the file are not kept (use 'shellkeep config edit' for those).

    Example: shellkeep config set record.input false
    """
    from shellkeep import config as settings

    file = paths().config_file
    stored = settings.set_config_value(file, key, value)
    click.echo(f"{key} = {_render(stored)} in {file}", err=True)


@config.command(name="edit")
def edit() -> None:
    """Open your config.toml in $VISUAL or $EDITOR, then check it.

    A missing file is first created with every setting documented and commented out.
    When the file saved is invalid, the error is shown and, on a terminal, "edit again?"
    reopens it (without a terminal, or answering n: the error, exit status 2).

    Example: EDITOR=nano shellkeep config edit
    """
    from shellkeep import config as settings

    file = paths().config_file
    settings.create_config_file(file)
    while True:
        click.edit(filename=str(file))
        try:
            settings.check_config_file(file)
            break
        except ConfigError as exc:
            if not (sys.stdin.isatty() and sys.stderr.isatty()):
                raise
            warn(str(exc))
            if not click.confirm("edit again?", default=True, err=True):
                raise click.exceptions.Exit(exc.exit_code) from None  # the error is on the screen already
    click.echo(f"ok: {file}")


@config.command(name="validate")
def validate() -> None:
    """Check your config.toml, the project's .shellkeep.toml and SHELLKEEP_* variables.

    Prints "ok: FILE" for each file (saying so when it does not exist: then the defaults
    apply); an invalid one is reported on one line (exit status 2).

    Example: shellkeep config validate
    """
    from shellkeep import config as settings

    here = paths()
    root = project_root_of(cwd())
    settings.load_config(here, root, os.environ)
    for file in settings.config_files(here, root) or (here.config_file,):
        click.echo(f"ok: {file}" if file.exists() else f"ok: {file} (no such file: the defaults apply)")


def _render(value: settings.ConfigValue) -> str:
    """Return a setting as written in TOML, or "(unset)"."""
    from shellkeep import config as settings

    return "(unset)" if value is None else settings.format_toml_value(value)
