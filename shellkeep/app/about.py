"""Say what a session was about: ``meta.about``, the line lists lead with (``ls``, ``ps``, the web list).

Set where the exchanges are collected (``app.conversation``): the agent's own title for the
conversation where it keeps one (``CommandAdapter.read_title``, ``agents.titles``), else the
first prompt, on one line cut to ``ABOUT_CHARS``, redacted as the exchanges are. With
``encryption.encrypt`` on it is not kept (``meta.json`` is never sealed, and the text is
content): lists show the command instead. ``store.session.title_of`` picks what a list shows.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentAdapter, AgentSession, Exchange
from shellkeep.agents.records import one_line, shorten
from shellkeep.agents.registry import adapter_named
from shellkeep.app.plan import agent_session_now
from shellkeep.capture.redaction import redactor_for
from shellkeep.logs import get_logger
from shellkeep.store.session import ABOUT_CHARS, SessionMeta, Status, title_of

if TYPE_CHECKING:
    from shellkeep.config import RedactConfig
    from shellkeep.vault.access import Vault

__all__ = ["about_text", "live_title", "with_about"]

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
    the session is stored; with ``encrypt`` on ``about`` stays None (see the module doc).
    """
    if vault is not None and vault.encrypt:
        return meta if meta.about is None else dataclasses.replace(meta, about=None)
    text = about_text(adapter, session, exchanges, redact)
    return meta if text is None else dataclasses.replace(meta, about=text)


LIVE_READ_MAX_BYTES = 4 * 1024 * 1024
"""Largest transcript a running session's first prompt is read from for ``ps`` (its own title
is read from any size: only the lines naming one are parsed)."""


def live_title(meta: SessionMeta, redact_config: RedactConfig | None = None, env: Mapping[str, str] | None = None) -> str:
    """Return what a session is about for ``ps``: ``title_of`` once known, else, while it runs,
    read live from the agent's transcript (its own title, else the first prompt), redacted as it
    would be stored; else its command. env: where the agent's files are looked for
    (``app.env_restore.agent_files_env``). Never raises."""
    if meta.title or meta.about or meta.status != Status.RUNNING.value:
        return title_of(meta)
    try:
        adapter = adapter_named(meta.agent)
        session = agent_session_now(meta, adapter, dict(os.environ if env is None else env)) if isinstance(adapter, CommandAdapter) else None
        if session is None or session.transcript is None:
            return title_of(meta)
        small = session.transcript.is_file() and session.transcript.stat().st_size <= LIVE_READ_MAX_BYTES
        redact = redactor_for(redact_config).redact if meta.redacted else None
        text = about_text(adapter, session, adapter.read_exchanges(session) if small else [], redact)
    except Exception as exc:  # noqa: BLE001 - the title is extra: the command stands in
        log.debug("no live title for %s: %s", meta.id, exc)
        return title_of(meta)
    return title_of(meta) if text is None else text
