"""Send a finished session as OpenTelemetry traces over OTLP/HTTP (``[export.otlp]``).

One trace per session: a root span ``shellkeep.session`` from its start to its end with
its metadata as attributes (``shellkeep.*``, ``host.name``, ``vcs.*``, ``gen_ai.*`` token
totals), and one child span ``gen_ai.chat`` per exchange, from its prompt to the next
prompt (or the session's end), with its model and token usage (``gen_ai.request.model``,
``gen_ai.usage.input_tokens``, ...). Prompts and answers (``gen_ai.prompt``,
``gen_ai.completion``) go only with ``export.otlp.content = true``, through the
``[redact]`` rules first. Format: OTLP/HTTP protobuf (opentelemetry.io/docs/specs/otlp),
attribute names after the OpenTelemetry semantic conventions for GenAI (v1.37).

``app.housekeeping`` calls ``send_session`` in the detached process after a session, so a
slow or absent receiver never delays the user. The SDK's exporter retries a connection
error or an HTTP 429/502/503/504 with exponential back-off (1 s, 2 s, 4 s... with jitter)
until ``export.otlp.timeout_s`` has passed or six attempts were made; then the session is
dropped from the export (it stays stored, and nothing is queued). The SDK loads here only,
inside ``send_session``: never on the recording path.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shellkeep import __version__
from shellkeep.agents.base import Exchange
from shellkeep.capture.redaction import redactor_for
from shellkeep.config import Config, OtlpConfig
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta, parse_iso
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import read_exchanges

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

log = get_logger(__name__)

MISSING_SDK = (
    "export.otlp.endpoint is set but the OpenTelemetry SDK is not installed; "
    "run 'pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-http' or unset export.otlp.endpoint"
)
"""The one line for an endpoint set without the SDK (logged by the upkeep, shown by ``send_session``'s error)."""


def has_sdk() -> bool:
    """Return whether the OpenTelemetry SDK and its OTLP/HTTP exporter can be imported (loads neither)."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in ("opentelemetry.sdk.trace", "opentelemetry.exporter.otlp.proto.http"))
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True, slots=True)
class SpanPlan:
    """One span to send: its name, start and end (ns since the epoch) and attributes."""

    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttributeValue]


def _ns(at: str | None) -> int | None:
    """Return an ISO 8601 time as integer nanoseconds since the epoch; None when absent or bad."""
    if not at:
        return None
    try:
        return int(parse_iso(at).timestamp() * 1_000_000_000)
    except ValueError:
        return None


def _present(attributes: Mapping[str, object]) -> dict[str, AttributeValue]:
    """Return ``attributes`` without the None values (OTLP has no null)."""
    return {k: v for k, v in attributes.items() if v is not None}  # type: ignore[misc]


def session_spans(meta: SessionMeta, exchanges: Sequence[Exchange], settings: OtlpConfig, config: Config) -> tuple[SpanPlan, list[SpanPlan]]:
    """Return the session's root span and its exchanges' child spans, as they will be sent.

    Pure: no I/O, no SDK. Prompts and answers are included only when ``settings.content``,
    redacted with ``config.redact``'s rules.
    """
    start = _ns(meta.started_at) or 0
    end = _ns(meta.ended_at) or (start + int((meta.duration or 0.0) * 1e9))
    git = meta.git_end or meta.git_start or {}
    usage = meta.usage or {}
    root = SpanPlan(
        name="shellkeep.session",
        start_ns=start,
        end_ns=max(end, start),
        attributes=_present(
            {
                "shellkeep.session.id": meta.id,
                "shellkeep.session.name": meta.name,
                "shellkeep.session.status": meta.status,
                "shellkeep.session.exit_code": meta.exit_code,
                "shellkeep.session.signal": meta.signal,
                "shellkeep.session.duration_s": meta.duration,
                "shellkeep.session.parent": meta.parent,
                "shellkeep.session.detail": meta.detail,
                "shellkeep.session.exchange_count": len(exchanges),
                "shellkeep.project": meta.project,
                "shellkeep.project.root": meta.project_root,
                "shellkeep.agent": meta.agent,
                "shellkeep.agent.session_id": meta.agent_session_id,
                "gen_ai.agent.name": meta.agent,
                "gen_ai.conversation.id": meta.agent_session_id,
                "gen_ai.usage.input_tokens": usage.get("input"),
                "gen_ai.usage.output_tokens": usage.get("output"),
                "gen_ai.usage.cache_read.input_tokens": usage.get("cache_read"),
                "gen_ai.usage.cache_creation.input_tokens": usage.get("cache_write"),
                "host.name": meta.host or None,
                "user.name": meta.user or None,
                "process.executable.name": meta.command[0] if meta.command else None,
                "vcs.ref.head.name": git.get("branch") if isinstance(git.get("branch"), str) else None,
                "vcs.ref.head.revision": git.get("commit") if isinstance(git.get("commit"), str) else None,
            }
        ),
    )
    redactor = redactor_for(config.redact) if config.redact.enabled else None
    children: list[SpanPlan] = []
    for i, exchange in enumerate(exchanges):
        at = _ns(exchange.time) or start
        following = _ns(exchanges[i + 1].time) if i + 1 < len(exchanges) else None
        attrs: dict[str, object] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.agent.name": meta.agent,
            "gen_ai.request.model": exchange.model,
            "gen_ai.response.model": exchange.model,
            "shellkeep.exchange.index": exchange.index,
            "shellkeep.exchange.tool_calls": len(exchange.tool_calls),
        }
        if exchange.usage is not None:
            attrs.update(
                {
                    "gen_ai.usage.input_tokens": exchange.usage.input,
                    "gen_ai.usage.output_tokens": exchange.usage.output,
                    "gen_ai.usage.cache_read.input_tokens": exchange.usage.cache_read,
                    "gen_ai.usage.cache_creation.input_tokens": exchange.usage.cache_write,
                }
            )
        if settings.content:
            prompt, answer = exchange.prompt, exchange.answer
            if redactor is not None:
                prompt, answer = redactor.redact(prompt), redactor.redact(answer)
            attrs.update({"gen_ai.prompt": prompt, "gen_ai.completion": answer})
        span_end = max(following or end, at)
        children.append(SpanPlan(name=f"gen_ai.chat {exchange.model or meta.agent}", start_ns=at, end_ns=span_end, attributes=_present(attrs)))
    return root, children


def _headers(settings: OtlpConfig) -> dict[str, str]:
    """Return ``export.otlp.headers`` ("name=value" strings, checked at load) as a mapping."""
    return dict(h.split("=", 1) for h in settings.headers)


def send_session(meta: SessionMeta, config: Config, vault: Vault) -> bool:
    """Send ``meta``'s session to ``config.export_otlp.endpoint``; return whether it arrived.

    Blocks while the exporter sends and retries: up to ``export.otlp.timeout_s`` seconds
    (plus one connect). An unset endpoint sends nothing and returns False. Raises
    ShellkeepError (``MISSING_SDK``) when the SDK is not installed; a failed send is
    logged and returns False (the session is dropped from the export).
    """
    settings = config.export_otlp
    if not settings.endpoint:
        return False
    try:  # deferred: the SDK, protobuf and requests load only in the upkeep, and only when on
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry.trace import set_span_in_context
    except ImportError:
        raise ShellkeepError(MISSING_SDK) from None

    exchanges = read_exchanges(meta, vault) if meta.detail != "metadata" else []
    root_plan, child_plans = session_spans(meta, exchanges, settings, config)
    resource = Resource.create(
        _present({"service.name": "shellkeep", "service.version": __version__, "host.name": meta.host or None})
    )
    collected = InMemorySpanExporter()  # gathers the finished spans, so they go in one request
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(collected))
    tracer = provider.get_tracer("shellkeep", __version__)
    root = tracer.start_span(root_plan.name, start_time=root_plan.start_ns, attributes=root_plan.attributes)
    parent = set_span_in_context(root)
    for plan in child_plans:
        child = tracer.start_span(plan.name, context=parent, start_time=plan.start_ns, attributes=plan.attributes)
        child.end(end_time=plan.end_ns)
    root.end(end_time=root_plan.end_ns)
    exporter = OTLPSpanExporter(endpoint=settings.endpoint, headers=_headers(settings), timeout=settings.timeout_s)
    try:
        result = exporter.export(collected.get_finished_spans())
    finally:
        exporter.shutdown()
        provider.shutdown()
    if result is not SpanExportResult.SUCCESS:
        log.warning("could not send session %s to %s; dropped from the export", meta.id, settings.endpoint)
        return False
    log.info("sent session %s to %s (%d spans)", meta.id, settings.endpoint, 1 + len(child_plans))
    return True
