"""Hand a conversation to another agent as its own history, instead of typing it in.

``shellkeep resume SESSION --agent OTHER``: when OTHER has a transcript writer
(``agents.writers``: Claude Code, Codex, Gemini CLI, Qwen Code), the session's exchanges are
written as a new conversation in OTHER's own format and folder (its cwd the resumed one, a
fresh session id, the ``shellkeep_handoff`` mark, never over a file), and OTHER is started with
its own resume flag on that id, so the whole history is in its context as its own messages.
Otherwise, or when the writing fails, the caller re-injects; ``run_resume`` also re-injects
when OTHER's native resume fails to start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentSession, Exchange
from shellkeep.agents.registry import adapter_for
from shellkeep.agents.transcript_writer import HandoffMark, HandoffRefused, WrittenTranscript, create_new, iso_millis
from shellkeep.agents.writers import writer_for
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta

__all__ = ["Handoff", "HandoffOutcome", "hand_off"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Handoff:
    """A conversation written into the target agent's history, and how to resume it there.

    argv: the target's native resume (``codex resume <id>``). written: the new transcript
    (``path`` not yet written on a dry run). note: the one line saying so.
    """

    argv: tuple[str, ...]
    written: WrittenTranscript
    note: str


@dataclass(frozen=True, slots=True)
class HandoffOutcome:
    """What ``hand_off`` did: ``done`` when written, else ``refusal``: why not, in words for the
    user's one line (``opencode keeps no transcript shellkeep can write``)."""

    done: Handoff | None = None
    refusal: str = ""


def hand_off(
    meta: SessionMeta,
    exchanges: Sequence[Exchange],
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    dry_run: bool = False,
    now: datetime | None = None,
) -> HandoffOutcome:
    """Write ``exchanges`` of ``meta`` into the history of the agent ``argv`` runs; never raises.

    Args:
        meta: the session handed off (its id and agent go into the mark).
        exchanges: what to write, oldest first (redacted as stored).
        argv: the target's command (``("codex",)`` or the user's ``--agent`` command line).
        cwd: where the target will run: the transcript's project and recorded cwd.
        env: the environment the target runs with (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...).
        dry_run: write nothing; say where it would go.
        now: aware UTC time of the writing (default: now).
    """
    adapter = adapter_for(list(argv))
    writer = writer_for(adapter.name)
    if writer is None or not isinstance(adapter, CommandAdapter):
        name = adapter.agent_name(list(argv))
        return HandoffOutcome(refusal=f"{name} keeps no transcript shellkeep can write")
    if not exchanges:
        return HandoffOutcome(refusal="no exchange to hand off")
    when = now or datetime.now(timezone.utc)
    mark = HandoffMark(from_session=meta.id, from_agent=meta.agent, written_at=iso_millis(when))
    # Undated exchanges take the session's end: dated before the resumed run, they stay its parent's.
    dated = [e if e.time else dataclasses.replace(e, time=meta.ended_at or meta.started_at) for e in exchanges]
    try:
        written = create_new(writer, dated, cwd, env, mark, when, dry_run=dry_run)
    except HandoffRefused as exc:
        return HandoffOutcome(refusal=str(exc))
    except (OSError, ShellkeepError) as exc:  # the refusal says it: logged for --verbose only
        log.info("could not write %s's transcript for %s: %s", adapter.name, meta.id, exc)
        return HandoffOutcome(refusal=f"could not write its transcript, {_readable(exc)}")
    except Exception as exc:  # noqa: BLE001 - a writer bug: re-inject as before
        log.warning("the %s transcript writer failed for %s: %s", adapter.name, meta.id, exc, exc_info=True)
        return HandoffOutcome(refusal=f"its transcript writer failed ({exc})")
    session = AgentSession(agent=adapter.name, session_id=written.session_id, transcript=None if dry_run else written.path)
    native = adapter.resume_argv(argv, session)
    if not native:
        if not dry_run:
            written.path.unlink(missing_ok=True)
        return HandoffOutcome(refusal=f"{adapter.name} has no native resume for it")
    count = f"{written.exchanges} exchange{'s' if written.exchanges != 1 else ''}"
    what = "would hand off" if dry_run else "handed off"
    note = f"{what} {count} into {adapter.name}'s own history: {written.path}"
    return HandoffOutcome(done=Handoff(tuple(native), written, note))


def _readable(exc: BaseException) -> str:
    """Return an error as words without its errno: ``not a directory: /home/me/.codex/sessions``."""
    if isinstance(exc, OSError) and exc.strerror:
        reason = exc.strerror[:1].lower() + exc.strerror[1:]
        return f"{reason}: {exc.filename}" if exc.filename else reason
    return str(exc)
