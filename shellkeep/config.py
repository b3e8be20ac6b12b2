"""Own config.toml: the settings, their defaults, validation and where each value comes from.

Settings are frozen dataclasses with their defaults in code, one class per TOML table
(``[record]``, ``[redact]``, ...). ``load_config`` resolves them in one place, later layers
winning: defaults → the user's ``config.toml`` (``Paths.config_file``) → the project's
``.shellkeep.toml`` at its root → ``SHELLKEEP_*`` environment variables (``ENV_VARS``) →
command-line flags. Every value is validated when it is loaded; nothing is re-parsed later.

A project file comes with the code a user checks out, so it may only set keys that cannot
weaken privacy: the ``[record]`` and ``[resume]`` keys (the privacy ones, ``record.input``
and ``record.detail``, only to their stricter values: a project can turn input recording off,
never back on), extra ``redact.patterns`` (added to
the user's rather than replacing them), and the retention limits ``max_age_days``,
``max_sessions`` and ``max_total_size``, which only ever apply to that project's own
sessions and only add to the user's limits (gc removes a session when any limit says so;
running, unresumed interrupted and pinned sessions are never removed).

A config that does not load is an error for ``load_config``; ``load_config_salvaged`` (for a
recording, which must go on) applies instead the privacy settings a broken file still states.

Loading is pure: it reads files and the mapping it is given, and creates nothing.
Format: TOML 1.0 (toml.io/en/v1.0.0), read with tomllib (tomli on Python 3.10) and written
with tomli-w.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shlex
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeAlias, Union

from shellkeep.errors import ConfigError, ShellkeepError
from shellkeep.store.paths import PROJECT_FILE_NAME  # noqa: F401 - re-exported: a config layer
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.paths import Paths, ensure_dir

_Check = Callable[[object], None]
"""Raise ``ValueError("<what the value must be>")`` when a typed value is out of range."""

_Keep = Callable[[object], bool]
"""Return True when a value read from a broken config file is still applied."""


def _always(value: object) -> bool:
    return True


def _only(wanted: object) -> _Keep:
    """Return a salvage test that keeps ``wanted`` only (the value that adds privacy)."""
    return lambda value: value is wanted


def _setting(
    default: typing.Any,
    doc: str,
    *,
    expect: str = "",
    check: _Check | None = None,
    project: bool = True,
    append: bool = False,
    example: object = None,
    salvage: _Keep | None = None,
) -> typing.Any:
    """Declare one config key: its default, its one-line doc, and how it is validated.

    ``expect`` replaces the type's wording in errors ("an integer >= 1"); ``check`` tests
    the value once its type is right; ``project`` says whether a project file may set it;
    ``append`` makes later layers add to the list instead of replacing it; ``example`` is
    the value shown, commented out, for a key that is unset by default; ``salvage`` says
    which values a broken file still sets (those that cannot weaken privacy; None: none).
    """
    meta = {
        "doc": doc,
        "expect": expect,
        "check": check,
        "project": project,
        "append": append,
        "example": example,
        "salvage": salvage,
    }
    return field(default=default, metadata=meta)


def _at_least(minimum: float, what: str) -> _Check:
    """Return a check that a number is ``>= minimum``."""

    def check(value: object) -> None:
        assert isinstance(value, (int, float))
        if value < minimum:
            raise ValueError(f"{what} >= {minimum:g}")

    return check


def _above_zero(value: object) -> None:
    assert isinstance(value, (int, float))
    if value <= 0:
        raise ValueError("a number > 0")


def _valid_size(value: object) -> None:
    assert isinstance(value, str)
    try:
        parse_size(value)
    except ValueError as exc:
        raise ValueError(str(exc)) from None


def _valid_allowlist(value: object) -> None:
    assert isinstance(value, tuple)
    for entry in value:
        try:
            re.compile(entry)
        except re.error as exc:
            raise ValueError(f"a list of regular expressions; {entry!r} is not one ({exc})") from None


_RESTART = re.compile(r"no|on-failure(:[0-9]{1,3})?")
DETAIL_LEVELS = ("full", "conversation", "metadata")
"""The values of ``record.detail``, from the most kept to the least."""


def _valid_restart(value: object) -> None:
    assert isinstance(value, str)
    if not _RESTART.fullmatch(value):
        raise ValueError("'no', 'on-failure' or 'on-failure:N' (N a number of restarts, 0-999)")


def _valid_detail(value: object) -> None:
    assert isinstance(value, str)
    if value not in DETAIL_LEVELS:
        raise ValueError(f"one of {', '.join(map(repr, DETAIL_LEVELS))}")


_RULE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _valid_patterns(value: object) -> None:
    assert isinstance(value, tuple)
    for rule in value:
        assert isinstance(rule, RedactPattern)
        if not _RULE_NAME.fullmatch(rule.name):
            raise ValueError(
                f"a list of {{name, pattern}} tables whose names are letters, digits, '.', '_' "
                f"or '-' (at most 64); {rule.name!r} is not"
            )
        try:
            compiled = re.compile(rule.pattern)
        except re.error as exc:
            raise ValueError(
                f"a list of {{name, pattern}} tables with valid regular expressions; "
                f"rule {rule.name!r}: {exc}"
            ) from None
        if compiled.fullmatch("") is not None:
            raise ValueError(
                f"a list of {{name, pattern}} tables whose patterns never match empty text; "
                f"rule {rule.name!r} does"
            )


@dataclass(frozen=True, slots=True)
class RedactPattern:
    """One user redaction rule: a name for the ``[REDACTED:<name>]`` marker and a regex.

    When the regex has a group named ``secret`` only that group is replaced, else the match.
    """

    name: str
    pattern: str


@dataclass(frozen=True, slots=True)
class RecordConfig:
    """How a session is recorded."""

    input: bool = _setting(
        True,
        "Store keyboard input as 'i' events (input typed while echo is off is never stored).",
        salvage=_only(False),
    )
    flush_interval_ms: int = _setting(
        250,
        "Write buffered events to disk at least this often, in milliseconds.",
        expect="an integer >= 1",
        check=_at_least(1, "an integer"),
    )
    coalesce_ms: int = _setting(
        5,
        "Merge output reads arriving within this many milliseconds into one event (0 = never).",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )
    idle_time_limit: float | None = _setting(
        None,
        "Shorten pauses longer than this many seconds on replay (asciicast idle_time_limit); "
        "unset keeps real time.",
        expect="a number > 0",
        check=_above_zero,
        example=2.5,
    )
    title: str | None = _setting(
        None, "Title written into each recording's header; unset uses none.", example="my session"
    )
    compress: bool = _setting(True, "Compress a recording once its session has ended.")
    banner: bool = _setting(
        True, "Print one line with the session id on stderr when recording starts in a terminal (-q: never)."
    )
    min_free_mb: int = _setting(
        500,
        "Warn at start when the data directory's disk has less free space than this many MB (0 = never).",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )
    restart: str = _setting(
        "no",
        "Supervise the program: 'on-failure' resumes it in place when it crashes (a signal, or a "
        "non-zero exit not right after your own Ctrl-C, Ctrl-D or /exit), up to 3 times; "
        "'on-failure:N' up to N times; 'no' never.",
        expect="'no', 'on-failure' or 'on-failure:N'",
        check=_valid_restart,
    )
    detail: str = _setting(
        "full",
        "How much of a session is kept: 'full' (terminal recording, exchanges, metadata), "
        "'conversation' (exchanges and metadata, no terminal recording) or 'metadata'.",
        expect="'full', 'conversation' or 'metadata'",
        check=_valid_detail,
        salvage=lambda value: value != "full",  # keeping less adds privacy
    )


@dataclass(frozen=True, slots=True)
class RedactConfig:
    """Which secrets are replaced by [REDACTED:<name>] before anything is stored."""

    enabled: bool = _setting(True, "Replace secrets in recorded output and input.", project=False)
    patterns: tuple[RedactPattern, ...] = _setting(
        (),
        "Extra rules, added to the built-in ones: a list of { name, pattern } tables, pattern a "
        "Python regex; a group named 'secret' limits what is replaced. A project file's rules "
        "are added to these.",
        check=_valid_patterns,
        append=True,
        salvage=_always,
    )
    allowlist: tuple[str, ...] = _setting(
        (),
        "Never redact a secret that one of these Python regexes matches in full "
        "(a plain word matches itself).",
        check=_valid_allowlist,
        project=False,
    )


@dataclass(frozen=True, slots=True)
class ResumeConfig:
    """How 'shellkeep resume' puts a session back."""

    exchanges: int = _setting(
        5,
        "Number of last exchanges typed back into an agent that has no resume flag of its own.",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )
    inject_settle_ms: int = _setting(
        800,
        "Wait this many milliseconds for the agent's screen to settle before typing into it.",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )


@dataclass(frozen=True, slots=True)
class RetentionConfig:
    """When old sessions are deleted (each limit: 0 or "" = no limit)."""

    max_age_days: int = _setting(
        0,
        "Delete sessions older than this many days (0 = keep forever).",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )
    max_sessions: int = _setting(
        0,
        "Keep at most this many sessions, deleting the oldest (0 = no limit).",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
    )
    max_total_size: str = _setting(
        "",
        'Keep all sessions together under this size, e.g. "5GB" (units of 1024; "" = no limit).',
        expect='a size such as "500MB" or "5GB", or ""',
        check=_valid_size,
    )
    auto_gc: bool = _setting(
        False, "Apply these limits automatically after each session ends.", project=False
    )

    @property
    def max_total_bytes(self) -> int | None:
        """Return ``max_total_size`` in bytes, or None when there is no limit."""
        return parse_size(self.max_total_size)


@dataclass(frozen=True, slots=True)
class EncryptionConfig:
    """Encryption of recordings at rest."""

    encrypt: bool = _setting(False, "Encrypt recordings at rest.", project=False, salvage=_only(True))
    key_file: str = _setting(
        "",
        'Key file to encrypt with ("" = the default key in the data directory).',
        project=False,
        salvage=_always,
    )


def _valid_storage_url(value: object) -> None:
    from shellkeep.store.bucket import url_problem  # deferred: the recording path reads the config without it

    assert isinstance(value, str)
    problem = url_problem(value) if value else None
    if problem is None:
        return
    if problem.startswith("names no bucket"):
        raise ValueError("a storage URL naming a bucket, such as s3://bucket/prefix")
    if problem.startswith("needs an absolute path"):
        raise ValueError("a file:// URL with an absolute path, such as file:///mnt/share")
    raise ValueError("a storage URL such as s3://bucket/prefix, gs://, az:// or file:///path")


@dataclass(frozen=True, slots=True)
class SyncConfig:
    """Copying sessions to object storage (``shellkeep sync``)."""

    url: str = _setting(
        "",
        'Where \'shellkeep sync\' copies sessions: "s3://bucket/prefix", "gs://...", "az://...", '
        '"file:///mnt/share" ("" = off; --remote overrides it). Credentials come from the storage '
        "library's usual sources (environment, profile files, instance roles), never from here.",
        check=_valid_storage_url,
        project=False,
    )
    prune: bool = _setting(
        False,
        "Let 'sync push' delete from the remote the sessions of this machine deleted here (off: the "
        "remote keeps them).",
        project=False,
    )
    max_age_days: int = _setting(
        0,
        "'shellkeep gc --remote' deletes this machine's remote sessions older than this many days (0 = keep).",
        expect="an integer >= 0",
        check=_at_least(0, "an integer"),
        project=False,
    )
    part_mib: int = _setting(
        8,
        "Size of the parts a large file is pushed in, in MiB (an interrupted push resumes by part).",
        expect="an integer >= 1",
        check=_at_least(1, "an integer"),
        project=False,
    )


_PROGRAM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}")


def _valid_program_names(value: object) -> None:
    assert isinstance(value, tuple)
    for name in value:
        if not _PROGRAM_NAME.fullmatch(name):
            raise ValueError(f"a list of program names (letters, digits, '.', '_', '+', '-'; not {name!r})")


@dataclass(frozen=True, slots=True)
class ShellConfig:
    """What 'shellkeep init bash|zsh|fish' puts into the shell."""

    wrap: tuple[str, ...] = _setting(
        ("claude", "codex", "gemini", "opencode", "qwen", "aider", "copilot"),
        "Programs recorded whenever they are typed: each one found on PATH gets a shell "
        "function that runs it under shellkeep ('command NAME' runs it bare).",
        check=_valid_program_names,
        project=False,
    )
    notice: bool = _setting(
        True,
        "Say in one line, on entering a project, that it has interrupted sessions and how to "
        "resume the newest.",
        project=False,
    )


AUTO_IMPORT_CHOICES = ("shell", "on", "off")
"""The values of ``history.auto_import``."""


def _valid_auto_import(value: object) -> None:
    if value not in AUTO_IMPORT_CHOICES:
        raise ValueError('one of "shell", "on" or "off"')


@dataclass(frozen=True, slots=True)
class HistoryConfig:
    """How the agents' own histories are brought in ('shellkeep import --agent')."""

    auto_import: str = _setting(
        "shell",
        "Import the agents' own sessions by themselves, at most once a day, after a session ends: "
        '"shell" when the shell integration is installed, "on" always, "off" never.',
        expect='"shell", "on" or "off"',
        check=_valid_auto_import,
        project=False,
    )


