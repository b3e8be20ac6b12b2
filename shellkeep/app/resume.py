"""Put a session back: pick it, plan how to restart its agent, and run it as a new session.

Native resume where the agent has it (``claude --resume <id>``, ``codex resume <id>``, ...),
otherwise re-injection: the same command is started and the last exchanges are typed into
it once its output has settled. ``--agent NAME`` hands the conversation to another program:
into its own history where shellkeep can write it (``app.handoff``), else by re-injection. The resumed run is a new session whose ``parent`` is the one it resumes;
``session_chain`` follows those links.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.adapter import CommandAdapter
from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentAdapter, AgentSession, Exchange
from shellkeep.agents.launchers import SHELLS
from shellkeep.agents.registry import adapter_for, adapter_named, adapter_names
from shellkeep.app.context import Context
from shellkeep.app.env_restore import EnvRestore
from shellkeep.app.conversation import adapter_of, collect_for_resume, gather, redacted_exchanges
from shellkeep.app.moves import project_sessions, relocate_transcript, resume_dir
from shellkeep.app.handoff import HandoffOutcome, hand_off
from shellkeep.app.native import check_transcript, native_resume_problem, no_transcript_found, remove_resume_leftovers
from shellkeep.app.plan import plan_block
from shellkeep.app.after_run import start_housekeeping
from shellkeep.app.record import RunOutcome, run_session
from shellkeep.app.run_request import RecordSettings, RunRequest, settings_from_config
from shellkeep.app.remote import remote_of
from shellkeep.app.transplant import checkout_for, is_from_another_machine, transcript_target, transplant_transcript
from shellkeep.app.unanswered import UnansweredPrompt, find_unanswered, resend_block
from shellkeep.archive.listing import resumed_as_of
from shellkeep.errors import DataError, SessionNotFound, ShellkeepError, UserInputError
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import SessionMeta, Status, exact_meta, iter_session_folders, read_meta, write_meta
from shellkeep.terminal.replay import last_screen
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import is_collected, read_exchanges
from shellkeep.vault.recording import open_tail_source

__all__ = [
    "CUT_SHORT",
    "ResumeMode",
    "ResumePlan",
    "check_agent_on_path",
    "choose_default",
    "choose_session",
    "conversation_tail",
    "inject_text",
    "inject_wait",
    "plan_resume",
    "resumed_as",
    "run_resume",
    "session_chain",
    "with_environment",
    "with_resend",
]

log = get_logger(__name__)

CUT_SHORT = (Status.INTERRUPTED.value, Status.HANGUP.value, Status.KILLED.value)
"""Statuses of sessions that ended without the user ending them."""

DEFAULT_EXCHANGES = 5
DEFAULT_SETTLE_S = 0.8

# Programs that run what they are typed: re-injecting a conversation into them would run it.
_EDITORS = frozenset(
    {"vi", "vim", "nvim", "view", "gvim", "emacs", "nano", "pico", "micro", "hx", "helix", "kak", "joe", "ed",
     "less", "more", "most", "man", "top", "htop", "btop", "tmux", "screen"}
)
_INTERPRETER = re.compile(r"(python|pypy|node|deno|bun|ruby|irb|perl|php|lua|ghci|R|julia|psql|mysql|sqlite3)[0-9.]*")

Warn = Callable[[str], None]


class ResumeMode(str, enum.Enum):
    """How a session is put back."""

    NATIVE = "native"
    """The agent's own resume (``claude --resume <id>``)."""
    INJECT = "inject"
    """A fresh start, the last exchanges typed into it once its output settles."""
    RESTART = "restart"
    """A fresh start, nothing typed (no exchanges, or a shell)."""


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """How a session will be put back.

    session: the session resumed (with its conversation collected when it was not).
    mode: native, inject or restart. argv / cwd: what runs, and where (the session's
    original directory). agent: the adapter (or program) name of what runs.
    exchanges: the exchanges typed in (``inject``), oldest first, else the last ones known.
    inject_text: the block typed into the program (``inject`` mode), else None.
    settle_s: float seconds of quiet output before the block is typed.
    """

    session: SessionMeta
    mode: ResumeMode
    argv: tuple[str, ...]
    cwd: Path
    agent: str
    exchanges: tuple[Exchange, ...]
    inject_text: str | None
    settle_s: float = DEFAULT_SETTLE_S
    note: str | None = None
    """One line for the user about a choice made for them (a transcript restored, or why
    the native resume is skipped); None when there is nothing to say."""
    env_updates: tuple[tuple[str, str], ...] = ()
    """Environment variables set for the resumed program (``native`` plans: the adapter's
    ``resume_env``, e.g. the OpenCode database the session was found in)."""
    unanswered: UnansweredPrompt | None = None
    """The session's last prompt that got no answer (``app.unanswered``); it is not among
    ``exchanges``, and is typed only when ``with_resend`` made the plan send it."""
    resend_text: str | None = None
    """The unanswered prompt, typed once the agent is ready (native and restart plans that
    send it again; an ``inject`` plan carries it at the end of ``inject_text`` instead)."""
    fallback: ResumePlan | None = None
    """What runs when this native resume fails, when it is not the session's own agent
    re-injected (a hand-off: the other agent re-injected, ``app.handoff``)."""


