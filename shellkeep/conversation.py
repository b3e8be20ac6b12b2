"""Collect a session's conversation from its agent: exchanges, token usage, transcript copy.

Runs once the child has exited (or when an interrupted session is resumed): finds the
agent's own session through its adapter, reads its exchanges (or, for programs without a
transcript, builds them from the recording), stores ``exchanges.jsonl`` and a copy of the
agent's transcript in the session folder, and sums them up in ``meta.json``.

Both are stored redacted with the user's rules (``[redact]``; not for a session recorded
with ``--no-redact``) and through ``store.crypto.write_private``: encrypted when
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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentAdapter, AgentSession, Exchange, Launch
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.errors import ShellkeepError
from shellkeep.store.paths import ensure_dir
from shellkeep.store.session import AGENT_FOLDER, EXCHANGES_FILE, SessionMeta, parse_iso, write_meta
from shellkeep.logs import get_logger

if TYPE_CHECKING:
    from shellkeep.capture.redaction import Redactor
    from shellkeep.config import Config

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
    from shellkeep.errors import UserInputError

    try:
        return adapter_named(meta.agent)
    except UserInputError:
        return adapter_for(meta.command)


def gather(meta: SessionMeta, env: Mapping[str, str] | None = None, *, from_recording: bool = True) -> Conversation:
    """Find ``meta``'s agent session and read the exchanges sent during it; write nothing.

    env: the environment the agent ran with (HOME, ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``...).
    from_recording: when the agent's transcript gives no exchange, build them from the
    recording (a terminal emulator over all of it: slow for long recordings).
    Never raises for an agent's unreadable files: what could not be read is left out.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    agent_session = _find_agent_session(adapter, meta, env)
    exchanges: list[Exchange] = []
    if agent_session is not None:
        try:
            exchanges = _own_exchanges(adapter.read_exchanges(agent_session), meta)
        except Exception as exc:  # noqa: BLE001 - an adapter bug falls back to the recording
            log.warning("could not read the %s transcript of %s: %s", adapter.name, meta.id, exc)
    if not exchanges and from_recording:
        # No agent transcript found or readable: the generic way, from the recording.
        exchanges = _own_exchanges(_from_recording(meta), meta)
    return Conversation(agent_session, tuple(exchanges))


def collect(meta: SessionMeta, env: Mapping[str, str] | None = None, *, from_recording: bool = True) -> SessionMeta:
    """Read ``meta``'s conversation, store it with the session, and return updated metadata.

    Stores ``exchanges.jsonl``, copies the agent's transcript into ``agent/`` (both
    redacted and, when encryption is on, encrypted: see the module doc) and writes
    ``meta.json`` with ``agent_session_id``, ``agent_transcript``, ``exchange_count`` and
    ``usage``. With ``from_recording`` False (at the end of a run, where time counts) a
    session whose agent gave no exchange gets no ``exchanges.jsonl``: they are built from
    the recording later, when something needs them. Never raises for an agent's unreadable
    files: the session keeps what could be read. Raises OSError when the session folder
    itself cannot be written, KeyUnavailable when encryption is on and no key can be had.
    """
    conversation = gather(meta, env, from_recording=from_recording)
    agent_session = conversation.agent_session
    if agent_session is None and not conversation.exchanges and not from_recording:
        config, redactor = None, None  # nothing to store: no config to read
    else:
        config, redactor = _storage(meta)
    if agent_session is not None:
        _copy_transcripts(adapter_of(meta), agent_session, meta.folder, config=config, redactor=redactor)
    if conversation.exchanges or from_recording:
        write_exchanges(meta.folder, list(conversation.exchanges), config=config, redactor=redactor)
    updated = dataclasses.replace(
        meta,
        agent_session_id=agent_session.session_id if agent_session else meta.agent_session_id,
        agent_transcript=str(agent_session.transcript) if agent_session and agent_session.transcript else None,
        exchange_count=len(conversation.exchanges),
        usage=_total_usage(conversation.exchanges),
    )
    write_meta(updated)
    return updated


def is_collected(meta: SessionMeta) -> bool:
    """Return whether ``meta``'s exchanges were stored (``exchanges.jsonl`` exists)."""
    return (meta.folder / EXCHANGES_FILE).is_file()


