"""Register shellkeep's MCP server with agent CLIs, or remove it: ``shellkeep mcp install``.

Every agent is registered by editing its own user settings file, in the shape its ``mcp add``
command writes (``agents.mcp_config`` lists them, Claude Code's ``~/.claude.json`` included:
the same file ``claude mcp add --scope user`` writes, so it works whether or not the ``claude``
program is on PATH). Each file is read once, changed in memory and replaced atomically, keeping
its permission bits; one that changed meanwhile is not overwritten, and one without its owner's
write bit is refused (the user locked it; root could write it anyway). Uninstalling leaves what
install found: a file left with nothing but shellkeep's entry is removed, and so is each folder
holding it that is then empty, up to HOME.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.locations import home_dir
from shellkeep.agents.mcp_config import AGENT_NAMES, McpTarget, ServerCommand, is_installed, mcp_target
from shellkeep.agents.mcp_edit import BrokenSettings, Outcome, edit_settings
from shellkeep.app.shellinit import shellkeep_command
from shellkeep.errors import ShellkeepError
from shellkeep.store.atomic import FileChanged, FileIdentity, file_identity, write_bytes_atomic
from shellkeep.store.paths import FILE_MODE, resolve_paths

__all__ = ["InstallRequest", "InstallResult", "install_mcp", "server_command"]


@dataclass(frozen=True, slots=True)
class InstallRequest:
    """What ``shellkeep mcp install`` was asked.

    agents: the agents named, or () for ``--all`` (every supported agent set up here).
    uninstall: remove shellkeep's entry instead of writing it.
    server_args: the server's options to register (``--all-projects``, ``--remote``).
    """

    agents: tuple[str, ...]
    uninstall: bool = False
    server_args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What was done for one agent: its name, its settings file, the outcome or the error line."""

    agent: str
    title: str
    path: Path
    outcome: Outcome | None
    error: str | None = None


def server_command(server_args: Sequence[str] = (), env: Mapping[str, str] | None = None) -> ServerCommand:
    """Return how an agent starts this shellkeep's MCP server: an absolute path, ``mcp``, the options.

    The executable is the console script of the running shellkeep (beside its Python, else on
    PATH, made absolute), or its Python with ``-m shellkeep``: it works from any cwd and PATH.
    ``SHELLKEEP_HOME`` and ``SHELLKEEP_CONFIG``, when set in ``env`` (default ``os.environ``),
    go with it, absolute: the server reads the archive this shellkeep uses.
    """
    environ = os.environ if env is None else env
    argv = shellkeep_command()
    pinned = tuple((k, v) for k, v in resolve_paths(dict(environ)).as_env().items() if environ.get(k))
    return ServerCommand(argv[0], (*argv[1:], "mcp", *server_args), pinned)


def install_mcp(request: InstallRequest, env: Mapping[str, str] | None = None) -> list[InstallResult]:
    """Write (or remove) shellkeep's MCP entry in each agent's settings; return one result each.

    ``env`` (default ``os.environ``) gives HOME and the agents' folder overrides
    (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``GEMINI_CLI_HOME``, ``QWEN_HOME``,
    ``XDG_CONFIG_HOME``, ``COPILOT_HOME``) and PATH, where ``--all`` looks for the agents.
    An agent whose file cannot be changed has its ``error`` set (a broken file, a foreign entry
    named ``shellkeep``, a read-only file, an unwritable folder) and its file is left as it was; the others go on.
    Raises ShellkeepError when ``--all`` finds no supported agent set up here.
    """
    environ = os.environ if env is None else env
    if request.agents:
        targets = [mcp_target(name, environ) for name in request.agents]
    else:
        targets = [t for t in (mcp_target(name, environ) for name in AGENT_NAMES) if is_installed(t, environ)]
        if not targets:
            raise ShellkeepError(
                f"no supported agent is set up here ({', '.join(AGENT_NAMES)}: none on PATH, no settings folder);"
                " name one: 'shellkeep mcp install claude'"
            )
    command = None if request.uninstall else server_command(request.server_args, environ)
    home = home_dir(environ)
    kept = frozenset({home, home / ".config", Path(environ.get("XDG_CONFIG_HOME") or home / ".config")})
    return [_one(target, command, home, kept) for target in targets]


def _one(target: McpTarget, command: ServerCommand | None, home: Path, kept: frozenset[Path]) -> InstallResult:
    """Edit one agent's settings file; an error becomes the result's ``error`` line."""
    try:
        outcome = _edit_file(target, command, home, kept)
    except ShellkeepError as exc:
        return InstallResult(target.agent, target.title, target.path, None, str(exc))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        error = f"cannot change '{target.path}' ({reason}); check the file, its folder and their permissions"
        return InstallResult(target.agent, target.title, target.path, None, error)
    return InstallResult(target.agent, target.title, target.path, outcome)


def _edit_file(target: McpTarget, command: ServerCommand | None, home: Path, kept: frozenset[Path]) -> Outcome:
    """Read, edit and atomically replace ``target.path`` (remove it when left empty); return the outcome."""
    path = target.path
    try:
        before = file_identity(path)
        raw: bytes | None = path.read_bytes()
    except FileNotFoundError:
        before, raw = None, None
    try:
        text = None if raw is None else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BrokenSettings(f"'{path}' is not UTF-8 text; fix it, then run this again") from exc
    edit = edit_settings(target, text, command)
    if edit.text is None:
        return edit.outcome
    if raw is None or before is None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_bytes_atomic(path, edit.text.encode("utf-8"), mode=FILE_MODE)
        return edit.outcome
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & stat.S_IWUSR:  # the user's own lock on the file (root could write it anyway)
        change = "remove" if command is None else "add"
        raise ShellkeepError(f"'{path}' is read-only; make it writable (chmod u+w '{path}') to let shellkeep {change} its entry")
    try:
        if edit.text or path.is_symlink():
            write_bytes_atomic(path, edit.text.encode("utf-8"), expect=before, follow_symlink=True, mode=mode)
        else:
            _remove_emptied(path, before, home, kept)
    except FileChanged as exc:
        raise ShellkeepError(f"'{path}' was changed by another program while shellkeep edited it; run this again") from exc
    return edit.outcome


def _remove_emptied(path: Path, before: FileIdentity, home: Path, kept: frozenset[Path]) -> None:
    """Remove the settings file that held shellkeep's entry alone, then each folder holding it left
    empty, up to (not) HOME or the XDG config folder; outside HOME its own folder alone: what install found when there was none."""
    if file_identity(path) != before:
        raise FileChanged(errno.EAGAIN, "changed by another process while being rewritten", str(path))
    path.unlink()
    for folder in (path.parent, *path.parent.parents):
        if folder in kept or not (folder == path.parent or home in folder.parents):
            return  # the config folders of every program stay, empty or not
        try:
            folder.rmdir()
        except OSError:  # not empty (or not the user's to change): it stays, and so does what holds it
            return
