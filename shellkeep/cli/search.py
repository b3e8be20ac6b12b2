"""``shellkeep search``: full-text search over transcripts, prompts and answers."""

from __future__ import annotations

import sys

import click

from shellkeep.cli.options import context, count, json_option
from shellkeep.archive.index import SearchRequest, parse_time, search as run_search
from shellkeep.cli.output import print_json
from shellkeep.store.audit import record
from shellkeep.store.paths import project_key


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--all", "all_projects", is_flag=True, help="Search every project, not just this one.")
@click.option("--agent", "agents", multiple=True, metavar="AGENT", help="Only sessions of this agent (repeatable).")
@click.option("--since", metavar="WHEN", help="Only sessions started at or after WHEN: 2024-05-01, today, 2h, 3d, 1w.")
@click.option("--limit", type=count(), default=20, show_default=True, help="At most this many hits.")
@json_option
def search(query: tuple[str, ...], all_projects: bool, agents: tuple[str, ...], since: str | None, limit: int, as_json: bool) -> None:
    """Search what sessions showed and the prompts and answers, best hits first.

    Words must all match; "two words" is a phrase, word* a prefix, OR and NOT combine.
    Each hit gives its session and the time (seconds into the recording) to replay from.

    Example: shellkeep search "connection refused" --all
    """
    ctx = context()
    where = ctx.paths
    request = SearchRequest(
        query=" ".join(query),
        project=None if all_projects else project_key(ctx.project_root),
        agents=agents,
        since=parse_time(since) if since else None,
        limit=limit,
    )
    hits = run_search(where, request, vault=ctx.vault, recover=ctx.recover)
    for session_id, project in dict.fromkeys((h.session_id, h.project) for h in hits):
        try:
            record(where, "search", session_id, project=project, detail="hit")
        except OSError as exc:
            click.echo(f"shellkeep: could not write the audit log ({exc.strerror or exc})", err=True)
    if as_json:
        print_json(hits)
        return
    if not hits:
        click.echo(f"nothing matches '{request.query}'" + ("" if all_projects else "; try --all"), err=True)
        return
    color = sys.stdout.isatty()
    for hit in hits:
        where_in = hit.kind if hit.exchange is None else f"{hit.kind} #{hit.exchange}"
        name = f" ({hit.session_name})" if hit.session_name else ""
        title = f"{hit.session_id}{name}  {hit.agent}  {where_in}  at {hit.time:.1f}s"
        click.echo(click.style(title, bold=True) if color else title)
        click.echo("  " + _highlight(hit.snippet, hit.highlights, color))
    first = hits[0]
    click.echo(f"replay a hit: shellkeep replay {first.session_id} --at {first.time:.1f}", err=True)


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
