"""Collect a session's conversation from its agent: exchanges, token usage, transcript copy.

Runs once the child has exited (or when an interrupted session is resumed): finds the
agent's own session through its adapter, reads its exchanges (or, for programs without a
transcript, builds them from the recording), stores ``exchanges.jsonl`` and a copy of the
agent's transcript in the session folder, and sums them up in ``meta.json``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from shellkeep.agents.base import AgentSession, Exchange, Launch
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.store.paths import FILE_MODE, ensure_dir
from shellkeep.store.session import AGENT_FOLDER, EXCHANGES_FILE, SessionMeta, parse_iso, write_meta

log = logging.getLogger(__name__)


def adapter_of(meta: SessionMeta) -> object:
    """Return the adapter that recorded ``meta``'s agent (generic when unknown)."""
    from shellkeep.errors import UserInputError

    try:
        return adapter_named(meta.agent)
    except UserInputError:
        return adapter_for(meta.command)


def collect(meta: SessionMeta, env: Mapping[str, str] | None = None) -> SessionMeta:
    """Read ``meta``'s conversation, store it with the session, and return updated metadata.

    Never raises for an agent's unreadable files: the session keeps what could be read.
    Raises OSError only when the session folder itself cannot be written.
    """
    env = dict(os.environ if env is None else env)
    adapter = adapter_of(meta)
    agent_session = _find_agent_session(adapter, meta, env)
    exchanges: list[Exchange] = []
    if agent_session is not None:
        exchanges = adapter.read_exchanges(agent_session)  # type: ignore[attr-defined]
        _copy_transcripts(adapter, agent_session, meta.folder)
    if not exchanges:
        # No agent transcript found or readable: the generic way, from the recording.
        exchanges = _from_recording(meta)
    write_exchanges(meta.folder, exchanges)
    updated = dataclasses.replace(
        meta,
        agent_session_id=agent_session.session_id if agent_session else meta.agent_session_id,
        agent_transcript=str(agent_session.transcript) if agent_session and agent_session.transcript else None,
        exchange_count=len(exchanges),
        usage=_total_usage(exchanges),
    )
    write_meta(updated)
    return updated


def read_exchanges(meta: SessionMeta, limit: int | None = None) -> list[Exchange]:
    """Return the stored exchanges of a session (the last ``limit`` when given); [] if none."""
    path = meta.folder / EXCHANGES_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    found: list[Exchange] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            found.append(Exchange.from_json(json.loads(line)))
        except (ValueError, Exception) as exc:  # noqa: BLE001 - a bad line is skipped, not fatal
            log.warning("skipping a malformed exchange in %s: %s", path, exc)
    return found[-limit:] if limit else found


def write_exchanges(folder: Path, exchanges: list[Exchange]) -> None:
    """Store ``exchanges`` as ``exchanges.jsonl`` (one JSON object a line), atomically, 0600."""
    tmp = folder / f".{EXCHANGES_FILE}.tmp"
    data = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in exchanges)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(data)
    os.replace(tmp, folder / EXCHANGES_FILE)


def _find_agent_session(adapter: object, meta: SessionMeta, env: Mapping[str, str]) -> AgentSession | None:
    name = getattr(adapter, "name", "generic")
    if name == "generic":
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
        return adapter.find_session(launch, Path(meta.cwd), env, started, screen_text)  # type: ignore[attr-defined,no-any-return]
    except Exception as exc:  # noqa: BLE001 - an adapter bug must not lose the session
        log.warning("could not find the %s session of %s: %s", name, meta.id, exc)
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


def _copy_transcripts(adapter: object, session: AgentSession, folder: Path) -> None:
    try:
        files = adapter.transcript_files(session)  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001
        log.warning("could not list the agent's transcript files: %s", exc)
        return
    if not files:
        return
    target = ensure_dir(folder / AGENT_FOLDER)
    for src in files:
        try:
            dest = target / src.name
            shutil.copyfile(src, dest)
            os.chmod(dest, FILE_MODE)
        except OSError as exc:
            log.warning("could not copy %s: %s", src, exc)


def _total_usage(exchanges: list[Exchange]) -> dict[str, int] | None:
    usages = [e.usage for e in exchanges if e.usage is not None]
    if not usages:
        return None
    total = sum(usages[1:], usages[0])
    return {"input": total.input, "output": total.output, "cache_read": total.cache_read, "cache_write": total.cache_write}
