"""``shellkeep search``: full-text search over transcripts, prompts and answers."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import complete_agent, context, count, json_option
from shellkeep.cli.output import print_json
from shellkeep.errors import ShellkeepError
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import read_meta

if TYPE_CHECKING:
    from shellkeep.app.context import Context
    from shellkeep.archive.search import SearchRequest


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--all", "all_projects", is_flag=True, help="Search every project, not just this one.")
@click.option("--agent", "agents", multiple=True, metavar="AGENT", shell_complete=complete_agent, help="Only sessions of this agent (repeatable).")
@click.option("--since", metavar="WHEN", help="Only sessions started at or after WHEN: 2024-05-01, today, 2h, 3d, 1w.")
@click.option("--limit", type=count(), default=20, show_default=True, help="At most this many hits.")
@click.option("--remote", "remote", is_flag=True, help="Search the sessions pulled from other machines ('shellkeep sync pull') instead.")
@click.option("--machine", metavar="M", help="With --remote: only machine M's (id prefix or host name).")
@json_option
def search(
    query: tuple[str, ...],
    all_projects: bool,
    agents: tuple[str, ...],
    since: str | None,
    limit: int,
    remote: bool,
    machine: str | None,
    as_json: bool,
) -> None:
    """Search what sessions showed and the prompts and answers, best hits first.

    A project moved or renamed on disk also searches the sessions recorded at its
    former path (matched by its git remote and root commit). Each hit (a prompt, an answer, a marker label or up to 20 transcript lines)
    gives its session and the time (seconds into the recording) to replay from.
    With --remote, the sessions pulled from other machines are searched (every project;
    their prompts and answers, and what their screen showed once replayed here), each hit
    marked with the machine.
    Operators are upper case; there are no parentheses:

    \b
      a b, a AND b   both words, any order
      "two words"    the phrase
      word*          a word starting with "word"
      a OR b         either (a b OR c means (a and b) or c)
      a NOT b        a, but not b (also: a AND NOT b)
      a OR NOT b     a, or anything without b
      NOT x          anything without x

    Example: shellkeep search "connection refused" --all
    """
    from shellkeep.app.listing import moved_projects
    from shellkeep.app.remote import pulled_machines
    from shellkeep.app.remote_search import search_remote
    from shellkeep.archive.search import SearchRequest, search as run_search
    from shellkeep.archive.since import parse_time
    from shellkeep.store.audit import record_many

    ctx = context()
    where = ctx.paths
    request = SearchRequest(
        query=" ".join(query),
        project=None if all_projects else project_key(ctx.project_root),
        also_projects=() if all_projects else moved_projects(ctx),
        agents=agents,
        since=parse_time(since) if since else None,
        limit=limit,
    )
    if remote or machine:
        hits = search_remote(ctx, request, machine)  # audited there, with each hit's machine
    else:
        hits = run_search(where, request, vault=ctx.vault, recover=ctx.recover)
        try:  # one entry per session read, in one append
            record_many(where, "search", [(sid, project, "hit") for sid, project in dict.fromkeys((h.session_id, h.project) for h in hits)])
        except OSError as exc:
            click.echo(f"shellkeep: could not write the audit log ({exc.strerror or exc})", err=True)
    if as_json:
        print_json(hits)
        return
    more = "" if remote or machine else _remote_line(ctx, request, query)
    if not hits and remote and not pulled_machines(ctx.paths):
        click.echo("no sessions pulled; run 'shellkeep sync pull'", err=True)  # as 'ls --remote'
        return
    if not hits:
        here = bool(all_projects or remote or machine)
        hint = more or ("" if here else "; try --all")
        click.echo(f"nothing matches '{request.query}'" + ("" if here else " in this project") + hint, err=True)
        return
    color = sys.stdout.isatty()
    for hit in hits:
        where_in = hit.kind if hit.exchange is None else f"{hit.kind} #{hit.exchange}"
        name = f" ({hit.session_name})" if hit.session_name else ""
        on = f"  on {hit.machine}" if hit.machine is not None else ""
        title = f"{hit.session_id}{name}{on}  {hit.agent}  {where_in}  at {hit.time:.1f}s"
        click.echo(click.style(title, bold=True) if color else title)
        click.echo("  " + _highlight(hit.snippet, hit.highlights, color))
    first = hits[0]
    if more:
        click.echo(more.removeprefix("; "), err=True)
    if first.machine is None and not _has_recording(ctx.paths, first.project, first.session_id):
        click.echo(f"read a hit: shellkeep show {first.session_id} (it has no terminal recording to replay)", err=True)
        return
    click.echo(f"replay a hit: shellkeep replay {first.session_id} --at {first.time:.1f}", err=True)


def _remote_line(ctx: Context, request: SearchRequest, query: tuple[str, ...]) -> str:
    """Return ``; N hits in sessions pulled from other machines: ...`` when there are any, else ""."""
    from shellkeep.app.remote_search import count_remote_hits

    try:
        found = count_remote_hits(ctx, request)
    except ShellkeepError:
        return ""  # the local search answered; a pulled index that cannot be read says so under --remote
    if not found:
        return ""
    count = f"{found}{'+' if found >= request.limit else ''} hit{'' if found == 1 else 's'}"
    words = " ".join(shlex.quote(q) for q in query)
    return f"; {count} in sessions pulled from other machines: shellkeep search --remote {words}"


def _has_recording(paths: Paths, project: str, session_id: str) -> bool:
    """Return whether a local session kept its terminal recording (``detail`` full; True when unknown)."""
    try:
        return read_meta(paths.projects / project / session_id).detail == "full"
    except (OSError, ShellkeepError):
        return True


def _highlight(snippet: str, ranges: list[list[int]], color: bool) -> str:
    out = []
    pos = 0
    for start, end in ranges:
        out.append(snippet[pos:start])
        word = snippet[start:end]
        out.append(click.style(word, fg="yellow", bold=True) if color else f"[{word}]")
        pos = end
    out.append(snippet[pos:])
    return "".join(out)
