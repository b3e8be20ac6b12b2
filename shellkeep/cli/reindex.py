"""``shellkeep reindex``: rebuild the SQLite index from the session folders."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import complete_session, context, json_option
from shellkeep.cli.output import plural, print_json

if TYPE_CHECKING:
    from shellkeep.app.context import Context
    from shellkeep.archive.scan import RebuildResult


@click.command()
@click.option("--session", "refs", multiple=True, metavar="SESSION", shell_complete=complete_session, help="Index only this session (repeatable).")
@json_option
def reindex(refs: tuple[str, ...], as_json: bool) -> None:
    """Rebuild the search index from the session folders, with a progress bar.

    The index is derived: this is safe at any time, and fixes a stale or damaged one.

    Example: shellkeep reindex
    """
    from shellkeep.archive.index import index_session
    from shellkeep.archive.scan import RebuildResult

    ctx = context()
    where = ctx.paths
    if refs:
        import time

        started = time.perf_counter()
        for ref in refs:
            index_session(where, ctx.resolve(ref), vault=ctx.vault)
        result = RebuildResult(len(refs), 0, time.perf_counter() - started)
    else:
        result = _rebuild_with_progress(ctx)
    if as_json:
        print_json(result)
        return
    skipped = f" ({plural(result.skipped, 'unreadable folder')} skipped)" if result.skipped else ""
    click.echo(f"indexed {plural(result.sessions, 'session')} in {result.seconds:.1f}s{skipped}")


def _rebuild_with_progress(ctx: Context) -> RebuildResult:
    from shellkeep.archive.scan import rebuild

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

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

        return rebuild(ctx.paths, on_progress=on_progress, vault=ctx.vault, recover=ctx.recover)
