"""List the live sessions of every project and judge what each is doing (``shellkeep ps``).

A session is live when its ``meta.json`` says running, it was recorded on this host, and its
recorder still runs: the pid is alive and started when ``meta.json`` says
(``store.session.is_interrupted``; a session found dead on the way is recovered, as by every
listing). What it is doing comes from its ``live.json`` (``store.live``):

- ``working``: it wrote output in the last ``WORKING_WINDOW_S`` seconds;
- ``waiting``: it is quiet, and the agent's adapter recognised its own prompt or approval
  dialog in what it drew last (``hint``), or its pty reads key by key (not canonical: agent
  TUIs and editors read so, and an agent at work animates), or reads a line with echo off (a
  password prompt), or reads a line with a prompt as the last line it wrote
  (``capture.activity.looks_like_prompt``): ``store.live.waits_for_user``;
- ``idle``: quiet otherwise: a command running silently, ``cat`` reading lines, a shell at
  its own prompt (its line editor reads key by key, but nothing asks anything).
"""

from __future__ import annotations

import enum
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from shellkeep.app.about import live_title
from shellkeep.app.context import Context
from shellkeep.app.env_restore import agent_files_env
from shellkeep.app.plan import session_plan
from shellkeep.store.live import WORKING_WINDOW_S, LiveStatus, read_live_status, waits_for_user
from shellkeep.store.session import SessionMeta, Status, host_name, iso, parse_iso

if TYPE_CHECKING:
    from shellkeep.config import RedactConfig
    from shellkeep.vault.access import Vault

__all__ = ["WORKING_WINDOW_S", "LiveSession", "LiveState", "judge_state", "live_sessions"]

class LiveState(str, enum.Enum):
    """What a live session is doing."""

    WORKING = "working"
    WAITING = "waiting"
    IDLE = "idle"


@dataclass(frozen=True, slots=True)
class LiveSession:
    """One live session, as ``shellkeep ps`` shows it (field names are the ``--json`` contract).

    pid / child_pid: shellkeep's process and the program's. duration: float seconds since it
    started. size_bytes: the recording's size on disk now. output_at: ISO 8601 UTC time of
    its last output (None: not known yet). canonical / echo / prompt / hint: see ``store.live``.
    """

    id: str
    name: str | None
    agent: str
    project: str
    project_root: str
    cwd: str
    pid: int
    child_pid: int | None
    state: str
    started_at: str
    duration: float
    size_bytes: int
    output_bytes: int
    output_at: str | None
    canonical: bool | None
    echo: bool | None
    prompt: bool
    hint: str | None
    title: str = ""
    """What the session is about (``app.about.live_title``): its title, the agent's own, its
    first prompt, else its command."""
    plan: str | None = None
    """Where the agent's task list stands, ``1 of 3 done; in progress: ...`` (``app.plan``), or None."""


def judge_state(status: LiveStatus | None, now: float, recording_mtime: float | None = None) -> LiveState:
    """Return what a live session is doing (the rule in this module's docstring).

    now: epoch seconds. Without a live status (a recorder that has not reported yet, or an
    older one) the recording's mtime (epoch seconds) stands in for the last output, and a
    quiet session is idle.
    """
    last_output = status.output_at if status is not None else None
    if last_output is None:
        last_output = recording_mtime
    if last_output is not None and now - last_output < WORKING_WINDOW_S:
        return LiveState.WORKING
    if status is not None and waits_for_user(status):
        return LiveState.WAITING
    return LiveState.IDLE


def live_sessions(ctx: Context, *, now: float | None = None) -> list[LiveSession]:
    """Return the live sessions of every project on this host, newest first.

    now: epoch seconds (default: the clock). Never raises for one unreadable session folder
    (it is skipped, as ``ls`` skips it).
    """
    now = time.time() if now is None else now
    host = host_name()
    found = []
    for meta in ctx.sessions(all_projects=True):
        if meta.status != Status.RUNNING.value or meta.host != host:
            continue
        found.append(_live_session(meta, now, ctx.config.redact, agent_files_env(ctx, meta), ctx.vault))
    return found


def _live_session(
    meta: SessionMeta,
    now: float,
    redact_config: RedactConfig | None = None,
    env: Mapping[str, str] | None = None,
    vault: Vault | None = None,
) -> LiveSession:
    status = read_live_status(meta.folder)
    try:
        st = os.stat(meta.cast)
        size, mtime = st.st_size, st.st_mtime
    except OSError:
        size, mtime = 0, None
    try:
        duration = max(now - parse_iso(meta.started_at).timestamp(), 0.0)
    except ValueError:
        duration = 0.0
    output_at = status.output_at if status is not None else None
    return LiveSession(
        id=meta.id,
        name=meta.name,
        agent=meta.agent,
        project=meta.project,
        project_root=meta.project_root,
        cwd=meta.cwd,
        pid=meta.pid,
        child_pid=meta.child_pid,
        state=judge_state(status, now, mtime).value,
        started_at=meta.started_at,
        duration=round(duration, 3),
        size_bytes=size,
        output_bytes=status.output_bytes if status is not None else meta.output_bytes,
        output_at=None if output_at is None else iso(datetime.fromtimestamp(output_at, timezone.utc)),
        canonical=status.canonical if status is not None else None,
        echo=status.echo if status is not None else None,
        prompt=status.prompt if status is not None else False,
        hint=status.hint if status is not None else None,
        title=live_title(meta, redact_config, env, vault),
        plan=_plan_summary(meta, redact_config, env),
    )


def _plan_summary(meta: SessionMeta, redact_config: RedactConfig | None, env: Mapping[str, str] | None) -> str | None:
    """Return the live plan's summary, read from the agent's transcript (``app.plan.session_plan``),
    looked for with ``env`` (``app.env_restore.agent_files_env``: the session's, not this terminal's)."""
    plan = session_plan(meta, redact_config, env)
    return None if plan is None else plan.summary()
