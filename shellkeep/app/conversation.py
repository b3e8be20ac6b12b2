"""Collect a session's conversation from its agent: exchanges, token usage, transcript copy.

Runs once the child has exited (or when an interrupted session is resumed): finds the
agent's own session through its adapter, reads its exchanges (or, for programs without a
transcript, builds them from the recording), stores ``exchanges.jsonl`` and a copy of the
agent's transcript in the session folder, and sums them up in ``meta.json``.

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
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentAdapter, AgentSession, Exchange, Launch
from shellkeep.agents.generic import exchanges_from_recording
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import AGENT_FOLDER, SessionMeta, parse_iso, write_meta
from shellkeep.terminal.screen import last_screen
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import is_collected, read_exchanges, write_exchanges
from shellkeep.vault.recording import plain_file
from shellkeep.vault.scrubber import redact_jsonl_text

if TYPE_CHECKING:
    from shellkeep.capture.redaction import Redactor
    from shellkeep.config import RedactConfig

__all__ = ["Conversation", "adapter_of", "collect", "gather", "is_collected", "read_exchanges", "write_exchanges"]

log = get_logger(__name__)

CLOCK_SLACK_S = 0.001
"""An exchange dated this little before the session's start still belongs to it (times are
kept to the millisecond; agents and shellkeep read the same clock)."""


@dataclass(frozen=True, slots=True)
class Conversation:
    """What ``gather`` found: the agent's own session (None when none) and this session's exchanges."""

    agent_session: AgentSession | None
    exchanges: tuple[Exchange, ...]


def adapter_of(meta: SessionMeta) -> AgentAdapter:
    """Return the adapter that recorded ``meta``'s agent (by its stored name, else by its command)."""
    try:
        return adapter_named(meta.agent)
    except UserInputError:
        return adapter_for(meta.command)


