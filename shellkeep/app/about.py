"""Say what a session was about: ``meta.about``, the line lists lead with (``ls``, ``ps``, the web list).

Set where the exchanges are collected (``app.conversation``), and for a session whose
recorder was killed, when it is first listed as interrupted (``recovered_about``, called by
``app.context.Context.recover``, once a session): the agent's own title for the conversation
where it keeps one (``CommandAdapter.read_title``, ``agents.titles``), else the first prompt, on one line cut to ``ABOUT_CHARS``, redacted as the exchanges are. With
``encryption.encrypt`` on it is not kept in ``meta.json`` (never sealed, and the text is
content) but sealed beside it (``vault.about``), and read through the vault where a title is shown. ``store.session.title_of`` picks what a list shows.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pathlib import Path

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentAdapter, AgentSession, Exchange
from shellkeep.agents.records import one_line, shorten
from shellkeep.agents.generic import exchanges_from_recording
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.app.plan import agent_session_now
from shellkeep.capture.redaction import redactor_for
from shellkeep.logs import get_logger
from shellkeep.errors import UserInputError
from shellkeep.vault.about import store_sealed_about, with_sealed_about
from shellkeep.store.session import ABOUT_CHARS, ABOUT_FILE, SessionMeta, Status, parse_iso, title_of, write_meta

if TYPE_CHECKING:
    from shellkeep.config import RedactConfig
    from shellkeep.vault.access import Vault

__all__ = ["about_text", "current_about", "live_title", "recovered_about", "with_about"]

log = get_logger(__name__)


def about_text(
    adapter: AgentAdapter,
    session: AgentSession | None,
    exchanges: Sequence[Exchange],
    redact: Callable[[str], str] | None = None,
) -> str | None:
    """Return the agent's title of ``session``, else the first prompt of ``exchanges``, on one
    line, redacted with ``redact`` (before it is cut: a secret cut short would no longer match),
    then cut to ``ABOUT_CHARS``; None when there is neither. Never raises (a failure is logged)."""
    title: str | None = None
    if session is not None and isinstance(adapter, CommandAdapter):
        try:
            title = adapter.read_title(session)
        except Exception as exc:  # noqa: BLE001 - another program's files: the title is extra
            log.warning("could not read the %s title of %s: %s", adapter.name, session.session_id, exc)
    text = one_line(title or next((e.prompt for e in exchanges if e.prompt.strip()), ""))
    if not text:
        return None
    return shorten(one_line(redact(text)) if redact is not None else text, ABOUT_CHARS)


def with_about(
    meta: SessionMeta,
    adapter: AgentAdapter,
    session: AgentSession | None,
    exchanges: Sequence[Exchange],
    redact: Callable[[str], str] | None = None,
    vault: Vault | None = None,
) -> SessionMeta:
    """Return ``meta`` with ``about`` from ``about_text`` (the stored one kept when none is found).

    redact: the user's redaction rules, as for the exchanges (None: kept as read). vault: where
    the session is stored; with ``encrypt`` on ``about`` stays None and the text is stored
    sealed instead (``vault.about``, see the module doc).
    """
    text = about_text(adapter, session, exchanges, redact)
    if vault is not None and vault.encrypt:
        if text is not None:
            store_sealed_about(meta, text, vault)
        return meta if meta.about is None else dataclasses.replace(meta, about=None)
    return meta if text is None else dataclasses.replace(meta, about=text)


LIVE_READ_MAX_BYTES = 4 * 1024 * 1024
"""Largest transcript a session's first prompt is read from before its exchanges are collected
(its own title is read from any size: only the lines naming one are parsed)."""

RECORDING_READ_MAX_BYTES = 512 * 1024
"""Largest recording the first prompt of a program without a transcript of its own (a shell,
a REPL: the generic adapter) is read from before its exchanges are collected: a terminal
emulator runs over all of it (about 0.4 MB/s)."""


def current_about(
    meta: SessionMeta, vault: Vault | None, redact_config: RedactConfig | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """Return what ``meta`` is about as its stored exchanges would tell, read now, before they
    are collected: the agent's own title, else the first prompt of its transcript (up to
    ``LIVE_READ_MAX_BYTES``); for a program without a transcript, the first prompt built from
    the recording (up to ``RECORDING_READ_MAX_BYTES``; vault: its keys). Redacted as it would
    be stored. None when none is found; never raises."""
    try:
        try:
            adapter: AgentAdapter = adapter_named(meta.agent)
        except UserInputError:
            adapter = adapter_for(meta.command)
        redact = redactor_for(redact_config).redact if meta.redacted else None
        env = dict(os.environ if env is None else env)
        session = agent_session_now(meta, adapter, env) if isinstance(adapter, CommandAdapter) else None
        if session is not None and session.transcript is not None and session.transcript.is_file():
            small = session.transcript.stat().st_size <= LIVE_READ_MAX_BYTES
            return about_text(adapter, session, adapter.read_exchanges(session) if small else [], redact)
        cast = Path(meta.cast)
        if vault is None or adapter.has_native_transcript or cast.stat().st_size > RECORDING_READ_MAX_BYTES:
            return None
        recording = vault.open_recording(cast)
        exchanges = exchanges_from_recording(
            recording.events(),
            cols=recording.header.size.cols,
            rows=recording.header.size.rows,
            started_at=parse_iso(meta.started_at),
            chrome=adapter.screen_chrome,
        )
        return about_text(adapter, None, exchanges, redact)
    except Exception as exc:  # noqa: BLE001 - the title is extra: the command stands in
        log.debug("no title read now for %s: %s", meta.id, exc)
        return None


def recovered_about(
    meta: SessionMeta, vault: Vault, redact_config: RedactConfig | None = None, env: Mapping[str, str] | None = None
) -> SessionMeta:
    """Return an interrupted session (just repaired, ``vault.recovery``) with ``about`` read now
    (``current_about``) and stored, when it has none yet: its recorder was killed before its
    exchanges were collected, and lists show it from now on. With encryption on it is stored
    sealed instead (``vault.about``, see the module doc). Never raises (a failed write is logged)."""
    if meta.title or meta.about or (vault.encrypt and (meta.folder / ABOUT_FILE).is_file()):
        return meta
    text = current_about(meta, vault, redact_config, env)
    if text is None:
        return meta
    if vault.encrypt:
        store_sealed_about(meta, text, vault)
        return meta
    updated = dataclasses.replace(meta, about=text)
    try:
        write_meta(updated)
    except OSError as exc:
        log.warning("could not store the title of %s: %s", meta.id, exc)
    return updated


def live_title(
    meta: SessionMeta,
    redact_config: RedactConfig | None = None,
    env: Mapping[str, str] | None = None,
    vault: Vault | None = None,
) -> str:
    """Return what a session is about for ``ps``: ``title_of`` once known, else, while it runs,
    ``current_about`` (the rule ``ls`` shows once its exchanges are collected), else its
    command. env: where the agent's files are looked for (``app.env_restore.agent_files_env``);
    vault: the keys to read its recording with (None: not read). Never raises."""
    meta = with_sealed_about(meta, vault)  # an encrypted session's title is sealed
    if meta.title or meta.about or meta.status != Status.RUNNING.value:
        return title_of(meta)
    text = current_about(meta, vault, redact_config, env)
    return title_of(meta) if text is None else text