def choose_session(ctx: Context, ref: str | None, *, last: bool = False) -> SessionMeta:
    """Return the session to resume.

    With ``ref`` (an id, unique prefix or name) or ``last``, that session. Otherwise the
    newest session of the project (counting those recorded at a former path of its git
    repository, ``app.moves.project_sessions``) that was cut short (interrupted, hangup,
    killed) and not resumed yet, else the newest session that is not running.
    Raises SessionNotFound or AmbiguousSession.
    """
    return choose_default(ctx, ref, last=last)[0]


def choose_default(ctx: Context, ref: str | None, *, last: bool = False) -> tuple[SessionMeta, bool]:
    """Return the session to resume (as ``choose_session``) and whether it was a fallback.

    The flag is True when no SESSION or ``last`` was given and no session of the project
    was waiting to be resumed, so the newest ended one was taken: resuming it starts its
    command again, which the user should confirm. Raises as ``choose_session``.
    """
    project_root = ctx.project_root
    if ref or last:
        return ctx.resolve(ref, last=last), False
    sessions = project_sessions(ctx)  # with those recorded before the project was moved
    if not sessions:
        raise SessionNotFound(
            f"no sessions recorded in project {project_key(project_root)} yet; run 'shellkeep' to record one"
        )
    resumed = {m.parent for m in sessions if m.parent and not m.resume_failed}
    ended = [m for m in sessions if m.status != Status.RUNNING.value and not m.resume_failed]
    for meta in ended:
        if meta.status in CUT_SHORT and meta.id not in resumed:
            return meta, False
    if not ended:
        raise SessionNotFound(
            f"every session of project {project_key(project_root)} is still running; "
            "give a SESSION to resume or run 'shellkeep ls'"
        )
    return ended[0], True