NOTIFY_EVENTS = ("waiting", "finished", "killed", "hangup")
"""The values of ``notify.events``: a session waits for its user, or ended so (``Status``)."""

NOTIFY_FORMATS = ("text", "json")
"""The values of ``notify.format``: ntfy-style plain text with headers, or one JSON object."""


def _valid_events(value: object) -> None:
    assert isinstance(value, tuple)
    for event in value:
        if event not in NOTIFY_EVENTS:
            raise ValueError(f"a list of {', '.join(map(repr, NOTIFY_EVENTS))} (not {event!r})")


def _valid_format(value: object) -> None:
    assert isinstance(value, str)
    if value not in NOTIFY_FORMATS:
        raise ValueError(f"one of {', '.join(map(repr, NOTIFY_FORMATS))}")


def _valid_url(value: object) -> None:
    assert isinstance(value, str)
    if value and not re.fullmatch(r"https?://[^\s/?#]+(?:[/?#]\S*)?", value, re.IGNORECASE):
        raise ValueError('an http:// or https:// URL without spaces, or ""')


def _valid_command(value: object) -> None:
    assert isinstance(value, str)
    if not value:
        return
    try:
        words = shlex.split(value)
    except ValueError:  # an unclosed quote: neither shlex nor /bin/sh would run it
        raise ValueError('a command line with its quotes closed, or ""') from None
    if not words:
        raise ValueError('a command line, or "" for none')


