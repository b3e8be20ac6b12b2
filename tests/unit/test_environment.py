"""The recorded environment's rules: which names are kept, which are secrets, which run code,
how a pulled session's paths are mapped, and the secret fingerprints and seals.

The whole path (a real recording, resume, a pulled session) is in tests/e2e/test_environment.py
and tests/agents/test_env_claude.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.agents.registry import builtin_adapters
from shellkeep.app.env_restore import _PathMapper
from shellkeep.app.environment import COMMON_NAMES, is_secret_name, kept_names, runs_code
from shellkeep.store.paths import Paths
from shellkeep.vault.env_secrets import fingerprint, fingerprint_id, fingerprint_key, open_sealed, seal

ENV = {
    "PATH": "/usr/bin",
    "CLAUDE_CONFIG_DIR": "/c",
    "CLAUDE_CODE_USE_BEDROCK": "1",
    "CLAUDE_CODE_SESSION_ID": "abc",
    "LC_ALL": "C",
    "TMUX": "/tmp/tmux-0/default,1,0",
    "SHELLKEEP_SESSION": "x",
    "SHELLKEEP_RECORD_DETAIL": "full",
    "MYTOOL_A": "1",
    "MYTOOL_B": "2",
    "OTHER": "o",
}


@pytest.mark.parametrize(
    ("scope", "include", "exclude", "expected"),
    [
        ("none", (), (), []),
        ("agent", (), (), ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CONFIG_DIR", "LC_ALL", "PATH"]),
        ("agent", ("MYTOOL_*",), ("MYTOOL_B", "PATH"), ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CONFIG_DIR", "LC_ALL", "MYTOOL_A"]),
        ("all", (), ("CLAUDE_*",), ["LC_ALL", "MYTOOL_A", "MYTOOL_B", "OTHER", "PATH"]),
    ],
    ids=["none", "agent", "agent-include-exclude", "all-exclude"],
)
def test_kept_names(scope: str, include: tuple[str, ...], exclude: tuple[str, ...], expected: list[str]) -> None:
    names = {"CLAUDE_CONFIG_DIR"}
    got = kept_names(ENV, scope, names=names, prefixes=("CLAUDE_CODE_",), include=include, exclude=exclude)
    assert got == expected
    assert not any(n.startswith("SHELLKEEP_") or n in ("TMUX", "CLAUDE_CODE_SESSION_ID") for n in got)


def test_every_adapter_declares_its_variables() -> None:
    declared = {a.name: (getattr(a, "env_names", ()), getattr(a, "env_prefixes", ())) for a in builtin_adapters()}
    for name in ("claude", "codex", "gemini", "qwen", "opencode", "copilot", "aider"):
        assert any(declared[name]), name
    assert "CLAUDE_CONFIG_DIR" in declared["claude"][0] and "ANTHROPIC_" in declared["claude"][1]
    assert "CODEX_HOME" in declared["codex"][0] and "OPENAI_BASE_URL" in declared["codex"][0]


@pytest.mark.parametrize(
    ("name", "secret"),
    [("ANTHROPIC_API_KEY", True), ("GH_TOKEN", True), ("db_password", True), ("AWS_SECRET_ACCESS_KEY", True),
     ("GOOGLE_APPLICATION_CREDENTIALS", True), ("ANTHROPIC_AUTH_TOKEN", True), ("ANTHROPIC_BASE_URL", False),
     ("PATH", False), ("CLAUDE_CONFIG_DIR", False),
     # short words count as a whole _-separated part only
     ("MYSQL_PWD", True), ("mysql_pwd", True), ("GITHUB_PAT_X", True), ("GITHUB_PAT", True), ("SMTP_PASS", True),
     ("SIM_PIN", True), ("HASH_SALT", True), ("SENTRY_DSN", True),
     ("PWD", False), ("OLDPWD", False), ("MANPATH", False), ("PATHEXT", False),
     ("SPINNER", False), ("PINENTRY_USER_DATA", False), ("PASSENGER_APP_ENV", False), ("COMPASS_MODE", False),
     ("PATTERN", False), ("SALTSTACK_DIR", False),
     # longer words anywhere in the name
     ("GPG_PASSPHRASE", True), ("VAULT_PASSCODE", True), ("SSH_PRIVATE_KEYFILE", True), ("APP_PRIVATE_PEM", True),
     ("SESSION_COOKIE", True), ("WEBHOOK_SIGNATURE", True), ("XDG_SESSION_TYPE", False), ("SSL_CERT_FILE", False)],
    ids=lambda v: str(v),
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize(
    ("name", "runs"),
    [("PATH", True), ("LD_PRELOAD", True), ("DYLD_INSERT_LIBRARIES", True), ("NODE_OPTIONS", True),
     ("PYTHONSTARTUP", True), ("BASH_ENV", True), ("GIT_SSH_COMMAND", True), ("GIT_CONFIG_COUNT", True),
     ("PROMPT_COMMAND", True), ("BASH_FUNC_ls%%", True), ("CLAUDE_CONFIG_DIR", False), ("LANG", False),
     ("ANTHROPIC_BASE_URL", False)],
    ids=lambda v: str(v),
)  # fmt: skip
def test_variables_that_run_code(name: str, runs: bool) -> None:
    assert runs_code(name) is runs


def test_the_common_names_hold_path_proxies_certificates_and_terminal() -> None:
    assert {"PATH", "VIRTUAL_ENV", "HTTPS_PROXY", "no_proxy", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "TERM", "COLORTERM"} <= COMMON_NAMES


def test_paths_are_mapped_and_missing_ones_left_out(tmp_path: Path) -> None:
    new_home, checkout, data = tmp_path / "me", tmp_path / "src" / "app", tmp_path / "data"
    for folder in (new_home / ".claude-work", checkout / "sub", checkout / "gem", data / "remotes" / "m"):
        folder.mkdir(parents=True)
    mapper = _PathMapper(
        old_cwd="/home/them/app/sub", old_root="/home/them/app", old_home="/home/them",
        new_cwd=checkout / "sub", new_root=checkout, new_home=str(new_home), data=data,
    )  # fmt: skip
    assert mapper("/home/them/app/sub") == str(checkout / "sub")
    assert mapper("/home/them/app/gem") == str(checkout / "gem")
    assert mapper("/home/them/.claude-work") == str(new_home / ".claude-work")
    assert mapper("/home/them/.codex") is None  # not here
    assert mapper(f"{data}/remotes/m") is None  # shellkeep's data folder: the pulled files
    assert mapper("/home/them/app/gem:/nowhere") == str(checkout / "gem")


def test_fingerprints_are_keyed_by_a_private_key_of_the_data_folder(home: Paths) -> None:
    assert fingerprint_key(home, create=False) is None
    key = fingerprint_key(home, create=True)
    assert key is not None and fingerprint_key(home, create=False) == key
    assert home.env_fingerprint_key.stat().st_mode & 0o777 == 0o600
    made = fingerprint(key, "ANTHROPIC_API_KEY", "sk-1")
    assert fingerprint_id(made) == key.id and "sk-1" not in made
    assert made == fingerprint(key, "ANTHROPIC_API_KEY", "sk-1") != fingerprint(key, "ANTHROPIC_API_KEY", "sk-2")
    assert made != fingerprint(key, "OPENAI_API_KEY", "sk-1")  # the name is mixed in


def test_sealed_values_open_only_with_their_key() -> None:
    pytest.importorskip("cryptography")
    from shellkeep.errors import DataError, KeyUnavailable
    from shellkeep.vault.keys import new_key

    key, other = new_key(), new_key()
    text = seal(b'{"ANTHROPIC_API_KEY": "sk-1"}', key)
    assert b"sk-1" not in text.encode()
    assert open_sealed(text, lambda key_id: key) == b'{"ANTHROPIC_API_KEY": "sk-1"}'

    def missing(key_id: str) -> object:
        raise KeyUnavailable(f"no key {key_id}")

    with pytest.raises(KeyUnavailable):
        open_sealed(text, missing)  # type: ignore[arg-type]
    with pytest.raises(DataError):
        open_sealed(text, lambda key_id: other)  # another key under its id: refused, never garbage


def test_the_terminal_in_use_now_keeps_its_term(home: Paths, tmp_path: Path) -> None:
    from shellkeep.app.context import open_context
    from shellkeep.app.env_restore import restore_env
    from shellkeep.store.session import SessionMeta

    meta = SessionMeta(
        id="20261206-000000-00", project="p", project_root=str(tmp_path), cwd=str(tmp_path), command=["bash"],
        agent="bash", started_at="2026-12-06T00:00:00Z", cast=str(tmp_path / "s" / "session.cast"),
        env={"scope": "agent", "home": "", "values": {"TERM": "xterm", "COLORTERM": "truecolor", "LANG": "C.UTF-8"}},
    )  # fmt: skip
    ctx = open_context(paths=home, cwd=tmp_path, strict=False, warn=lambda line: None)
    now = restore_env(ctx, meta, tmp_path, {"TERM": "tmux-256color", "LANG": "de_DE.UTF-8"}, keep_current=False)
    assert now.updates == (("COLORTERM", "truecolor"), ("LANG", "C.UTF-8"))  # TERM: today's
    assert now.line() == "environment: restored COLORTERM, LANG (1 more as today)"


def test_the_agent_files_are_looked_for_with_the_recorded_environment(home: Paths, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.app.context import open_context
    from shellkeep.app.env_restore import agent_files_env
    from shellkeep.store.session import SessionMeta

    config_dir = tmp_path / "claudecfg"
    config_dir.mkdir()
    recorded = {"CLAUDE_CONFIG_DIR": str(config_dir), "NODE_OPTIONS": "--require /x.js", "LANG": "C.UTF-8"}
    meta = SessionMeta(
        id="20261206-000000-01", project="p", project_root=str(tmp_path), cwd=str(tmp_path), command=["claude"],
        agent="claude", started_at="2026-12-06T00:00:00Z", cast=str(tmp_path / "s" / "session.cast"),
        env={"scope": "agent", "home": str(tmp_path), "values": recorded, "secrets": {"ANTHROPIC_API_KEY": "hmac-sha256:k:00"}},
    )  # fmt: skip
    ctx = open_context(paths=home, cwd=tmp_path, strict=False, warn=lambda line: None)
    today = {"HOME": str(tmp_path), "LANG": "de_DE.UTF-8", "PATH": "/usr/bin"}
    # A session of this machine: its recorded values over today's; no secret opened or set.
    assert agent_files_env(ctx, meta, today) == {**today, **recorded}
    # Pulled from another machine: what could run code is left out, paths that exist are kept.
    pulled = dataclasses.replace(meta, extra={"remote": {"url": "file:///elsewhere", "machine": "m1", "host": "laptop"}})
    assert agent_files_env(ctx, pulled, today) == {**today, "CLAUDE_CONFIG_DIR": str(config_dir), "LANG": "C.UTF-8"}
    # Nothing recorded: today's as it is.
    assert agent_files_env(ctx, dataclasses.replace(meta, env=None), today) == today


def test_a_hand_off_gives_the_other_agent_none_of_the_session_agents_own_variables(home: Paths, tmp_path: Path) -> None:
    """``resume --agent codex`` of a Claude Code session: ANTHROPIC_* and CLAUDE_CONFIG_DIR are not
    set for Codex, and its ANTHROPIC_API_KEY is not named missing; the common ones still are."""
    from shellkeep.app.context import open_context
    from shellkeep.app.env_restore import environment_for
    from shellkeep.store.session import SessionMeta

    recorded = {"CLAUDE_CONFIG_DIR": str(tmp_path), "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/", "LANG": "C.UTF-8", "OPENAI_BASE_URL": "http://o/"}
    meta = SessionMeta(
        id="20261206-000000-02", project="p", project_root=str(tmp_path), cwd=str(tmp_path), command=["claude"],
        agent="claude", started_at="2026-12-06T00:00:00Z", cast=str(tmp_path / "s" / "session.cast"),
        env={"scope": "all", "home": str(tmp_path), "values": recorded, "secrets": {"ANTHROPIC_API_KEY": "hmac-sha256:k:00"}},
    )  # fmt: skip
    ctx = open_context(paths=home, cwd=tmp_path, strict=False, warn=lambda line: None)
    today = {"HOME": str(tmp_path), "PATH": "/usr/bin"}
    handed = environment_for(ctx, meta, env=today, handed_to="codex")
    assert handed.updates == (("LANG", "C.UTF-8"), ("OPENAI_BASE_URL", "http://o/"))  # codex's own too
    assert handed.secrets_missing == () and handed.line() == "environment: restored LANG, OPENAI_BASE_URL"
    aider = environment_for(ctx, meta, env=today, handed_to="aider --model sonnet")  # aider takes ANTHROPIC_API_KEY too
    assert dict(aider.updates).keys() == {"LANG", "OPENAI_BASE_URL"} and aider.secrets_missing == ("ANTHROPIC_API_KEY",)
    own = environment_for(ctx, meta, env=today, handed_to="claude")  # the same agent: all of it
    assert own == environment_for(ctx, meta, env=today) and own.secrets_missing == ("ANTHROPIC_API_KEY",)
    assert dict(own.updates).keys() == recorded.keys()
