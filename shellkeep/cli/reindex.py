"""``shellkeep reindex``: rebuild the SQLite index from the session folders."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import cwd, json_option, paths

if TYPE_CHECKING:
    from shellkeep.store.index import RebuildResult
    from shellkeep.store.paths import Paths


@click.command()
@click.option("--session", "refs", multiple=True, metavar="SESSION", help="Index only this session (repeatable).")
@json_option
def reindex(refs: tuple[str, ...], as_json: bool) -> None:
    """Rebuild the search index from the session folders, with a progress bar.

    The index is derived: this is safe at any time, and fixes a stale or damaged one.

    Example: shellkeep reindex
    """
    from shellkeep.store.index import RebuildResult, index_session

    where = paths()
    if refs:
        import time

        from shellkeep.store.paths import project_root_of
        from shellkeep.store.session import resolve_session

        started = time.perf_counter()
        for ref in refs:
            index_session(where, resolve_session(where, project_root_of(cwd()), ref))
        result = RebuildResult(len(refs), 0, time.perf_counter() - started)
    else:
        result = _rebuild_with_progress(where)
    if as_json:
        from shellkeep.cli.output import print_json

        print_json(result)
        return
    skipped = f" ({result.skipped} unreadable folders skipped)" if result.skipped else ""
    click.echo(f"indexed {result.sessions} sessions in {result.seconds:.1f}s{skipped}")


def _rebuild_with_progress(where: Paths) -> RebuildResult:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from shellkeep.store.index import rebuild

    console = Console(stderr=True)
    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("indexing", total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        return rebuild(where, on_progress=on_progress)
