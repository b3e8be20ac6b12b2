"""Check the installation: data folder, disk, index, keys, config, agents, shell integration.

``run_checks`` returns one ``Check`` per finding, each ok, warn or fail with what to do.
It changes nothing: the data folder is probed with a temporary file that is removed at
once, the index is opened read-only, the config is only read, and each agent found on
PATH is asked ``PROG --version`` (with a timeout of ``VERSION_TIMEOUT_S``).
"""

from __future__ import annotations

import enum
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.registry import builtin_adapters, plugin_adapters
from shellkeep.app.otlp import MISSING_SDK, has_sdk
from shellkeep.archive.health import index_health
from shellkeep.config import Config, config_files, load_config
from shellkeep.errors import ShellkeepError
from shellkeep.store.paths import DIR_MODE, FILE_MODE, Paths, project_root_of
from shellkeep.store.session import META_FILE, iter_session_folders, read_meta
from shellkeep.store.space import DISK_FULL, READ_ONLY, free_bytes, is_read_only
from shellkeep.vault.keys import FileKeyStore, is_beside_data, lost_key_ids, plain_key_warning, primary_store

__all__ = ["INIT_MARKER", "VERSION_TIMEOUT_S", "Check", "CheckStatus", "DoctorReport", "run_checks"]

VERSION_TIMEOUT_S = 5.0
"""How long an agent's ``--version`` may take before it is reported as not answering, in seconds."""

INIT_MARKER = ">>> shellkeep init >>>"
"""The text on the first line of the block ``shellkeep init SHELL --install`` adds to an rc file."""

_VERSION = re.compile(rb"\d+\.\d+(?:\.\d+)*")
_SHELLS = ("bash", "zsh", "fish")


class CheckStatus(enum.Enum):
    """How a check came out: ``fail`` makes ``shellkeep doctor`` exit 1."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Check:
    """One finding (the ``doctor --json`` contract): ``check`` names what was looked at
    ("data folder", "agent claude"), ``status`` is ok, warn or fail, ``detail`` what was
    found, ``fix`` what to do ("" when nothing)."""

    check: str
    status: str
    detail: str
    fix: str = ""


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Every finding of ``run_checks``, in the order they were made."""

    checks: tuple[Check, ...]

    @property
    def failed(self) -> int:
        """Return how many checks failed."""
        return sum(1 for c in self.checks if c.status == CheckStatus.FAIL.value)

    def to_json(self) -> list[Check]:
        """Return the checks (``doctor --json`` prints an array)."""
        return list(self.checks)


def _ok(check: str, detail: str) -> Check:
    return Check(check, CheckStatus.OK.value, detail)


def _warn(check: str, detail: str, fix: str) -> Check:
    return Check(check, CheckStatus.WARN.value, detail, fix)


def _fail(check: str, detail: str, fix: str) -> Check:
    return Check(check, CheckStatus.FAIL.value, detail, fix)


def run_checks(paths: Paths, cwd: Path, env: Mapping[str, str]) -> DoctorReport:
    """Run every check for the data folder ``paths``, the project at ``cwd`` and ``env``.

    Blocks for the agents' ``--version`` (up to ``VERSION_TIMEOUT_S`` each) and the index
    check; a keyring may ask to be unlocked. Never raises for what it finds.
    """
    project_root = project_root_of(cwd)
    config, config_check = _config(paths, project_root, env)
    checks = [
        *_data_folder(paths),
        _free_space(paths, config),
        _index(paths),
        _session_meta(paths),
        _keys(paths, config),
        config_check,
        *_otlp(config),
        *_agents(env),
        _shell_integration(env),
    ]
    return DoctorReport(tuple(checks))


def _mode(path: Path) -> str:
    return f"{path.stat().st_mode & 0o777:04o}"


def _data_folder(paths: Paths) -> Iterator[Check]:
    home = paths.home
    name = "data folder"
    if not home.exists():
        yield _ok(name, f"{home} not made yet (the first recording makes it, mode {DIR_MODE:04o})")
        return
    if not home.is_dir():
        yield _fail(name, f"{home} is not a folder", "point SHELLKEEP_HOME at a folder, or move that file away")
        return
    if is_read_only(home):  # no chmod helps there
        yield _fail(name, f"{home}: {READ_ONLY}: nothing can be recorded", "remount it read-write, or point SHELLKEEP_HOME at a writable folder")
        return
    fix = f"chmod {DIR_MODE:o} '{home}'"
    mode = home.stat().st_mode
    if mode & 0o700 != 0o700 or not _writable(home):
        yield _fail(name, f"{home} cannot be written by its owner (mode {_mode(home)}): nothing can be recorded", fix)
        return
    if mode & 0o077:
        yield _warn(name, f"{home} is open to other users (mode {_mode(home)})", fix)
        return
    if home.stat().st_uid != os.getuid():
        yield _warn(name, f"{home} belongs to another user (uid {home.stat().st_uid})", f"chown it to yourself: chown -R {os.getuid()} '{home}'")
        return
    yield _ok(name, f"{home} (mode {_mode(home)})")


