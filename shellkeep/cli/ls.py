"""``shellkeep ls``: list sessions, newest first, with filters (from the index)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import complete_agent, context, count, json_option
from shellkeep.store.session import Status
from shellkeep.cli.output import format_duration, print_json
from shellkeep.store.paths import project_key

if TYPE_CHECKING:
    from shellkeep.archive.listing import ListedSession
    from shellkeep.store.session import SessionMeta


@click.command()
@click.option("--all", "all_projects", is_flag=True, help="Sessions of every project.")
@click.option("--agent", "agents", multiple=True, metavar="AGENT", shell_complete=complete_agent, help="Only this agent (repeatable), e.g. claude.")
@click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice([s.value for s in Status]),
    help="Only sessions in this state (repeatable).",
)
@click.option("--since", metavar="WHEN", help="Started at or after WHEN: 2024-05-01, '2024-05-01 14:30', today, 2h, 3d, 1w.")
@click.option("--until", metavar="WHEN", help="Started before WHEN (a bare date includes that day).")
@click.option("--name", metavar="TEXT", help="Name contains TEXT, or matches it as a glob ('fix-*').")
@click.option("--limit", type=count(), default=None, help="At most this many, the newest.")
@click.option("--all-sessions", is_flag=True, help="Also the sessions shorter than a second with no input.")
@click.option("--remote", "remote", is_flag=True, help="The sessions pulled from other machines ('shellkeep sync pull').")
@click.option("--machine", metavar="M", help="With --remote: only machine M's (id prefix or host name).")
@json_option
def ls(
    all_projects: bool,
    agents: tuple[str, ...],
    statuses: tuple[str, ...],
    since: str | None,
    until: str | None,
    name: str | None,
    limit: int | None,
    all_sessions: bool,
    remote: bool,
    machine: str | None,
    as_json: bool,
) -> None:
    """List this project's sessions, newest first.

    A project moved or renamed on disk also lists the sessions recorded at its former path
    (matched by its git remote and root commit). A session sealed with a key no store
    holds shows as "suspended: key missing" until the key is imported. Sessions that ended
    within a second with nothing typed are left out of the table (a line on stderr counts
    them) unless --all-sessions; --json lists every session.

    Example: shellkeep ls --agent claude --since 3d --limit 10
    """
    from shellkeep.app.listing import missing_keys, moved_projects
    from shellkeep.app.remote import remote_sessions
    from shellkeep.archive.listing import SessionQuery, find_sessions
    from shellkeep.archive.since import parse_time

    ctx = context()
    if remote or machine:
        pulled = remote_sessions(ctx.paths, machine)
        _print_remote(pulled[:limit], remote_sessions(ctx.paths) if machine else pulled, as_json)
        return
    query = SessionQuery(
        project=None if all_projects else project_key(ctx.project_root),
        also_projects=() if all_projects else moved_projects(ctx),
        agents=agents,
        statuses=statuses,
        since=parse_time(since) if since else None,
        until=parse_time(until, end_of_day=True) if until else None,
        name=name,
        limit=limit,
    )
    if as_json:
        print_json(find_sessions(ctx.paths, query, full=True, vault=ctx.vault, recover=ctx.recover))
        return
    shown = replace(query, trivial=None if all_sessions else False)
    sessions = find_sessions(ctx.paths, shown, full=False, vault=ctx.vault, recover=ctx.recover)
    hidden = 0
    if not all_sessions:
        hidden = len(find_sessions(ctx.paths, replace(query, trivial=True, limit=None), full=False, vault=ctx.vault))
    if sessions:
        _print_table(sessions, all_projects, missing_keys(ctx, sessions))
    elif not hidden:
        filtered = any((agents, statuses, since, until, name))
        hint = "no sessions match; try without filters" if filtered else "no sessions yet; run 'shellkeep' or 'shellkeep PROGRAM' to record one"
        if not all_projects and not filtered:
            elsewhere = len(find_sessions(ctx.paths, replace(query, project=None, also_projects=()), full=False, vault=ctx.vault))
            if elsewhere:
                hint = f"no sessions in this project ({elsewhere} in other projects: shellkeep ls --all)"
        click.echo(hint, err=True)
    if hidden:
        plural = "" if hidden == 1 else "s"
        click.echo(f"{hidden} session{plural} shorter than a second with no input hidden; 'shellkeep ls --all-sessions' shows them", err=True)


def _print_remote(sessions: list[SessionMeta], every: list[SessionMeta], as_json: bool) -> None:
    """Print pulled sessions with the machine each one was recorded on and what each was about.

    every: all the pulled sessions: a resume pushed from its machine names its parent
    (``meta.parent``), so an original already resumed shows as "resumed as <id>" here too.
    """
    from shellkeep.app.remote import remote_of
    from shellkeep.archive.listing import resumed_as_of
    from shellkeep.store.session import title_of

    resumed = resumed_as_of(every)
    if as_json:
        print_json([{**m.to_json(), "machine": (remote_of(m) or {}).get("host", ""), "resumed_as": resumed.get(m.id)} for m in sessions])
        return
    if not sessions:
        click.echo("no sessions pulled; run 'shellkeep sync pull'", err=True)
        return
    header = ("ID", "MACHINE", "NAME", "AGENT", "STATUS", "STARTED", "PROJECT", "TITLE")
    rows = [
        (
            m.id,
            (remote_of(m) or {}).get("host", "?"),
            m.name or "-",
            m.agent,
            f"resumed as {resumed[m.id]}" if m.id in resumed else m.status,
            m.started_at[:16].replace("T", " "),
            m.project,
            title_of(m),
        )
        for m in sessions
    ]
    widths = [max(map(len, column)) for column in zip(header, *rows)]
    template = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    click.echo("\n".join(template.format(*row).rstrip() for row in (header, *rows)))


def _print_table(sessions: list[ListedSession], all_projects: bool, missing: dict[str, str]) -> None:
    from shellkeep.app.listing import SUSPENDED_KEY_MISSING

    import shutil
    import time
    from datetime import datetime

    def local(iso_text: str) -> str:
        try:
            at = datetime.fromisoformat(iso_text.replace("Z", "+00:00"))
        except ValueError:
            return iso_text
        if at.tzinfo is not None:
            # The local time of an aware start, as astimezone() finds it, in two thirds of its time
            # (10,000 rows); %Y pads to 4 digits from year 1000 on only.
            try:
                local_at = time.localtime(at.timestamp())
            except (OverflowError, OSError, ValueError):
                pass
            else:
                if 1000 <= local_at.tm_year <= 9999:  # else as astimezone() does
                    return time.strftime("%Y-%m-%d %H:%M", local_at)
        at = at.astimezone()
        return f"{at.year:04d}-{at.month:02d}-{at.day:02d} {at.hour:02d}:{at.minute:02d}"

    header = ("ID", "NAME", "AGENT", "STATUS", "STARTED", "DURATION", "EXIT", "KEPT", "PROJECT", "TITLE")
    rows = [
        (
            s.id,
            s.name or "-",
            s.agent,
            SUSPENDED_KEY_MISSING if s.id in missing else f"resumed as {s.resumed_as}" if s.resumed_as else s.status,
            local(s.started_at),
            format_duration(s.duration),
            "-" if s.exit_code is None else str(s.exit_code),
            s.detail,
            s.project if all_projects else "",
        )
        for s in sessions
    ]
    columns = list(zip(header[:-1], *rows))
    widths = [max(map(len, column)) for column in columns]
    if not all_projects:
        widths[-1] = 0
    # What each session was about comes last, cut to the terminal's width (at least 24 columns).
    room = max(24, shutil.get_terminal_size((120, 24)).columns - sum(w + 2 for w in widths if w))
    template = "  ".join(f"{{:<{w}}}" for w in widths if w) + "  {}"
    shown = header if all_projects else (*header[:-2], header[-1])
    lines = [template.format(*shown).rstrip()]
    lines += [template.format(*(cell for cell, w in zip(row, widths) if w), _cut(s.title, room)).rstrip() for row, s in zip(rows, sessions)]
    click.echo("\n".join(lines))


def _cut(text: str, cols: int) -> str:
    """Return ``text`` cut to ``cols`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= cols else text[: cols - 1] + "…"
