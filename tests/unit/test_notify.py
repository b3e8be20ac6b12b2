"""Tests for when a session is notified (app/notify.py) and how (app/notifiers.py).

The delivery runs in-process here against a real HTTP server on 127.0.0.1 and real
programs; the whole path through a recording is in tests/e2e/test_notify.py.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from shellkeep.app.notifiers import command_argv, command_env, deliver, message_of, title_of
from shellkeep.app.notify import FACTS_ENV, Notification, WaitingWatch, waiting_due_at
from shellkeep.config import Config, NotifyConfig
from shellkeep.store.live import WORKING_WINDOW_S, LiveStatus
from shellkeep.store.paths import Paths
from tests.helpers import wait_until

NOW = 2_000_000_000.0
FACTS = Notification(
    session="20261203-120000-abcde",
    name=None,
    project="web-3f9c",
    project_root="/home/bob/web",
    agent="claude",
    state="waiting",
    hint="approval",
    last_line="Do you want to proceed?",
)


def _status(output_at: float | None, *, canonical: bool | None = False, hint: str | None = None) -> LiveStatus:
    return LiveStatus(output_at, 10, canonical, True, False, NOW, hint)


@pytest.mark.parametrize(
    ("status", "due"),
    [
        (_status(NOW), NOW + WORKING_WINDOW_S + 2.0),
        (_status(NOW, canonical=True, hint="approval"), NOW + WORKING_WINDOW_S + 2.0),
        (_status(NOW, canonical=True), None),
        (_status(NOW, canonical=None), None),
        (_status(None), None),
    ],
    ids=["reads-keys", "hint-while-canonical", "idle", "modes-unknown", "no-output-yet"],
)
def test_a_waiting_spell_is_due_after_the_working_window_and_the_delay(status: LiveStatus, due: float | None) -> None:
    assert waiting_due_at(status, 2.0) == due


def test_the_watch_notifies_each_waiting_spell_once_and_skips_idle_ones() -> None:
    calls: list[tuple[str | None, str]] = []
    lock = threading.Lock()

    def notify(hint: str | None, line: str) -> None:
        with lock:
            calls.append((hint, line))

    watch = WaitingWatch(notify, delay_s=0.0, clock=lambda: NOW)
    try:
        watch.report(_status(NOW - 10, hint="approval"), "Do you want to proceed?")
        wait_until(lambda: watch.notified == 1, 10)
        watch.report(_status(NOW - 10, hint="approval"), "same spell again")  # no new output: the same spell
        watch.report(_status(NOW - 9, canonical=True), "quiet, not waiting")  # idle: nothing
        watch.report(_status(NOW - 8), "> ")
        wait_until(lambda: watch.notified == 2, 10)
        assert calls == [("approval", "Do you want to proceed?"), (None, "> ")]
        watch.report(_status(NOW + 100), "output just came")  # not due yet: nothing
    finally:
        watch.close()
    assert watch.notified == 2


def test_notification_json_round_trip_and_bad_facts() -> None:
    assert Notification.from_json(FACTS.to_json()) == FACTS
    ended = dataclasses.replace(FACTS, state="killed", exit_code=137, signal=9)
    assert Notification.from_json(ended.to_json()) == ended
    for bad in ("", "[]", '{"session": 1}', FACTS.to_json().replace('"signal": null', '"signal": "9"')):
        with pytest.raises((ValueError, TypeError)):
            Notification.from_json(bad)


@pytest.mark.parametrize(
    ("state", "hint", "title"),
    [
        ("waiting", "approval", "claude needs your approval (web-3f9c)"),
        ("waiting", None, "claude is waiting for you (web-3f9c)"),
        ("finished", None, "claude finished (web-3f9c)"),
        ("killed", None, "claude was killed (web-3f9c)"),
        ("hangup", None, "claude lost its terminal (web-3f9c)"),
    ],
    ids=["approval", "waiting", "finished", "killed", "hangup"],
)
def test_titles(state: str, hint: str | None, title: str) -> None:
    assert title_of(dataclasses.replace(FACTS, state=state, hint=hint)) == title


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("notify-me --loud", ["notify-me", "--loud"]),
        ("'/opt/my tools/ping' \"a b\"", ["/opt/my tools/ping", "a b"]),
        ("echo $SHELLKEEP_STATE >> /tmp/log", ["/bin/sh", "-c", "echo $SHELLKEEP_STATE >> /tmp/log"]),
        ("say done; beep", ["/bin/sh", "-c", "say done; beep"]),
    ],
    ids=["words", "quoted", "variables-and-redirection", "two-commands"],
)
def test_a_command_runs_a_shell_only_when_it_holds_shell_syntax(command: str, argv: list[str]) -> None:
    assert command_argv(command) == argv


def test_the_commands_environment_has_the_facts_and_not_the_transport() -> None:
    env = command_env(FACTS, {"PATH": "/bin", FACTS_ENV: FACTS.to_json()})
    assert env == {
        "PATH": "/bin",
        "SHELLKEEP_SESSION": FACTS.session,
        "SHELLKEEP_PROJECT": FACTS.project_root,
        "SHELLKEEP_AGENT": "claude",
        "SHELLKEEP_STATE": "waiting",
        "SHELLKEEP_LAST_LINE": "Do you want to proceed?",
        "SHELLKEEP_HINT": "approval",
        "SHELLKEEP_NAME": "",
        "SHELLKEEP_EXIT_CODE": "",
        "SHELLKEEP_SIGNAL": "",
    }
    killed = dataclasses.replace(FACTS, state="killed", name="fix", exit_code=137, signal=9)
    env = command_env(killed, {})
    assert (env["SHELLKEEP_NAME"], env["SHELLKEEP_EXIT_CODE"], env["SHELLKEEP_SIGNAL"]) == ("fix", "137", "9")


@pytest.mark.parametrize(
    ("exit_code", "sig", "message"),
    [
        (None, None, "Do you want to proceed?\nsession 20261203-120000-abcde"),
        (0, None, "Do you want to proceed?\nsession 20261203-120000-abcde, exit code 0"),
        (137, 9, "Do you want to proceed?\nsession 20261203-120000-abcde, killed by signal 9 (SIGKILL)"),
    ],
    ids=["waiting", "finished", "killed"],
)
def test_the_message_says_the_session_and_how_it_ended(exit_code: int | None, sig: int | None, message: str) -> None:
    assert message_of(dataclasses.replace(FACTS, exit_code=exit_code, signal=sig)) == message
    assert message_of(dataclasses.replace(FACTS, last_line="", exit_code=3)) == "session 20261203-120000-abcde, exit code 3"


class _Server:
    """A loopback HTTP server answering every POST with ``status``, keeping what it got."""

    def __init__(self, status: int = 200) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/t"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def test_a_text_post_is_ntfy_shaped_and_encodes_a_title_that_is_not_ascii(home: Paths, server: _Server) -> None:
    facts = dataclasses.replace(FACTS, name="café", last_line="token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 ok?")
    assert deliver(home, facts, NotifyConfig(url=server.url), Config()) == []
    [(headers, body)] = server.got
    assert headers["tags"] == "bell,shellkeep"
    encoded = headers["title"]
    assert encoded.startswith("=?UTF-8?B?") and encoded.endswith("?=")
    assert base64.b64decode(encoded[10:-2]).decode() == "claude needs your approval (café)"
    first, facts = body.decode().split("\n")
    assert first.startswith("token [REDACTED") and first.endswith(" ok?") and "ghp_A1b2" not in first
    assert facts == f"session {FACTS.session}"


def test_a_json_post_and_events_that_are_not_configured(home: Paths, server: _Server) -> None:
    settings = NotifyConfig(url=server.url, format="json", events=("finished",))
    assert deliver(home, FACTS, settings, Config()) == []  # waiting is not among the events
    assert server.got == []
    finished = dataclasses.replace(FACTS, state="finished", hint=None, exit_code=0)
    assert deliver(home, finished, settings, Config()) == []
    [(headers, body)] = server.got
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {**dataclasses.asdict(FACTS), "state": "finished", "hint": None, "exit_code": 0,
                                "signal": None, "title": "claude finished (web-3f9c)"}


def test_failures_are_one_line_each_in_the_log_and_never_raise(home: Paths, tmp_path: Path) -> None:
    failing = _Server(status=500)
    try:
        settings = NotifyConfig(url=failing.url, command=str(tmp_path / "no-such-program"))
        failures = deliver(home, FACTS, settings, Config())
    finally:
        failing.close()
    assert failures == ["url: HTTP 500 Internal Server Error", "command: No such file or directory"]
    lines = (home.logs / "notify.log").read_text().splitlines()
    assert len(lines) == 2 and all(FACTS.session in line and " waiting: " in line for line in lines)
    assert lines[0].endswith("url: HTTP 500 Internal Server Error")
