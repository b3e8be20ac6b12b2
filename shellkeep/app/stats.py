"""Sum up what was recorded: sessions, time, exchanges, tokens and their estimated cost.

The counts come from the derived index (``archive.usage.usage_report``: SQL over the
``sessions`` and ``usage`` tables, brought up to date first; no session file is written).
The cost is estimated here from the ``[prices]`` table of the config (``Config.prices``:
USD per million tokens, shipped with the vendors' public prices, overridable per model).
A model with tokens but no price makes the cost of every group it is in unknown (None,
shown as "?"), never 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from shellkeep.agents.registry import adapter_named
from shellkeep.app.context import Context
from shellkeep.archive.usage import USAGE_GROUPS, UsageGroup, UsageTokens, usage_report
from shellkeep.config import ModelPrice
from shellkeep.errors import UserInputError

__all__ = ["USAGE_GROUPS", "StatsReport", "StatsRequest", "StatsRow", "compute_stats", "estimate_cost", "price_of", "row_label", "session_costs"]

_DATE_SUFFIX = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")


@dataclass(frozen=True, slots=True)
class StatsRequest:
    """What ``shellkeep stats`` sums: sessions started at or after ``since`` (None: all),
    grouped ``by`` one of ``USAGE_GROUPS`` (None: the total only)."""

    since: datetime | None = None
    by: str | None = None


@dataclass(frozen=True, slots=True)
class StatsRow:
    """One group of ``shellkeep stats`` (the ``--json`` contract).

    key: the agent, project key, local day (YYYY-MM-DD) or model of the group; '' for the
    total, and for sessions whose agent named no model (``row_label``). duration_s: recorded
    seconds of its ended sessions, rounded to the millisecond. Tokens as the agents reported them. cost_usd: estimated USD, None
    when a model in the group has tokens but no price (``unpriced_models`` names them).
    """

    key: str
    sessions: int
    duration_s: float
    exchanges: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float | None
    unpriced_models: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StatsReport:
    """The result of ``compute_stats``: how it was grouped, from when (ISO 8601 or None),
    the groups (by day: oldest first; else most tokens first) and the total."""

    by: str | None
    since: str | None
    groups: tuple[StatsRow, ...]
    total: StatsRow


def price_of(prices: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """Return the price of ``model`` as an agent names it, or None when the table has none.

    Tried as given, then lower-cased without a provider prefix ("anthropic/", "models/")
    and without a date suffix ("-20250929", "@20250929", "-2025-08-07").
    """
    if model in prices:
        return prices[model]
    name = model.strip().lower().rsplit("/", 1)[-1]
    return prices.get(name) or prices.get(_DATE_SUFFIX.sub("", name))


def estimate_cost(tokens: UsageTokens, price: ModelPrice, *, input_includes_cache_read: bool) -> float:
    """Return the USD cost of ``tokens`` at ``price`` (USD per million tokens).

    input_includes_cache_read: the agent counts cached input inside ``input`` (OpenAI,
    Google), so those tokens are billed at the cache price only.
    """
    fresh = tokens.input - tokens.cache_read if input_includes_cache_read else tokens.input
    return (
        max(fresh, 0) * price.input
        + tokens.output * price.output
        + tokens.cache_read * price.cache_read
        + tokens.cache_write * price.cache_write
    ) / 1_000_000


def compute_stats(ctx: Context, request: StatsRequest) -> StatsReport:
    """Return the sessions, time, exchanges, tokens and estimated cost of every project.

    Blocks while the index is brought up to date (``usage_report``). Raises UserInputError
    for an unknown ``by``; DataError / ShellkeepError when the index cannot be used.
    """
    if request.by is not None and request.by not in USAGE_GROUPS:
        raise UserInputError(f"cannot group by '{request.by}'; use one of {', '.join(USAGE_GROUPS)}")
    report = usage_report(ctx.paths, by=request.by, since=request.since, vault=ctx.vault, recover=ctx.recover)
    prices = ctx.config.prices
    by_key: dict[str, list[UsageTokens]] = {}
    for tokens in report.tokens:
        by_key.setdefault(tokens.key, []).append(tokens)
    groups = [_row(group, by_key.get(group.key, []), prices) for group in report.groups]
    if request.by == "day":
        groups.sort(key=lambda row: row.key)
    else:
        groups.sort(key=lambda row: (-_all_tokens(row), -row.sessions, row.key))
    total = _row(report.total, report.tokens, prices)
    since = request.since.isoformat() if request.since else None
    return StatsReport(request.by, since, tuple(groups), total)


def session_costs(ctx: Context) -> dict[str, float | None]:
    """Return each session's estimated cost in USD by id, as ``stats`` prices it: None when a
    model it used has no price; a session that spent no tokens is 0.0. Blocks while the index
    is brought up to date; raises as ``compute_stats``."""
    report = usage_report(ctx.paths, by="session", vault=ctx.vault, recover=ctx.recover)
    by_key: dict[str, list[UsageTokens]] = {}
    for tokens in report.tokens:
        by_key.setdefault(tokens.key, []).append(tokens)
    return {group.key: _row(group, by_key.get(group.key, []), ctx.config.prices).cost_usd for group in report.groups}


def row_label(by: str | None, key: str) -> str:
    """Return how a table shows a group's ``key``: itself, or for the empty key what it means
    (grouped by model: sessions no agent reported a model for, plain programs among them)."""
    if key:
        return key
    return "no model reported" if by == "model" else "unknown"


def _all_tokens(row: StatsRow) -> int:
    return row.input_tokens + row.output_tokens + row.cache_read_tokens + row.cache_write_tokens


def _row(group: UsageGroup, tokens: Iterable[UsageTokens], prices: Mapping[str, ModelPrice]) -> StatsRow:
    sums = [0, 0, 0, 0]
    cost = 0.0
    unpriced: set[str] = set()
    for item in tokens:
        for i, value in enumerate((item.input, item.output, item.cache_read, item.cache_write)):
            sums[i] += value
        if not (item.input or item.output or item.cache_read or item.cache_write):
            continue  # nothing spent: no price needed
        price = price_of(prices, item.model)
        if price is None:
            unpriced.add(item.model)
            continue
        cost += estimate_cost(item, price, input_includes_cache_read=_includes_cache(item.agent))
    return StatsRow(
        key=group.key,
        sessions=group.sessions,
        duration_s=round(group.duration_s, 3),  # sums of floats: no 1234.5000000001
        exchanges=group.exchanges,
        input_tokens=sums[0],
        output_tokens=sums[1],
        cache_read_tokens=sums[2],
        cache_write_tokens=sums[3],
        cost_usd=None if unpriced else round(cost, 6),
        unpriced_models=tuple(sorted(unpriced)),
    )


def _includes_cache(agent: str) -> bool:
    """Return the adapter's ``input_includes_cache_read`` (False for a program no adapter knows)."""
    try:
        adapter = adapter_named(agent)
    except UserInputError:
        return False
    return bool(getattr(adapter, "input_includes_cache_read", False))