def plan_resume(
    ctx: Context,
    meta: SessionMeta,
    *,
    exchanges: int | None = None,
    agent: str | None = None,
    env: Mapping[str, str] | None = None,
    dry_run: bool = False,
    warn: Warn | None = None,
    force_inject: bool = False,
    cwd: Path | None = None,
) -> ResumePlan:
    """Decide how to put ``meta`` back.

    A session whose conversation was never collected (its recorder was killed) is collected
    now and stored, unless ``dry_run``: then nothing at all is written.

    Args:
        ctx: the command's context (data locations, ``[resume]`` settings, keys).
        meta: the session to resume.
        exchanges: how many of the last exchanges to re-inject; None = config
            ``resume.exchanges``. Earlier sessions of the chain fill in when the session
            itself has fewer.
        agent: hand the conversation to this agent instead: an adapter name (its program
            is started) or a command line (split like a shell would).
        env: the environment the agent runs in (default ``os.environ``).
        dry_run: write nothing (a missing transcript is not restored either).
        warn: unused; kept for callers (the context reported a broken config already).
        force_inject: re-inject even where the agent has a native resume (``--inject``).
        cwd: resume in this directory (``--cwd``) instead of the session's own; without it,
            a session whose directory is gone is resumed in the current project when that
            is the same git repository (``app.moves.resume_dir``). Where the agent keeps its
            transcripts by directory, the transcript is copied to where it looks for it.
            A session pulled from another machine runs in this machine's checkout of its
            repository (``app.transplant.checkout_for``), its transcript written there with
            this machine's paths (``transplant_transcript``), else it is re-injected.

    Raises:
        UserInputError: the session still runs, its directory is gone (and the current
            project is not its repository), ``cwd`` is not a directory, ``agent`` is empty,
            or a pulled session's repository has no checkout here (and no ``cwd``).
    """
    env = dict(os.environ if env is None else env)
    if meta.status == Status.RUNNING.value:
        raise UserInputError(
            f"session {meta.id} is still running (pid {meta.pid}); end it first, or resume another"
        )
    exact = exact_meta(meta)  # argv and directory with the bytes that are not UTF-8, as first run
    pulled = is_from_another_machine(meta)  # its paths are the other machine's
    cwd, moved_note = checkout_for(ctx, exact, cwd) if pulled else resume_dir(ctx, exact, cwd)
    default_n, settle_s = ctx.config.resume.exchanges, ctx.config.resume.inject_settle_ms / 1000
    n = default_n if exchanges is None else exchanges

    own: list[Exchange] | None = None
    if not pulled and not is_collected(meta) and meta.detail != "metadata":  # record.detail: it keeps no exchanges
        try:
            meta, own, pending = collect_for_resume(meta, ctx.vault, ctx.config.redact, env, limit=n, dry_run=dry_run)
        except OSError as exc:
            log.warning("could not store the conversation of %s: %s", meta.id, exc)
            own, pending = list(gather(meta, ctx.vault, env, limit=max(n, 1)).exchanges)[-n:] if n else [], False
            if meta.redacted:  # never typed, shown or sent again in clear
                own = redacted_exchanges(own, ctx.config.redact)
        if pending:  # a big transcript: read and copied whole in the background
            start_housekeeping(ctx.paths, meta.folder, compress=ctx.config.record.compress, auto_gc=False)
    if own is None:
        own = read_exchanges(meta, ctx.vault)
    recent = tuple(conversation_tail(ctx, meta, n, own=own))
    unanswered = find_unanswered(meta, ctx.vault, own, lambda: _later_sessions(ctx.paths, meta))
    if unanswered is not None and recent and not recent[-1].answer.strip():
        recent = recent[:-1]  # typed only if it is sent again (with_resend), never twice

    if agent is not None:
        argv, name = _agent_argv(agent)
        mode = ResumeMode.INJECT if recent else ResumeMode.RESTART
        plan = ResumePlan(meta, mode, argv, cwd, name, recent, inject_text(meta, recent, ctx.vault), settle_s, moved_note)
        if not force_inject:  # into the other agent's own history where it keeps one (app.handoff)
            whole = recent if exchanges is not None else _handoff_exchanges(ctx, meta, recent, unanswered)
            plan = _handed_off(plan, hand_off(meta, whole, argv, cwd, env, dry_run=dry_run))
        else:
            plan = _handed_off(plan, HandoffOutcome(refusal="--inject"))
        return dataclasses.replace(plan, unanswered=unanswered)

    adapter = adapter_of(meta)
    native: list[str] | None = None
    note: str | None = moved_note
    restored: Path | None = None  # a dry run: the transcript the real resume puts back first
    if meta.agent_session_id and not _PLAIN_ID.fullmatch(meta.agent_session_id):  # it goes into an argv and paths
        note = _joined(note, f"agent session id {meta.agent_session_id!r} refused (not a plain id); re-injecting instead")
        meta, force_inject = dataclasses.replace(meta, agent_session_id=None), True
    if pulled and meta.agent_session_id and not force_inject:
        # The transcript shellkeep fetched goes where the agent looks on this machine, with its paths.
        if dry_run:
            target = transcript_target(meta, cwd, env)
            known = target is not None and target.exists()  # else the real run writes it there
            meta = dataclasses.replace(meta, agent_transcript=str(target) if known else None)
            force_inject = target is None
        else:
            placed = transplant_transcript(ctx, meta, cwd, env)
            meta, note = placed.meta, _joined(note, placed.note)
            force_inject = not placed.usable
    elif meta.agent_session_id and not force_inject:
        meta, note, force_inject, restored = _checked_transcript(ctx, meta, adapter, exact.cwd, cwd, env, note, dry_run=dry_run)
    if meta.agent_session_id and not force_inject and not pulled:  # the agent's own state may point elsewhere
        transcript = Path(meta.agent_transcript) if meta.agent_transcript else None
        problem = native_resume_problem(adapter, AgentSession(agent=adapter.name, session_id=meta.agent_session_id, transcript=transcript), env)
        if problem and not (restored is not None and str(restored) in problem):  # a dry run: the file resume writes first
            note, force_inject = _joined(note, f"{problem}; re-injecting instead"), True
    if meta.agent_session_id and not force_inject:
        transcript = Path(meta.agent_transcript) if meta.agent_transcript else None
        session = AgentSession(agent=adapter.name, session_id=meta.agent_session_id, transcript=transcript)
        try:
            native = adapter.resume_argv(exact.command, session)
            resume_env = getattr(adapter, "resume_env", None)
            env_updates = tuple(sorted(resume_env(session).items())) if native and resume_env else ()
        except Exception as exc:  # noqa: BLE001 - an adapter bug falls back to re-injection
            log.warning("could not build the native resume of %s: %s", meta.id, exc)
            native = None
    if native and str(cwd) != exact.cwd and isinstance(adapter, CommandAdapter):
        native = adapter.resume_argv_in(native, cwd)  # the agent must not ask for the old directory
    if native:
        return ResumePlan(
            meta, ResumeMode.NATIVE, tuple(native), cwd, meta.agent, recent, None, settle_s, note, env_updates,
            unanswered=unanswered,
        )
    return dataclasses.replace(_fresh_plan(meta, adapter, cwd, recent, settle_s, note, ctx.vault), unanswered=unanswered)