def _writable(folder: Path) -> bool:
    """Return whether a file can be made in ``folder`` (made and removed at once)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def _free_space(paths: Paths, config: Config) -> Check:
    where = next((p for p in (paths.home, *paths.home.parents) if p.exists()), paths.home)
    free = free_bytes(where)
    name = "free space"
    if free is None:
        return _warn(name, f"cannot tell the free space on the disk holding {where}", "check that the folder is readable")
    free_mb = free // (1024 * 1024)
    minimum = config.record.min_free_mb
    if minimum and free_mb < minimum:
        return _warn(
            name,
            f"{free_mb} MB free on the disk holding {where}, below record.min_free_mb = {minimum}",
            "run 'shellkeep gc' or free some space",
        )
    return _ok(name, f"{free_mb} MB free on the disk holding {where}")


def _index(paths: Paths) -> Check:
    health = index_health(paths)
    name = "index"
    if health.state == "missing":
        return _ok(name, f"{paths.index.name} not built yet (the next listing builds it)")
    if health.state == "newer":
        return _fail(name, f"{paths.index} was written by a newer shellkeep ({health.detail})", "upgrade shellkeep, or run 'shellkeep reindex'")
    if health.state == "full":  # the index is sound: a reindex could not write either
        return _fail(name, f"cannot use {paths.index}: {DISK_FULL} ({health.detail})", "free some space ('shellkeep gc' removes old sessions)")
    if health.state == "corrupt" and is_read_only(paths.index):
        return _warn(name, f"{paths.index} cannot be checked: {READ_ONLY} ({health.detail})", "remount it read-write")
    if health.state == "corrupt":
        return _fail(name, f"{paths.index} is damaged ({health.detail})", "run 'shellkeep reindex'")
    upgrade = ", upgraded on next use" if health.state == "old" else ""
    return _ok(name, f"{paths.index} healthy, {_plural(health.sessions, 'session')}{upgrade}")


def _session_meta(paths: Paths) -> Check:
    """Read every session's ``meta.json``; a damaged one is skipped by every command: say which."""
    name = "sessions"
    count = 0
    damaged: list[tuple[Path, str]] = []
    try:
        folders = list(iter_session_folders(paths, None))
    except ShellkeepError as exc:
        return _fail(name, str(exc), "point SHELLKEEP_HOME at a folder")
    for folder in folders:
        try:
            read_meta(folder)
            count += 1
        except (OSError, ShellkeepError) as exc:
            damaged.append((folder, str(exc)))
    if damaged:
        folder, why = damaged[0]
        more = f" and {len(damaged) - 1} more" if len(damaged) > 1 else ""
        return _warn(
            name,
            f"{_plural(len(damaged), 'session')} cannot be read and {'is' if len(damaged) == 1 else 'are'} left out of every listing: {folder}{more} ({why})",
            f"restore {folder / META_FILE} from a backup, or move {folder} out of the data folder",
        )
    return _ok(name, f"{_plural(count, 'session')}, every meta.json readable")


def _plural(count: int, noun: str) -> str:
    """Return ``"1 session"``, ``"2 sessions"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _keys(paths: Paths, config: Config) -> Check:
    name = "key storage"
    try:
        store, keys = primary_store(paths, config.encryption.key_file)
    except (OSError, ShellkeepError) as exc:
        return _fail(name, f"cannot read the keys: {exc}", "restore the key file with 'shellkeep key import'")
    where = f"plain file {store.label}" if isinstance(store, FileKeyStore) else store.label
    count = len(keys.keys) if keys is not None else 0
    try:
        lost = lost_key_ids(paths, config.encryption.key_file)
    except (OSError, ShellkeepError):
        lost = {}
    if lost:
        ids = ", ".join(sorted(lost))
        return _warn(
            name,
            f"{_plural(sum(lost.values()), 'session')} sealed with key{'' if len(lost) == 1 else 's'} {ids}, which no key store holds "
            f"(they stay unreadable); {_plural(count, 'key')} in {where}",
            "import your key export with 'shellkeep key import FILE' ('shellkeep key status' lists the stores)",
        )
    state = "encryption on" if config.encryption.encrypt else "encryption off"
    if isinstance(store, FileKeyStore) and store.path.exists() and store.path.stat().st_mode & 0o077:
        return _warn(name, f"{state}; {where} is readable by others (mode {_mode(store.path)})", f"chmod {FILE_MODE:o} '{store.path}'")
    if config.encryption.encrypt and count == 0:
        return _ok(name, f"{state}; no key yet in {where} (the first recording makes one)")
    if count == 0 and isinstance(store, FileKeyStore) and not store.path.exists():
        return _ok(name, f"{state}; no key file ({store.label} is made with the first key)")
    if count and is_beside_data(paths, store):
        # As 'key init' and the first encrypted recording say it (vault.keys.plain_key_warning).
        return _warn(name, f"{state}; {_plural(count, 'key')}: {plain_key_warning(store.label)}",
                     "keep it apart: 'shellkeep key export FILE', set encryption.key_file to a path outside the data folder, "
                     "then 'shellkeep key import FILE'")
    return _ok(name, f"{state}; {_plural(count, 'key')} in {where}")


def _otlp(config: Config) -> Iterator[Check]:
    """The OTLP export's SDK, checked only when ``export.otlp.endpoint`` is set."""
    endpoint = config.export_otlp.endpoint
    if not endpoint:
        return
    if has_sdk():
        yield _ok("otlp export", f"each finished session is sent to {endpoint}")
    else:
        yield _fail("otlp export", MISSING_SDK.split(";")[0], MISSING_SDK.split("; ", 1)[1])