def gather(
    meta: SessionMeta, vault: Vault, env: Mapping[str, str] | None = None, *, from_recording: bool = True
) -> Conversation:
    """Find ``meta``'s agent session and read the exchanges sent during it; write nothing.

    env: the environment the agent ran with (HOME, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...).
    from_recording: when the agent's transcript gives no exchange, build them from the
    recording (a terminal emulator over all of it: slow for long recordings).
    Never raises for an agent's unreadable files: what could not be read is left out.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    agent_session = _find_agent_session(adapter, meta, vault, env)
    exchanges: list[Exchange] = []
    if agent_session is not None:
        try:
            exchanges = _own_exchanges(adapter.read_exchanges(agent_session), meta)
        except Exception as exc:  # noqa: BLE001 - an adapter bug falls back to the recording
            log.warning("could not read the %s transcript of %s: %s", adapter.name, meta.id, exc)
    if not exchanges and from_recording:
        # No agent transcript found or readable: the generic way, from the recording.
        exchanges = _own_exchanges(_from_recording(meta, vault, adapter), meta)
    return Conversation(agent_session, tuple(exchanges))


def collect(
    meta: SessionMeta,
    vault: Vault,
    redact_config: RedactConfig | None,
    env: Mapping[str, str] | None = None,
    *,
    from_recording: bool = True,
) -> SessionMeta:
    """Read ``meta``'s conversation, store it with the session, and return updated metadata.

    Stores ``exchanges.jsonl``, copies the agent's transcript into ``agent/`` (both
    redacted and, when encryption is on, encrypted: see the module doc) and writes
    ``meta.json`` with ``agent_session_id``, ``agent_transcript``, ``exchange_count`` and
    ``usage``. vault: seals what is stored when encryption is on; redact_config: the
    user's ``[redact]`` rules (None: the built-in ones). With ``from_recording`` False (at the end of a run, where time counts) a
    session whose agent gave no exchange gets no ``exchanges.jsonl``: they are built from
    the recording later, when something needs them. Never raises for an agent's unreadable
    files: the session keeps what could be read. Raises OSError when the session folder
    itself cannot be written, KeyUnavailable when encryption is on and no key can be had.
    """
    conversation = gather(meta, vault, env, from_recording=from_recording)
    agent_session = conversation.agent_session
    redactor = redactor_for(redact_config) if meta.redacted else None
    if agent_session is not None:
        _copy_transcripts(adapter_of(meta), agent_session, meta.folder, vault=vault, redactor=redactor)
    if conversation.exchanges or from_recording:
        write_exchanges(meta.folder, list(conversation.exchanges), vault, redactor=redactor)
    updated = dataclasses.replace(
        meta,
        agent_session_id=agent_session.session_id if agent_session else meta.agent_session_id,
        agent_transcript=str(agent_session.transcript) if agent_session and agent_session.transcript else None,
        exchange_count=len(conversation.exchanges),
        usage=_total_usage(conversation.exchanges),
    )
    write_meta(updated)
    return updated


def _own_exchanges(exchanges: list[Exchange], meta: SessionMeta) -> list[Exchange]:
    """Keep the exchanges sent during ``meta``'s session, renumbered from 0.

    Dropped: exchanges dated before the session started (a natively resumed conversation's
    earlier ones) and the context block shellkeep typed in on resume. Undated exchanges stay.
    """
    try:
        since = parse_iso(meta.started_at) - timedelta(seconds=CLOCK_SLACK_S)
    except ValueError:
        since = None
    kept: list[Exchange] = []
    for exchange in exchanges:
        if exchange.prompt.lstrip().startswith(INJECTED_CONTEXT_PREFIX):
            continue
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
    launch = Launch(argv=tuple(meta.command), agent_session_id=meta.agent_session_id)
    try:
        started = parse_iso(meta.started_at)
    except ValueError:
        return None
    screen_text = ""
    try:
        screen_text = last_screen(vault.open_recording(Path(meta.cast)), mapped=plain_file(Path(meta.cast))).to_text()
    except Exception as exc:  # noqa: BLE001 - the screen only helps find an id printed on exit
        log.debug("no last screen for %s: %s", meta.id, exc)
    try:
        return adapter.find_session(launch, Path(meta.cwd), env, started, screen_text)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the session
        log.warning("could not find the %s session of %s: %s", adapter.name, meta.id, exc)
        return None


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
    adapter: AgentAdapter, session: AgentSession, folder: Path, *, vault: Vault, redactor: Redactor | None
) -> None:
    """Copy the agent's transcript files into ``folder/agent/`` through ``Vault.write_private``.

    With a redactor, a UTF-8 file has every JSON string value of its lines (other lines as
    text) redacted (agent transcript JSONL); a file that is not UTF-8 is copied as it is.
    A file that cannot be read or written is logged and left out.
    """
    try:
        files = adapter.transcript_files(session)
    except Exception as exc:  # noqa: BLE001
        log.warning("could not list the agent's transcript files: %s", exc)
        return
    if not files:
        return
    try:
        target = ensure_dir(folder / AGENT_FOLDER)
    except OSError as exc:
        log.warning("could not make %s: %s", folder / AGENT_FOLDER, exc)
        return
    for src in files:
        try:
            vault.write_private(target / src.name, _redacted_copy(src.read_bytes(), redactor))
        except (OSError, ShellkeepError) as exc:
            log.warning("could not copy %s: %s", src, exc)


def _redacted_copy(raw: bytes, redactor: Redactor | None) -> bytes:
    """Return a transcript file's bytes redacted (see ``_copy_transcripts``)."""
    if redactor is None:
        return raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    redacted = redact_jsonl_text(text, redactor)
    return raw if redacted == text else redacted.encode("utf-8")


def _total_usage(exchanges: tuple[Exchange, ...]) -> dict[str, int] | None:
    usages = [e.usage for e in exchanges if e.usage is not None]
    if not usages:
        return None
    total = sum(usages[1:], usages[0])
    return {"input": total.input, "output": total.output, "cache_read": total.cache_read, "cache_write": total.cache_write}
