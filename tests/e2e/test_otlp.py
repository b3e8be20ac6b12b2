"""OTLP/HTTP export of finished sessions (app/otlp.py, the upkeep in app/housekeeping.py).

A real ``http.server`` on 127.0.0.1 accepts ``POST /v1/traces`` and decodes each body with
the OpenTelemetry protobuf definitions (``tests/otlp_receiver.py``). It can answer with chosen statuses first (to make the exporter
retry) or hold its answer until the test lets it go (to show the user's command does not
wait). Waits are on events.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.app.context import open_context
from shellkeep.app.otlp import send_session
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from tests.helpers import invoke_sk, run_sk, session_folders, wait_for_background, wait_until
from tests.otlp_receiver import OtlpReceiver, configure_otlp as _configure, spans as _spans, value as _value
from tests.factory import make_session

PY = sys.executable
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token the built-in rules catch
EXCHANGES = [
    {
        "prompt": "list the files",
        "answer": "Here they are.",
        "time": "2024-05-01T12:01:01.000Z",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 120, "output": 30, "cache_read": 1000, "cache_write": 5},
        "tool_calls": [{"name": "Bash", "summary": "ls"}],
    },
    {
        "prompt": f"use the token {SECRET} please",
        "answer": "Done.",
        "time": "2024-05-01T12:01:03.000Z",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 200, "output": 40, "cache_read": 0, "cache_write": 0},
    },
]


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver()
    yield server
    server.close()


def _send(home: Paths, meta: SessionMeta) -> bool:
    ctx = open_context(paths=home, cwd=Path.cwd())
    return send_session(meta, ctx.config, ctx.vault)


def test_a_session_arrives_as_a_span_with_a_child_per_exchange(home: Paths, receiver: OtlpReceiver) -> None:
    meta = make_session(home, Path.cwd(), 1, name="demo", agent="claude", exchanges=EXCHANGES)
    _configure(home, receiver.endpoint)
    assert _send(home, meta)
    [request] = receiver.requests()
    assert receiver.paths == ["/v1/traces"]
    resource = {a.key: _value(a.value) for a in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "shellkeep" and resource["host.name"] == "elsewhere"
    spans = _spans(request)
    [(_, root, root_id, root_parent)] = [s for s in spans if s[0] == "shellkeep.session"]
    assert root_parent == b""
    assert root["shellkeep.session.id"] == meta.id and root["shellkeep.session.name"] == "demo"
    assert root["shellkeep.session.status"] == "finished" and root["shellkeep.session.exit_code"] == 0
    assert root["gen_ai.agent.name"] == "claude" and root["shellkeep.session.exchange_count"] == 2
    children = [s for s in spans if s[0] != "shellkeep.session"]
    assert [c[0] for c in children] == ["gen_ai.chat claude-sonnet-4-5"] * 2
    assert all(c[3] == root_id for c in children)
    first, second = (c[1] for c in children)
    assert first["gen_ai.request.model"] == "claude-sonnet-4-5" and first["gen_ai.operation.name"] == "chat"
    assert (first["gen_ai.usage.input_tokens"], first["gen_ai.usage.output_tokens"]) == (120, 30)
    assert first["gen_ai.usage.cache_read.input_tokens"] == 1000 and first["shellkeep.exchange.tool_calls"] == 1
    assert (second["shellkeep.exchange.index"], second["gen_ai.usage.input_tokens"]) == (1, 200)


def test_content_off_sends_no_prompt_or_answer(home: Paths, receiver: OtlpReceiver) -> None:
    meta = make_session(home, Path.cwd(), 1, exchanges=EXCHANGES)
    _configure(home, receiver.endpoint)
    assert _send(home, meta)
    body = receiver.bodies[0]
    assert b"list the files" not in body and b"Here they are" not in body and SECRET.encode() not in body
    assert not any("gen_ai.prompt" in attrs for _, attrs, _, _ in _spans(receiver.requests()[0]))


def test_content_on_sends_prompts_and_answers_redacted(home: Paths, receiver: OtlpReceiver) -> None:
    meta = make_session(home, Path.cwd(), 1, exchanges=EXCHANGES)
    _configure(home, receiver.endpoint, content=True)
    assert _send(home, meta)
    assert SECRET.encode() not in receiver.bodies[0]
    children = [attrs for name, attrs, _, _ in _spans(receiver.requests()[0]) if name != "shellkeep.session"]
    assert [(c["gen_ai.prompt"], c["gen_ai.completion"]) for c in children][0] == ("list the files", "Here they are.")
    prompt = children[1]["gen_ai.prompt"]
    assert isinstance(prompt, str) and prompt.startswith("use the token [REDACTED:") and prompt.endswith("] please")


def test_a_transient_failure_is_retried_until_it_arrives(home: Paths) -> None:
    server = OtlpReceiver(statuses=[503, 503])
    try:
        meta = make_session(home, Path.cwd(), 1, exchanges=EXCHANGES)
        _configure(home, server.endpoint, timeout_s=30)
        assert _send(home, meta)
        assert len(server.bodies) == 3 and server.bodies[0] == server.bodies[2]  # the same spans, sent again
    finally:
        server.close()


def test_a_receiver_that_keeps_failing_is_given_up_after_a_bound(home: Paths) -> None:
    server = OtlpReceiver(statuses=[503] * 100)
    try:
        meta = make_session(home, Path.cwd(), 1)
        _configure(home, server.endpoint, timeout_s=2.5)
        assert not _send(home, meta)
        assert 2 <= len(server.bodies) <= 6  # retried with back-off, then dropped (the SDK's six attempts at most)
    finally:
        server.close()


def test_an_unset_endpoint_sends_nothing(home: Paths, receiver: OtlpReceiver) -> None:
    meta = make_session(home, Path.cwd(), 1)
    assert not _send(home, meta)
    assert receiver.bodies == []


def test_the_command_returns_while_the_receiver_holds_its_answer(home: Paths) -> None:
    hold = threading.Event()
    server = OtlpReceiver(hold=hold)
    try:
        _configure(home, server.endpoint)
        result = run_sk("run", "--name", "otel", "--", PY, "-c", "print('all good')")
        assert result.returncode == 0 and server.answered == 0  # nothing was answered yet: the command did not wait
        hold.set()
        wait_until(lambda: server.answered >= 1, 60)
        [folder] = session_folders(home)
        spans = _spans(server.requests()[0])
        [root] = [attrs for name, attrs, _, _ in spans if name == "shellkeep.session"]
        assert root["shellkeep.session.id"] == folder.parent.name and root["shellkeep.session.name"] == "otel"
        wait_for_background(home)
    finally:
        hold.set()
        server.close()


def test_a_receiver_that_is_down_does_not_touch_the_command_or_the_session(home: Paths) -> None:
    # Port 9 (discard) on loopback: nothing listens, each connection is refused at once.
    _configure(home, "http://127.0.0.1:9/v1/traces", timeout_s=1)
    result = run_sk("run", "--name", "down", "--", PY, "-c", "print('still fine')")
    assert result.returncode == 0
    wait_for_background(home)
    listed = invoke_sk("ls", "--json")
    assert listed.returncode == 0 and b'"down"' in listed.stdout


def _without_sdk(tmp_path: Path) -> dict[str, str]:
    """Return an environment whose ``opentelemetry`` is an empty package: an install without the SDK."""
    shadow = tmp_path / "shadow" / "opentelemetry"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    return {**os.environ, "PYTHONPATH": str(shadow.parent)}


def test_without_the_sdk_doctor_and_the_upkeep_say_so_in_one_line(home: Paths, receiver: OtlpReceiver, tmp_path: Path) -> None:
    env = _without_sdk(tmp_path)
    _configure(home, receiver.endpoint)
    meta = make_session(home, Path.cwd(), 1, exchanges=EXCHANGES)
    upkeep = subprocess.run(
        [PY, "-m", "shellkeep.app.housekeeping", str(meta.folder)], env=env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert upkeep.returncode == 0
    [line] = upkeep.stderr.decode().splitlines()
    assert "the OpenTelemetry SDK is not installed" in line and "pip install" in line
    assert receiver.bodies == []
    assert b'"' + meta.id.encode() + b'"' in invoke_sk("ls", "--json").stdout  # indexed all the same
    doctor = run_sk("doctor", "--json", env=env)
    [check] = [c for c in json.loads(doctor.stdout) if c["check"] == "otlp export"]
    assert check["status"] == "fail" and "not installed" in check["detail"] and "pip install" in check["fix"]
    [ok] = [c for c in json.loads(invoke_sk("doctor", "--json").stdout) if c["check"] == "otlp export"]
    assert ok["status"] == "ok" and receiver.endpoint in ok["detail"]


def _session_ids(server: OtlpReceiver) -> list[object]:
    return [attrs["shellkeep.session.id"] for r in server.requests() for name, attrs, _, _ in _spans(r) if name == "shellkeep.session"]


def _down_endpoint() -> tuple[str, int]:
    """The endpoint of a receiver that was started and stopped: nothing listens on its port now."""
    stopped = OtlpReceiver()
    port = stopped.server.server_address[1]
    stopped.close()
    return stopped.endpoint, port


def test_a_session_not_sent_while_the_receiver_was_down_is_sent_at_a_later_run(home: Paths) -> None:
    endpoint, port = _down_endpoint()
    _configure(home, endpoint, timeout_s=1)
    first = run_sk("run", "--name", "while-down", "--", PY, "-c", "print('one')")
    assert first.returncode == 0
    wait_for_background(home)  # retried with back-off within timeout_s, then queued
    [queued] = [p.stem for p in (home.home / "otlp-queue").glob("*.json")]
    server = OtlpReceiver(port=port)  # the receiver is back
    try:
        second = run_sk("run", "--name", "when-up", "--", PY, "-c", "print('two')")
        assert second.returncode == 0
        wait_until(lambda: len(_session_ids(server)) >= 2, 60)
        wait_for_background(home)
        ids = _session_ids(server)
        assert ids[0] == queued and len(ids) == 2  # the queued one first, then this run's session, once
        assert list((home.home / "otlp-queue").glob("*.json")) == []
    finally:
        server.close()


def test_the_queue_is_bounded_in_sessions_and_in_tries(home: Paths) -> None:
    from shellkeep.app.otlp import export_session, queued_sessions

    endpoint, port = _down_endpoint()
    _configure(home, endpoint, timeout_s=0.3)
    ctx = open_context(paths=home, cwd=Path.cwd())
    metas = [make_session(home, Path.cwd(), n) for n in range(1, 5)]
    for meta in metas[:3]:
        assert not export_session(home, meta, ctx.config, ctx.vault, max_sessions=2, max_tries=1)
    assert queued_sessions(home) == [metas[1].id, metas[2].id]  # the oldest was dropped past the bound
    server = OtlpReceiver(statuses=[503] * 100, port=port)  # the receiver answers, and keeps failing
    try:
        assert not export_session(home, metas[3], ctx.config, ctx.vault, max_sessions=2, max_tries=1)
        assert queued_sessions(home) == [metas[2].id, metas[3].id]  # metas[1] dropped past the bound
        assert set(_session_ids(server)) == {metas[2].id}  # the oldest failed: the run stopped there
        assert not export_session(home, metas[3], ctx.config, ctx.vault, max_sessions=2, max_tries=1)
        assert queued_sessions(home) == [metas[3].id]  # metas[2] failed a second time: dropped past its tries
    finally:
        server.close()


def test_a_session_whose_upkeep_was_killed_while_sending_is_sent_by_the_next_run(home: Paths) -> None:
    from shellkeep.app.otlp import export_session, queued_sessions

    hold = threading.Event()
    server = OtlpReceiver(hold=hold)  # takes the request and holds its answer
    try:
        _configure(home, server.endpoint)
        first = make_session(home, Path.cwd(), 1)
        upkeep = subprocess.Popen(
            [PY, "-m", "shellkeep.app.housekeeping", str(first.folder)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_until(lambda: server.bodies, 60)  # it is sending
        upkeep.kill()  # a reboot or a logout while the receiver had not answered
        upkeep.wait(60)
        hold.set()
        assert queued_sessions(home) == [first.id]  # on disk before it was sent
        second = make_session(home, Path.cwd(), 2)
        ctx = open_context(paths=home, cwd=Path.cwd())
        assert export_session(home, second, ctx.config, ctx.vault)
        assert _session_ids(server) == [first.id, first.id, second.id]  # sent again by the next run, then its own
        assert queued_sessions(home) == []
    finally:
        hold.set()
        server.close()


def test_the_queue_is_sent_whatever_became_of_the_runs_own_session(home: Paths) -> None:
    from shellkeep.app.otlp import export_session, queued_sessions

    endpoint, port = _down_endpoint()
    _configure(home, endpoint, timeout_s=0.3, content=True)
    ctx = open_context(paths=home, cwd=Path.cwd())
    waiting = make_session(home, Path.cwd(), 1)
    assert not export_session(home, waiting, ctx.config, ctx.vault)  # the receiver is down: it waits
    big = [{"prompt": "paste the log", "answer": "line of the log\n" * 20_000, "time": "2024-05-01T12:01:01.000Z"}]
    own = make_session(home, Path.cwd(), 2, exchanges=big)
    server = OtlpReceiver(port=port, max_body_bytes=64 << 10)  # back, and refusing the big one (413)
    try:
        assert not export_session(home, own, ctx.config, ctx.vault)
        assert waiting.id in _session_ids(server)  # the queued one went all the same
        assert queued_sessions(home) == [own.id]  # the refused one waits for a later run
    finally:
        server.close()
