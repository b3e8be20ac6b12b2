"""Say what one recorded run is: its ``RecordSettings`` (from the config and flags) and ``RunRequest``.

``app.record.run_session`` takes a ``RunRequest``; the modules that open the recording, write its
metadata and finish the run read the same values, so they live here, below all of them.
Loading the config is deferred to ``load_settings`` (start-up: a run with no config file loads
no config module).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.errors import UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.paths import PROJECT_FILE_NAME, Paths, project_root_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from shellkeep.config import Config, NotifyConfig, RedactConfig

__all__ = ["RecordSettings", "RunRequest", "check_name", "load_settings", "settings_from_config"]

log = get_logger(__name__)

Warn = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """How to record one session, resolved from config and flags.

    flush_interval_s / coalesce_s: float seconds (see ``capture.recorder.Recorder``).
    """

    record_input: bool = True
    flush_interval_s: float = 0.25
    coalesce_s: float = 0.005
    redact: bool = True
    redact_config: RedactConfig | None = None  # user patterns and allowlist; None = built-in rules
    title: str | None = None  # the header's title when --title is not given
    idle_time_limit: float | None = None  # float seconds, written to the header for players
    encrypt: bool = False  # encryption.encrypt: seal the recording (store/crypto.py)
    key_file: str = ""  # encryption.key_file ("" = the keyring, else the default key file)
    compress: bool = True  # record.compress: zstd the recording once the session ends
    snapshots: bool = True  # record.snapshots: snapshot the files at each exchange boundary (app.outputs.snapshots)
    banner: bool = True  # record.banner: the start line, when the request asks for it
    min_free_mb: int = 500  # record.min_free_mb: warn at start below this much free space
    auto_gc: bool = False  # retention.auto_gc: apply the retention limits at most once a day
    restart: str = "no"  # record.restart: 'no', 'on-failure' or 'on-failure:N' (app.supervise)
    detail: str = "full"  # record.detail: 'full', 'conversation' or 'metadata'
    notify: NotifyConfig | None = None  # [notify] when a notifier is on for some event (None: none is)
    env: str = "agent"  # record.env: which environment variables to keep ('agent', 'all', 'none')
    env_include: tuple[str, ...] = ()  # record.env_include: more names, or prefixes ending in '*'
    env_exclude: tuple[str, ...] = ()  # record.env_exclude: names or prefixes never kept


def settings_from_config(config: Config, *, no_input: bool = False, no_redact: bool = False) -> RecordSettings:
    """Return the ``RecordSettings`` of a loaded config, with ``--no-input``/``--no-redact`` applied."""
    return RecordSettings(
        record_input=config.record.input and not no_input,
        flush_interval_s=config.record.flush_interval_ms / 1000,
        coalesce_s=config.record.coalesce_ms / 1000,
        redact=config.redact.enabled and not no_redact,
        redact_config=config.redact,
        title=config.record.title,
        idle_time_limit=config.record.idle_time_limit,
        encrypt=config.encryption.encrypt,
        key_file=config.encryption.key_file,
        compress=config.record.compress,
        snapshots=config.record.snapshots,
        banner=config.record.banner,
        min_free_mb=config.record.min_free_mb,
        auto_gc=config.retention.auto_gc,
        restart=config.record.restart,
        detail=config.record.detail,
        notify=config.notify if config.notify.enabled else None,
        env=config.record.env,
        env_include=config.record.env_include,
        env_exclude=config.record.env_exclude,
    )


_CONFIG_ENV_PREFIXES = tuple(
    f"SHELLKEEP_{table}_" for table in ("RECORD", "REDACT", "RESUME", "RETENTION", "ENCRYPTION", "SYNC")
)
"""The prefixes of every variable in ``config.ENV_VARS`` (a test keeps them in step)."""


def load_settings(
    paths: Paths, cwd: Path, *, warn: Warn, env: Mapping[str, str] | None = None, no_input: bool = False, no_redact: bool = False
) -> RecordSettings:
    """Load the config for ``cwd``'s project and return the settings of a recording.

    With no config file, no project file and no ``SHELLKEEP_*`` setting in the environment
    the defaults apply and the config module is not even loaded (start-up time). A broken
    config never stops a recording: it is reported through ``warn`` (one line) and its last
    good copy is used, else the strictest privacy settings; each config file that loads is
    kept as the last good copy (``config.save_last_good``).
    """
    env = os.environ if env is None else env
    project_root = project_root_of(cwd)
    if not _config_may_apply(paths, project_root, env):
        return RecordSettings(record_input=not no_input, redact=not no_redact)
    from shellkeep.config import load_config_with_fallback, save_last_good

    loaded = load_config_with_fallback(paths, project_root, dict(env), {})
    for problem in loaded.problems:  # a broken file never lowers privacy (config.fallback)
        warn(problem.line("recording with"))
    try:
        save_last_good(loaded.good)  # what applies while a file is broken later
    except OSError as exc:
        log.info("could not keep the last good copy of the config: %s", exc)  # the recording says what fails
    config = loaded.config
    return settings_from_config(config, no_input=no_input, no_redact=no_redact)


def _config_may_apply(paths: Paths, project_root: Path, env: Mapping[str, str]) -> bool:
    """Return whether any config layer exists: the user's file, the project's, or a variable."""
    if any(name.startswith(_CONFIG_ENV_PREFIXES) for name in env):
        return True
    return os.path.exists(paths.config_file) or os.path.exists(project_root / PROJECT_FILE_NAME)


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What to run and how: argv (argv[0] looked up on PATH), cwd, and session options."""

    argv: tuple[str, ...]
    cwd: Path
    name: str | None = None
    title: str | None = None
    settings: RecordSettings = RecordSettings()
    parent: str | None = None
    inject: bytes | None = None
    inject_settle_s: float = 0.8
    inject_paste_mode: bool = False  # type the block only once the child switched bracketed paste on
    inject_ready_prompt: str | None = None  # type it only once the child drew this (a regex), or long quiet
    inject_prompt_required: bool = False  # wait for inject_ready_prompt itself, not a long quiet (up to its max wait)
    inject_use_paste: bool = True  # False: typed as one line even where the child takes bracketed paste
    use_adapter: bool = True
    banner: bool = False  # say the session id on stderr before the child starts (unless record.banner = false)
    restart: int = 0  # the how-manieth supervised restart this run is (0: not one; app.supervise)
    extra: tuple[tuple[str, object], ...] = ()  # more meta.json fields (``resumed_from`` of a session from another machine)


_SESSION_ID_SHAPE = re.compile(r"\d{8}-\d{6}(-[0-9a-f]*)?")
"""What a session id (``store.session.new_session_id``) or the start of one looks like."""


def check_name(name: str | None) -> None:
    """Refuse a ``--name`` that no command could find the session by.

    Raises:
        UserInputError: the name is empty, or shaped like a session id (a reference to it
            finds the session with that id, or none).
    """
    if name is None:
        return
    if not name.strip():
        raise UserInputError("a session name cannot be empty; give --name a word, e.g. --name fix-login")
    if _SESSION_ID_SHAPE.fullmatch(name):
        raise UserInputError(f"session name '{name}' looks like a session id, which it would be taken for; choose another, e.g. --name fix-login")