def _checked_transcript(
    ctx: Context, meta: SessionMeta, adapter: AgentAdapter, first_cwd: str, cwd: Path, env: Mapping[str, str], note: str | None, *, dry_run: bool
) -> tuple[SessionMeta, str | None, bool, Path | None]:
    """Return (meta, note, force_inject, restored) once this machine's transcript of ``meta`` is
    where the agent looks for it and checked (``check_transcript``): force_inject when it is not
    usable; restored, in a dry run, the transcript the real resume would put back first."""
    assert meta.agent_session_id is not None
    if str(cwd) != first_cwd and not dry_run:  # the agent may look for its transcript by directory
        meta, copied = relocate_transcript(meta, cwd, env)
        note = _joined(note, copied)
    # Before the adapter judges the native resume possible: its transcript may need restoring,
    # and what an earlier resume left must not make the agent delete it once more. A dry run
    # asks the same question and writes nothing, so it plans what the real resume runs.
    check = check_transcript(meta, ctx.vault, dry_run=dry_run)
    restored = Path(meta.agent_transcript) if check.restores and meta.agent_transcript else None
    if check.restores:  # the adapter must not judge by the file a real resume would write first
        meta = dataclasses.replace(meta, agent_transcript=None)
    if check.usable and meta.agent_transcript and not dry_run:
        remove_resume_leftovers(
            adapter, AgentSession(agent=adapter.name, session_id=meta.agent_session_id, transcript=Path(meta.agent_transcript))
        )
    if check.usable and not meta.agent_transcript and not check.restores and meta.agent_session_id:
        check = no_transcript_found(adapter, meta.agent_session_id, cwd, env) or check
    note = _joined(note, check.note if check.usable else f"{check.note}; re-injecting instead")
    return meta, note, not check.usable, restored


def with_environment(plan: ResumePlan, restore: EnvRestore) -> ResumePlan:
    """Return ``plan`` with ``restore``'s updates (``app.env_restore``) in its ``env_updates``
    (the plan's own, the adapter's ``resume_env``, win)."""
    if not restore.updates:
        return plan
    merged = dict(restore.updates)
    merged.update(dict(plan.env_updates))
    return dataclasses.replace(plan, env_updates=tuple(sorted(merged.items())))


def with_resend(plan: ResumePlan) -> ResumePlan:
    """Return ``plan`` made to send its unanswered prompt again once the agent is ready.

    ``inject``: the prompt is the last item of the block typed in. ``native`` and ``restart``:
    it is typed alone, once the agent's output settled (as a block is), then Enter. Unchanged
    when there is no prompt to send, it is refused (``UnansweredPrompt.refusal``), or the
    program takes no typed context (a shell, an editor: it would run the text).
    """
    unanswered = plan.unanswered
    if unanswered is None or unanswered.refusal is not None or not _takes_context(plan.argv):
        return plan
    if plan.mode is ResumeMode.INJECT:
        return dataclasses.replace(plan, inject_text=resend_block(plan.inject_text, unanswered.prompt))
    return dataclasses.replace(plan, resend_text=unanswered.prompt.strip())


