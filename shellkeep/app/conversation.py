"""Collect a session's conversation from its agent: exchanges, token usage, transcript copy.

Runs once the child has exited (or when an interrupted session is resumed): finds the
agent's own session through its adapter, reads its exchanges (or, for programs without a
transcript, builds them from the recording), stores ``exchanges.jsonl`` and a copy of the
agent's transcript (in the chunk store, once per content, referenced from the session
folder's ``agent/``), and sums them up in ``meta.json``, with where the transcript was
found damaged. Transcripts are streamed, never held whole; a big one is read and copied by
the upkeep in the background (``defer_above``), so the user's terminal is given back at once.

Both are stored redacted with the user's rules (``[redact]``; not for a session recorded
with ``--no-redact``) and through the vault (``Vault.write_private``): sealed when
``encryption.encrypt`` is on, atomically, mode 0600.

A session's exchanges are the ones sent during it: a conversation resumed natively keeps
its earlier exchanges in the agent's transcript, but they belong to the session that sent
them (its ``parent``), so usage is never counted twice along a chain. The block shellkeep
types into a program on resume (``INJECTED_CONTEXT_PREFIX``) is not an exchange either.
"""

from __future__ import annotations

import dataclasses
import json
import os
from functools import partial
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentAdapter, AgentSession, Exchange, Launch
from shellkeep.agents.jsonl import TranscriptDamage, TranscriptReading, open_transcript
from shellkeep.agents.generic import exchanges_from_recording
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.app.about import with_about
from shellkeep.app.checkpoints import add_exchange_checkpoints
from shellkeep.app.native import remove_resume_leftovers
from shellkeep.app.unanswered import with_typed_prompt, with_unanswered
from shellkeep.app.plan import with_plan
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta, Status, parse_iso, write_meta
from shellkeep.terminal.replay import last_screen
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import is_collected, read_exchanges, write_exchanges
from shellkeep.vault.recording import open_tail_source
from shellkeep.vault.copies import copy_lines, store_copy
from shellkeep.vault.scrubber import redact_jsonl_line, redact_jsonl_text

if TYPE_CHECKING:
    from shellkeep.capture.redaction import Redactor
    from shellkeep.config import RedactConfig

__all__ = [
    "INLINE_COLLECT_MAX_BYTES",
    "Conversation",
    "adapter_of",
    "collect",
    "collect_for_resume",
    "gather",
    "is_collected",
    "live_exchanges",
    "redacted_exchanges",
    "note_agent_session",
    "own_exchanges",
    "read_exchanges",
    "transcript_bytes",
    "write_exchanges",
]

log = get_logger(__name__)

CLOCK_SLACK_S = 0.001
"""An exchange dated this little before the session's start still belongs to it (times are
kept to the millisecond; agents and shellkeep read the same clock)."""


INLINE_COLLECT_MAX_BYTES = 8 << 20
"""Transcripts up to this size are read and copied at the end of a run, in the user's
terminal (well under a second); bigger ones by the upkeep that runs in the background."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """What ``gather`` found: the agent's own session (None when none), this session's
    exchanges, and where the agent's transcript is damaged (None when intact or not read whole).
    structured: the exchanges come from the agent's own transcript, not the recording."""

    agent_session: AgentSession | None
    exchanges: tuple[Exchange, ...]
    damage: TranscriptDamage | None = None
    structured: bool = False


def adapter_of(meta: SessionMeta) -> AgentAdapter:
    """Return the adapter that recorded ``meta``'s agent (by its stored name, else by its command)."""
    try:
        return adapter_named(meta.agent)
    except UserInputError:
        return adapter_for(meta.command)


