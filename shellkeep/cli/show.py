"""``shellkeep show``: one session's metadata, its exchanges and token totals."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import context, json_option, require_ref, session_argument, warn
from shellkeep.cli.output import format_duration, format_local_time, print_json
from shellkeep.store.session import SessionMeta, Status

if TYPE_CHECKING:
    from shellkeep.app.in_flight import InFlight
    from shellkeep.store.checkpoints import Checkpoint
    from shellkeep.store.paths import Paths
    from shellkeep.agents.base import Exchange

_PREVIEW_CHARS = 100


@click.command()
@session_argument
@click.option("--full", is_flag=True, help="Print whole prompts and answers, not their first lines.")
@json_option
def show(ref: str | None, last: bool, full: bool, as_json: bool) -> None:
    """Show one session's metadata, its checkpoints, its exchanges and the tokens they used.

    SESSION is an id, a unique prefix of one, a name, or --last. Exchanges are numbered
    from 1, as 'shellkeep replay --exchange N' takes them. The files changed since the
    agent's last finished answer are listed as in flight (--json: in_flight).

    Example: shellkeep show --last
    """
    from shellkeep.app.conversation import live_exchanges
    from shellkeep.app.env_restore import agent_files_env
    from shellkeep.app.listing import missing_key
    from shellkeep.app.plan import live_plan
    from shellkeep.store.audit import record_read
    from shellkeep.store.checkpoints import read_checkpoints
    from shellkeep.vault.about import with_sealed_about
    from shellkeep.vault.exchanges import is_collected

    require_ref(ref, last)
    ctx = context()
    missing: list[str] = []  # a pulled session's files whose objects are gone from the bucket
    meta = ctx.resolve(ref, last=last, missing=missing)
    for line in missing:
        warn(line)
    record_read(ctx.paths, "show", meta)
    key_id = missing_key(ctx, meta)
    env = agent_files_env(ctx, meta)  # the agent's files are where its session had them, not this terminal
    exchanges: list[Exchange] = []
    if key_id is None and not (as_json and is_collected(meta)):  # missing: sealed with the same key
        meta, exchanges = live_exchanges(meta, ctx.vault, ctx.config.redact, env)  # cut short: read live
    meta = live_plan(meta, ctx.config.redact, ctx.vault, env)
    meta = with_sealed_about(meta, ctx.vault)  # an encrypted session's title is sealed; shown, never stored so
    from shellkeep.app.in_flight import files_in_flight

    flying = files_in_flight(ctx, meta)
    if as_json:
        print_json({**meta.to_json(), "in_flight": None if flying is None else flying.to_json()})
        return
    _print_meta(meta, key_id)
    _print_unanswered(meta, exchanges)
    _print_plan(meta)
    _print_chain(ctx.paths, meta)
    _print_checkpoints(read_checkpoints(meta.folder))
    _print_environment(meta)
    _print_in_flight(flying)
    _print_exchanges(meta, exchanges, full)


_KEPT = {
    "full": "full (recording, exchanges, metadata)",
    "conversation": "conversation (exchanges and metadata, no terminal recording)",
    "metadata": "metadata only",
}
"""How ``show`` names each ``record.detail`` level."""


def _duration(meta: SessionMeta) -> str:
    """Return the duration row; an interrupted session's is a lower bound (its end was not seen)."""
    if meta.status != Status.INTERRUPTED.value or meta.duration is None:
        return format_duration(meta.duration)
    return f"at least {format_duration(meta.duration)} (the recorder died; when exactly is not known)"


def _print_meta(meta: SessionMeta, missing_key_id: str | None) -> None:
    from shellkeep.app.listing import SUSPENDED_KEY_MISSING
    from shellkeep.app.place import place_line
    from shellkeep.archive.export.formats import token_line

    git = meta.git_start or {}
    imported = isinstance(meta.extra.get("imported_from_agent"), str)  # app.history_import: no terminal
    rows = [
        ("id", meta.id),
        ("name", meta.name or "-"),
        ("title", meta.title or meta.about or "-"),
        ("command", " ".join(meta.command)),
        ("agent", meta.agent),
        ("status", meta.status + ("" if meta.exit_code is None else f" (exit {meta.exit_code})")),
        ("started", format_local_time(meta.started_at)),
        ("duration", _duration(meta)),
        ("cwd", meta.cwd),
        ("project", f"{meta.project} ({meta.project_root})"),
        ("git", f"{git.get('branch') or '-'} {str(git.get('commit') or '')[:10]}{' dirty' if git.get('dirty') else ''}".rstrip()),
        ("terminal", f"{meta.cols}x{meta.rows} {meta.term or ''}" if not imported else "-"),
        ("place", place_line(meta.place)),
        ("recorded", f"{meta.output_bytes} bytes out, {meta.input_bytes} bytes in" if not imported else "- (not recorded by shellkeep)"),
        ("kept", _KEPT.get(meta.detail, meta.detail)),
        ("recording", meta.cast if meta.detail == "full" else "- (not kept)" if not imported else "-"),
        ("exchanges", str(meta.exchange_count)),
        ("tokens", token_line(meta.usage) if meta.usage else "-"),
    ]
    agent = meta.extra.get("imported_from_agent")  # app.history_import
    if isinstance(agent, str):
        at = meta.extra.get("imported_at")
        when = f" on {format_local_time(at)}" if isinstance(at, str) else ""
        rows.insert(5, ("imported", f"from {agent}'s own history{when} ({meta.agent_transcript or 'transcript unknown'}); no terminal recording"))
    if missing_key_id is not None:
        rows.insert(6, ("access", f"{SUSPENDED_KEY_MISSING} ({missing_key_id}); import it with 'shellkeep key import FILE'"))
    if meta.recording_error:
        rows.append(("warning", f"recording incomplete: {meta.recording_error}"))
    damage = (meta.agent_transcript_damage or {}).get("summary")
    if damage:
        rows.append(("warning", f"agent transcript damaged: {damage} in {meta.agent_transcript}"))
    if meta.parent:
        rows.append(("resumes", meta.parent + (f" (supervised restart {meta.restart})" if meta.restart else "")))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key:<{width}}  {value}")