def _config(paths: Paths, project_root: Path, env: Mapping[str, str]) -> tuple[Config, Check]:
    """Return the settings (the defaults when they do not load) and the config check."""
    name = "config"
    files = config_files(paths, project_root)
    try:
        config = load_config(paths, project_root, env)
    except ShellkeepError as exc:
        detail, _, fix = str(exc).rpartition("; ")  # the message ends with what to do
        fix = re.sub(r"^fix it with ", "run ", fix)  # shown after "fix: "
        return Config(), _fail(name, detail or fix, fix if detail else "run 'shellkeep config edit'")
    shown = ", ".join(str(p) for p in files) or f"no file (defaults; yours would be {paths.config_file})"
    return config, _ok(name, f"valid: {shown}")


def _agents(env: Mapping[str, str]) -> Iterator[Check]:
    adapters = [a for a in (*builtin_adapters(), *plugin_adapters()) if getattr(a, "executables", ())]
    missing = []
    for adapter in adapters:
        program = next((p for p in (shutil.which(exe, path=env.get("PATH", os.defpath)) for exe in adapter.executables) if p), None)  # type: ignore[attr-defined]
        if program is None:
            missing.append(adapter.name)
            continue
        yield _agent(adapter, program, env)
    if missing:
        yield _ok("agents", f"not on PATH: {', '.join(missing)}")


def _agent(adapter: object, program: str, env: Mapping[str, str]) -> Check:
    name = f"agent {getattr(adapter, 'name', '?')}"
    try:
        done = subprocess.run(
            [program, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=VERSION_TIMEOUT_S, env=dict(env)
        )
    except subprocess.TimeoutExpired:
        return _warn(name, f"{program} --version did not answer within {VERSION_TIMEOUT_S:g}s", f"run '{program} --version' to see why")
    except OSError as exc:
        return _warn(name, f"{program} cannot be run ({exc.strerror or exc})", "reinstall it, or take it off PATH")
    found = _VERSION.search(done.stdout) or _VERSION.search(done.stderr)
    if done.returncode != 0 or found is None:
        return _warn(name, f"{program} --version gave no version (exit {done.returncode})", f"run '{program} --version' to see why")
    version = found.group().decode()
    tested: tuple[str, ...] = getattr(adapter, "tested_versions", ())
    knows = getattr(adapter, "knows_version", None)
    newer = getattr(adapter, "is_newer_than_tested", None)
    if callable(knows) and knows(version):
        return _ok(name, f"{version} at {program} (a version shellkeep knows)")
    if not tested:
        return _ok(name, f"{version} at {program} (its adapter lists no tested versions)")
    if callable(newer) and not newer(version):
        return _ok(name, f"{version} at {program} (older than or between the tested versions {', '.join(tested)})")
    return _warn(
        name,
        f"{version} at {program} is newer than the versions shellkeep was tested with ({', '.join(tested)})",
        "exchanges and native resume may differ: check 'shellkeep show --last' after a session, or upgrade shellkeep",
    )


def _rc_files(env: Mapping[str, str]) -> dict[str, Path]:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    zdot = Path(env["ZDOTDIR"]) if env.get("ZDOTDIR") else home
    config_home = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return {"bash": home / ".bashrc", "zsh": zdot / ".zshrc", "fish": config_home / "fish" / "config.fish"}


def _shell_integration(env: Mapping[str, str]) -> Check:
    name = "shell integration"
    installed = []
    for shell, rc in _rc_files(env).items():
        try:
            if INIT_MARKER in rc.read_text(encoding="utf-8", errors="replace"):
                installed.append(f"{shell} ({rc})")
        except OSError:
            continue
    if installed:
        return _ok(name, f"installed for {', '.join(installed)}")
    shell = Path(env.get("SHELL", "")).name
    return _warn(name, "not installed", f"shellkeep init {shell if shell in _SHELLS else 'SHELL'} --install")