def gather(
    meta: SessionMeta,
    vault: Vault,
    env: Mapping[str, str] | None = None,
    *,
    from_recording: bool = True,
    limit: int | None = None,
    agent_session: AgentSession | None = None,
) -> Conversation:
    """Find ``meta``'s agent session and read the exchanges sent during it; write nothing.

    env: the environment the agent ran with (HOME, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...).
    from_recording: when the agent's transcript gives no exchange, build them from the
    recording (a terminal emulator over all of it: slow for long recordings).
    limit: only the last ``limit`` exchanges, read from the transcript's end (fast whatever
    its size; no damage report); None: the whole transcript, streamed, checked for damage
    (up to ``meta.agent_transcript_bytes`` when known). agent_session: the agent session
    when the caller found it already.
    Never raises for an agent's unreadable files: what could not be read is left out.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    if agent_session is None:
        agent_session = _find_agent_session(adapter, meta, vault, env)
    exchanges: list[Exchange] = []
    damage: TranscriptDamage | None = None
    structured = False
    if agent_session is not None:
        try:
            if limit is not None:
                found = adapter.read_exchanges(agent_session, limit)
            else:
                reading = _read_transcript(adapter, agent_session, meta.agent_transcript_bytes)
                found, damage = list(reading.exchanges), reading.damage
            exchanges = own_exchanges(found, meta)
            structured = bool(exchanges)
        except Exception as exc:  # noqa: BLE001 - an adapter bug falls back to the recording
            log.warning("could not read the %s transcript of %s: %s", adapter.name, meta.id, exc)
    if not exchanges and from_recording:
        # No agent transcript found or readable: the generic way, from the recording.
        exchanges = own_exchanges(_from_recording(meta, vault, adapter), meta)
    elif exchanges and not exchanges[-1].answer and getattr(adapter, "answers_written_late", False):
        exchanges[-1] = _answer_from_screen(exchanges[-1], meta, vault, adapter)
    if agent_session is not None and (structured or not from_recording):
        exchanges = with_typed_prompt(exchanges, meta, vault)  # a prompt the agent died before writing
    if limit is not None:
        exchanges = exchanges[-limit:] if limit > 0 else []
    return Conversation(agent_session, tuple(exchanges), damage, structured)


def _read_transcript(adapter: AgentAdapter, session: AgentSession, upto_bytes: int | None) -> TranscriptReading:
    """Read the whole transcript through the adapter (``read_transcript`` where it has one)."""
    if isinstance(adapter, CommandAdapter):
        return adapter.read_transcript(session, upto_bytes)
    return TranscriptReading(tuple(adapter.read_exchanges(session)))


def transcript_bytes(adapter: AgentAdapter, session: AgentSession | None) -> int:
    """Return the total size of the agent's transcript files worth copying (0 when none)."""
    if session is None:
        return 0
    total = 0
    try:
        for path in adapter.transcript_files(session):
            total += path.stat().st_size
    except Exception as exc:  # noqa: BLE001 - sizes only decide where the work is done
        log.debug("cannot size the transcript of %s: %s", session.session_id, exc)
    return total


def note_agent_session(
    meta: SessionMeta, vault: Vault, env: Mapping[str, str] | None = None, *, session: AgentSession | None = None
) -> SessionMeta:
    """Find ``meta``'s agent session and store who it is and how long its transcript is now.

    Cheap whatever the transcript's size: what ``collect`` does later reads only that part
    of the transcript (the agent may go on appending to it). session: the agent session
    when the caller found it already. Returns the updated metadata; never raises for the
    agent's files, raises OSError when meta.json cannot be written.
    """
    if session is None:
        session = _find_agent_session(adapter_of(meta), meta, vault, dict(os.environ if env is None else env))
    if session is None:
        return meta
    size: int | None = None
    if session.transcript is not None:
        try:
            size = session.transcript.stat().st_size
        except OSError:
            size = None
    updated = dataclasses.replace(
        meta,
        agent_session_id=session.session_id or meta.agent_session_id,
        agent_transcript=str(session.transcript) if session.transcript else meta.agent_transcript,
        agent_transcript_bytes=size,
    )
    write_meta(updated)
    return updated


