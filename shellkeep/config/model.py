"""Own the settings model: one frozen dataclass per config.toml table, defaults in code.

Each key is declared once, with ``_setting``: its default, its one-line doc, how its value
is checked, whether a project file may set it, and, for a key that bears on privacy, its
values from the least private to the most (``private``). The key table (``config.keys``),
the loader and the example config are all read from these declarations.
"""

from __future__ import annotations

import re
import shlex
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, Union

from shellkeep.config.prices import ModelPrice, PriceTable

Check = Callable[[object], None]
"""Raise ``ValueError("<what the value must be>")`` when a typed value is out of range."""


def _setting(
    default: typing.Any,
    doc: str,
    *,
    expect: str = "",
    check: Check | None = None,
    project: bool = True,
    append: bool = False,
    example: object = None,
    private: tuple[object, ...] = (),
) -> typing.Any:
    """Declare one config key: its default, its one-line doc, and how it is validated.

    ``expect`` replaces the type's wording in errors ("an integer >= 1"); ``check`` tests
    the value once its type is right; ``project`` says whether a project file may set it;
    ``append`` makes later layers add to the list instead of replacing it; ``example`` is
    the value shown, commented out, for a key that is unset by default; ``private`` lists
    the values of a key that bears on privacy from the least private to the most: a project
    file may not set the first, and a broken config file with no good copy gets the last.
    """
    meta = {
        "doc": doc,
        "expect": expect,
        "check": check,
        "project": project,
        "append": append,
        "example": example,
        "private": private,
    }
    return field(default=default, metadata=meta)


def _at_least(minimum: float, what: str) -> Check:
    """Return a check that a number is ``>= minimum``."""

    def check(value: object) -> None:
        assert isinstance(value, (int, float))
        if value < minimum:
            raise ValueError(f"{what} >= {minimum:g}")

    return check


def _one_of(choices: tuple[str, ...]) -> Check:
    """Return a check that a string is one of ``choices``."""

    def check(value: object) -> None:
        assert isinstance(value, str)
        if value not in choices:
            raise ValueError(f"one of {', '.join(map(repr, choices))}")

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


ENV_SCOPES = ("all", "agent", "none")
"""The values of ``record.env``, from the most recorded to the least."""


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def _valid_env_names(value: object) -> None:
    assert isinstance(value, tuple)
    for entry in value:
        if not _ENV_NAME.fullmatch(entry):
            raise ValueError(f"a list of variable names, or prefixes ending in '*'; {entry!r} is neither")


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
        private=(True, False),
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
    snapshots: bool = _setting(
        True,
        "While an agent runs in a git work tree, snapshot its files each time it finishes an answer "
        "(skipped when nothing changed), for 'shellkeep diff' and 'shellkeep restore-files'.",
    )
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
        check=_one_of(DETAIL_LEVELS),
        private=DETAIL_LEVELS,  # keeping less adds privacy
    )
    env: str = _setting(
        "agent",
        "Which environment variables to keep at a session's start, for resume to give back: "
        "'agent' (those the agent's adapter names, plus PATH, virtualenv, proxies, certificate "
        "bundles, locale, TERM), 'all' or 'none'. Secret ones are sealed (encryption on) or "
        "kept as a keyed fingerprint only; SHELLKEEP_* never.",
        expect="'agent', 'all' or 'none'",
        check=_one_of(ENV_SCOPES),
        private=ENV_SCOPES,  # keeping less adds privacy
    )
    env_include: tuple[str, ...] = _setting(
        (),
        "More variables to keep with record.env = 'agent': names, or prefixes ending in '*' "
        "(\"MYTOOL_*\").",
        check=_valid_env_names,
        project=False,
    )
    env_exclude: tuple[str, ...] = _setting(
        (),
        "Variables never kept, whatever record.env says: names, or prefixes ending in '*'.",
        check=_valid_env_names,
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

    encrypt: bool = _setting(False, "Encrypt recordings at rest.", project=False)
    key_file: str = _setting(
        "",
        'Key file to encrypt with ("" = the default key in the data directory).',
        project=False,
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
        check=_one_of(NOTIFY_FORMATS),
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
class Config:
    """All settings, one attribute per config.toml table.

    prices: the ``[prices]`` table, model id -> ``ModelPrice``: the shipped table
    (``default_prices``) with the user's models over it (``PriceTable``). Unlike the other
    tables its keys are the models, so it is read apart from the key table (``config.prices.parse_prices``).
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

ENV_VARS: Mapping[str, str] = types.MappingProxyType(
    {
        "SHELLKEEP_RECORD_INPUT": "record.input",
        "SHELLKEEP_RECORD_FLUSH_INTERVAL_MS": "record.flush_interval_ms",
        "SHELLKEEP_RECORD_COALESCE_MS": "record.coalesce_ms",
        "SHELLKEEP_RECORD_IDLE_TIME_LIMIT": "record.idle_time_limit",
        "SHELLKEEP_RECORD_TITLE": "record.title",
        "SHELLKEEP_RECORD_COMPRESS": "record.compress",
        "SHELLKEEP_RECORD_SNAPSHOTS": "record.snapshots",
        "SHELLKEEP_RECORD_BANNER": "record.banner",
        "SHELLKEEP_RECORD_RESTART": "record.restart",
        "SHELLKEEP_RECORD_DETAIL": "record.detail",
        "SHELLKEEP_RECORD_ENV": "record.env",
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

