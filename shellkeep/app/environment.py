"""Record the environment a session's agent runs in, at its start: ``meta.json``'s ``env``.

Which variables: ``record.env = "agent"`` keeps those the agent's adapter names
(``env_names``/``env_prefixes``: config folders, base URLs, provider switches, model names,
keys; for a shell or a program no adapter knows, those of every built-in adapter) plus
``COMMON_NAMES``/``COMMON_PREFIXES`` (PATH, virtualenv, proxies, certificate bundles, locale,
TERM) and ``record.env_include``; ``"all"`` keeps every variable; ``"none"`` none. Never
kept: ``record.env_exclude``, ``SHELLKEEP_*`` and what belongs to one terminal or one agent
process (``NEVER_NAMES``: ``TMUX``, ``SSH_AUTH_SOCK``, ``CLAUDE_CODE_SESSION_ID``, ...).

Secrets: a variable whose name holds one of ``SECRET_WORDS`` (or one of ``SECRET_PARTS`` as a
whole ``_``-separated part) or whose value the redaction rules change is never stored in
clear. Each keeps a keyed fingerprint (``vault.env_secrets``); with encryption on, the values
are also sealed together with the encryption key. The stored shape (``meta.json``'s ``env``, ``SessionMeta.env``)::

    {"scope": "agent", "home": "/home/me",
     "values": {"ANTHROPIC_BASE_URL": "http://...", ...},
     "secrets": {"ANTHROPIC_API_KEY": "hmac-sha256:<key id>:<hex>", ...},
     "sealed": "<base64 of a sealed {name: value} JSON object>"}   # encryption on only

``VARIABLES_THAT_RUN_CODE`` lists the variables that change what code runs; resume applies
them only for sessions recorded on this machine (``app.env_restore``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.app.run_request import RecordSettings
    from shellkeep.store.paths import Paths
    from shellkeep.store.session import SessionMeta

__all__ = [
    "COMMON_NAMES",
    "NEVER_NAMES",
    "SECRET_PARTS",
    "SECRET_WORDS",
    "VARIABLES_THAT_RUN_CODE",
    "environment_lines",
    "source_agent_only",
    "is_secret_name",
    "kept_names",
    "recorded_env",
    "record_environment",
    "names_a_folder",
    "routes_traffic",
    "runs_code",
    "shown_value",
    "stored_env",
]

log = get_logger(__name__)

COMMON_NAMES = frozenset(
    {
        "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "NODE_OPTIONS",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM",
        "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
    }
)  # fmt: skip
"""Variables kept for every agent (``record.env = "agent"``)."""
COMMON_PREFIXES = ("LC_",)

NEVER_PREFIXES = ("SHELLKEEP_",)
"""shellkeep's own: its session variables would make the resumed run think it is recorded
already, and its settings are the config's business."""
NEVER_NAMES = frozenset(
    {
        # one terminal, login or process
        "HOME", "USER", "LOGNAME", "HOSTNAME", "MAIL", "SUDO_USER", "SUDO_UID", "SUDO_GID", "SUDO_COMMAND", "PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TMUX", "TMUX_PANE", "STY", "WINDOW", "WINDOWID",
        "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TERM_SESSION_ID", "KITTY_WINDOW_ID", "WEZTERM_PANE", "ALACRITTY_WINDOW_ID", "VTE_VERSION", "SSH_AUTH_SOCK",
        "SSH_AGENT_PID", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "INVOCATION_ID",
        "JOURNAL_STREAM", "MANAGERPID",
        # one agent process's identity, set for the programs it runs
        "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SSE_PORT", "CODEX_THREAD_ID",
        "CODEX_SANDBOX", "CODEX_SANDBOX_NETWORK_DISABLED", "GEMINI_CLI", "GEMINI_SESSION_ID", "QWEN_CODE",
        "QWEN_CODE_SESSION_ID", "OPENCODE", "OPENCODE_SESSION_ID",
    }
)  # fmt: skip