def _fresh_plan(
    meta: SessionMeta,
    adapter: AgentAdapter,
    cwd: Path,
    recent: tuple[Exchange, ...],
    settle_s: float,
    note: str | None,
    vault: Vault | None = None,
) -> ResumePlan:
    """Return the plan that starts the agent anew: with the exchanges typed in where it takes them
    (and the agent's task list, unsealed with ``vault``'s keys when sealed)."""
    fresh = _fresh_argv(adapter, exact_meta(meta).command)
    if recent and _takes_context(fresh):
        return ResumePlan(meta, ResumeMode.INJECT, fresh, cwd, meta.agent, recent, inject_text(meta, recent, vault), settle_s, note)
    return ResumePlan(meta, ResumeMode.RESTART, fresh, cwd, meta.agent, recent, None, settle_s, note)


def run_resume(
    ctx: Context,
    plan: ResumePlan,
    *,
    warn: Warn,
    env: Mapping[str, str] | None = None,
    native_only: bool = False,
    settings: RecordSettings | None = None,
    restart: int = 0,
) -> RunOutcome:
    """Run ``plan`` as a new recorded session whose ``parent`` is the resumed one.

    Blocks until the program exits; ``inject`` plans type their block once its output has
    settled. When a native resume fails (``native_failure``), the failed run is marked
    (``resume_failed``) and ``warn`` says so in one line; unless ``native_only``, the agent is
    then started anew in the same call with the last exchanges re-injected.
    ``settings`` records the new run (default: the context's config); ``restart`` marks it
    as a supervised restart (``app.supervise``).
    Raises AgentNotFound (127) when the program is not installed.
    """
    settings = settings_from_config(ctx.config) if settings is None else settings
    outcome = _run_plan(ctx, plan, warn=warn, env=env, settings=settings, restart=restart)
    if plan.mode is not ResumeMode.NATIVE or outcome.session is None:
        return outcome
    reason = native_failure(ctx, plan, outcome.session)
    if reason is None:
        return outcome
    write_meta(dataclasses.replace(outcome.session, resume_failed=reason))
    if native_only:  # marked all the same: a bare resume must not pick the failed run
        warn(f"the agent's own resume failed ({reason}); not re-injecting (--native-only)")
        return outcome
    fallback = plan.fallback or _fresh_plan(plan.session, adapter_of(plan.session), plan.cwd, plan.exchanges, plan.settle_s, None, ctx.vault)
    fallback = dataclasses.replace(fallback, env_updates=plan.env_updates)  # the recorded environment too
    if plan.resend_text:  # the prompt to send again goes with the re-injected block
        fallback = with_resend(dataclasses.replace(fallback, unanswered=plan.unanswered))
    how = (
        f"re-injecting the last {len(plan.exchanges)} exchange{'s' if len(plan.exchanges) != 1 else ''}"
        if fallback.mode is ResumeMode.INJECT
        else "starting it anew (no exchanges to re-inject)"
    )
    warn(f"the agent's own resume failed ({reason}); {how}")
    return _run_plan(ctx, fallback, warn=warn, env=env, settings=settings, restart=restart)


NATIVE_FAILURE_WINDOW_S = 20.0
"""A native resume that exits non-zero within this many seconds counts as failed."""


def native_failure(ctx: Context, plan: ResumePlan, run: SessionMeta) -> str | None:
    """Return why the native resume run ``run`` failed, or None when it did not.

    It failed when the agent exited by itself with an error status (1-127; not killed by a
    signal) within ``NATIVE_FAILURE_WINDOW_S``, or when its
    last screen shows the adapter's ``resume_failure_hint`` (the agent saying the session is
    unknown or corrupt) within that window.
    """
    quick = run.duration is not None and run.duration < NATIVE_FAILURE_WINDOW_S
    if not quick:
        return None
    resumed = adapter_for(plan.argv) if plan.fallback is not None else adapter_of(plan.session)  # a hand-off: the other agent
    hint = getattr(resumed, "resume_failure_hint", None)
    if hint:
        try:
            recording = ctx.vault.open_recording(Path(run.cast))
            with open_tail_source(Path(run.cast)) as mapped:
                text = last_screen(recording, mapped=mapped).to_text()
        except (OSError, ShellkeepError) as exc:
            log.debug("no last screen for %s: %s", run.id, exc)
            text = ""
        found = re.search(hint, text)
        if found:
            return f"it said: {found.group(0).strip()}"
    exited_with_error = run.exit_code is not None and 0 < run.exit_code < 128 and run.signal is None
    if exited_with_error:  # the agent gave up by itself (a signal is the user's or a crash's doing)
        return f"exit status {run.exit_code} after {run.duration:.1f} s"
    return None


