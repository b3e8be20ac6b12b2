"""``shellkeep stats``: sessions, time, exchanges, tokens and estimated cost, with a bar chart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from shellkeep.cli.options import context, json_option
from shellkeep.cli.output import format_duration, print_json

if TYPE_CHECKING:
    from shellkeep.app.stats import StatsReport, StatsRow

GROUPS = ("agent", "project", "day", "model")
"""The values of --by: ``app.stats.USAGE_GROUPS``, written out so that ``stats --help`` loads
no app module (the index with it); tests/unit/test_contract.py checks they agree."""

_BAR_WIDTH = 12
_MIN_BAR_WIDTH = 4
"""A bar narrower than this tells nothing: the column is left out."""
_MIN_KEY_WIDTH = 8
"""The narrowest the first column (a model, a project) is folded to."""


@click.command()
@click.option("--since", metavar="WHEN", help="Sessions started at or after WHEN: 2024-05-01, today, 2h, 3d, 1w.")
@click.option("--by", type=click.Choice(GROUPS), help="One row per agent, project, day or model.")
@json_option
def stats(since: str | None, by: str | None, as_json: bool) -> None:
    """Sum up every project's sessions: time recorded, exchanges, tokens and estimated cost.

    The cost is estimated from the [prices] table of your config (USD per million tokens,
    shipped with the vendors' public prices); a model without a price shows "?".

    Example: shellkeep stats --since 1w --by model
    """
    from shellkeep.app.stats import StatsRequest, compute_stats
    from shellkeep.archive.since import parse_time

    ctx = context()
    report = compute_stats(ctx, StatsRequest(since=parse_time(since) if since else None, by=by))
    if as_json:
        print_json(report)
    elif not report.total.sessions:
        click.echo("no sessions match; try without --since" if since else "no sessions yet", err=True)
    else:
        _print_report(report)


def _print_report(report: StatsReport) -> None:
    from shellkeep.app.stats import row_label

    from rich.bar import Bar
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    label = report.by.upper() if report.by else ""
    names = (label, "SESSIONS", "TIME", "EXCH", "INPUT", "OUTPUT", "CACHE R/W", "COST")
    rows = list(report.groups) if report.by else []
    cells = [_cells(row, row_label(report.by, row.key)) for row in rows]
    total = _cells(report.total, "total")
    widths = [max(len(name), *(len(c[i]) for c in (*cells, total))) for i, name in enumerate(names)]
    # A narrow terminal shrinks the bar, then drops it; the numbers are never cut, and a long
    # key (a model name) folds onto a second line rather than losing its end.
    numbers = sum(widths[1:]) + 2 * (len(names) - 1)  # each column is set apart by two spaces
    room = console.width - numbers - widths[0] - 2
    bar_width = min(_BAR_WIDTH, room) if rows and room >= _MIN_BAR_WIDTH else 0
    key_width = max(min(widths[0], console.width - numbers), min(widths[0], _MIN_KEY_WIDTH))
    if numbers + key_width > console.width:
        console.width = numbers + key_width  # narrower still: the terminal wraps the lines, nothing is cut
    table = Table(box=None, pad_edge=False, header_style="bold")
    for i, name in enumerate(names):
        if i == 0:
            table.add_column(name, justify="left", overflow="fold", width=key_width)
        else:
            table.add_column(name, justify="right", no_wrap=True, min_width=widths[i])
    if bar_width:
        table.add_column("", no_wrap=True, width=bar_width)
    biggest = max([_tokens(row) for row in rows] + [1])
    for row, row_cells in zip(rows, cells):
        bar = (Bar(biggest, 0, _tokens(row), width=bar_width),) if bar_width else ()
        table.add_row(*row_cells, *bar)
    table.add_row(*total, *(("",) if bar_width else ()), style="bold" if rows else None)
    console.print(table)


def _cells(row: StatsRow, key: str) -> tuple[str, ...]:
    cost = "?" if row.cost_usd is None else f"${row.cost_usd:,.2f}"
    return (
        key,
        str(row.sessions),
        format_duration(row.duration_s),
        str(row.exchanges),
        _count(row.input_tokens),
        _count(row.output_tokens),
        f"{_count(row.cache_read_tokens)}/{_count(row.cache_write_tokens)}",
        cost,
    )


def _tokens(row: StatsRow) -> int:
    return row.input_tokens + row.output_tokens + row.cache_read_tokens + row.cache_write_tokens


def _count(n: int) -> str:
    """Format a token count as ``812``, ``12.3k`` or ``4.56M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"