@dataclass(frozen=True, slots=True)
class NotifyConfig:
    """Who is told when a session waits for its user or ends (nobody by default)."""

    events: tuple[str, ...] = _setting(
        ("waiting", "finished", "killed"),
        "What to notify: 'waiting' (the agent waits for your input or approval), 'finished', "
        "'killed' (ended by a signal), 'hangup' (its terminal was closed).",
        check=_valid_events,
        project=False,
    )
    waiting_delay_s: float = _setting(
        30.0,
        "Notify 'waiting' once the session has been waiting this many seconds without a break "
        "(counted from when 'shellkeep ps' shows it waiting); once per waiting spell.",
        expect="a number >= 0",
        check=_at_least(0, "a number"),
        project=False,
    )
    desktop: bool = _setting(
        False, "Show a desktop notification (notify-send on Linux, osascript on macOS, where found).", project=False
    )
    url: str = _setting(
        "",
        'POST each notification to this URL, e.g. "https://ntfy.sh/my-topic" ("" = none).',
        check=_valid_url,
        project=False,
    )
    format: str = _setting(
        "text",
        "The POST's body: 'text' (ntfy-compatible: the last line on screen, then the session and "
        "its exit status, as plain text, the headers Title and Tags) or 'json' (an object with "
        "session, project, agent, state, hint, last_line, exit_code, signal).",
        expect="'text' or 'json'",
        check=_valid_format,
        project=False,
    )
    command: str = _setting(
        "",
        "Run this command for each notification, with SHELLKEEP_SESSION, SHELLKEEP_PROJECT, "
        "SHELLKEEP_AGENT, SHELLKEEP_STATE, SHELLKEEP_LAST_LINE, SHELLKEEP_EXIT_CODE and others "
        "in its environment; split like a shell's words, and run by /bin/sh only when it holds "
        "shell syntax ('' = none).",
        check=_valid_command,
        project=False,
    )

    @property
    def enabled(self) -> bool:
        """Return whether any notifier is on for any event."""
        return bool(self.events) and bool(self.desktop or self.url or self.command)


_HEADER = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+=.*")


def _valid_headers(value: object) -> None:
    assert isinstance(value, tuple)
    for header in value:
        if not _HEADER.fullmatch(header):
            raise ValueError(f'a list of "name=value" HTTP headers (not {header!r})')


@dataclass(frozen=True, slots=True)
class OtlpConfig:
    """Each finished session sent as OpenTelemetry traces over OTLP/HTTP (off by default)."""

    endpoint: str = _setting(
        "",
        'The OTLP/HTTP traces URL to send each finished session to, e.g. "http://localhost:4318/v1/traces" '
        '("" = off). Sent after the session, in the background.',
        check=_valid_url,
        project=False,
    )
    content: bool = _setting(
        False,
        "Also send each exchange's prompt and answer (redacted by the [redact] rules); false sends "
        "metadata, models and token counts only.",
        project=False,
    )
    headers: tuple[str, ...] = _setting(
        (),
        'HTTP headers sent with each export, as "name=value" strings, e.g. ["authorization=Bearer ..."].',
        check=_valid_headers,
        project=False,
    )
    timeout_s: float = _setting(
        10.0,
        "How long one attempt to send may take, in seconds; the exporter retries with back-off "
        "within this, then the session is dropped from the export (it stays stored).",
        expect="a number > 0",
        check=_above_zero,
        project=False,
    )


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
"""The shipped price table, package data beside this module (dated inside)."""


@cache
def default_prices() -> Mapping[str, ModelPrice]:
    """Return the shipped price table (``shellkeep/prices.toml``): model id -> ``ModelPrice``.

    Read once per process with importlib.resources. Raises ConfigError naming the file if
    the installed copy is damaged (a packaging bug).
    """
    from importlib.resources import files

    origin = _Origin(f"the shipped price table {PRICES_FILE}", "reinstall shellkeep")
    try:
        doc = _toml_loads(files("shellkeep").joinpath(PRICES_FILE).read_text(encoding="utf-8"))
    except (OSError, _TomlError) as exc:
        raise ConfigError(f"cannot read the shipped price table {PRICES_FILE} ({exc}); reinstall shellkeep") from None
    return types.MappingProxyType(_parse_prices(doc, origin, {}))


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


@dataclass(frozen=True, slots=True)
class Config:
    """All settings, one attribute per config.toml table.

    prices: the ``[prices]`` table, model id -> ``ModelPrice``: the shipped table
    (``default_prices``) with the user's models over it (``PriceTable``). Unlike the other
    tables its keys are the models, so it is read apart from the key table (``_parse_prices``).
    """

    record: RecordConfig = field(default_factory=RecordConfig)
    redact: RedactConfig = field(default_factory=RedactConfig)
    resume: ResumeConfig = field(default_factory=ResumeConfig)
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    encryption: EncryptionConfig = field(default_factory=EncryptionConfig)
    sync: SyncConfig = field(default_factory=SyncConfig)
    shell: ShellConfig = field(default_factory=ShellConfig)
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    export_otlp: OtlpConfig = field(default_factory=OtlpConfig, metadata={"section": "export.otlp"})
    prices: Mapping[str, ModelPrice] = field(default_factory=PriceTable, hash=False, metadata={"table": "models"})


