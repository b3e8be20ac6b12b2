"""Read the agent's task list for a session: stored in ``meta.json``, or live from its transcript.

The plan is read through the session's adapter (``CommandAdapter.read_plan``, one parser per
agent's plan tools, ``agents.plan``) where exchanges are collected (``app.conversation``: after
the run, on recovery, on resume) and kept as ``meta.plan``. A running session, or one cut short
and not collected yet, has its plan read from the transcript when asked (``ps``, ``show``, the
web page): one pass over the lines that mention a plan tool.

With ``encryption.encrypt`` on, the items are content like the exchanges: they are kept sealed
in ``plan.json`` beside them, and ``meta.json`` (never encrypted) only says ``{"sealed": true,
"done", "total"}``; readers with the keys use ``stored_plan``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import AgentAdapter, AgentSession, Launch
from shellkeep.agents.plan import Plan
from shellkeep.agents.registry import adapter_for, adapter_named
from shellkeep.capture.redaction import redactor_for
from shellkeep.errors import ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.session import PLAN_FILE, SessionMeta, parse_iso

if TYPE_CHECKING:
    from shellkeep.config import RedactConfig
    from shellkeep.vault.access import Vault

__all__ = ["PLAN_FILE", "agent_session_now", "live_plan", "plan_block", "plan_json", "plan_lines", "redacted", "session_plan", "stored_plan", "with_plan"]

log = get_logger(__name__)


def plan_json(
    adapter: AgentAdapter, session: AgentSession | None, redact: Callable[[str], str] | None = None
) -> dict[str, object] | None:
    """Return the ``meta.json`` ``plan`` of the agent session, or None; never raises (a failure is logged).

    redact: applied to every item's text and label and to the explanation (the user's
    redaction rules, as for the exchanges), or None.
    """
    if session is None or not isinstance(adapter, CommandAdapter):
        return None
    try:
        plan = adapter.read_plan(session)
    except Exception as exc:  # noqa: BLE001 - another program's files: the plan is extra
        log.warning("could not read the %s plan of %s: %s", adapter.name, session.session_id, exc)
        return None
    if plan is None:
        return None
    if redact is not None:
        plan = redacted(plan, redact)
    return plan.to_json()


def redacted(plan: Plan, redact: Callable[[str], str]) -> Plan:
    """Return ``plan`` with ``redact`` applied to its texts."""
    items = tuple(
        dataclasses.replace(item, text=redact(item.text), active=redact(item.active) if item.active else None)
        for item in plan.items
    )
    return dataclasses.replace(plan, items=items, explanation=redact(plan.explanation) if plan.explanation else None)


def with_plan(
    meta: SessionMeta,
    adapter: AgentAdapter,
    session: AgentSession | None,
    redact: Callable[[str], str] | None = None,
    vault: Vault | None = None,
) -> SessionMeta:
    """Return ``meta`` with the plan read from ``session`` (the stored one kept when none is read).

    vault: where the plan is being stored; with ``encrypt`` on the plan is written sealed to
    ``plan.json`` and ``meta.plan`` only counts it (see the module doc). None: the plan goes in
    ``meta.plan`` whole (a dry run that writes nothing keeps it in memory so). Raises OSError
    and KeyUnavailable as ``Vault.write_private``.
    """
    found = plan_json(adapter, session, redact)
    if found is None:
        return meta
    if vault is not None and vault.encrypt:
        vault.write_private(meta.folder / PLAN_FILE, json.dumps(found, ensure_ascii=False).encode("utf-8"))
        found = {"sealed": True, "done": found["done"], "total": found["total"]}
    return dataclasses.replace(meta, plan=found)


def stored_plan(meta: SessionMeta, vault: Vault | None) -> Plan | None:
    """Return the plan kept with ``meta``: ``meta.plan``, or the sealed ``plan.json`` it points to.

    None when there is none or it cannot be read (no key, damaged: logged). vault: the keys.
    """
    if not (isinstance(meta.plan, dict) and meta.plan.get("sealed") is True):
        return Plan.from_json(meta.plan)
    if vault is None:
        return None
    try:
        return Plan.from_json(json.loads(vault.read_private(meta.folder / PLAN_FILE)))
    except (OSError, ValueError, ShellkeepError) as exc:
        log.warning("could not read the sealed plan of %s: %s", meta.id, exc)
        return None


def session_plan(
    meta: SessionMeta,
    redact_config: RedactConfig | None = None,
    env: Mapping[str, str] | None = None,
    vault: Vault | None = None,
) -> Plan | None:
    """Return the session's plan: ``meta.plan`` once collected, else read live from its transcript.

    Live: the agent's transcript named in ``meta.json``, else where the adapter keeps the
    transcript of ``agent_session_id`` for the session's cwd, else the one the adapter finds
    (``env``: the environment the agent's files are looked for with,
    ``app.env_restore.agent_files_env``; default ``os.environ``). A plan read live is redacted
    as it would be stored: with ``redact_config``'s rules (None: the built-in ones), unless
    the session was recorded with ``--no-redact``. vault: the keys of a sealed stored plan.
    None when there is none; never raises.
    """
    if meta.plan is not None:
        return stored_plan(meta, vault)
    try:
        adapter: AgentAdapter = adapter_named(meta.agent)
    except UserInputError:
        adapter = adapter_for(meta.command)
    if not isinstance(adapter, CommandAdapter):
        return None
    session = agent_session_now(meta, adapter, dict(os.environ if env is None else env))
    if session is None:
        return None
    redact = redactor_for(redact_config).redact if meta.redacted else None
    return Plan.from_json(plan_json(adapter, session, redact))


def agent_session_now(meta: SessionMeta, adapter: CommandAdapter, env: Mapping[str, str]) -> AgentSession | None:
    """Return the agent session of ``meta`` as far as known now, without the recording.

    Its noted transcript; else the transcript of its noted id; else what the adapter finds for
    a launch of its command in its cwd since it started (an agent that takes no id up front,
    Codex). None when there is none; never raises.
    """
    transcript = Path(meta.agent_transcript) if meta.agent_transcript else None
    try:
        if meta.agent_session_id and transcript is not None and transcript.is_file():
            return AgentSession(adapter.name, meta.agent_session_id, transcript)
        if meta.agent_session_id:
            layout = adapter.transcript_layout(Path(meta.cwd), env)
            found = layout.path_of(meta.agent_session_id) if layout is not None else None
            return AgentSession(adapter.name, meta.agent_session_id, found or transcript)
        if not adapter.has_native_transcript:
            return None
        launch = Launch(argv=tuple(meta.command), agent_session_id=None)
        return adapter.find_session(launch, Path(meta.cwd), env, parse_iso(meta.started_at), "")
    except Exception as exc:  # noqa: BLE001 - an adapter bug or a bad date leaves the plan out
        log.debug("no agent session for the plan of %s: %s", meta.id, exc)
        return None


def live_plan(
    meta: SessionMeta,
    redact_config: RedactConfig | None = None,
    vault: Vault | None = None,
    env: Mapping[str, str] | None = None,
) -> SessionMeta:
    """Return ``meta`` with its whole plan, for showing (never for writing back): read live from
    the transcript when it is not stored yet, unsealed when it is sealed (``session_plan``).
    env: the environment the agent's files are looked for with (``app.env_restore.agent_files_env``)."""
    if meta.plan is not None and not meta.plan.get("sealed"):
        return meta
    plan = session_plan(meta, redact_config, env, vault)
    return meta if plan is None else dataclasses.replace(meta, plan=plan.to_json())


def plan_block(meta: SessionMeta, vault: Vault | None) -> list[str]:
    """Return the lines of ``meta``'s stored plan (``stored_plan``) for the re-injected block:
    ``Plan (3 of 7 done; ...):``, then the items; [] when none."""
    plan = stored_plan(meta, vault)
    if plan is None:
        return []
    return [f"Plan ({plan.summary()}):", *plan.lines()]


def plan_lines(plan: Plan) -> list[str]:
    """Return the plan as text lines: the summary, then one line per item (``[x] ...``)."""
    return [plan.summary(), *plan.lines()]
