"""The run context of one command: paths, the project, resolved settings and keys, built once.

Every command builds one ``Context`` (``open_context``) and passes it down; nothing below
``app`` reads the config file. A broken config never hides stored data: reading commands
warn once and go on with the defaults (keeping the privacy settings the file plainly
states), while commands that change settings or keys ask for ``strict`` loading.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.config import Config, load_config
from shellkeep.errors import ConfigError
from shellkeep.store.paths import Paths, project_root_of, resolve_paths
from shellkeep.store.session import SessionMeta, list_sessions, resolve_session
from shellkeep.vault.access import Vault
from shellkeep.vault.recovery import recover

Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Context:
    """What one command works with.

    paths: the data folder's layout. project_root: the current project (git top-level or
    the working directory). config: the resolved settings. vault: keys and sealing, from
    ``config.encryption``. env: the environment the settings were read from.
    """

    paths: Paths
    project_root: Path
    config: Config
    vault: Vault
    env: Mapping[str, str]

    def recover(self, meta: SessionMeta) -> SessionMeta:
        """Repair an interrupted session (``vault.recovery.recover``) with this context's keys."""
        return recover(meta, self.vault)

    def sessions(self, *, all_projects: bool = False) -> list[SessionMeta]:
        """Return this project's sessions (every project's with ``all_projects``), newest first."""
        return list_sessions(self.paths, None if all_projects else self.project_root, recover=self.recover)

    def resolve(self, ref: str | None, *, last: bool = False) -> SessionMeta:
        """Find one session by id, prefix, name or ``last`` (``store.session.resolve_session``)."""
        return resolve_session(self.paths, self.project_root, ref, last=last, recover=self.recover)


def open_context(
    *,
    paths: Paths | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    strict: bool = False,
    warn: Warn | None = None,
) -> Context:
    """Build the context of one command: resolve paths, the project, the config and the vault.

    strict: raise ConfigError for a broken config (commands that change settings, keys or
    stored data); otherwise the error is passed to ``warn`` and the defaults apply, keeping
    ``encryption.encrypt = true`` and ``record.input = false`` where the file states them.
    """
    env = os.environ if env is None else env
    paths = paths or resolve_paths(dict(env))
    project_root = project_root_of(cwd or Path.cwd())
    try:
        config = load_config(paths, project_root, env)
    except ConfigError as exc:
        if strict:
            raise
        if warn is not None:
            warn(f"{exc}; using the default settings")
        config = lenient_config(paths.config_file)
    vault = Vault(paths, config.encryption.key_file, config.encryption.encrypt)
    return Context(paths, project_root, config, vault, env)


def lenient_config(config_file: Path) -> Config:
    """Return the defaults, with the privacy settings an unparsable ``config_file`` states.

    A typo elsewhere must not undo a privacy setting: ``encrypt = true``, ``input = false``
    and a ``key_file = "..."`` line are kept when the file plainly states them.
    """
    import dataclasses

    try:
        text = config_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return Config()
    encrypt = re.search(r"^\s*encrypt\s*=\s*true\b", text, re.MULTILINE) is not None
    input_off = re.search(r"^\s*input\s*=\s*false\b", text, re.MULTILINE) is not None
    key_file = re.search(r'^\s*key_file\s*=\s*"([^"\n]*)"', text, re.MULTILINE)
    config = Config()
    return dataclasses.replace(
        config,
        record=dataclasses.replace(config.record, input=not input_off),
        encryption=dataclasses.replace(
            config.encryption, encrypt=encrypt, key_file=key_file.group(1) if key_file else config.encryption.key_file
        ),
    )