def _run_plan(
    ctx: Context, plan: ResumePlan, *, warn: Warn, env: Mapping[str, str] | None, settings: RecordSettings, restart: int
) -> RunOutcome:
    request = RunRequest(
        argv=plan.argv,
        cwd=plan.cwd,
        name=plan.session.name,
        settings=settings,
        parent=plan.session.id,
        restart=restart,
        inject=(plan.inject_text or plan.resend_text or "").encode("utf-8") or None,
        inject_settle_s=plan.settle_s,
        inject_paste_mode=bool(getattr(adapter_for(plan.argv), "inject_paste_mode", False)),
        inject_ready_prompt=getattr(adapter_for(plan.argv), "ready_prompt", None),
        inject_prompt_required=bool(getattr(adapter_for(plan.argv), "ready_prompt_required", False)),
        inject_use_paste=bool(getattr(adapter_for(plan.argv), "inject_use_paste", True)),
        extra=_resumed_from(plan.session),
    )
    if plan.env_updates:
        env = {**(os.environ if env is None else env), **dict(plan.env_updates)}
    return run_session(ctx.paths, request, warn=warn, env=env)


def _resumed_from(meta: SessionMeta) -> tuple[tuple[str, object], ...]:
    """Return the meta.json field linking a run to the session of another machine it resumes.

    ``resumed_from``: ``{"session", "machine", "host", "url"}`` (the pulled session's id, the
    machine and host that recorded it, the remote it came from); () for a local session.
    """
    remote = remote_of(meta)
    if remote is None:
        return ()
    origin: dict[str, str] = {"session": meta.id}
    origin.update((k, remote[k]) for k in ("machine", "host", "url") if k in remote)
    return (("resumed_from", origin),)


def session_chain(paths: Paths, meta: SessionMeta) -> list[SessionMeta]:
    """Return the resume chain through ``meta``, oldest first: its ancestors, it, its descendants.

    Ancestors follow ``parent`` links (found in the same project folder first, else in any
    project); descendants are the sessions of the project that resume it, the newest one
    followed when a session was resumed more than once. A missing or unreadable link ends
    the chain there; a cycle is cut.
    """
    chain = [meta]
    seen = {meta.id}
    current = meta
    while current.parent and current.parent not in seen:
        parent = _session_by_id(paths, current.parent, near=current.folder.parent)
        if parent is None:
            break
        chain.insert(0, parent)
        seen.add(parent.id)
        current = parent
    children: dict[str, list[SessionMeta]] = {}
    for folder in _sibling_folders(meta.folder.parent):
        try:
            other = read_meta(folder)
        except (OSError, DataError):
            continue
        if other.parent:
            children.setdefault(other.parent, []).append(other)
    current = meta
    while children.get(current.id):
        newest = max(children[current.id], key=lambda m: (m.started_at, m.id))
        if newest.id in seen:
            break
        chain.append(newest)
        seen.add(newest.id)
        current = newest
    return chain


def conversation_tail(ctx: Context, meta: SessionMeta, limit: int, *, own: list[Exchange] | None = None) -> list[Exchange]:
    """Return the last ``limit`` exchanges of the conversation ``meta`` continues, oldest first.

    The session's own exchanges (``own`` when given, else its stored ones) come last; when
    they are fewer than ``limit``, its ancestors' stored exchanges fill in (newest first).
    Indices are renumbered from 0.
    """
    if limit <= 0:
        return []
    found = list(own if own is not None else read_exchanges(meta, ctx.vault))[-limit:]
    seen = {meta.id}
    current = meta
    while len(found) < limit and current.parent and current.parent not in seen:
        parent = _session_by_id(ctx.paths, current.parent, near=current.folder.parent)
        if parent is None:
            break
        seen.add(parent.id)
        found = read_exchanges(parent, ctx.vault, limit - len(found)) + found
        current = parent
    return [_renumbered(e, i) for i, e in enumerate(found)]