def read_exchanges(meta: SessionMeta, limit: int | None = None) -> list[Exchange]:
    """Return the stored exchanges of a session (the last ``limit`` when given); [] if none.

    Reads ``exchanges.jsonl`` (one ``Exchange.to_json`` object a line), decrypting it when
    it is encrypted; a malformed line is skipped with a logged warning, an unreadable file
    gives [] with one. Raises KeyUnavailable (its key is in no key store) and DataError
    (a damaged encrypted record), both ``ShellkeepError``.
    """
    from shellkeep.store.crypto import read_private

    path = meta.folder / EXCHANGES_FILE
    try:
        lines = read_private(path).decode("utf-8").splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("could not read %s: %s", path, exc)
        return []
    found: list[Exchange] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            found.append(Exchange.from_json(obj))
        except Exception as exc:  # noqa: BLE001 - a bad line is skipped, not fatal
            log.warning("skipping a malformed exchange in %s: %s", path, exc)
    if limit is None:
        return found
    return found[-limit:] if limit > 0 else []


def write_exchanges(
    folder: Path, exchanges: list[Exchange], *, config: Config | None = None, redactor: Redactor | None = None
) -> None:
    """Store ``exchanges`` as ``exchanges.jsonl`` (one JSON object a line), atomically, 0600.

    Encrypted when ``encryption.encrypt`` is on in ``config`` (None: the user's config).
    redactor: applied to every string value (prompts, answers, tool calls) first; None
    stores them as given. Raises OSError, KeyUnavailable (encryption on, no key).
    """
    from shellkeep.store.crypto import write_private

    text = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in exchanges)
    if redactor is not None:
        from shellkeep.store.scrubber import redact_jsonl_text

        text = redact_jsonl_text(text, redactor)
    write_private(folder / EXCHANGES_FILE, text.encode("utf-8"), config)


def _storage(meta: SessionMeta) -> tuple[Config | None, Redactor | None]:
    """Return the config to store ``meta``'s conversation with, and the redactor to apply.

    The config is the user's (with the project's file); None when it cannot be read, with
    a logged warning (storing then reads what it can, and the built-in rules redact). The
    redactor is None for a session recorded with ``--no-redact`` (``meta.redacted`` false).
    """
    from shellkeep.capture.redaction import redactor_for
    from shellkeep.config import load_config
    from shellkeep.store.paths import resolve_paths

    root = Path(meta.project_root)
    config: Config | None
    try:
        config = load_config(resolve_paths(), root if root.is_dir() else None, os.environ)
    except ShellkeepError as exc:
        log.warning("could not read the config (%s); storing the conversation with the built-in redaction rules", exc)
        config = None
    if not meta.redacted:
        return config, None
    return config, redactor_for(None if config is None else config.redact)


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


def _find_agent_session(adapter: AgentAdapter, meta: SessionMeta, env: Mapping[str, str]) -> AgentSession | None:
    if not adapter.has_native_transcript:
        return None
    launch = Launch(argv=tuple(meta.command), agent_session_id=meta.agent_session_id)
    try:
        started = parse_iso(meta.started_at)
    except ValueError:
        return None
    screen_text = ""
    try:
        from shellkeep.screen import last_screen

        screen_text = last_screen(Path(meta.cast)).to_text()
    except Exception as exc:  # noqa: BLE001 - the screen only helps find an id printed on exit
        log.debug("no last screen for %s: %s", meta.id, exc)
    try:
        return adapter.find_session(launch, Path(meta.cwd), env, started, screen_text)
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the session
        log.warning("could not find the %s session of %s: %s", adapter.name, meta.id, exc)
        return None


def _from_recording(meta: SessionMeta) -> list[Exchange]:
    from shellkeep.agents.generic import exchanges_from_recording
    from shellkeep.asciicast.reader import open_cast

    try:
        cast = open_cast(Path(meta.cast))
        return exchanges_from_recording(
            cast.events(), cols=cast.header.size.cols, rows=cast.header.size.rows, started_at=parse_iso(meta.started_at)
        )
    except Exception as exc:  # noqa: BLE001
        log.warning("could not build exchanges from the recording of %s: %s", meta.id, exc)
        return []


def _copy_transcripts(
    adapter: AgentAdapter, session: AgentSession, folder: Path, *, config: Config | None, redactor: Redactor | None
) -> None:
    """Copy the agent's transcript files into ``folder/agent/`` through ``write_private``.

    With a redactor, a UTF-8 file has every JSON string value of its lines (other lines as
    text) redacted (agent transcript JSONL); a file that is not UTF-8 is copied as it is.
    A file that cannot be read or written is logged and left out.
    """
    from shellkeep.store.crypto import write_private

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
            write_private(target / src.name, _redacted_copy(src.read_bytes(), redactor), config)
        except (OSError, ShellkeepError) as exc:
            log.warning("could not copy %s: %s", src, exc)


def _redacted_copy(raw: bytes, redactor: Redactor | None) -> bytes:
    """Return a transcript file's bytes redacted (see ``_copy_transcripts``)."""
    if redactor is None:
        return raw
    from shellkeep.store.scrubber import redact_jsonl_text

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
