"""Send a finished session as OpenTelemetry traces over OTLP/HTTP (``[export.otlp]``).

One trace per session: a root span ``shellkeep.session`` from its start to its end with
its metadata as attributes (``shellkeep.*``, ``host.name``, ``vcs.*``, ``gen_ai.*`` token
totals), and one child span ``gen_ai.chat`` per exchange, from its prompt to the next
prompt (or the session's end), with its model and token usage (``gen_ai.request.model``,
``gen_ai.usage.input_tokens``, ...). Prompts and answers (``gen_ai.prompt``,
``gen_ai.completion``) go only with ``export.otlp.content = true``, through the
``[redact]`` rules first. Format: OTLP/HTTP protobuf (opentelemetry.io/docs/specs/otlp),
attribute names after the OpenTelemetry semantic conventions for GenAI (v1.37).

``app.housekeeping`` calls ``export_session`` in the detached process after a session, so a
slow or absent receiver never delays the user. The SDK's exporter retries a connection
error or an HTTP 429/502/503/504 with exponential back-off (1 s, 2 s, 4 s... with jitter)
until ``export.otlp.timeout_s`` has passed or six attempts were made. Each session is
queued on disk before its first try: one small file per session in ``Paths.otlp_queue``
(``{"folder", "tries", "queued_at"}``), removed once it arrived, so an upkeep killed while
sending leaves it queued. Every housekeeping run sends the queue, oldest first (its own
session among them), and stops at the first that fails (the receiver is down). The queue
is bounded: at most ``QUEUE_MAX_SESSIONS`` (the oldest are dropped), each tried at most
``QUEUE_MAX_TRIES`` runs after its first; a dropped session stays stored, only its export
is given up (logged). The SDK loads here only, inside ``send_session``: never
on the recording path.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shellkeep import __version__
from shellkeep.agents.base import Exchange
from shellkeep.capture.redaction import redactor_for
from shellkeep.config import Config, OtlpConfig
from shellkeep.errors import ShellkeepError
from shellkeep.logs import get_logger
from shellkeep.store.atomic import write_json_atomic
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir
from shellkeep.store.session import SessionMeta, iso, parse_iso, read_meta, utc_now
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

QUEUE_MAX_SESSIONS = 200
"""Most sessions waiting in the OTLP queue; past it the oldest are dropped from the export."""
QUEUE_MAX_TRIES = 5
"""How many later housekeeping runs try to send a queued session before it is dropped from the export."""


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
        exporter.shutdown()  # type: ignore[no-untyped-call]  # opentelemetry-exporter leaves it untyped
        provider.shutdown()
    if result is not SpanExportResult.SUCCESS:
        log.warning("could not send session %s to %s; dropped from the export", meta.id, settings.endpoint)
        return False
    log.info("sent session %s to %s (%d spans)", meta.id, settings.endpoint, 1 + len(child_plans))
    return True


# -- the queue of sessions not sent yet ------------------------------------------------


def export_session(
    paths: Paths,
    meta: SessionMeta,
    config: Config,
    vault: Vault,
    *,
    max_sessions: int = QUEUE_MAX_SESSIONS,
    max_tries: int = QUEUE_MAX_TRIES,
) -> bool:
    """Queue ``meta``'s session on disk, then send the queue, oldest first; return whether it arrived.

    The upkeep's entry point (``app.housekeeping``). The session is in the queue before its
    first try, so an upkeep killed while sending (a reboot, a logout) leaves it there for the
    next run. The queue is sent whatever became of this session: oldest first, stopping at
    the first that does not arrive (the receiver is down). One upkeep sends at a time (a
    lock; another waits for it, then sends what is left). Blocks while sending (each session
    up to ``export.otlp.timeout_s``). Never raises: a failure is logged (the sessions stay
    stored either way).
    """
    if not config.export_otlp.endpoint:
        return False
    if not has_sdk():
        log.warning("could not export %s over OTLP: %s", meta.id, MISSING_SDK)
        return False  # queueing would not help
    try:
        _enqueue(paths, meta, max_sessions)
        return meta.id in _send_queued(paths, config, vault, max_tries)
    except OSError as exc:
        log.warning("could not use the OTLP queue %s: %s", paths.otlp_queue, exc)
    return False


def queued_sessions(paths: Paths) -> list[str]:
    """Return the ids of the sessions waiting in the OTLP queue, oldest first."""
    try:
        return sorted(p.stem for p in paths.otlp_queue.glob("*.json"))
    except OSError:
        return []


def _enqueue(paths: Paths, meta: SessionMeta, max_sessions: int) -> None:
    ensure_dir(paths.otlp_queue)
    entry = paths.otlp_queue / f"{meta.id}.json"
    if not entry.exists():
        write_json_atomic(entry, {"folder": str(meta.folder), "tries": 0, "queued_at": iso(utc_now())})
    waiting = queued_sessions(paths)  # session ids sort by time: the oldest first
    for session_id in waiting[: max(0, len(waiting) - max_sessions)]:
        (paths.otlp_queue / f"{session_id}.json").unlink(missing_ok=True)
        log.warning("dropped session %s from the OTLP export: more than %d sessions were waiting", session_id, max_sessions)


@contextmanager
def _queue_lock(paths: Paths) -> Iterator[None]:
    """Hold the queue's lock (``flock`` on ``otlp-queue/.lock``), waiting while another upkeep sends."""
    import fcntl

    fd = os.open(paths.otlp_queue / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _send_queued(paths: Paths, config: Config, vault: Vault, max_tries: int) -> set[str]:
    """Send the queued sessions oldest first until one does not arrive; return the ids sent.

    The queue is listed again after each session, so what another upkeep queued meanwhile
    is sent too. A session that does not arrive counts a try and ends the run (dropped once
    it failed ``max_tries`` + 1 times); one removed since it was queued is dropped.
    """
    sent_ids: set[str] = set()
    with _queue_lock(paths):
        while True:
            waiting = queued_sessions(paths)
            if not waiting:
                return sent_ids
            session_id = waiting[0]
            entry = paths.otlp_queue / f"{session_id}.json"
            try:
                queued = json.loads(entry.read_bytes())
                meta = read_meta(Path(str(queued["folder"])))
            except FileNotFoundError:
                entry.unlink(missing_ok=True)  # the session was removed since: nothing to send
                continue
            except (OSError, ValueError, KeyError, TypeError, ShellkeepError) as exc:
                log.warning("dropped session %s from the OTLP export: %s", session_id, exc)
                entry.unlink(missing_ok=True)
                continue
            if _send_one(meta, config, vault):
                entry.unlink(missing_ok=True)
                sent_ids.add(session_id)
                continue
            tries = int(queued.get("tries") or 0) + 1
            if tries > max_tries:
                entry.unlink(missing_ok=True)
                log.warning("dropped session %s from the OTLP export after %d tries", session_id, tries)
            else:
                write_json_atomic(entry, {**queued, "tries": tries})
                log.info("session %s waits in the OTLP queue for a later run", session_id)
            return sent_ids  # the receiver failed: the rest wait for the next run


def _send_one(meta: SessionMeta, config: Config, vault: Vault) -> bool:
    """Send one session; return whether it arrived (a failure is logged, never raised)."""
    try:
        return send_session(meta, config, vault)
    except Exception as exc:  # noqa: BLE001 - the export is a copy; the session is stored
        log.warning("could not export %s over OTLP: %s", meta.id, exc)
        return False