ConfigValue: TypeAlias = Union[bool, int, float, str, None, tuple[str, ...], tuple[RedactPattern, ...]]
"""The type of one resolved setting; None means unset."""

_Patterns: TypeAlias = "tuple[RedactPattern, ...]"

ENV_VARS: Mapping[str, str] = types.MappingProxyType(
    {
        "SHELLKEEP_RECORD_INPUT": "record.input",
        "SHELLKEEP_RECORD_FLUSH_INTERVAL_MS": "record.flush_interval_ms",
        "SHELLKEEP_RECORD_COALESCE_MS": "record.coalesce_ms",
        "SHELLKEEP_RECORD_IDLE_TIME_LIMIT": "record.idle_time_limit",
        "SHELLKEEP_RECORD_TITLE": "record.title",
        "SHELLKEEP_RECORD_COMPRESS": "record.compress",
        "SHELLKEEP_RECORD_BANNER": "record.banner",
        "SHELLKEEP_RECORD_RESTART": "record.restart",
        "SHELLKEEP_RECORD_DETAIL": "record.detail",
        "SHELLKEEP_REDACT_ENABLED": "redact.enabled",
        "SHELLKEEP_RESUME_EXCHANGES": "resume.exchanges",
        "SHELLKEEP_RETENTION_AUTO_GC": "retention.auto_gc",
        "SHELLKEEP_ENCRYPTION_ENCRYPT": "encryption.encrypt",
        "SHELLKEEP_ENCRYPTION_KEY_FILE": "encryption.key_file",
        "SHELLKEEP_SYNC_URL": "sync.url",
    }
)
"""Environment variables that set one key each (``SHELLKEEP_<SECTION>_<KEY>``).

Booleans take true/false, 1/0, yes/no or on/off; an empty variable counts as unset.
"""


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One resolved key, for ``shellkeep config show``.

    source: "default", the config file's path, the environment variable's name, or "flag";
    two file paths joined by " + " when a project file added to a list.
    """

    key: str
    value: ConfigValue
    source: str


# --------------------------------------------------------------------------- key table


@dataclass(frozen=True, slots=True)
class _Spec:
    """What the loader knows about one dotted key."""

    key: str
    section: str
    name: str
    kind: str  # "bool", "int", "float", "str", "strings" or "patterns"
    optional: bool
    default: ConfigValue
    doc: str
    expect: str
    check: _Check | None
    project: bool
    append: bool
    example: object
    salvage: _Keep | None


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
def _sections() -> dict[str, type]:
    """Return the table name → section class map, in declaration order.

    A nested table's name is dotted (``export.otlp``); its ``Config`` attribute is the name
    with ``_`` for ``.`` (``_attribute``).
    """
    hints = typing.get_type_hints(Config)
    return {
        f.metadata.get("section", f.name): hints[f.name] for f in dataclasses.fields(Config) if not f.metadata.get("table")
    }


def _attribute(section: str) -> str:
    """Return the ``Config`` attribute that holds table ``section`` (``export.otlp``: ``export_otlp``)."""
    return section.replace(".", "_")


def _flat_tables(doc: Mapping[str, object]) -> typing.Iterator[tuple[str, object]]:
    """Yield (table name, value) for a parsed document, nested tables by dotted name.

    ``[export.otlp]`` parses as ``{"export": {"otlp": {...}}}``; a table that only holds
    nested tables (``export``) is walked into, so its sub-tables are checked by name.
    """
    sections = _sections()
    for name, value in doc.items():
        nested = [s for s in sections if s.startswith(name + ".")]
        if name not in sections and nested and isinstance(value, dict):
            for sub, table in value.items():
                yield f"{name}.{sub}", table
        else:
            yield name, value


@cache
def _specs() -> dict[str, _Spec]:
    """Return every dotted key's spec, in declaration order (built on first use)."""
    specs: dict[str, _Spec] = {}
    for section, cls in _sections().items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            kind, optional = _kind_of(hints[f.name])
            key = f"{section}.{f.name}"
            specs[key] = _Spec(
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
                salvage=f.metadata["salvage"],
            )
    return specs


def config_keys() -> tuple[str, ...]:
    """Return every dotted config key ("record.input", ...) in declaration order."""
    return tuple(_specs())


def _suggest(word: str, choices: typing.Iterable[str]) -> str:
    """Return '; did you mean X?' for the closest choice, or ''."""
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _spec_for(dotted_key: str) -> _Spec:
    """Return the spec of ``dotted_key``; raise ConfigError naming the closest key."""
    spec = _specs().get(dotted_key)
    if spec is None:
        hint = _suggest(dotted_key, _specs()) or "; run 'shellkeep config show' to list the keys"
        raise ConfigError(f"unknown config key '{dotted_key}'{hint}")
    return spec


# --------------------------------------------------------------------------- values


def parse_size(text: str) -> int | None:
    """Return the number of bytes in a size such as "500MB", "5 GB", "1.5GiB" or "1024".

    Units B, K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB, case-insensitive, all powers of 1024
    (as disk tools report). "" means no limit and returns None.

    Raises:
        ValueError: the text is not a size.
    """
    stripped = text.strip()
    if not stripped:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b)?", stripped, re.IGNORECASE)
    if m is None:
        raise ValueError('a size such as "500MB" or "5GB", or ""')
    power = " kmgt".index((m.group(2) or " ").lower())
    return int(float(m.group(1)) * 1024**power)


def _show(value: object) -> str:
    """Render a bad value for an error message, briefly."""
    if value is None:
        text = "nothing"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, dict):
        text = "a table"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, slots=True)
class _Origin:
    """Where a value came from, for messages: "'<file>'", "environment variable X", ...

    fix: what the user can do about a bad value there ("" = nothing to add).
    """

    label: str  # "" for a value given on the command line
    fix: str = ""


def _bad_value(origin: _Origin, key: str, expect: str, got: object) -> ConfigError:
    """Return the error for a value of the wrong type or out of range."""
    shown = "" if isinstance(got, (list, tuple, dict)) else f", got {_show(got)}"
    fix = f"; {origin.fix}" if origin.fix else ""
    where = f"invalid config in {origin.label}" if origin.label else "invalid value"
    return ConfigError(f"{where}: {key} must be {expect}{shown}{fix}")


def _coerce(spec: _Spec, value: object, origin: _Origin) -> ConfigValue:
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
        raise _bad_value(origin, spec.key, spec.expect, value)
    if spec.check is not None:
        try:
            spec.check(result)
        except ValueError as exc:
            raise _bad_value(origin, spec.key, str(exc), value) from None
    return result