def collect(
    meta: SessionMeta,
    vault: Vault,
    redact_config: RedactConfig | None,
    env: Mapping[str, str] | None = None,
    *,
    from_recording: bool = True,
    defer_above: int | None = None,
    snapshot_last: bool = False,
) -> SessionMeta:
    """Read ``meta``'s conversation, store it with the session, and return updated metadata.

    Stores ``exchanges.jsonl`` and ``meta.json`` (``agent_session_id``, ``agent_transcript``,
    ``agent_transcript_bytes``, ``agent_transcript_damage``, ``exchange_count``, ``usage``,
    ``unanswered_prompt`` (``app.unanswered``))
    first, then the copy of the agent's transcript (``agent/``, through the chunk store,
    ``vault.copies``): a run cut short while copying keeps its exchanges. Both are
    redacted and, when encryption is on, encrypted (see the module doc); the transcript is
    streamed, never held whole. vault: seals what is stored when encryption is on;
    redact_config: the user's ``[redact]`` rules (None: the built-in ones). With
    ``from_recording`` False (at the end of a run, where time counts) a session whose agent
    gave no exchange gets no ``exchanges.jsonl``: they are built from the recording later.
    defer_above: when the transcript files are bigger than this many bytes, only note the
    agent session (``note_agent_session``) and leave the rest to a later ``collect`` (the
    upkeep in the background). Exchanges read from the agent's own transcript each get a
    checkpoint (``app.checkpoints.add_exchange_checkpoints``; snapshot_last: snapshot the
    files for the last one, the run has just ended); a failure there is logged. Never raises
    for an agent's unreadable files: the session
    keeps what could be read. Raises OSError when the session folder itself cannot be
    written, KeyUnavailable when encryption is on and no key can be had.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    found = _find_agent_session(adapter, meta, vault, env)
    if found is not None:
        remove_resume_leftovers(adapter, found)
    if found is not None and meta.agent_transcript_bytes is None:
        meta = note_agent_session(meta, vault, env, session=found)  # fixes the part read below
    if defer_above is not None and transcript_bytes(adapter, found) > defer_above:
        return meta
    conversation = gather(meta, vault, env, from_recording=from_recording, agent_session=found)
    agent_session = conversation.agent_session
    redactor = redactor_for(redact_config) if meta.redacted else None
    if conversation.exchanges or from_recording:
        write_exchanges(meta.folder, list(conversation.exchanges), vault, redactor=redactor)
    updated = dataclasses.replace(
        meta,
        agent_session_id=agent_session.session_id if agent_session else meta.agent_session_id,
        agent_transcript=str(agent_session.transcript) if agent_session and agent_session.transcript else None,
        agent_transcript_damage=dict(conversation.damage.to_json()) if conversation.damage else None,
        exchange_count=len(conversation.exchanges),
        usage=_total_usage(conversation.exchanges),
    )
    updated = with_unanswered(updated, conversation.exchanges)  # a prompt cut short, for resume
    updated = with_plan(updated, adapter, agent_session, redactor.redact if redactor else None, vault)  # its task list (app.plan)
    updated = with_about(updated, adapter, agent_session, conversation.exchanges, redactor.redact if redactor else None, vault)
    write_meta(updated)
    if conversation.structured:
        try:
            add_exchange_checkpoints(updated, conversation.exchanges, snapshot_last=snapshot_last)
        except (OSError, ShellkeepError) as exc:  # the exchanges are stored; checkpoints are extra
            log.warning("could not add the checkpoints of the exchanges of %s: %s", meta.id, exc)
    if agent_session is not None:
        _copy_transcripts(
            adapter, agent_session, meta.folder, vault=vault, redactor=redactor, upto_bytes=meta.agent_transcript_bytes
        )
    return updated


def collect_for_resume(
    meta: SessionMeta,
    vault: Vault,
    redact_config: RedactConfig | None,
    env: Mapping[str, str] | None = None,
    *,
    limit: int,
    dry_run: bool = False,
) -> tuple[SessionMeta, list[Exchange], bool]:
    """Collect a session that never was (its recorder was killed) for a resume, quickly.

    Returns the updated metadata, its last ``limit`` own exchanges, and whether the rest is
    left to do (the caller starts the upkeep, ``app.housekeeping``, in the background). A
    transcript up to ``INLINE_COLLECT_MAX_BYTES`` is collected now (``collect``); a bigger
    one is read from its end only, so the resume starts within a second whatever its size,
    and its agent session and length are noted. dry_run: write nothing (everything is read
    from the end then). Raises as ``collect``.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    found = _find_agent_session(adapter, meta, vault, env)
    big = transcript_bytes(adapter, found) > INLINE_COLLECT_MAX_BYTES
    if not big and not dry_run:
        meta = collect(meta, vault, redact_config, env)
        return meta, read_exchanges(meta, vault, limit), False
    if big and not dry_run:
        meta = note_agent_session(meta, vault, env, session=found)
    elif found is not None and found.session_id:
        meta = dataclasses.replace(
            meta,
            agent_session_id=found.session_id,
            agent_transcript=str(found.transcript) if found.transcript else meta.agent_transcript,
        )
    redactor = redactor_for(redact_config) if meta.redacted else None
    meta = with_plan(meta, adapter, found, redactor.redact if redactor else None, None if dry_run else vault)
    if big and not dry_run:
        write_meta(meta)
    conversation = gather(meta, vault, env, limit=max(limit, 1), agent_session=found)
    exchanges = list(conversation.exchanges)[-limit:] if limit > 0 else []
    if meta.redacted:  # as ``collect`` stores them: a dry run decides what a real one would
        exchanges = redacted_exchanges(exchanges, redact_config)
    return meta, exchanges, big and not dry_run


