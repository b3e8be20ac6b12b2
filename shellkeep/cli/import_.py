"""``shellkeep import``: bring a foreign asciicast recording, or the agents' own histories, into the archive."""

from __future__ import annotations

from pathlib import Path

import click

from shellkeep.agents import HISTORY_AGENTS
from shellkeep.cli.options import context, cwd, json_option
from shellkeep.cli.output import print_json


@click.command(name="import")
@click.argument("file", type=click.Path(path_type=Path), required=False)
@click.option("--name", default=None, help="Name the imported session (with FILE).")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice([*HISTORY_AGENTS, "all"]),
    help="Import this agent's own sessions instead of a FILE (repeatable; 'all': every agent).",
)
@click.option("--since", metavar="WHEN", default=None, help="With --agent: sessions written since WHEN (2024-05-01, today, 7d).")
@json_option
def import_(file: Path | None, name: str | None, agents: tuple[str, ...], since: str | None, as_json: bool) -> None:
    """Import an asciicast v1, v2 or v3 recording as a session of this project, or, with
    --agent, the sessions an agent CLI keeps of its own that shellkeep did not record.

    A corrupt file is refused and nothing is stored; a cut last line is read up to the
    last whole event. The session id is printed on stdout. With --agent, each agent session
    becomes a session of its own project (exchanges, tokens, a copy of its transcript, no
    recording); a second run takes only new and grown ones. Their ids are printed on stdout.

    Example: shellkeep import demo.cast --name demo; shellkeep import --agent all --since 30d
    """
    from shellkeep.app.importer import ImportRequest, import_recording

    if file is not None and agents:
        raise click.UsageError("give a recording FILE or --agent NAME, not both")
    if file is None and not agents:
        raise click.UsageError("give a recording FILE to import, or --agent NAME (or all) for an agent's own sessions")
    if agents:
        if name is not None:
            raise click.UsageError("--name names one imported recording; it does not go with --agent")
        _import_agents(agents, since, as_json)
        return
    if since is not None:
        raise click.UsageError("--since goes with --agent")
    assert file is not None
    ctx = context()
    meta = import_recording(ctx, ImportRequest(source=file, project_root=ctx.project_root, cwd=cwd(), name=name))
    if as_json:
        print_json(meta)
        return
    click.echo(meta.id)
    click.echo(f"imported {file} as session {meta.id} ({meta.duration or 0:.1f}s); replay it with 'shellkeep replay {meta.id}'", err=True)


def _import_agents(agents: tuple[str, ...], since: str | None, as_json: bool) -> None:
    """``import --agent NAME...``: import the agents' histories and print what became of them."""
    from shellkeep.agents.history import agents_named
    from shellkeep.app.history_import import HistoryRequest, import_histories
    from shellkeep.archive.since import parse_time

    chosen = tuple(agents_named(agents))
    ctx = context()
    report = import_histories(ctx, HistoryRequest(chosen, parse_time(since) if since else None))
    if as_json:
        print_json(list(report.results))
        return
    for result in report.results:
        if result.action in ("imported", "updated"):
            click.echo(result.session_id)
    for result in report.results:
        if result.action == "failed":
            click.echo(f"shellkeep: could not import {result.agent} session {result.agent_session_id}: {result.error}", err=True)
    if not report.results:
        click.echo(f"shellkeep: no session of {', '.join(chosen)} found where {'it keeps' if len(chosen) == 1 else 'they keep'} "
                   "them (docs/import.md: 'The agents' own histories'); nothing imported", err=True)
        return
    counts = ", ".join(
        f"{report.count(action)} {action}" for action in ("imported", "updated", "unchanged", "recorded", "empty", "failed")
    )
    click.echo(f"agent sessions ({', '.join(chosen)}): {counts}; find them with 'shellkeep ls --all'", err=True)