class _UnknownRuleKey(ConfigError):
    """A ``redact.patterns`` rule has a key other than name and pattern."""


def _coerce_pattern(spec: _Spec, index: int, item: object, origin: _Origin) -> RedactPattern:
    """Turn one ``{name, pattern}`` table into a RedactPattern."""
    where = f"{spec.key}[{index}]"
    if isinstance(item, RedactPattern):
        return item
    if not isinstance(item, dict):
        raise _bad_value(origin, where, "a {name, pattern} table", item)
    for extra in item:
        if extra not in ("name", "pattern"):
            hint = _suggest(extra, ("name", "pattern"))
            raise _UnknownRuleKey(f"unknown key '{where}.{extra}' in {origin.label}{hint}")
    for needed in ("name", "pattern"):
        if not isinstance(item.get(needed), str) or not item[needed]:
            raise _bad_value(origin, f"{where}.{needed}", "a non-empty string", item.get(needed))
    return RedactPattern(name=item["name"], pattern=item["pattern"])


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _parse_raw(spec: _Spec, raw: str, origin: _Origin) -> ConfigValue:
    """Convert a string from the environment or ``config set`` to the key's type.

    An empty string unsets a key that may be unset. Lists are written as TOML arrays;
    ``redact.allowlist`` also takes a single bare string.
    """
    text = raw.strip()
    if spec.optional and text == "":
        return None
    if spec.kind == "bool":
        if text.lower() in _TRUE:
            return _coerce(spec, True, origin)
        if text.lower() in _FALSE:
            return _coerce(spec, False, origin)
        raise _bad_value(origin, spec.key, "true or false (or 1/0, yes/no, on/off)", raw)
    if spec.kind == "int":
        try:
            return _coerce(spec, int(text), origin)
        except ValueError:
            raise _bad_value(origin, spec.key, spec.expect, raw) from None
    if spec.kind == "float":
        try:
            return _coerce(spec, float(text), origin)
        except ValueError:
            raise _bad_value(origin, spec.key, spec.expect, raw) from None
    if spec.kind == "str":
        return _coerce(spec, raw, origin)
    if spec.kind == "strings" and not text.startswith("["):
        return _coerce(spec, [raw], origin)
    try:
        parsed = _toml_loads(f"value = {text}")["value"]
    except _TomlError:
        raise _bad_value(origin, spec.key, f"{spec.expect} written as a TOML array", raw) from None
    return _coerce(spec, parsed, origin)


# --------------------------------------------------------------------------- TOML files