def inject_text(meta: SessionMeta, exchanges: tuple[Exchange, ...] | list[Exchange], vault: Vault | None = None) -> str | None:
    """Return the block typed into a restarted program: a header line, then each exchange.

    Lines are ``User: <prompt>``, ``Tools: <name summary>; ...`` and ``Assistant: <answer>``,
    then the agent's task list where it stopped (``app.plan.plan_block``; vault: the keys of a
    sealed one), joined by ``\\n``. None when there is no exchange.
    """
    if not exchanges:
        return None
    when = (meta.ended_at or meta.started_at or "")[:16].replace("T", " ")
    count = len(exchanges)
    lines = [
        f"{INJECTED_CONTEXT_PREFIX} {meta.id} ({meta.agent}, {meta.status} {when} UTC): "
        f"its last {count} exchange{'s' if count != 1 else ''} follow. Please continue from there.",
    ]
    for exchange in exchanges:
        lines.append(f"User: {exchange.prompt.strip()}")
        if exchange.tool_calls:
            lines.append("Tools: " + "; ".join(f"{c.name} {c.summary}".strip() for c in exchange.tool_calls))
        if exchange.answer.strip():
            lines.append(f"Assistant: {exchange.answer.strip()}")
    lines.extend(plan_block(meta, vault))  # the agent's task list where it stopped (app.plan)
    return "\n".join(lines)


# -- helpers ----------------------------------------------------------------------------


def _agent_argv(agent: str) -> tuple[tuple[str, ...], str]:
    """Return the argv and name of ``--agent``: an adapter's program, else the command line given."""
    try:
        words = tuple(shlex.split(agent))
    except ValueError as exc:
        raise UserInputError(f"--agent '{agent}' is not a valid command line ({exc}); quote it as a shell would") from exc
    if not words:
        raise UserInputError("--agent needs a name; give an agent such as 'codex' or a program")
    if len(words) == 1 and words[0] in adapter_names():
        adapter = adapter_named(words[0])
        if isinstance(adapter, CommandAdapter) and adapter.executables:
            return (adapter.executables[0],), adapter.name
    adapter = adapter_for(words)
    return words, adapter.agent_name(words)


def check_agent_on_path(agent: str, env: Mapping[str, str]) -> None:
    """Refuse ``--agent`` whose program is not found on the PATH of ``env`` (it runs with it):
    raises UserInputError, for a dry run too (``resume`` calls it before planning)."""
    import shutil

    program = _agent_argv(agent)[0][0]
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise UserInputError(
            f"--agent '{agent}': {program} is not found on PATH; install it, or give another agent or program"
        )


HANDOFF_MAX_EXCHANGES = 200
"""The most exchanges a hand-off writes when ``--exchanges`` is not given (the last ones)."""


def _handoff_exchanges(
    ctx: Context, meta: SessionMeta, recent: tuple[Exchange, ...], unanswered: UnansweredPrompt | None
) -> tuple[Exchange, ...]:
    """Return the conversation a hand-off writes: its last ``HANDOFF_MAX_EXCHANGES`` exchanges
    (earlier sessions of the chain filling in), without an unanswered last prompt; ``recent``
    when that is more (nothing stored yet)."""
    whole = conversation_tail(ctx, meta, HANDOFF_MAX_EXCHANGES)
    if unanswered is not None and whole and not whole[-1].answer.strip():
        whole = whole[:-1]
    return tuple(whole) if len(whole) >= len(recent) else recent


def _handed_off(plan: ResumePlan, outcome: HandoffOutcome) -> ResumePlan:
    """Return ``plan`` (re-injecting into another agent) as the hand-off ``outcome`` made it:
    the other agent's native resume, falling back to ``plan``; or ``plan`` saying why not."""
    if outcome.done is None:
        how = f"re-injecting {len(plan.exchanges)} exchange{'s' if len(plan.exchanges) != 1 else ''}" if plan.inject_text else "starting it anew"
        return dataclasses.replace(plan, note=_joined(plan.note, f"no hand-off into {plan.agent}'s own history ({outcome.refusal}); {how}"))
    done = outcome.done
    return dataclasses.replace(
        plan, mode=ResumeMode.NATIVE, argv=done.argv, inject_text=None, note=_joined(plan.note, done.note), fallback=plan
    )


