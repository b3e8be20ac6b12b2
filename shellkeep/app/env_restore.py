"""Give a resumed agent the environment its session recorded (``app.environment``), safely.

``--env recorded`` (the default): each recorded variable whose value differs from today's is
set for the resumed program (``TERM`` and ``COLORTERM`` only when not set today: they
describe the terminal in use now); a secret missing today is set from its sealed value (encryption
on), else named as missing; a secret set today to another value keeps today's and is named
as differing (a rotated key must not be replaced by the old one). Variables recorded but not
set today are set; variables set today but not recorded are left as they are.

A session pulled from another machine (``app.remote``) is not trusted to run code here:
``VARIABLES_THAT_RUN_CODE`` from it are never applied, only shown, name and value; nor
are those that route its requests or choose whom it trusts (``routes_traffic``: today's key
would go to its endpoint or proxy), unless today's value is the same. An agent folder it names
(``names_a_folder``: ``CLAUDE_CONFIG_DIR``...) is applied only when, mapped, it lies in this
user's home (or the checkout it resumes in) and is this user's (a folder others can write could hold the agent's hooks). Its paths
are mapped as its directory is: the recorded directory and project root to where it resumes,
the recorded home to this one; a path that does not exist here, or that lies inside
shellkeep's data folder (where the pulled files are), is left out with a note.

``--env current`` keeps today's environment and applies nothing.

A hand-off (``resume --agent OTHER``) leaves out the variables that are the session's agent's
own and not OTHER's (``environment.source_agent_only``: Claude Code's ``ANTHROPIC_*`` for
Codex): they are neither applied nor named, a secret of them not even as missing.

``agent_files_env`` is the environment the agent's own files (its transcript, its plan) are
looked for with, by every reader of a session not collected yet (``show``, ``ps``, the web
page, the files in flight, the upkeep): today's with the recorded values resume would apply
(``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...), so a session started with them is found from a
terminal without them. It only locates files: no code runs with it, no secret is opened.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.app.environment import NEVER_NAMES, names_a_folder, routes_traffic, runs_code, source_agent_only, stored_env
from shellkeep.app.remote import remote_of
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta

__all__ = ["EnvRestore", "agent_files_env", "environment_for", "is_pulled", "restore_env"]

log = get_logger(__name__)

_THIS_TERMINAL = frozenset({"TERM", "COLORTERM"})
"""Recorded, but today's value wins when there is one: it names the terminal in use now."""

@dataclass(frozen=True, slots=True)
class EnvRestore:
    """What resume does with a session's recorded environment.

    updates: (name, value) pairs set for the resumed program, sorted by name.
    restored: names set because they differ from today (or are not set today), sorted.
    unchanged: how many recorded variables already have their value today.
    secrets_restored / secrets_missing / secrets_differ: secret names (never values).
    not_applied: ``NAME=value`` of variables that run code, from a session of another machine.
    not_routed: ``NAME=value`` of variables that route requests or trust, from another machine.
    not_yours: ``NAME=value`` of agent folders from another machine outside this user's home
        (and the checkout), or not theirs.
    left_out: ``NAME=value`` of paths that do not exist here (or lie in shellkeep's data folder).
    kept_current: ``--env current`` was given: nothing applied; ``differs`` names what would have been.
    """

    updates: tuple[tuple[str, str], ...] = ()
    restored: tuple[str, ...] = ()
    unchanged: int = 0
    secrets_restored: tuple[str, ...] = ()
    secrets_missing: tuple[str, ...] = ()
    secrets_differ: tuple[str, ...] = ()
    not_applied: tuple[str, ...] = ()
    not_routed: tuple[str, ...] = ()
    not_yours: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()
    kept_current: bool = False
    differs: tuple[str, ...] = ()
    recorded: bool = True
    """False when the session kept no environment (older sessions, ``record.env = "none"``)."""

    def line(self) -> str | None:
        """Return the one line for the user (stderr), None when the session kept no environment."""
        if not self.recorded:
            return None
        if self.kept_current:
            differ = f"; recorded differs in {', '.join(self.differs)}" if self.differs else ""
            return f"environment: today's kept (--env current){differ}"
        parts = []
        if self.restored:
            same = f" ({self.unchanged} more as today)" if self.unchanged else ""
            parts.append(f"restored {', '.join(self.restored)}{same}")
        else:
            parts.append(f"as recorded ({self.unchanged} variable{'s' if self.unchanged != 1 else ''})")
        if self.secrets_restored:
            parts.append(f"secrets restored: {', '.join(self.secrets_restored)}")
        if self.secrets_missing:
            parts.append(f"secrets missing: {', '.join(self.secrets_missing)}")
        if self.secrets_differ:
            parts.append(f"secrets differ today (today's kept): {', '.join(self.secrets_differ)}")
        if self.not_applied:
            parts.append(f"not applied (recorded on another machine, could run code): {' '.join(self.not_applied)}")
        if self.not_routed:
            parts.append(
                f"not applied (recorded on another machine, could send your keys elsewhere): {' '.join(self.not_routed)}"
            )
        if self.not_yours:
            parts.append(f"not applied (not a folder of yours in your home): {' '.join(self.not_yours)}")
        if self.left_out:
            parts.append(f"left out (no such path here): {' '.join(self.left_out)}")
        return "environment: " + "; ".join(parts)