def _print_unanswered(meta: SessionMeta, exchanges: list[Exchange]) -> None:
    """Print the prompt the agent never answered (``app.unanswered``), when the session has one."""
    from shellkeep.app.unanswered import UNANSWERED_KEY, UnansweredPrompt, banner_line, last_unanswered

    last = last_unanswered(exchanges)
    if last is None or not isinstance(meta.extra.get(UNANSWERED_KEY), dict):
        return
    click.echo(banner_line(UnansweredPrompt(last.prompt, last.index, last.time)))


def _print_plan(meta: SessionMeta) -> None:
    """Print the agent's task list where it stopped (``app.plan``), when it kept one."""
    from shellkeep.agents.plan import Plan

    plan = Plan.from_json(meta.plan)
    if plan is None:
        return
    click.echo(f"\nplan: {plan.summary()}")
    for line in plan.lines():
        click.echo(f"  {line}")


def _print_chain(where: Paths, meta: SessionMeta) -> None:
    """Print the resume chain through ``meta`` when it has more than one session."""
    from shellkeep.app.resume import session_chain

    chain = session_chain(where, meta)
    if len(chain) < 2:
        return
    click.echo("")
    click.echo("resume chain (oldest first):")
    for link in chain:
        mark = "*" if link.id == meta.id else " "
        how = f"  restart {link.restart}" if link.restart else ""
        code = "" if link.exit_code is None else f" (exit {link.exit_code})"
        click.echo(f" {mark} {link.id}  {link.agent}  {link.status}{code}  {format_local_time(link.started_at)}{how}")


def _print_checkpoints(checkpoints: list[Checkpoint]) -> None:
    from shellkeep.archive.export.formats import checkpoint_line

    _print_section("checkpoints ('shellkeep diff', 'shellkeep restore-files --checkpoint N'):", [checkpoint_line(c) for c in checkpoints])


def _print_environment(meta: SessionMeta) -> None:
    """Print the environment the session recorded (``app.environment``; secrets by name only)."""
    from shellkeep.app.environment import environment_lines

    _print_section("environment ('shellkeep resume' gives it back; --env current keeps today's):", environment_lines(meta))


def _print_section(heading: str, lines: list[str]) -> None:
    """Print a blank line, ``heading`` and ``lines`` indented by two spaces; nothing if ``lines`` is empty."""
    if not lines:
        return
    click.echo("")
    click.echo(heading)
    for line in lines:
        click.echo(f"  {line}")


def _print_in_flight(flying: InFlight | None) -> None:
    if flying is None or not flying.files:
        return
    since = f"exchange {flying.since_exchange}" if flying.since_exchange else "the session's start"
    click.echo("")
    click.echo(f"files in flight (changed since {since}, checkpoint {flying.checkpoint}; 'shellkeep diff --in-flight'):")
    for f in flying.files:
        tools = f"  ({', '.join(f.tools)})" if f.tools else ""
        click.echo(f"  {f.status or '-'} {f.path}{tools}")


def _print_exchanges(meta: SessionMeta, exchanges: list[Exchange], full: bool) -> None:
    from shellkeep.archive.timeline import exchange_offset_s

    if not exchanges:
        return
    click.echo("")
    for exchange in exchanges:
        at = exchange_offset_s(meta, exchange)
        when = "" if at is None else f"  at {at:.1f}s"
        tokens = ""
        if exchange.usage is not None:
            tokens = f"  {exchange.usage.input} in / {exchange.usage.output} out tokens"
        click.echo(f"#{exchange.index + 1}{when}{tokens}")
        click.echo(f"  > {_text(exchange.prompt, full)}")
        if exchange.answer.strip():
            click.echo(f"  < {_text(exchange.answer, full)}")
        for call in exchange.tool_calls:
            click.echo(f"    {call.name}: {call.summary}")


def _text(text: str, full: bool) -> str:
    if full:
        return text.strip().replace("\n", "\n    ")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= _PREVIEW_CHARS else first[: _PREVIEW_CHARS - 1] + "…"