def _fresh_argv(adapter: AgentAdapter, command: list[str]) -> tuple[str, ...]:
    """Return ``command`` as a new conversation (the adapter drops its conversation flags and prompt)."""
    if isinstance(adapter, CommandAdapter):
        try:
            fresh = adapter.fresh_argv(command)
        except Exception as exc:  # noqa: BLE001 - an adapter bug: start the command as it was
            log.warning("could not drop the conversation flags of %s: %s", command[:1], exc)
        else:
            if fresh:
                return tuple(fresh)
    return tuple(command)


def _takes_context(argv: list[str] | tuple[str, ...]) -> bool:
    """Return whether exchanges may be typed into ``argv``'s program.

    Never into a shell (it would run the text), an editor or pager (it would land in the
    user's file), or an interpreter's bare REPL (it would be run as code); an interpreter
    running a script of its own (``python3 chat.py``) may take it.
    """
    if not argv:
        return False
    name = os.path.basename(argv[0]).lstrip("-")
    if name in SHELLS or name in _EDITORS:
        return False
    if _INTERPRETER.fullmatch(name):
        return any(not arg.startswith("-") for arg in argv[1:])
    return True


_PLAIN_ID = re.compile(r"(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._: -]{0,199}")  # a space: aider's ids are times
"""An agent session id resume puts into the agent's argv (and transcript paths): never an option
(``-``), never a path step (``..``, ``/``); a pulled ``meta.json`` is anyone's writing."""


def _joined(first: str | None, second: str | None) -> str | None:
    """Return two notes for the user as one line (either may be None)."""
    return "; ".join(n for n in (first, second) if n) or None


def _renumbered(exchange: Exchange, index: int) -> Exchange:
    import dataclasses

    return exchange if exchange.index == index else dataclasses.replace(exchange, index=index)


def inject_wait(plan: ResumePlan) -> str:
    """Return when ``plan``'s block is typed into what it runs, as its adapter makes the run wait
    (``run_resume``'s ``RunRequest``, ``pty.inject.SettledInjection``): a phrase "once ..."."""
    adapter = adapter_for(plan.argv)
    settles = f"its output settles for {plan.settle_s:g}s"
    prompt = getattr(adapter, "ready_prompt", None)
    if prompt:
        return f"once it draws its prompt ('{prompt}') and then {settles}"
    if getattr(adapter, "inject_paste_mode", False):
        return f"once it switches bracketed paste on and {settles}"
    return f"once {settles}"


def resumed_as(meta: SessionMeta) -> str | None:
    """Return the id of the newest run in ``meta``'s project folder that resumed it (its failed
    native resumes aside), as ``ls`` shows "resumed as <id>"; None when none did."""
    runs: list[SessionMeta] = []
    for folder in _sibling_folders(meta.folder.parent):
        try:
            runs.append(read_meta(folder))
        except (OSError, DataError):
            continue
    return resumed_as_of(runs).get(meta.id)


def _later_sessions(paths: Paths, meta: SessionMeta) -> list[SessionMeta]:
    """Return the sessions that resumed ``meta`` (and those that resumed them), oldest first."""
    chain = session_chain(paths, meta)
    ids = [m.id for m in chain]
    return chain[ids.index(meta.id) + 1 :] if meta.id in ids else []


def _sibling_folders(project_folder: Path) -> list[Path]:
    try:
        return [entry for entry in project_folder.iterdir() if (entry / "meta.json").is_file()]
    except OSError:
        return []


def _session_by_id(paths: Paths, session_id: str, *, near: Path) -> SessionMeta | None:
    """Return the session ``session_id`` from the project folder ``near``, else from any project."""
    candidates = [near / session_id]
    for folder in candidates:
        if (folder / "meta.json").is_file():
            try:
                return read_meta(folder)
            except (OSError, DataError) as exc:
                log.warning("cannot read session %s: %s", session_id, exc)
                return None
    for folder in iter_session_folders(paths, None):
        if folder.name == session_id:
            try:
                return read_meta(folder)
            except (OSError, DataError) as exc:
                log.warning("cannot read session %s: %s", session_id, exc)
                return None
    return None