SECRET_WORDS = (
    "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "PASSCODE", "CREDENTIAL", "AUTH", "PRIVATE",
    "COOKIE", "SIGNATURE",
)  # fmt: skip
"""A variable whose name holds one of these anywhere (any case) is a secret."""
SECRET_PARTS = frozenset({"PWD", "PASS", "PAT", "PIN", "SALT", "DSN"})
"""A variable one of whose ``_``-separated parts is one of these short words (any case) is a
secret: ``MYSQL_PWD``, ``GITHUB_PAT_X``, ``SMTP_PASS``; ``PATH``, ``SPINNER`` and ``PASSENGER_X``
are not (the word is only part of a part). ``PWD`` alone is the working directory, no secret."""
_NOT_SECRETS = frozenset({"PWD", "OLDPWD"})

VARIABLES_THAT_RUN_CODE = frozenset(
    {
        "PATH", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
        "PYTHONUSERBASE", "PYTHONEXECUTABLE", "PYTHONINSPECT", "VIRTUAL_ENV", "CONDA_PREFIX", "BASH_ENV", "ENV",
        "ZDOTDIR", "PROMPT_COMMAND", "PS0", "PS1", "PS4", "SHELLOPTS", "BASHOPTS", "IFS", "EDITOR", "VISUAL",
        "PAGER", "GIT_EDITOR", "GIT_PAGER", "BROWSER", "SHELL", "PERL5LIB", "PERLLIB", "PERL5OPT", "RUBYOPT",
        "RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
        "CLASSPATH", "LUA_PATH", "LUA_INIT", "GCONV_PATH", "HOSTALIASES", "NPM_CONFIG_PREFIX", "npm_config_prefix",
        "NODE_REPL_EXTERNAL_MODULE", "DENO_DIR", "BUN_INSTALL", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN",
        "LESSCLOSE", "MANPAGER", "SYSTEMD_PAGER", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS", "OPENCODE_CONFIG_CONTENT",
    }
)  # fmt: skip
"""Variables that change what code runs: a program's search path, code loaded at start, the
commands a tool calls (git's config under XDG_CONFIG_HOME names hooks and ssh). Applied on
resume only for sessions recorded on this machine, never from one pulled from a bucket. An
agent's own config folder (CLAUDE_CONFIG_DIR, CODEX_HOME) is not in the list: it names a
folder of this machine, mapped like the session's directory, and one inside shellkeep's data
folder (where a pulled session's files are) is never applied (``app.env_restore``)."""
_PREFIXES_THAT_RUN_CODE = ("LD_", "DYLD_", "GIT_", "PYTHON", "BASH_FUNC_", "NODE_", "npm_config_")


def runs_code(name: str) -> bool:
    """Return whether the variable ``name`` can change what code runs (``VARIABLES_THAT_RUN_CODE``,
    ``LD_*``, ``DYLD_*``, ``GIT_*``, ``PYTHON*``, ``NODE_*``, exported bash functions)."""
    return name in VARIABLES_THAT_RUN_CODE or name.startswith(_PREFIXES_THAT_RUN_CODE)


_ROUTING_ENDINGS = ("_BASE_URL", "_API_BASE", "_API_URL", "_HOST", "_PROXY")
_ROUTING_NAMES = frozenset({"NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"})


def routes_traffic(name: str) -> bool:
    """Return whether the variable ``name`` decides where a program's requests go or whom it
    trusts (``*_BASE_URL``, ``*_ENDPOINT*``, ``*_API_BASE``, ``*_HOST``, proxies in any case,
    certificate bundles): from another machine it could send today's keys elsewhere."""
    upper = name.upper()
    return (
        upper.endswith(_ROUTING_ENDINGS)
        or "_ENDPOINT" in upper
        or upper in ("NO_PROXY", "ALL_PROXY", "HTTP_PROXY", "HTTPS_PROXY")
        or upper.startswith("SSL_CERT_")
        or upper in _ROUTING_NAMES
    )


def names_a_folder(name: str) -> bool:
    """Return whether the variable ``name`` names an agent's config or data folder
    (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_*``/``QWEN_*`` folders, ``XDG_*_HOME``...)."""
    return name.upper().endswith(("_DIR", "_DIRS", "_HOME"))