class _TomlError(Exception):
    """A TOML syntax error, with its 1-based line and column when known."""

    def __init__(self, reason: str, line: int | None, column: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.column = column


def _toml_loads(text: str) -> dict[str, typing.Any]:
    """Parse TOML text (tomllib on 3.11+, tomli before); raise _TomlError on bad syntax
    (nesting too deep for Python's recursion limit included)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses into nested arrays and inline tables
        raise _TomlError("arrays or tables nested too deeply", None, None) from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        reason = getattr(exc, "msg", None) or message
        line: int | None = getattr(exc, "lineno", None)
        column: int | None = getattr(exc, "colno", None)
        m = re.search(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)", message)
        if m is not None:
            if m.group(1):
                line, column = int(m.group(1)), int(m.group(2))
            else:
                line, column = text.count("\n") + 1, None
            if reason == message:
                reason = message[: m.start()]
        raise _TomlError(reason[:1].lower() + reason[1:], line, column) from None


def _read_document(path: Path, fix: str) -> dict[str, typing.Any] | None:
    """Return the parsed TOML of ``path``, or None when it does not exist.

    Raises:
        ConfigError: the file cannot be read or is not TOML; ``fix`` says what to do.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read config file '{path}': {exc.strerror or exc}; {fix}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file '{path}' is not valid utf-8; {fix}") from None
    try:
        return _toml_loads(text)
    except _TomlError as exc:
        where = f" at line {exc.line}" if exc.line is not None else ""
        where += f", column {exc.column}" if exc.line is not None and exc.column is not None else ""
        raise ConfigError(f"invalid toml in '{path}'{where}: {exc.reason}; {fix}") from None


def _validate_document(
    doc: Mapping[str, object], origin: _Origin, *, project: bool, prices: dict[str, ModelPrice] | None = None
) -> dict[str, ConfigValue]:
    """Check a parsed config file; return its values by dotted key.

    ``origin`` names the file in messages; ``project`` refuses keys a project may not set
    (and the ``[prices]`` table); ``prices`` receives the models of its ``[prices]`` table.
    """
    values: dict[str, ConfigValue] = {}
    sections = _sections()
    for section, table in _flat_tables(doc):
        if section == PRICES_TABLE:
            if project:
                raise ConfigError(
                    f"[{PRICES_TABLE}] cannot be set in a project file ({origin.label}); "
                    "set prices in your own config with 'shellkeep config edit'"
                )
            found = _parse_prices(table, origin, default_prices())
            if prices is not None:
                prices.update(found)
            continue
        if section not in sections:
            if not isinstance(table, dict):
                homes = [s.key for s in _specs().values() if s.name == section]
                hint = (
                    f"; put it in its table, as {homes[0]}"
                    if homes
                    else f"; the tables are {', '.join(sections)}"
                )
                raise ConfigError(f"unknown key '{section}' in {origin.label}{hint}")
            hint = _suggest(section, sections) or f"; the tables are {', '.join(sections)}"
            raise ConfigError(f"unknown table [{section}] in {origin.label}{hint}")
        if not isinstance(table, dict):
            raise ConfigError(f"invalid config in {origin.label}: '{section}' must be a [{section}] table")
        for name, value in table.items():
            key = f"{section}.{name}"
            spec = _specs().get(key)
            if spec is None:
                names = [s.name for s in _specs().values() if s.section == section]
                hint = _suggest(name, names).replace("'", f"'{section}.", 1) or (
                    f"; [{section}] has {', '.join(names)}"
                )
                raise ConfigError(f"unknown key '{key}' in {origin.label}{hint}")
            if project and not spec.project:
                raise ConfigError(
                    f"{key} cannot be set in a project file ({origin.label}); "
                    f"set it in your own config with 'shellkeep config set {key} ...'"
                )
            coerced = _coerce(spec, value, origin)
            if project and spec.salvage is not None and not spec.salvage(coerced):
                raise ConfigError(
                    f"{key} = {_show(coerced)} cannot be set in a project file ({origin.label}): "
                    f"a project may only make it stricter; set it in your own config with "
                    f"'shellkeep config set {key} ...'"
                )
            values[key] = coerced
    return values


PRICES_TABLE = "prices"
"""The table of per-model prices (``[prices."claude-sonnet-4-5"]``), keyed by model id."""


def _parse_prices(table: object, origin: _Origin, base: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
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
        where = f"{PRICES_TABLE}.{_toml_string(model)}"
        if not isinstance(entry, dict):
            raise ConfigError(
                f"invalid config in {origin.label}: {where} must be a table of {', '.join(PRICE_FIELDS)} "
                f"(USD per million tokens){fix}"
            )
        numbers: dict[str, float] = {}
        for name, value in entry.items():
            if name not in PRICE_FIELDS:
                hint = _suggest(name, PRICE_FIELDS).replace("'", f"'{where}.", 1) or f"; a model has {', '.join(PRICE_FIELDS)}"
                raise ConfigError(f"unknown key '{where}.{name}' in {origin.label}{hint}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise _bad_value(origin, f"{where}.{name}", "a number >= 0 (USD per million tokens)", value)
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


_FIX_USER = "fix it with 'shellkeep config edit'"
_FIX_PROJECT = "fix or remove that file"


def _file_origin(path: Path, *, project: bool) -> _Origin:
    return _Origin(f"'{path}'", _FIX_PROJECT if project else _FIX_USER)


def _layers(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None,
    problems: list[ConfigError] | None = None,
    prices: dict[str, ModelPrice] | None = None,
) -> list[tuple[str, dict[str, ConfigValue]]]:
    """Return (source, values) per layer above the defaults, lowest precedence first.

    prices: receives the ``[prices]`` models of the user's file (a file that does not load
    gives none).

    problems: None raises the first ConfigError; a list collects every one instead, and a
    broken file then gives only what ``_salvage`` keeps of it (and, after its error, the
    salvage's note, if any), a bad variable or flag nothing.
    """

    def checked(read: Callable[[], dict[str, ConfigValue]], fallback: Callable[[], dict[str, ConfigValue]]) -> dict[str, ConfigValue]:
        try:
            return read()
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(exc)
            return fallback()

    def file_layer(path: Path, *, project: bool) -> dict[str, ConfigValue] | None:
        try:
            doc = _read_document(path, _FIX_PROJECT if project else _FIX_USER)
            if doc is None:
                return None
            found: dict[str, ModelPrice] = {}
            values = _validate_document(doc, _file_origin(path, project=project), project=project, prices=found)
            if prices is not None:
                prices.update(found)
            return values
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(exc)
            values, note = _salvage(path, project=project)
            if note is not None and not isinstance(exc, _UnknownRuleKey):  # said once
                problems.append(note)
            return values

    layers: list[tuple[str, dict[str, ConfigValue]]] = []
    user = paths.config_file
    values = file_layer(user, project=False)
    if values is not None:
        layers.append((str(user), values))
    if project_root is not None:
        project_file = project_root / PROJECT_FILE_NAME
        if project_file.absolute() != user.absolute():
            values = file_layer(project_file, project=True)
            if values is not None:
                layers.append((str(project_file), values))
    for var, key in ENV_VARS.items():
        raw = env.get(var)
        if raw:
            env_origin = _Origin(f"environment variable {var}", f"fix or unset {var}")
            env_value = checked(lambda: {key: _parse_raw(_specs()[key], raw, env_origin)}, dict)
            if env_value:
                layers.append((var, env_value))
    flags: dict[str, ConfigValue] = {}
    for key, value in (overrides or {}).items():
        if value is not None:
            flags.update(checked(lambda: {key: _coerce(_spec_for(key), value, _Origin("a command-line flag"))}, dict))
    if flags:
        layers.append(("flag", flags))
    return layers


def _salvage(path: Path, *, project: bool) -> tuple[dict[str, ConfigValue], ConfigError | None]:
    """Return what a config file that does not load still sets: the privacy settings it states.

    A file that is not TOML is read statement by statement with tomllib (``_statements``):
    a statement that does not parse is skipped, the ones before and after it are read, in
    every TOML spelling (``[redact]`` tables, dotted keys such as ``redact.patterns = [...]``
    at the top, inline tables such as ``redact = { patterns = [...] }``, ``[[redact.patterns]]``
    arrays of tables), and a broken array gives the items in it that parse. Of what reads
    and validates, only the values that cannot weaken privacy are kept (each key's
    ``salvage`` test): ``record.input = false``, every ``redact.patterns`` rule,
    ``encryption.encrypt = true`` and ``encryption.key_file``. A key stated twice keeps the
    value that passes its test (``input = false`` beside ``input = true``: false); rules add
    up, each once; of two key files the later applies. A rule with keys other than name
    and pattern is applied without them. ``redact.enabled = false``, ``redact.allowlist``,
    the retention limits and the rest are not applied from a broken file: defaults apply.

    Returns:
        (values by dotted key, the one-line note to warn with when rules were applied
        without keys they do not know, else None).
    """
    try:
        text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")  # an editor's BOM
    except OSError:
        return {}, None
    try:
        assignments = list(_assignments((), _toml_loads(text)))
    except _TomlError:
        assignments = _statements(text)
    origin = _file_origin(path, project=project)
    kept: dict[str, ConfigValue] = {}
    ignored: list[tuple[str, str]] = []  # (rule name, the key left out of it)
    for section, name, value in assignments:
        spec = _specs().get(f"{section}.{name}")
        if spec is None or spec.salvage is None or (project and not spec.project):
            continue
        result: ConfigValue
        if spec.kind == "patterns":
            if not isinstance(value, list):
                continue
            rules = list(typing.cast(_Patterns, kept.get(spec.key, ())))
            for item in value:  # each rule on its own: one bad rule does not drop the others
                rule = _salvage_rule(spec, item, origin, ignored)
                if rule is not None and rule not in rules:
                    rules.append(rule)
            result = tuple(rules)
        else:
            try:
                result = _coerce(spec, value, origin)
            except ConfigError:
                continue
        if spec.salvage(result):
            kept[spec.key] = result
    note = None
    if ignored:
        rule, key = ignored[0]
        more, them = (f" and {len(ignored) - 1} more", "the rules apply without them") if len(ignored) > 1 else ("", "the rule applies without it")
        note = ConfigError(
            f"unknown key '{key}' in redact.patterns rule '{rule}'{more} in {origin.label}: {them}; {origin.fix}"
        )
    return kept, note


def _salvage_rule(
    spec: _Spec, item: object, origin: _Origin, ignored: list[tuple[str, str]]
) -> RedactPattern | None:
    """Return one ``redact.patterns`` rule of a broken file, or None when it is not a valid rule.

    Keys other than name and pattern are left out, and added to ``ignored`` as (rule name,
    key), rather than dropping the rule: a rule that says what to redact is applied.
    """
    extra: list[str] = []
    if isinstance(item, dict):
        extra = [key for key in item if key not in ("name", "pattern")]
        item = {key: item[key] for key in ("name", "pattern") if key in item}
    try:
        (rule,) = typing.cast(_Patterns, _coerce(spec, [item], origin))
    except ConfigError:
        return None
    ignored += [(rule.name, key) for key in extra]
    return rule


_MAX_STATEMENT_LINES = 200  # a statement is tried at each length up to this many lines, then whole
_MAX_ITEM_PIECES = 16  # an item of a broken array spans at most this many ',' or line ends


def _assignments(table: tuple[str, ...], parsed: Mapping[str, object]) -> list[tuple[str, str, object]]:
    """Return (section, name, value) for each config key ``parsed`` sets under ``table``.

    ``parsed`` is what tomllib made of one statement read under the table header ``table``
    (() for the top level), or of a whole document; keys that are not ``<section>.<name>``
    give nothing here (the caller drops the unknown ones).
    """
    tree: object = dict(parsed)
    for key in reversed(table):
        tree = {key: tree}
    assert isinstance(tree, dict)
    return [
        (section, name, value)
        for section, values in tree.items()
        if isinstance(values, dict)
        for name, value in values.items()
    ]


def _statements(text: str) -> list[tuple[str, str, object]]:
    """Read what can be read of TOML text with syntax errors, statement by statement.

    Returns (section, name, value) per config key set, in file order; a key set twice gives
    two entries. Each statement (a table header, or ``key = value`` with the lines up to the
    next statement) is parsed alone by tomllib; one that does not parse is skipped, except
    that a broken array gives the items in it that parse (``_array_items``). A header that
    does not parse is read closed (``[record`` as ``[record]``) when that parses, else the
    statements under it are skipped (their table is unknown). Each ``[[section.name]]``
    header gives one table, filled in by the statements under it.
    """
    lines = text.splitlines()
    found: list[tuple[str, str, object]] = []
    table: tuple[str, ...] | None = ()  # None: under a header that cannot be read
    entry: dict[str, object] | None = None  # the table of the last [[...]] header
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if stripped.startswith("["):
            header = _header(stripped)
            table, entry = (None, None) if header is None else (header[0], None)
            if header is not None and header[1]:
                entry = {}  # filled in below: found holds the same dict
                found += _assignments(header[0][:-1], {header[0][-1]: [entry]})
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not _starts_statement(lines[end]):
            end += 1
        parsed: dict[str, typing.Any] | None = None
        stops = list(range(i + 1, min(end, i + _MAX_STATEMENT_LINES) + 1))  # the shortest first
        for stop in stops if stops[-1] == end else [*stops, end]:
            try:
                parsed = _toml_loads("\n".join(lines[i:stop]))
            except _TomlError:
                continue
            end = stop
            break
        else:
            parsed = _array_items("\n".join(lines[i:end]))
        i = end
        if parsed is None or table is None:
            continue
        if entry is not None:
            entry.update(parsed)
        else:
            found += _assignments(table, parsed)
    return found


def _header(stripped: str) -> tuple[tuple[str, ...], bool] | None:
    """Return (table path, is an array of tables) of a ``[...]`` or ``[[...]]`` header line.

    A header missing its closing brackets is read closed; None when it still does not parse.
    """
    for closing in ("", "]", "]]"):
        try:
            node: object = _toml_loads(stripped + closing)
        except _TomlError:
            continue
        path: list[str] = []
        while isinstance(node, dict) and len(node) == 1:
            ((key, node),) = node.items()
            path.append(key)
        if path and node == {}:
            return tuple(path), False
        if path and node == [{}]:
            return tuple(path), True
        return None
    return None


def _starts_statement(line: str) -> bool:
    """Return whether ``line`` begins a statement: a table header, or a key then '='.

    tomllib judges: a key is whatever, followed by ``= 0``, parses (so dotted and quoted
    keys count, and an item of an array or a comment does not).
    """
    stripped = line.strip()
    if stripped.startswith("["):
        return _header(stripped) is not None
    at = stripped.find("=")
    while at > 0:
        try:
            _toml_loads(stripped[: at + 1] + " 0")
        except _TomlError:
            at = stripped.find("=", at + 1)
            continue
        return True
    return False


def _array_items(block: str) -> dict[str, typing.Any] | None:
    """Return a broken array statement read with the items that parse, or None.

    ``block`` is the statement's text: ``key = [`` (also dotted, or inside an inline table,
    ``redact = { patterns = [``), then items, one of them bad or the array cut short. The
    head is the text up to the first '[' that, closed again, parses; the rest is cut after
    each ',' and newline, and each shortest run of pieces that parses alone as items of that
    array is kept.
    """
    for opening in re.finditer(r"\[", block):
        head = block[: opening.end()]
        for closing in ("]", "]}"):
            try:
                empty = _toml_loads(head + closing)
            except _TomlError:
                continue
            break
        else:
            continue
        pieces = re.split(r"(?<=[,\n])", block[opening.end() :])
        items: list[object] = []
        k = 0
        while k < len(pieces):
            for stop in range(k + 1, min(k + _MAX_ITEM_PIECES, len(pieces)) + 1):
                run = "".join(pieces[k:stop])
                got = _parse_or_none(head + run + "\n" + closing) or _parse_or_none(head + run)
                if got is not None:
                    items += _last_array(got)
                    k = stop
                    break
            else:
                k += 1
        _last_array(empty)[:] = items
        return empty
    return None


def _parse_or_none(text: str) -> dict[str, typing.Any] | None:
    try:
        return _toml_loads(text)
    except _TomlError:
        return None


def _last_array(tree: dict[str, typing.Any]) -> list[object]:
    """Return the array a statement opened last: the last key's value at each level."""
    node: object = tree
    while isinstance(node, dict) and node:
        node = node[list(node)[-1]]
    return node if isinstance(node, list) else []


def _resolve(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None,
    problems: list[ConfigError] | None = None,
) -> tuple[Config, dict[str, ConfigEntry]]:
    """Apply the layers over the defaults; the one place precedence is decided."""
    entries = {key: ConfigEntry(key, spec.default, "default") for key, spec in _specs().items()}
    user_prices: dict[str, ModelPrice] = {}
    for source, values in _layers(paths, project_root, env, overrides, problems, user_prices):
        for key, value in values.items():
            old = entries[key]
            if _specs()[key].append and source != "flag":
                combined = typing.cast(_Patterns, old.value) + typing.cast(_Patterns, value)
                joined = source if old.source == "default" else f"{old.source} + {source}"
                entries[key] = ConfigEntry(key, combined, joined)
            else:
                entries[key] = ConfigEntry(key, value, source)
    tables: dict[str, object] = {}
    for section, cls in _sections().items():
        kwargs = {_specs()[e.key].name: e.value for e in entries.values() if _specs()[e.key].section == section}
        tables[_attribute(section)] = cls(**kwargs)
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


def load_config_salvaged(
    paths: Paths,
    project_root: Path | None,
    env: Mapping[str, str],
    overrides: Mapping[str, object] | None = None,
) -> tuple[Config, tuple[ConfigError, ...]]:
    """Return the settings as ``load_config`` does, and the errors it would have raised.

    Nothing raises: a file that is not TOML or does not validate applies only the privacy
    settings it states (see ``_salvage``: ``record.input = false``, ``redact.patterns``,
    ``encryption.encrypt = true``, ``encryption.key_file``); the files that load apply in
    full; a bad variable or flag is ignored. For a run that must go on despite a broken
    config: nothing the broken file would have kept out of a recording gets in.

    The errors come in layer order, one per broken file, variable or flag; after a file's
    error may come one note, also a ``ConfigError``, naming keys its rules were applied
    without. Each is one line to warn with.
    """
    problems: list[ConfigError] = []
    config = _resolve(paths, project_root, env, overrides, problems)[0]
    return config, tuple(problems)


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
    doc = _read_document(path, _FIX_PROJECT if project else _FIX_USER)
    if doc is not None:
        _validate_document(doc, _file_origin(path, project=project), project=project)


def get_config_value(config: Config, dotted_key: str) -> ConfigValue:
    """Return one setting by dotted key ("record.input").

    Raises:
        ConfigError: the key is unknown (with the closest key, if any).
    """
    spec = _spec_for(dotted_key)
    value: ConfigValue = getattr(getattr(config, _attribute(spec.section)), spec.name)
    return value


# --------------------------------------------------------------------------- writing


def _to_toml(value: ConfigValue) -> object:
    """Return a value in the shape tomli-w writes."""
    if isinstance(value, tuple):
        return [{"name": v.name, "pattern": v.pattern} if isinstance(v, RedactPattern) else v for v in value]
    return value


def _save_config_file(path: Path, data: bytes) -> None:
    """Write ``path`` with the store's atomic writer (``store.atomic.write_bytes_atomic``: file
    0600, the old file or the new one after a crash), making its folder (0700) if missing.

    This adds no writing of its own: only the folder and the error. A symlinked config file is
    followed, so the link's target is replaced, not the link. Raises ShellkeepError naming the
    file when it cannot be written.
    """
    try:
        ensure_dir((path.resolve() if path.is_symlink() else path).parent)
        write_bytes_atomic(path, data, follow_symlink=True)
    except OSError as exc:
        raise ShellkeepError(
            f"cannot write config file '{path}': {exc.strerror or exc}; check the folder's permissions"
        ) from None


def set_config_value(path: Path, dotted_key: str, raw_value: str) -> ConfigValue:
    """Set one key in the config file at ``path``, keeping its other keys; return the value.

    ``raw_value`` is converted to the key's type as for environment variables: booleans
    take true/false/1/0/yes/no/on/off, lists a TOML array (``'["a", "b"]'``), and "" unsets
    a key that may be unset. The file is rewritten with tomli-w (comments are not kept)
    atomically, mode 0600, its folder made 0700 if missing.

    Raises:
        ConfigError: the key is unknown, the value is wrong, or the existing file is not
            valid (the whole file is checked before it is written).
        ShellkeepError: the file cannot be written.
    """
    import tomli_w

    spec = _spec_for(dotted_key)
    value = _parse_raw(spec, raw_value, _Origin(""))
    doc = _read_document(path, _FIX_USER) or {}
    parents: list[dict[str, typing.Any]] = []
    table: object = doc
    for part in spec.section.split("."):  # [export.otlp] is doc["export"]["otlp"]
        assert isinstance(table, dict)
        parents.append(table)
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            raise ConfigError(f"invalid config in '{path}': '{spec.section}' must be a [{spec.section}] table")
    if value is None:
        table.pop(spec.name, None)
        for parent, part in zip(reversed(parents), reversed(spec.section.split("."))):
            if not parent[part]:
                del parent[part]
    else:
        table[spec.name] = _to_toml(value)
    _validate_document(doc, _file_origin(path, project=False), project=False)
    _save_config_file(path, tomli_w.dumps(doc).encode("utf-8"))
    return value


def create_config_file(path: Path) -> bool:
    """Write the documented template (every key commented out) to ``path`` if it is missing.

    Returns True when the file was created. Same file modes as ``set_config_value``.
    """
    if path.exists():
        return False
    _save_config_file(path, render_config_template(commented=True).encode("utf-8"))
    return True


def format_toml_value(value: ConfigValue) -> str:
    """Render a setting as a TOML value ("true", "250", '"5GB"', '["a"]')."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, tuple):
        items = [
            f"{{ name = {_toml_string(v.name)}, pattern = {_toml_string(v.pattern)} }}"
            if isinstance(v, RedactPattern)
            else _toml_string(v)
            for v in value
        ]
        return "[" + ", ".join(items) + "]"
    return ""


def _toml_string(text: str) -> str:
    """Return a TOML literal string when possible (regexes stay readable), else a basic one."""
    plain = not any(ord(c) < 32 or ord(c) == 127 for c in text)
    if plain and "\\" not in text and '"' not in text:
        return f'"{text}"'
    if plain and "'" not in text:
        return f"'{text}'"
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


_TEMPLATE_HEAD = """\
# shellkeep configuration: config.toml
#
# Where it is: `shellkeep config path`. What is in effect and why: `shellkeep config show`.
# Later layers win: these defaults < this file < a project's .shellkeep.toml (only the
# [record] and [resume] keys, and extra redact.patterns) < SHELLKEEP_* environment
# variables < command-line flags. Every key is listed with its default.
# A file with an error still applies, to recordings, the privacy settings it states, read
# statement by statement in any TOML spelling (tables, dotted keys, inline tables):
# record.input = false, every redact.patterns rule, encryption.encrypt = true and key_file
# (never redact.enabled = false or the allowlist); the rest falls back to the defaults.
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
    for section, cls in _sections().items():
        lines += ["", f"[{section}]", f"# {(cls.__doc__ or '').strip().splitlines()[0]}"]
        for spec in _specs().values():
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
        lines += ["", f"{prefix}[{PRICES_TABLE}.{_toml_string(model)}]"]
        lines += [f"{prefix}{name} = {format_toml_value(getattr(price, name))}" for name in PRICE_FIELDS]
    return lines


def _wrap(text: str, width: int) -> list[str]:
    """Wrap ``text`` into lines of at most ``width`` characters."""
    import textwrap

    return textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False)
