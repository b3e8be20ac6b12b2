"""The run context of one command: paths, the project, resolved settings and keys, built once.

Every command builds one ``Context`` (``open_context``) and passes it down; nothing below
``app`` reads the config file. A broken config never hides stored data: reading commands
warn once and go on with the broken file's last good copy, else the defaults with the
strictest privacy settings (``config.load_config_with_fallback``), while commands that
change settings or keys ask for ``strict`` loading.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.remote import fetch_session_files, find_remote_session
from shellkeep.config import Config, load_config, load_config_with_fallback
from shellkeep.errors import SessionNotFound
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths, project_root_of, resolve_paths
from shellkeep.store.session import SessionMeta, list_sessions, resolve_session
from shellkeep.vault.access import Vault

log = get_logger(__name__)

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
        """Repair an interrupted session (``vault.recovery.recover``) with this context's keys.

        The shell's notice file (``store.notices``) then lists it as cut short, and it gets
        its title (``app.about.recovered_about``): its exchanges were never collected. These
        load here, on first use: most commands find no interrupted session (ls, search start-up).
        """
        from shellkeep.app.about import recovered_about
        from shellkeep.app.environment import stored_env
        from shellkeep.store.notices import note_ended
        from shellkeep.vault.recovery import recover

        repaired = recover(meta, self.vault)
        # The agent's files are where its recorded variables (CLAUDE_CONFIG_DIR...) put them.
        repaired = recovered_about(repaired, self.vault, self.config.redact, {**self.env, **stored_env(repaired)[0]})
        try:
            note_ended(self.paths, repaired)
        except OSError as exc:
            log.warning("could not update %s: %s", self.paths.notices, exc)
        return repaired

    def sessions(self, *, all_projects: bool = False) -> list[SessionMeta]:
        """Return this project's sessions (every project's with ``all_projects``), newest first."""
        return list_sessions(self.paths, None if all_projects else self.project_root, recover=self.recover)

    def resolve(self, ref: str | None, *, last: bool = False, missing: list[str] | None = None) -> SessionMeta:
        """Find one session by id, prefix, name or ``last`` (``store.session.resolve_session``).

        A reference no local session matches is looked up among the sessions pulled from
        other machines (``app.remote``); one found there has its files fetched first.
        missing: when given, a file whose object is gone from the bucket is left out and named
        there in one line (``show``), instead of refusing the session.
        """
        try:
            return resolve_session(self.paths, self.project_root, ref, last=last, recover=self.recover)
        except SessionNotFound:
            pulled = find_remote_session(self.paths, ref) if ref and not last else None
            if pulled is None:
                raise
            fetch_session_files(self.paths, self.vault, pulled, missing=missing)
            return pulled


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
    stored data); otherwise the error is passed to ``warn`` and the broken file's last good
    copy applies, else the defaults with the strictest privacy settings
    (``config.load_config_with_fallback``; only a recording saves the copy).
    """
    env = os.environ if env is None else env
    paths = paths or resolve_paths(dict(env))
    project_root = project_root_of(cwd or Path.cwd())
    if strict:
        config = load_config(paths, project_root, env)
    else:
        loaded = load_config_with_fallback(paths, project_root, env)
        config = loaded.config
        if warn is not None:
            for problem in loaded.problems:
                warn(problem.line("using"))
    vault = Vault(paths, config.encryption.key_file, config.encryption.encrypt)
    return Context(paths, project_root, config, vault, env)