def is_secret_name(name: str) -> bool:
    """Return whether ``name`` holds one of ``SECRET_WORDS``, or has one of ``SECRET_PARTS`` as
    a whole ``_``-separated part (case-insensitive); never ``PWD``/``OLDPWD`` (the working directory)."""
    upper = name.upper()
    if upper in _NOT_SECRETS:
        return False
    return any(word in upper for word in SECRET_WORDS) or not SECRET_PARTS.isdisjoint(upper.split("_"))


def _matches(name: str, patterns: Iterable[str]) -> bool:
    """Return whether ``name`` is one of ``patterns`` (names, or prefixes ending in ``*``)."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def kept_names(
    env: Mapping[str, str],
    scope: str,
    *,
    names: Iterable[str] = (),
    prefixes: tuple[str, ...] = (),
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> list[str]:
    """Return the names of ``env`` to record, sorted.

    scope: ``record.env`` (``agent``, ``all``, ``none``). names / prefixes: the agent's own
    (``env_names``/``env_prefixes`` of its adapter). include / exclude: ``record.env_include``
    and ``record.env_exclude`` (names, or prefixes ending in ``*``); exclude wins.
    """
    if scope == "none":
        return []
    wanted = set(names)
    include, exclude = tuple(include), tuple(exclude)
    kept = []
    for name in env:
        if name in NEVER_NAMES or name.startswith(NEVER_PREFIXES) or _matches(name, exclude) or not name:
            continue
        if scope == "all" or name in COMMON_NAMES or name in wanted or name.startswith((*COMMON_PREFIXES, *prefixes)):
            kept.append(name)
        elif _matches(name, include):
            kept.append(name)
    return sorted(kept)


def _agent_names(argv: list[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """Return the variable names and prefixes the agent of ``argv`` declares.

    A shell, where any agent may be started, gets those of every built-in adapter; a program
    no built-in adapter knows gets none (only the common ones and ``record.env_include``).
    """
    from shellkeep.agents.launchers import SHELLS
    from shellkeep.agents.registry import adapter_for, builtin_adapters, builtin_may_match

    if builtin_may_match(argv):
        adapter = adapter_for(argv, plugins=False)
        names = tuple(getattr(adapter, "env_names", ()))
        prefixes = tuple(getattr(adapter, "env_prefixes", ()))
        if names or prefixes:
            return frozenset(names), prefixes
    if not argv or os.path.basename(argv[0]).lstrip("-") not in SHELLS:
        return frozenset(), ()  # a plain program: no adapter is even imported (start-up cost)
    every = builtin_adapters()
    all_names = frozenset(n for a in every for n in getattr(a, "env_names", ()))
    all_prefixes = tuple(sorted({p for a in every for p in getattr(a, "env_prefixes", ())}))
    return all_names, all_prefixes


def source_agent_only(source: str, target: Sequence[str]) -> Callable[[str], bool]:
    """Return a test of the variables a hand-off leaves out: those the session's agent
    ``source`` (an adapter name) declares as its own (``env_names``/``env_prefixes``) and the
    program ``target`` (the ``--agent`` argv) does not; none when the target is the same agent."""
    from shellkeep.agents.registry import adapter_named
    from shellkeep.errors import UserInputError

    try:
        adapter = adapter_named(source)
    except UserInputError:  # a plug-in no longer installed: nothing known as its own
        return lambda name: False
    names, prefixes = frozenset(getattr(adapter, "env_names", ())), tuple(getattr(adapter, "env_prefixes", ()))
    kept_names, kept_prefixes = _agent_names(list(target))
    if names == kept_names and prefixes == kept_prefixes:
        return lambda name: False  # the same agent (or a shell, where any may run)

    def left_out(name: str) -> bool:
        own = name in names or name.startswith(prefixes)
        return own and not (name in kept_names or name.startswith(kept_prefixes))

    return left_out


def recorded_env(
    paths: Paths, env: Mapping[str, str], argv: list[str], settings: RecordSettings
) -> dict[str, object] | None:
    """Return the ``env`` object for ``meta.json`` (shape in the module's docstring), None for none.

    Blocks on the fingerprint key file, and with encryption on on the key store (a keyring
    may prompt). Raises OSError when the fingerprint key cannot be made, KeyUnavailable
    when the encryption key cannot be had: the caller drops the record then.
    """
    if settings.env == "none":
        return None
    names, prefixes = _agent_names(argv) if settings.env == "agent" else (frozenset(), ())
    chosen = kept_names(
        env, settings.env, names=names, prefixes=prefixes, include=settings.env_include, exclude=settings.env_exclude
    )
    secret = _secret_test(settings)
    values: dict[str, str] = {}
    secrets: dict[str, str] = {}
    for name in chosen:
        value = env[name]
        if value and secret(name, value):  # an empty value is no secret: kept as it is, never "missing"
            secrets[name] = value
        else:
            values[name] = value
    record: dict[str, object] = {"scope": settings.env, "home": env.get("HOME", ""), "values": values}
    if secrets:
        from shellkeep.vault.env_secrets import fingerprint, fingerprint_key, seal

        key = fingerprint_key(paths, create=True)
        assert key is not None  # made just now, or the 32 bytes another run made
        record["secrets"] = {name: fingerprint(key, name, value) for name, value in secrets.items()}
        if settings.encrypt:
            from shellkeep.vault.keys import current_key

            sealing = current_key(paths, settings.key_file, create=True)
            record["sealed"] = seal(json.dumps(secrets, ensure_ascii=False).encode("utf-8", "surrogateescape"), sealing)
    return record


def _secret_test(settings: RecordSettings) -> Callable[[str, str], bool]:
    """Return ``(name, value) -> whether it is a secret``: by its name, or by the redaction
    rules (built-in and the user's, whether or not redaction is on) changing its value."""
    from shellkeep.capture.redaction import redactor_for

    redactor = redactor_for(settings.redact_config)

    def secret(name: str, value: str) -> bool:
        return is_secret_name(name) or redactor.redact(value) != value or redactor.redact(f"{name}={value}") != f"{name}={value}"

    return secret


def record_environment(paths: Paths, meta: SessionMeta, env: Mapping[str, str] | None, settings: RecordSettings) -> SessionMeta:
    """Return ``meta`` with its recorded environment (``env``); ``meta`` unchanged
    when none is kept or it cannot be (said once in the log: the recording goes on)."""
    import dataclasses

    if env is None:
        return meta
    try:
        record = recorded_env(paths, env, meta.command, settings)
    except Exception as exc:  # noqa: BLE001 - a recording failure never harms the wrapped program
        log.warning("could not record the environment of session %s: %s", meta.id, exc)
        return meta
    if record is None:
        return meta
    return dataclasses.replace(meta, env=record)


def stored_env(meta: SessionMeta) -> tuple[dict[str, str], dict[str, str], str | None, str]:
    """Return a session's recorded ``(values, secret fingerprints, sealed text, home)``.

    Entries that are not strings (a hand-edited ``meta.json``) are left out; all empty for a
    session that kept none.
    """
    record = meta.env
    if not isinstance(record, dict):  # also a hand-edited meta.json's
        return {}, {}, None, ""
    values, secrets = record.get("values"), record.get("secrets")
    sealed, home = record.get("sealed"), record.get("home")
    return (
        {str(k): v for k, v in values.items() if isinstance(v, str)} if isinstance(values, dict) else {},
        {str(k): v for k, v in secrets.items() if isinstance(v, str)} if isinstance(secrets, dict) else {},
        sealed if isinstance(sealed, str) else None,
        home if isinstance(home, str) else "",
    )


def environment_lines(meta: SessionMeta) -> list[str]:
    """Return ``show``'s lines for the recorded environment: ``NAME=value`` sorted by name,
    secrets as ``NAME (secret, sealed)`` or ``NAME (secret, fingerprint)``; [] when none."""
    values, secrets, sealed, _ = stored_env(meta)
    how = "(secret, sealed)" if sealed else "(secret, fingerprint)"
    rows = [(name, f"{name}={value}") for name, value in values.items()]
    rows += [(name, f"{name} {how}") for name in secrets]
    return [line for _, line in sorted(rows)]


def shown_value(meta: SessionMeta, name: str, value: str) -> str:
    """Return ``value`` fit to print for ``name``: ``(secret)`` for a recorded secret or a secret's name."""
    _, secrets, _, _ = stored_env(meta)
    return "(secret)" if name in secrets or is_secret_name(name) else value

