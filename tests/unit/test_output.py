"""The session's outputs (``capture.output``): started, fed, closed, and a failing one dropped.

A real relay on ``cat`` in a real pty feeds a real recorder writing to ``tmp_path``; its
writer thread hands what it encodes to an ``OutputPipeline``. An output that raises is
reported once and dropped while the recording, the relay and the other outputs go on.
"""

from __future__ import annotations

import os
from pathlib import Path

from shellkeep.asciicast.model import Header
from shellkeep.capture.activity import OutputActivity
from shellkeep.capture.output import Batch, OutputPipeline, SessionEnd, SessionStart
from shellkeep.capture.recorder import Recorder
from shellkeep.pty.relay import Relay, RelayResult, spawn
from shellkeep.termsize import TermSize
from tests.helpers import wait_until

SIZE = TermSize(80, 24)


class _Collecting:
    """An output that keeps everything it is given."""

    name = "collector"

    def __init__(self) -> None:
        self.started: SessionStart | None = None
        self.events: list[tuple[str, str, bytes]] = []
        self.activity: list[OutputActivity] = []
        self.ends: list[SessionEnd | None] = []

    def start(self, session: SessionStart) -> None:
        self.started = session

    def event(self, batch: Batch) -> None:
        self.events.extend(batch.events)
        if batch.activity is not None:
            self.activity.append(batch.activity)

    def close(self, end: SessionEnd | None) -> None:
        self.ends.append(end)


class _Failing(_Collecting):
    """An output whose ``event`` (or ``start``) raises."""

    name = "failing output"

    def __init__(self, *, in_start: bool = False) -> None:
        super().__init__()
        self.in_start = in_start
        self.calls = 0

    def start(self, session: SessionStart) -> None:
        if self.in_start:
            raise RuntimeError("cannot start")

    def event(self, batch: Batch) -> None:
        self.calls += 1
        raise RuntimeError("boom")


def _session(folder: Path, recorder: Recorder, relay: Relay) -> SessionStart:
    return SessionStart(
        folder=folder,
        session_id="sid",
        header=Header(size=SIZE, timestamp=0),
        pty_fd=relay.child.fd,
        shell_pid=None,
        add_marker=recorder.add_marker,
        type_input=relay.type_input,
        elapsed_s=relay.elapsed_s,
    )


def _record_cat(tmp_path: Path, pipeline: OutputPipeline, typed: bytes) -> tuple[RelayResult, Recorder, Path]:
    """Relay ``cat`` with ``typed`` on its stdin (then end of file), recording to tmp_path."""
    cast = tmp_path / "session.cast"
    recorder = Recorder(
        open(cast, "ab"),
        header=Header(size=SIZE, timestamp=0),
        on_events=pipeline.on_events,
        on_activity=pipeline.on_activity,
    )
    stdin_r, stdin_w = os.pipe()
    os.write(stdin_w, typed)
    os.close(stdin_w)
    screen = os.open(tmp_path / "screen", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        child = spawn(["cat"], cwd=tmp_path, env=dict(os.environ), size=SIZE)
        relay = Relay(child, recorder, stdin_fd=stdin_r, stdout_fd=screen)
        pipeline.start(_session(tmp_path, recorder, relay))
        recorder.add_marker("started", relay.elapsed_s())
        result = relay.run()
    finally:
        os.close(stdin_r)
        os.close(screen)
    return result, recorder, cast


def test_an_output_that_raises_is_dropped_with_one_warning_and_the_rest_goes_on(tmp_path: Path) -> None:
    warnings: list[str] = []
    pipeline = OutputPipeline(warnings.append)
    before, failing, after = _Collecting(), _Failing(), _Collecting()
    for output in (before, failing, after):
        pipeline.add(output)

    result, recorder, cast = _record_cat(tmp_path, pipeline, b"hello\nworld\n")
    wait_until(lambda: before.activity and after.activity)  # the writer's report of the output, once it has it
    stats = recorder.close()
    pipeline.close(SessionEnd("finished", result.exit_code))

    assert result.exit_code == 0  # the relay and the child never noticed
    assert warnings == ["failing output stopped (RuntimeError: boom); the recording goes on"]
    assert failing.calls == 1 and failing.ends == [None]  # closed once, when dropped, never fed again
    assert failing not in pipeline.outputs
    recorded = cast.read_bytes().splitlines(keepends=True)[1:]
    assert stats.error is None and b"hello" in b"".join(recorded) and b"world" in b"".join(recorded)
    for output in (before, after):  # the others got every recorded event but input, in order
        assert [line for _, _, line in output.events] == [line for line in recorded if b'"i"' not in line]
        assert output.events[0] == ("m", "started", recorded[0])
        assert output.activity and 0 < output.activity[0].output_bytes <= stats.output_bytes
        assert output.ends == [SessionEnd("finished", 0)]
        assert output.started is not None and output.started.session_id == "sid"


def test_batches_before_start_are_held_then_handed_on_in_order() -> None:
    pipeline = OutputPipeline(lambda message: None)
    output = _Collecting()
    pipeline.add(output)
    pipeline.on_events([("o", "a", b"[0.1]\n")])
    pipeline.on_events([("m", "b", b"[0.2]\n")])
    assert output.events == []  # not started yet
    pipeline.start(_fake_session())
    assert [text for _, text, _ in output.events] == ["a", "b"]
    pipeline.on_events([("o", "c", b"[0.3]\n")])
    assert [text for _, text, _ in output.events] == ["a", "b", "c"]


def test_an_output_that_cannot_start_is_dropped_and_the_others_start() -> None:
    warnings: list[str] = []
    pipeline = OutputPipeline(warnings.append)
    failing, other = _Failing(in_start=True), _Collecting()
    pipeline.add(failing)
    pipeline.add(other)
    pipeline.start(_fake_session())
    pipeline.on_events([("o", "x", b"[0.1]\n")])
    assert warnings == ["failing output stopped (RuntimeError: cannot start); the recording goes on"]
    assert pipeline.outputs == (other,) and other.started is not None and failing.calls == 0
    pipeline.close(None)
    assert other.ends == [None] and not pipeline.outputs
    pipeline.on_events([("o", "late", b"[0.2]\n")])  # after close: goes nowhere
    assert [text for _, text, _ in other.events] == ["x"]


def _fake_session() -> SessionStart:
    return SessionStart(
        folder=Path("/nonexistent"),
        session_id="sid",
        header=Header(size=SIZE, timestamp=0),
        pty_fd=-1,
        shell_pid=None,
        add_marker=lambda label, at: None,
        type_input=lambda raw: False,
        elapsed_s=lambda: 0.0,
    )
