"""``shellkeep stats``: sessions, time, exchanges, tokens and estimated cost, with a bar chart."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from shellkeep.app.stats import USAGE_GROUPS, StatsRequest, compute_stats
from shellkeep.archive.index import parse_time
from shellkeep.cli.options import context, json_option
from shellkeep.cli.output import format_duration, print_json

if TYPE_CHECKING:
    from shellkeep.app.stats import StatsReport, StatsRow

_BAR_WIDTH = 12


@click.command()
@click.option("--since", metavar="WHEN", help="Sessions started at or after WHEN: 2024-05-01, today, 2h, 3d, 1w.")
@click.option("--by", type=click.Choice(USAGE_GROUPS), help="One row per agent, project, day or model.")
@json_option
def stats(since: str | None, by: str | None, as_json: bool) -> None:
    """Sum up every project's sessions: time recorded, exchanges, tokens and estimated cost.

    The cost is estimated from the [prices] table of your config (USD per million tokens,
    shipped with the vendors' public prices); a model without a price shows "?".

    Example: shellkeep stats --since 1w --by model
    """
    ctx = context()
    report = compute_stats(ctx, StatsRequest(since=parse_time(since) if since else None, by=by))
    if as_json:
        print_json(report)
    elif not report.total.sessions:
        click.echo("no sessions match; try without --since" if since else "no sessions yet", err=True)
    else:
        _print_report(report)


def _print_report(report: StatsReport) -> None:
    from rich.bar import Bar
    from rich.console import Console
    from rich.table import Table

    label = report.by.upper() if report.by else ""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name in (label, "SESSIONS", "TIME", "EXCH", "INPUT", "OUTPUT", "CACHE R/W", "COST", ""):
        table.add_column(name, justify="left" if name in (label, "") else "right", no_wrap=True, min_width=len(name))
    rows = list(report.groups) if report.by else []
    biggest = max([_tokens(row) for row in rows] + [1])
    for row in rows:
        table.add_row(*_cells(row, row.key or "(none)"), Bar(biggest, 0, _tokens(row), width=_BAR_WIDTH))
    table.add_row(*_cells(report.total, "total"), "", style="bold" if rows else None)
    Console(highlight=False).print(table)


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
