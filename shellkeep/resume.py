"""Put a session back: pick it, redraw its last screen, and plan how to restart its agent.

Native resume where the agent has it (``claude --resume <id>``, ``codex resume <id>``, ...),
otherwise re-injection: the same command is started and the last exchanges are typed into
it once its output has settled. ``--agent NAME`` hands the conversation to another agent by
re-injection. The resumed run is a new session whose ``parent`` is the one it resumes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.base import AgentSession, Exchange
from shellkeep.errors import SessionNotFound, UserInputError
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import SessionMeta, Status, list_sessions, resolve_session

log = logging.getLogger(__name__)

CUT_SHORT = (Status.INTERRUPTED.value, Status.HANGUP.value, Status.KILLED.value)


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """How a session will be put back.

    mode: ``native`` (the agent's own resume), ``inject`` (exchanges typed into a fresh
    start) or ``restart`` (a fresh start, nothing to inject).
    argv / cwd: what runs, and where (the session's original directory).
    inject_text: the block typed into the program (``inject`` mode), else None.
    """

    session: SessionMeta
    mode: str
    argv: tuple[str, ...]
    cwd: Path
    agent: str
    exchanges: tuple[Exchange, ...]
    inject_text: str | None


def choose_session(paths: Paths, project_root: Path, ref: str | None, *, last: bool = False) -> SessionMeta:
    """Return the session to resume.

    With ``ref`` (or ``last``) that session; else the newest session of the project that
    was cut short (interrupted, hangup, killed) and not resumed yet, else the newest one.
    Raises SessionNotFound or AmbiguousSession.
    """
    if ref or last:
        return resolve_session(paths, project_root, ref, last=last)
    sessions = list_sessions(paths, project_root)
    if not sessions:
        raise SessionNotFound(
            f"no sessions recorded in project {project_key(project_root)} yet; run 'shellkeep' to record one"
        )
    resumed = {m.parent for m in sessions if m.parent}
    for meta in sessions:
        if meta.status in CUT_SHORT and meta.id not in resumed:
            return meta
    return sessions[0]


def plan_resume(
    meta: SessionMeta,
    *,
    exchanges: int = 5,
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ResumePlan:
    """Decide how to put ``meta`` back; changes nothing but the session's own exchange file.

    exchanges: how many of the last exchanges to re-inject.
    agent: hand the conversation to this agent (an adapter name or any program) instead.
    Raises UserInputError when the session's directory is gone.
    """
    from shellkeep.agents.registry import adapter_names, adapter_named
    from shellkeep.conversation import adapter_of, collect, read_exchanges

    env = dict(os.environ if env is None else env)
    cwd = Path(meta.cwd)
    if not cwd.is_dir():
        raise UserInputError(f"the session's directory {meta.cwd} no longer exists; restore it or resume elsewhere")
    if meta.status != Status.RUNNING.value and not (meta.folder / "exchanges.jsonl").exists():
        try:
            meta = collect(meta, env)  # an interrupted session: read its conversation now
        except OSError as exc:
            log.warning("could not collect the conversation of %s: %s", meta.id, exc)
    recent = tuple(read_exchanges(meta, limit=exchanges)) if exchanges > 0 else ()

    if agent:
        target = agent
        if agent in adapter_names():
            executables = getattr(adapter_named(agent), "executables", ()) or (agent,)
            target = executables[0]
        return ResumePlan(meta, "inject" if recent else "restart", (target,), cwd, agent, recent, _inject_text(meta, recent))

    adapter = adapter_of(meta)
    native: list[str] | None = None
    if meta.agent_session_id:
        transcript = Path(meta.agent_transcript) if meta.agent_transcript else None
        session = AgentSession(agent=meta.agent, session_id=meta.agent_session_id, transcript=transcript)
        try:
            native = adapter.resume_argv(meta.command, session)  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - fall back to re-injection
            log.warning("could not build the native resume of %s: %s", meta.id, exc)
    if native:
        return ResumePlan(meta, "native", tuple(native), cwd, meta.agent, recent, None)
    mode = "inject" if recent else "restart"
    return ResumePlan(meta, mode, tuple(meta.command), cwd, meta.agent, recent, _inject_text(meta, recent) if recent else None)


def _inject_text(meta: SessionMeta, exchanges: tuple[Exchange, ...]) -> str | None:
    """Return the block typed into a restarted program: a header, then each exchange."""
    if not exchanges:
        return None
    when = (meta.ended_at or meta.started_at or "")[:16].replace("T", " ")
    lines = [
        f"[shellkeep] Context from the earlier session {meta.id} ({meta.agent}, {meta.status} {when} UTC): "
        f"its last {len(exchanges)} exchange{'s' if len(exchanges) != 1 else ''} follow. Please continue from there.",
    ]
    for exchange in exchanges:
        lines.append(f"User: {exchange.prompt.strip()}")
        if exchange.answer.strip():
            lines.append(f"Assistant: {exchange.answer.strip()}")
    return "\n".join(lines)
