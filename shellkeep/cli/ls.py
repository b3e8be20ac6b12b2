"""``shellkeep ls``: list sessions, newest first."""

from __future__ import annotations

import click

from shellkeep.cli.options import cwd, json_option, paths


@click.command()
@click.option("--all", "all_projects", is_flag=True, help="Sessions of every project.")
@json_option
def ls(all_projects: bool, as_json: bool) -> None:
    """List this project's sessions, newest first.

    Example: shellkeep ls --all --json
    """
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.session import list_sessions

    sessions = list_sessions(paths(), None if all_projects else project_root_of(cwd()))
    if as_json:
        from shellkeep.cli.output import print_json

        print_json(sessions)
        return
    if not sessions:
        click.echo("no sessions yet; run 'shellkeep' or 'shellkeep PROGRAM' to record one", err=True)
        return
    _print_table(sessions, all_projects)


def _print_table(sessions: list, all_projects: bool) -> None:  # type: ignore[type-arg]
    from rich.console import Console
    from rich.table import Table

    from shellkeep.cli.output import format_duration, format_local_time

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("ID", "NAME", "AGENT", "STATUS", "STARTED", "DURATION", "EXIT"):
        table.add_column(column, no_wrap=True)
    if all_projects:
        table.add_column("PROJECT", no_wrap=True)
    for meta in sessions:
        row = [
            meta.id,
            meta.name or "-",
            meta.agent,
            meta.status,
            format_local_time(meta.started_at),
            format_duration(meta.duration),
            "-" if meta.exit_code is None else str(meta.exit_code),
        ]
        if all_projects:
            row.append(meta.project)
        table.add_row(*row)
    Console(soft_wrap=True, highlight=False).print(table)