def redacted_exchanges(exchanges: list[Exchange], redact_config: RedactConfig | None) -> list[Exchange]:
    """Return ``exchanges`` redacted with the user's rules, as ``collect`` stores them."""
    if not exchanges:
        return exchanges
    text = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in exchanges)
    return [Exchange.from_json(json.loads(line)) for line in redact_jsonl_text(text, redactor_for(redact_config)).splitlines()]


def live_exchanges(
    meta: SessionMeta, vault: Vault, redact_config: RedactConfig | None, env: Mapping[str, str] | None = None
) -> tuple[SessionMeta, list[Exchange]]:
    """Return ``meta`` and its exchanges for showing; writes nothing.

    Collected: the stored ones. Cut short and not collected yet (its recorder died, the
    upkeep or a resume collects it later): read from the agent's own transcript now, as
    ``collect`` would store them (redacted, ``exchange_count``, ``usage``, the agent session,
    ``unanswered_prompt``). env: the environment the agent's files are looked for with
    (``app.env_restore.agent_files_env``). A running session, one that keeps no exchanges
    (``record.detail = "metadata"``) or an agent without a transcript: the stored ones.
    Raises KeyUnavailable and DataError as ``read_exchanges``.
    """
    adapter = adapter_of(meta)
    live = not is_collected(meta) and meta.status != Status.RUNNING.value and meta.detail != "metadata"
    if not live or not adapter.has_native_transcript:
        return meta, read_exchanges(meta, vault)
    conversation = gather(meta, vault, env, from_recording=False)
    exchanges = list(conversation.exchanges)
    if not exchanges:
        return meta, []
    if meta.redacted:
        exchanges = redacted_exchanges(exchanges, redact_config)
    found = conversation.agent_session
    updated = dataclasses.replace(
        meta,
        agent_session_id=found.session_id if found and found.session_id else meta.agent_session_id,
        agent_transcript=str(found.transcript) if found and found.transcript else meta.agent_transcript,
        exchange_count=len(exchanges),
        usage=_total_usage(tuple(exchanges)),
    )
    return with_unanswered(updated, exchanges), exchanges


QUIT_COMMANDS = frozenset({"/quit", "/exit"})
"""The slash commands that end an agent's TUI (Claude Code, Codex, Gemini CLI, Qwen Code...)."""


def own_exchanges(exchanges: list[Exchange], meta: SessionMeta) -> list[Exchange]:
    """Keep the exchanges sent during ``meta``'s session, renumbered from 0.

    Dropped: exchanges dated before the session started (a natively resumed conversation's
    earlier ones), the context block shellkeep typed in on resume and a slash command that ends
    the agent (``QUIT_COMMANDS``: Gemini CLI writes ``/quit`` to its chat as a user message).
    Undated exchanges stay.
    """
    try:
        since = parse_iso(meta.started_at) - timedelta(seconds=CLOCK_SLACK_S)
    except ValueError:
        since = None
    kept: list[Exchange] = []
    for exchange in exchanges:
        if exchange.prompt.lstrip().startswith(INJECTED_CONTEXT_PREFIX):
            continue
        if exchange.prompt.strip().lower() in QUIT_COMMANDS and not exchange.answer.strip():
            continue  # ends the agent: never a prompt to list, title or send again
        if since is not None and exchange.time is not None:
            try:
                if parse_iso(exchange.time) < since:
                    continue
            except ValueError:
                pass
        kept.append(dataclasses.replace(exchange, index=len(kept)))
    return kept


