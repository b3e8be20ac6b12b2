"""What ``run --restart`` counts as a crash, and how a policy reads (app/supervise.py)."""

from __future__ import annotations

import signal

import pytest

from shellkeep.app.exit_keys import EXIT_KEY_WINDOW_S, ExitKeyWatch
from shellkeep.app.record import RunOutcome
from shellkeep.app.supervise import is_crash, restart_limit
from shellkeep.errors import UserInputError
from shellkeep.pty.relay import RelayResult


def _outcome(code: int, sig: int | None = None, *, received: int | None = None, hangup: bool = False,
             key_at: float | None = None, duration: float = 30.0) -> RunOutcome:
    return RunOutcome(code, None, RelayResult(code, sig, received, hangup, duration), key_at)


@pytest.mark.parametrize(
    ("outcome", "crash"),
    [
        (_outcome(0), None),
        (_outcome(3), "exit status 3"),
        (_outcome(139, signal.SIGSEGV), "signal 11 (SIGSEGV)"),
        (_outcome(137, signal.SIGKILL), "signal 9 (SIGKILL)"),
        (_outcome(130, signal.SIGINT), None),
        (_outcome(129, signal.SIGHUP), None),
        (_outcome(143, signal.SIGTERM, received=signal.SIGTERM), None),
        (_outcome(1, hangup=True), None),
        (_outcome(1, key_at=30.0 - EXIT_KEY_WINDOW_S + 0.5), None),
        (_outcome(1, key_at=1.0), "exit status 1"),
        (RunOutcome(1, None), None),
    ],
    ids=["exit-0", "exit-3", "segv", "kill", "sigint", "sighup", "term-to-shellkeep", "hangup",
         "after-exit-key", "long-after-exit-key", "no-report"],
)
def test_what_counts_as_a_crash(outcome: RunOutcome, crash: str | None) -> None:
    assert is_crash(outcome) == crash


@pytest.mark.parametrize(
    ("policy", "limit"),
    [("no", 0), ("on-failure", 3), ("on-failure:0", 0), ("on-failure:7", 7)],
    ids=["no", "default", "zero", "seven"],
)
def test_restart_policies(policy: str, limit: int) -> None:
    assert restart_limit(policy) == limit


@pytest.mark.parametrize("policy", ["always", "on-failure:", "on-failure:x", "on-failure:-1", ""], ids=repr)
def test_a_bad_policy_is_a_user_error(policy: str) -> None:
    with pytest.raises(UserInputError, match="--restart must be"):
        restart_limit(policy)


class _Inputs:
    def __init__(self) -> None:
        self.seen: list[bytes] = []

    def on_output(self, raw: bytes, at: float) -> None:
        pass

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        self.seen.append(raw)

    def on_resize(self, size: object, at: float) -> None:
        pass


@pytest.mark.parametrize(
    ("typed", "key_at"),
    [
        ([b"hello\r"], None),
        ([b"\x03"], 1.0),
        ([b"\x04"], 1.0),
        ([b"/ex", b"it\r"], 2.0),
        ([b"  quit\r"], 1.0),
        ([b"exit now\r"], None),
        ([b"/exit"], None),
    ],
    ids=["line", "ctrl-c", "ctrl-d", "split-exit", "quit", "not-an-exit-line", "no-enter"],
)
def test_exit_keys_are_noted_and_every_input_passed_on(typed: list[bytes], key_at: float | None) -> None:
    inner = _Inputs()
    watch = ExitKeyWatch(inner)  # type: ignore[arg-type]
    for at, raw in enumerate(typed, start=1):
        watch.on_input(raw, float(at), False)
    assert watch.exit_key_at == key_at
    assert inner.seen == typed
