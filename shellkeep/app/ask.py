"""Ask the archive a question through the user's own agent: ``shellkeep ask QUESTION``.

The agent (Claude Code, Codex or Gemini CLI) runs once, non-interactively, with shellkeep's
MCP server (``shellkeep mcp``) attached for that call only (``agents.ask_commands`` builds each
agent's command line); it uses its own login, shellkeep holds no model and no key. The agent
is started directly, not through a shell, so the shell integration never records it as a
session, and with its own flag that keeps the run out of its history where it has one.

Which sessions the answer cites: the server leaves an audit entry for each session it returns
(``store.audit``, command ``mcp...``); the entries appended while the agent ran name the
sessions it read. Those the answer names (by id or name) are the ones cited, in the answer's
order; when it names none, every session it read is listed instead (``named`` False).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.ask_commands import ASK_AGENTS, McpServer, build_ask_command, executable_of, shared_folder
from shellkeep.app.context import Context
from shellkeep.app.shellinit import shellkeep_command
from shellkeep.errors import AgentNotFound, ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.audit import AuditEntry, read_entries
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import read_meta

__all__ = ["SERVER_NAME", "SERVER_TOOLS", "AskRequest", "AskResult", "CitedSession", "ask", "choose_agent", "server_for"]

log = get_logger(__name__)

SERVER_NAME = "shellkeep"
"""The MCP server's name in the agent (Claude Code calls its tools ``mcp__shellkeep__<tool>``)."""

SERVER_TOOLS = ("search_sessions", "list_sessions", "get_session", "get_screen", "get_diff")
"""The tools of ``shellkeep mcp``, all read-only: the only tools ``ask`` allows."""

_PRIVATE_VARIABLES = ("SHELLKEEP_SYNC_URL",)
"""shellkeep variables not handed to the server: it reads pulled sessions, never the bucket,
and a bucket URL may hold a credential."""


@dataclass(frozen=True, slots=True)
class AskRequest:
    """One question. agent: an adapter name, or None for the default (``choose_agent``).
    all_projects / remote: passed to ``shellkeep mcp`` as ``--all-projects`` / ``--remote``."""

    question: str
    agent: str | None = None
    all_projects: bool = False
    remote: bool = False


@dataclass(frozen=True, slots=True)
class CitedSession:
    """A session the agent read through the server: id, project, and what its metadata says
    (None for a session whose folder is not here, e.g. one pulled and since removed)."""

    id: str
    project: str | None
    agent: str | None
    started_at: str | None
    name: str | None
    title: str | None


@dataclass(frozen=True, slots=True)
class AskResult:
    """The agent's answer (text as it printed it, trailing blanks cut) and the sessions it
    cites: those the answer names, else (``named`` False) every session it read."""

    agent: str
    answer: str
    cited: list[CitedSession]
    named: bool


def choose_agent(ctx: Context, requested: str | None, env: Mapping[str, str]) -> tuple[str, str]:
    """Return ``(agent, executable path)`` to ask.

    requested: the ``--agent`` value, or None: the installed agent of ``ASK_AGENTS`` with the
    most sessions recorded in this project (ties: the one used last), else the first installed.
    Raises UserInputError for an agent that cannot take an MCP server non-interactively,
    AgentNotFound (127) when the agent, or with no ``--agent`` every one, is not installed.
    """
    path = env.get("PATH")
    if requested is not None:
        if requested not in ASK_AGENTS:
            raise UserInputError(
                f"'{requested}' cannot be given an MCP server for one non-interactive run; use --agent {_choices()}"
            )
        found = shutil.which(executable_of(requested), path=path)
        if found is None:
            raise AgentNotFound(f"{executable_of(requested)}: command not found; install it, or choose another with --agent {_choices()}")
        return requested, found
    installed = {agent: exe for agent in ASK_AGENTS if (exe := shutil.which(executable_of(agent), path=path)) is not None}
    if not installed:
        raise AgentNotFound(f"no agent to ask: none of {', '.join(ASK_AGENTS)} is installed; install one")
    used = _agents_used(ctx)
    ranked = sorted(installed, key=lambda agent: (-used.get(agent, 0), _recency(used, agent), ASK_AGENTS.index(agent)))
    return ranked[0], installed[ranked[0]]