def _find_agent_session(
    adapter: AgentAdapter, meta: SessionMeta, vault: Vault, env: Mapping[str, str]
) -> AgentSession | None:
    if not adapter.has_native_transcript:
        return None
    if meta.agent_session_id and meta.agent_transcript and Path(meta.agent_transcript).is_file():
        return AgentSession(adapter.name, meta.agent_session_id, Path(meta.agent_transcript))  # found before
    launch = Launch(argv=tuple(meta.command), agent_session_id=meta.agent_session_id)
    try:
        started = parse_iso(meta.started_at)
    except ValueError:
        return None
    screen_text = ""
    try:
        recording = vault.open_recording(Path(meta.cast))
        with open_tail_source(Path(meta.cast)) as mapped:
            screen_text = last_screen(recording, mapped=mapped).to_text()
    except Exception as exc:  # noqa: BLE001 - the screen only helps find an id printed on exit
        log.debug("no last screen for %s: %s", meta.id, exc)
    try:
        return adapter.find_session(launch, Path(meta.cwd), env, started, screen_text)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the session
        log.warning("could not find the %s session of %s: %s", adapter.name, meta.id, exc)
        return None


def _answer_from_screen(last: Exchange, meta: SessionMeta, vault: Vault, adapter: AgentAdapter) -> Exchange:
    """Return ``last`` with the answer the recording shows to its prompt, when its transcript lacks it.

    For an agent that writes an answer to its transcript after showing it (Qwen Code: up to
    about a second later), a crash in between leaves the prompt without its answer; the
    screen had it. The last exchange built from the recording whose prompt is the same gives
    the answer; ``last`` is returned unchanged when there is none.
    """
    prompt = " ".join(last.prompt.split())
    for shown in reversed(_from_recording(meta, vault, adapter)):
        if " ".join(shown.prompt.split()) == prompt and shown.answer:
            log.info("the answer to the last prompt of %s was taken from the screen", meta.id)
            return dataclasses.replace(last, answer=shown.answer)
    return last


def _from_recording(meta: SessionMeta, vault: Vault, adapter: AgentAdapter) -> list[Exchange]:
    try:
        cast = vault.open_recording(Path(meta.cast))
        return exchanges_from_recording(
            cast.events(),
            cols=cast.header.size.cols,
            rows=cast.header.size.rows,
            started_at=parse_iso(meta.started_at),
            chrome=adapter.screen_chrome,
        )
    except Exception as exc:  # noqa: BLE001
        log.warning("could not build exchanges from the recording of %s: %s", meta.id, exc)
        return []


def _copy_transcripts(
    adapter: AgentAdapter,
    session: AgentSession,
    folder: Path,
    *,
    vault: Vault,
    redactor: Redactor | None,
    upto_bytes: int | None,
) -> None:
    """Copy the agent's transcript files into the chunk store, referenced from ``folder/agent/``.

    Streamed line by line (a ``.zst`` transcript decompressed); with a redactor every JSON
    string value of a line (other lines as text) is redacted. upto_bytes: copy only that
    much of the transcript itself (the part this session ended at). A file that cannot be
    read or written is logged and left out.
    """
    try:
        files = adapter.transcript_files(session)
    except Exception as exc:  # noqa: BLE001
        log.warning("could not list the agent's transcript files: %s", exc)
        return
    for src in files:
        limit = upto_bytes if src == session.transcript else None
        try:
            fh = open_transcript(src)
            if fh is None:
                continue
            with fh:
                redact = None if redactor is None else partial(redact_jsonl_line, redactor=redactor)
                store_copy(vault, folder, copy_name(session, src), copy_lines(fh, redact, limit))
        except (OSError, ShellkeepError) as exc:
            log.warning("could not copy %s: %s", src, exc)


def copy_name(session: AgentSession, src: Path) -> str:
    """Return the name of the copy of the agent's file ``src``: its file name, or for a file of
    the transcript's side folder (Claude Code's ``<id>/``) its path from there, ``<id>/subagents/a.jsonl``,
    so that another machine puts it back where the agent looks (``app.transplant``)."""
    if session.transcript is not None:
        side = session.transcript.parent / session.transcript.stem
        if src.is_relative_to(side):
            return src.relative_to(session.transcript.parent).as_posix()
    return src.name


def _total_usage(exchanges: tuple[Exchange, ...]) -> dict[str, int] | None:
    usages = [e.usage for e in exchanges if e.usage is not None]
    if not usages:
        return None
    total = sum(usages[1:], usages[0])
    return {"input": total.input, "output": total.output, "cache_read": total.cache_read, "cache_write": total.cache_write}