def is_pulled(ctx: Context, meta: SessionMeta) -> bool:
    """Return whether ``meta`` came from another machine: marked pulled (``remote`` in its
    ``meta.json``) or kept under the data folder's ``remotes/`` (a mark can be edited away)."""
    if remote_of(meta) is not None:
        return True
    try:
        meta.folder.resolve().relative_to(ctx.paths.remotes.resolve())
    except (ValueError, OSError):
        return False
    return True


def environment_for(
    ctx: Context,
    meta: SessionMeta,
    *,
    cwd: Path | None = None,
    keep_current: bool = False,
    env: Mapping[str, str] | None = None,
    secrets: bool = True,
    handed_to: str | None = None,
) -> EnvRestore:
    """Return what resuming ``meta`` does with its recorded environment, before it is planned.

    Called before ``app.resume.plan_resume`` so that the plan looks for the agent's transcript
    with the recorded variables (``CLAUDE_CONFIG_DIR``): pass it
    ``env={**os.environ, **dict(restore.updates)}``, then ``app.resume.with_environment`` the plan.
    cwd: ``--cwd``; a pulled session's paths are mapped to where it will resume (its
    checkout here, ``app.transplant.checkout_for``). env: today's (default ``os.environ``).
    secrets: False leaves the sealed secrets closed (``restore_env``). handed_to: ``--agent``'s
    value (a name or a command line): the session's agent's own variables are left out.
    Raises UserInputError as ``plan_resume`` does for a pulled session with no checkout here.
    """
    today = os.environ if env is None else env
    where = Path(meta.cwd) if cwd is None else cwd
    if is_pulled(ctx, meta) and not keep_current and stored_env(meta) != ({}, {}, None, ""):
        from shellkeep.app.transplant import checkout_for
        from shellkeep.store.session import exact_meta

        where = checkout_for(ctx, exact_meta(meta), cwd)[0]
    withheld = None
    if handed_to is not None:
        try:
            withheld = source_agent_only(meta.agent, shlex.split(handed_to))
        except ValueError:  # not a command line: plan_resume says so
            pass
    return restore_env(ctx, meta, where, today, keep_current=keep_current, secrets=secrets, withheld=withheld)