def _choices() -> str:
    return ", ".join(ASK_AGENTS[:-1]) + " or " + ASK_AGENTS[-1]


def _recency(used: Counter[str], agent: str) -> int:
    """Return the rank of ``agent`` among the agents by last use (Counter keeps first-seen order,
    and sessions are counted newest first); agents never used rank last."""
    order = list(used)
    return order.index(agent) if agent in order else len(order)


def _agents_used(ctx: Context) -> Counter[str]:
    """Count this project's recorded sessions (moved projects too) by agent, newest first."""
    from shellkeep.app.listing import moved_projects
    from shellkeep.archive.listing import SessionQuery, list_indexed
    from shellkeep.store.paths import project_key

    query = SessionQuery(project=project_key(ctx.project_root), also_projects=moved_projects(ctx))
    try:
        listed = list_indexed(ctx.paths, query, full=False, vault=ctx.vault, recover=ctx.recover)
    except ShellkeepError as exc:  # no count: the first installed agent is still a good answer
        log.warning("cannot count this project's sessions by agent: %s", exc)
        return Counter()
    return Counter(item.agent for item in listed)


def server_for(ctx: Context, request: AskRequest, cwd: Path) -> McpServer:
    """Return how the agent starts ``shellkeep mcp``: this shellkeep's own executable (absolute
    path, or ``python -m shellkeep``), the pass-through flags, shellkeep's variables, ``cwd``."""
    command, *prefix = shellkeep_command()
    flags = (*(("--all-projects",) if request.all_projects else ()), *(("--remote",) if request.remote else ()))
    env = {k: v for k, v in ctx.env.items() if k.startswith("SHELLKEEP_") and k not in _PRIVATE_VARIABLES}
    return McpServer(SERVER_NAME, command, (*prefix, "mcp", *flags), env, cwd, SERVER_TOOLS)


def ask(ctx: Context, request: AskRequest, cwd: Path, on_start: Callable[[str], None] | None = None) -> AskResult:
    """Run the chosen agent on ``request.question`` with the server attached; return its answer.

    on_start: called with the agent's name once it is chosen, before it runs. Blocks until
    the agent exits. Raises what ``choose_agent`` raises; AgentNotFound when the
    agent cannot be started; ShellkeepError when it fails: what a known exit status means
    (``AskCommand.failures``), else the status and the line of its output that names the
    error (``_failure_line``).
    """
    if not request.question.strip():
        raise UserInputError("the question is empty; ask something, e.g. shellkeep ask \"how did we fix the login bug?\"")
    env = dict(ctx.env)
    agent, executable = choose_agent(ctx, request.agent, env)
    server = server_for(ctx, request, cwd)
    if on_start is not None:
        on_start(agent)
    before = _last_seq(ctx)
    try:  # a private folder: Gemini CLI reads no settings file under a folder others may write
        runs = ensure_dir(ctx.paths.ask_runs)
    except OSError as exc:
        raise ShellkeepError(f"cannot make {ctx.paths.ask_runs} ({exc.strerror or exc}); check the data folder's permissions") from exc
    with tempfile.TemporaryDirectory(prefix="run-", dir=runs) as folder:
        command = build_ask_command(agent, executable, request.question, server, Path(folder), env)
        shared = shared_folder(Path(folder)) if command.needs_private_folder else None
        if shared is not None:
            raise ShellkeepError(
                f"{agent} reads no settings file under {shared} (others may write to it), so it cannot be given shellkeep's "
                f"MCP server; set SHELLKEEP_HOME to a private folder, or choose another with --agent {_choices()}"
            )
        for path, text in command.files:
            path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run(
                command.argv, cwd=cwd, env={**env, **command.env}, stdin=subprocess.DEVNULL,
                capture_output=True, text=True, errors="replace",
            )
        except OSError as exc:
            raise AgentNotFound(f"cannot start {executable}: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            known = dict(command.failures).get(done.returncode)
            if known is not None:
                raise ShellkeepError(known)
            how = f"exit {done.returncode}" if done.returncode > 0 else f"killed by signal {-done.returncode}"
            raise ShellkeepError(f"{agent} failed ({how}): {_failure_line(done.stderr) or _failure_line(done.stdout) or 'no message'}")
        answer = done.stdout
        if command.answer_file is not None and command.answer_file.is_file():
            answer = command.answer_file.read_text(encoding="utf-8", errors="replace")
    answer = answer.rstrip()
    read = _sessions_read(ctx, before)
    named = [s for s in read if _names(answer, s)]
    named.sort(key=lambda s: _first_mention(answer, s))
    return AskResult(agent, answer, named or read, bool(named))


_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-_])")
"""A terminal escape sequence: CSI (colours), OSC (titles, links), or a two-byte one."""
_NAMES_ERROR = re.compile(r"\b(?:error|fatal|failed|failure|exception|panic(?:ked)?)\b", re.IGNORECASE)


def _failure_line(text: str) -> str:
    """Return the line of an agent's output that says what went wrong ("" when none has letters).

    Escape sequences are dropped. It is the first line that names an error (joined with the
    next when it ends with ':', as in "Error loading config.toml:" then the file and the
    cause), else the last line holding a letter; a caret line or a source excerpt is never it.
    """
    lines = [line.strip() for line in _ESCAPE.sub("", text).splitlines()]
    lines = [line for line in lines if any(c.isalpha() for c in line)]
    for i, line in enumerate(lines):
        if _NAMES_ERROR.search(line):
            return f"{line} {lines[i + 1]}" if line.endswith(":") and i + 1 < len(lines) else line
    return lines[-1] if lines else ""


def _last_seq(ctx: Context) -> int:
    """Return the ``seq`` of the audit log's last entry (0 when empty or unreadable)."""
    entries = _entries(ctx)
    return entries[-1].seq if entries else 0


def _entries(ctx: Context) -> list[AuditEntry]:
    try:
        return read_entries(ctx.paths)
    except OSError as exc:
        log.warning("cannot read the audit log %s: %s", ctx.paths.audit_log, exc)
        return []


def _sessions_read(ctx: Context, after_seq: int) -> list[CitedSession]:
    """Return the sessions the MCP server's audit entries after ``after_seq`` name, first read first."""
    seen: dict[str, str | None] = {}
    for entry in _entries(ctx):
        if entry.seq > after_seq and entry.command.startswith("mcp") and entry.session and entry.session not in seen:
            seen[entry.session] = entry.project
    return [_describe(ctx, session_id, project) for session_id, project in seen.items()]


def _describe(ctx: Context, session_id: str, project: str | None) -> CitedSession:
    """Return what the session's ``meta.json`` says of it (only id and project when unreadable)."""
    if project:
        try:
            meta = read_meta(ctx.paths.projects / project / session_id)
            return CitedSession(session_id, project, meta.agent, meta.started_at, meta.name, meta.title)
        except (OSError, ShellkeepError):
            pass
    return CitedSession(session_id, project, None, None, None, None)


def _labels(session: CitedSession) -> Sequence[str]:
    return [session.id, *([session.name] if session.name and len(session.name) >= 3 else [])]


def _names(answer: str, session: CitedSession) -> bool:
    """Return whether ``answer`` names ``session``: its id, or its name as a whole word."""
    return _first_mention(answer, session) < len(answer)


def _first_mention(answer: str, session: CitedSession) -> int:
    """Return where ``answer`` first names ``session`` (``len(answer)`` when it does not)."""
    found = [m.start() for label in _labels(session) if (m := re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", answer))]
    return min(found, default=len(answer))