def agent_files_env(ctx: Context, meta: SessionMeta, today: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the environment ``meta``'s agent files are looked for with (see the module).

    today: today's environment (default ``os.environ``), overlaid with what resuming ``meta``
    would set (``environment_for``: a pulled session's paths mapped, its variables that run
    code left out; sealed secrets are not opened). Never raises.
    """
    now = os.environ if today is None else today
    try:
        restore = environment_for(ctx, meta, env=now, secrets=False)
    except ShellkeepError:  # a pulled session with no checkout here: its paths mapped to its cwd
        restore = restore_env(ctx, meta, Path(meta.cwd), now, keep_current=False, secrets=False)
    except Exception as exc:  # noqa: BLE001 - today's environment still finds most sessions
        log.debug("no recorded environment for the files of %s: %s", meta.id, exc)
        return dict(now)
    return {**now, **dict(restore.updates)}


def restore_env(
    ctx: Context,
    meta: SessionMeta,
    cwd: Path,
    today: Mapping[str, str],
    *,
    keep_current: bool,
    secrets: bool = True,
    withheld: Callable[[str], bool] | None = None,
) -> EnvRestore:
    """Return what resuming ``meta`` in ``cwd`` does with its recorded environment (see the module).

    secrets: False leaves the secrets alone (none opened, compared or named). withheld: the
    variables not to give (a hand-off's ``source_agent_only``), as if never recorded.
    """
    values, fingerprints, sealed, home = stored_env(meta)
    if withheld is not None:
        values = {n: v for n, v in values.items() if not withheld(n)}
        fingerprints = {n: fp for n, fp in fingerprints.items() if not withheld(n)}
    if not values and not fingerprints:
        return EnvRestore(recorded=False)
    if keep_current:
        differs = sorted(n for n, v in values.items() if today.get(n) != v)
        return EnvRestore(kept_current=True, differs=tuple(differs))
    pulled = is_pulled(ctx, meta)
    remap = _path_mapper(ctx, meta, cwd, home, today) if pulled else None
    updates: dict[str, str] = {}
    restored, not_applied, not_routed, not_yours, left_out = [], [], [], [], []
    unchanged = 0
    for name, value in sorted(values.items()):
        if name in _THIS_TERMINAL and today.get(name):
            unchanged += 1  # it describes the terminal the agent is drawn on now
            continue
        if name in NEVER_NAMES:  # recorded before it was left out (TERM_PROGRAM: today's terminal's)
            continue
        if pulled and runs_code(name):
            not_applied.append(f"{name}={value}")
            continue
        if pulled and routes_traffic(name) and today.get(name) != value:
            not_routed.append(f"{name}={value}")
            continue
        recorded = value
        if remap is not None and value.startswith("/"):
            mapped = remap(value)
            if mapped is None:
                left_out.append(f"{name}={value}")
                continue
            value = mapped
        places = (today.get("HOME", ""), str(remap.new_root) if remap else None)  # home, the checkout
        if pulled and names_a_folder(name) and today.get(name) != value and not _yours(value, places):
            not_yours.append(f"{name}={recorded}")
            continue
        if today.get(name) == value:
            unchanged += 1
        else:
            updates[name] = value
            restored.append(name)
    secret_values = _open_sealed(ctx, meta, sealed) if secrets else {}
    restored_secrets, missing, differ = [], [], []
    for name, fp in sorted(fingerprints.items() if secrets else ()):
        now = today.get(name)
        if now is None:
            if name in secret_values and not (pulled and runs_code(name)):
                updates[name] = secret_values[name]
                restored_secrets.append(name)
            elif secret_values.get(name) == "" or _is_empty(ctx, name, fp):
                continue  # recorded empty (by a version that took it for a secret): no secret
            else:
                missing.append(name)
        elif _differs(ctx, name, now, fp, secret_values):
            differ.append(name)
    return EnvRestore(
        updates=tuple(sorted(updates.items())),
        restored=tuple(restored),
        unchanged=unchanged,
        secrets_restored=tuple(restored_secrets),
        secrets_missing=tuple(missing),
        secrets_differ=tuple(differ),
        not_applied=tuple(not_applied),
        not_routed=tuple(not_routed),
        not_yours=tuple(not_yours),
        left_out=tuple(left_out),
    )


def _yours(value: str, places: tuple[str | None, ...]) -> bool:
    """Return whether every folder in ``value`` (``:``-separated) is this user's and lies in one of
    ``places`` (today's home, the checkout it resumes in)."""
    try:
        mine = [Path(p).resolve() for p in places if p]
        for part in value.split(":"):
            where = Path(part).resolve()
            if not part.startswith("/") or not any(where.is_relative_to(p) for p in mine):
                return False
            if where.exists() and where.stat().st_uid != os.getuid():
                return False
    except OSError:
        return False
    return True


def _open_sealed(ctx: Context, meta: SessionMeta, sealed: str | None) -> dict[str, str]:
    """Return the sealed secret values of ``meta`` ({} without them, or without their key here)."""
    if not sealed:
        return {}
    from shellkeep.vault.env_secrets import open_sealed

    try:
        found = json.loads(open_sealed(sealed, ctx.vault.key).decode("utf-8", "surrogateescape"))
    except (ShellkeepError, ValueError, OSError) as exc:
        log.warning("cannot open the sealed environment of %s: %s", meta.id, exc)
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): v for k, v in found.items() if isinstance(v, str)}


def _is_empty(ctx: Context, name: str, fp: str) -> bool:
    """Return whether the fingerprint ``fp`` is of an empty value (False when it cannot be told)."""
    from shellkeep.vault.env_secrets import fingerprint, fingerprint_id, fingerprint_key

    try:
        key = fingerprint_key(ctx.paths, create=False)
    except OSError:
        return False
    return key is not None and fingerprint_id(fp) == key.id and fingerprint(key, name, "") == fp


def _differs(ctx: Context, name: str, now: str, fp: str, secret_values: Mapping[str, str]) -> bool:
    """Return whether today's ``now`` is not the recorded secret ``name`` (False when that cannot
    be told: a fingerprint made with another machine's key)."""
    if name in secret_values:
        return secret_values[name] != now
    from shellkeep.vault.env_secrets import fingerprint, fingerprint_id, fingerprint_key

    try:
        key = fingerprint_key(ctx.paths, create=False)
    except OSError as exc:
        log.warning("cannot read the fingerprint key: %s", exc)
        return False
    if key is None or fingerprint_id(fp) != key.id:
        return False
    return fingerprint(key, name, now) != fp


def _path_mapper(ctx: Context, meta: SessionMeta, cwd: Path, home: str, today: Mapping[str, str]) -> _PathMapper:
    """Return the mapping of a pulled session's recorded paths to this machine's."""
    from shellkeep.git.info import git_root

    try:
        new_root = git_root(cwd) or cwd
    except OSError:
        new_root = cwd
    return _PathMapper(
        old_cwd=meta.cwd.rstrip("/") or "/",
        old_root=meta.project_root.rstrip("/") or "/",
        old_home=home.rstrip("/"),
        new_cwd=cwd,
        new_root=Path(new_root),
        new_home=today.get("HOME", ""),
        data=ctx.paths.home,
    )


@dataclass(frozen=True, slots=True)
class _PathMapper:
    old_cwd: str
    old_root: str
    old_home: str
    new_cwd: Path
    new_root: Path
    new_home: str
    data: Path

    def __call__(self, value: str) -> str | None:
        """Return ``value`` (a path, or a ``:``-separated list of them) with this machine's paths;
        None when no part of it exists here outside shellkeep's data folder."""
        kept = [p for p in (self._one(part) for part in value.split(":")) if p is not None]
        return ":".join(kept) if kept else None

    def _one(self, path: str) -> str | None:
        mapped = self._mapped(path)
        if not mapped:
            return None
        try:
            where = Path(mapped).resolve()
            if not where.exists():
                return None
            where.relative_to(self.data.resolve())
        except ValueError:
            return mapped  # outside the data folder: kept
        except OSError:
            return None
        return None  # inside shellkeep's data folder: the pulled files are there

    def _mapped(self, path: str) -> str:
        stripped = path.rstrip("/") or "/"
        if stripped == self.old_cwd:
            return str(self.new_cwd)
        for old, new in ((self.old_root, str(self.new_root)), (self.old_home, self.new_home)):
            if old not in ("", "/") and new and (stripped == old or stripped.startswith(old.rstrip("/") + "/")):
                return new + stripped[len(old):]
        return path
