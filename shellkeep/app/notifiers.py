"""Tell the user about a session: a desktop notification, an HTTP POST, the user's command.

``python -m shellkeep.app.notifiers`` runs detached from the terminal (``app.notify``
starts it with the facts in ``SHELLKEEP_NOTIFICATION``); it reads the user's config file
(``[notify]``; a project file cannot set these keys), redacts the last line once more with
the user's rules (also when the recording was not redacted), and runs each notifier that is
on. A failing notifier is logged in one line in ``Paths.logs/notify.log`` and never stops
the others; nothing here raises.

- desktop: ``notify-send`` (Linux, freedesktop notifications) or ``osascript`` (macOS),
  whichever is found on PATH, with the title and the ``message_of`` text as arguments;
- url: an HTTP POST with ``urllib`` (5 s timeout). ``text``: the body is ``message_of`` in
  UTF-8 (the last line, then the session id and the exit status), with the headers ``Title`` and ``Tags`` (ntfy's publishing API, docs.ntfy.sh/publish;
  a header that is not ASCII is RFC 2047 encoded); ``json``: the body is the
  ``Notification`` as one JSON object plus ``title``;
- command: split like a shell's words (``shlex.split``) and run directly, or by ``/bin/sh
  -c`` when it holds shell syntax (``|&;<>()$`*?~`` and the like, newlines): a plain
  ``notify-me --loud`` runs no shell. Its environment adds ``SHELLKEEP_SESSION``,
  ``SHELLKEEP_PROJECT`` (the project's folder, as inside a recorded session),
  ``SHELLKEEP_AGENT``, ``SHELLKEEP_STATE``, ``SHELLKEEP_LAST_LINE``, ``SHELLKEEP_HINT``,
  ``SHELLKEEP_NAME``, ``SHELLKEEP_EXIT_CODE`` and ``SHELLKEEP_SIGNAL`` (empty when not known).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from shellkeep.app.notify import FACTS_ENV, Notification
from shellkeep.capture.redaction import redactor_for
from shellkeep.config import Config, NotifyConfig, load_config_with_fallback
from shellkeep.logs import get_logger
from shellkeep.store.paths import FILE_MODE, Paths, ensure_dir, resolve_paths
from shellkeep.store.session import iso, utc_now

log = get_logger(__name__)

HTTP_TIMEOUT_S = 5.0
DESKTOP_TIMEOUT_S = 10.0
COMMAND_TIMEOUT_S = 60.0
LOG_FILE = "notify.log"
LOG_MAX_BYTES = 256 * 1024
"""notify.log is started afresh once it is this big."""

_SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?~\[\]{}\n\\]")

_TAGS = {"waiting": "bell", "finished": "white_check_mark", "killed": "skull", "hangup": "electric_plug"}
"""ntfy tags (emoji short codes) per state."""


def title_of(notification: Notification) -> str:
    """Return the one-line title of ``notification``: what happened, to which agent, where."""
    agent = notification.agent or "the program"
    what = {
        "waiting": "needs your approval" if notification.hint == "approval" else "is waiting for you",
        "finished": "finished",
        "killed": "was killed",
        "hangup": "lost its terminal",
    }.get(notification.state, notification.state)
    where = notification.name or notification.project
    return f"{agent} {what} ({where})"


def status_of(notification: Notification) -> str:
    """Return the facts line of ``notification``: its session, and how it ended when it did
    ("session 0193ab, exit code 0", "session 0193ab, killed by signal 9 (SIGKILL)")."""
    facts = [f"session {notification.session}"]
    if notification.signal is not None:
        try:
            name = f" ({signal.Signals(notification.signal).name})"
        except ValueError:
            name = ""
        facts.append(f"killed by signal {notification.signal}{name}")
    elif notification.exit_code is not None:
        facts.append(f"exit code {notification.exit_code}")
    return ", ".join(facts)


def message_of(notification: Notification) -> str:
    """Return a notification's text: the last line on screen (when there is one), then ``status_of``."""
    return "\n".join(line for line in (notification.last_line, status_of(notification)) if line)


def deliver(paths: Paths, notification: Notification, settings: NotifyConfig, config: Config) -> list[str]:
    """Run every notifier ``settings`` turns on for ``notification``; return the failures.

    The last line and the name are redacted first with ``config.redact``'s rules. Each failure is one
    line ("url: timed out"), also written to ``notify.log``; nothing raises.
    """
    if notification.state not in settings.events:
        return []
    notification = _redacted(notification, config)
    title = title_of(notification)
    failures: list[str] = []
    notifiers: tuple[tuple[str, bool, Callable[[], None]], ...] = (
        ("desktop", settings.desktop, lambda: _desktop(title, message_of(notification))),
        ("url", bool(settings.url), lambda: _post(settings.url, settings.format, title, notification)),
        ("command", bool(settings.command), lambda: _command(settings.command, notification)),
    )
    for name, on, run in notifiers:
        if not on:
            continue
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - one failing notifier never stops the others
            failures.append(f"{name}: {_reason(exc)}")
    for failure in failures:
        _log_failure(paths, notification, failure)
    return failures


def _redacted(notification: Notification, config: Config) -> Notification:
    redact = redactor_for(config.redact).redact
    name = redact(notification.name) if notification.name else notification.name
    return dataclasses.replace(notification, last_line=redact(notification.last_line), name=name)


def _desktop(title: str, body: str) -> None:
    """Show ``title``/``body`` with notify-send or osascript; raises OSError or RuntimeError."""
    notify_send = shutil.which("notify-send")
    if notify_send is not None:
        argv = [notify_send, "--app-name=shellkeep", title, body]
    elif shutil.which("osascript") is not None:
        # The texts are the script's arguments, never part of its source.
        argv = [
            "osascript",
            "-e", "on run argv",
            "-e", "display notification (item 2 of argv) with title (item 1 of argv)",
            "-e", "end run",
            title, body,
        ]  # fmt: skip
    else:
        raise RuntimeError("neither notify-send nor osascript is on PATH")
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=DESKTOP_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{os.path.basename(argv[0])} exited with {done.returncode}")


def _post(url: str, fmt: str, title: str, notification: Notification) -> None:
    """POST ``notification`` to ``url`` in ``fmt``; raises OSError (URLError, timeouts) or ValueError."""
    if fmt == "json":
        obj = json.loads(notification.to_json())
        obj["title"] = title
        body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
    else:
        body = message_of(notification).encode("utf-8")
        tags = ",".join(t for t in (_TAGS.get(notification.state), "shellkeep") if t)
        headers = {"Content-Type": "text/plain; charset=utf-8", "Title": _header_value(title), "Tags": tags}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:  # noqa: S310 - the user's URL
        response.read(4096)


def _header_value(text: str) -> str:
    """Return ``text`` as an HTTP header value: itself when ASCII, else RFC 2047 (UTF-8, base64)."""
    if text.isascii():
        return text
    return "=?UTF-8?B?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def command_argv(command: str) -> list[str]:
    """Return the argv that runs the user's ``command``: its words, or ``/bin/sh -c`` for shell syntax.

    Raises ValueError for a command shlex cannot split (an unclosed quote).
    """
    if _SHELL_SYNTAX.search(command):
        return ["/bin/sh", "-c", command]
    words = shlex.split(command)
    if not words:
        raise ValueError("notify.command is empty")
    return words


def command_env(notification: Notification, base: Mapping[str, str]) -> dict[str, str]:
    """Return the command's environment: ``base`` without the facts variable, plus the facts."""
    env = {key: value for key, value in base.items() if key != FACTS_ENV}
    env.update(
        SHELLKEEP_SESSION=notification.session,
        SHELLKEEP_PROJECT=notification.project_root,
        SHELLKEEP_AGENT=notification.agent,
        SHELLKEEP_STATE=notification.state,
        SHELLKEEP_LAST_LINE=notification.last_line,
        SHELLKEEP_HINT=notification.hint or "",
        SHELLKEEP_NAME=notification.name or "",
        SHELLKEEP_EXIT_CODE="" if notification.exit_code is None else str(notification.exit_code),
        SHELLKEEP_SIGNAL="" if notification.signal is None else str(notification.signal),
    )
    return env


def _command(command: str, notification: Notification) -> None:
    """Run the user's command with the facts in its environment; raises OSError, ValueError,
    RuntimeError (non-zero exit) or subprocess.TimeoutExpired."""
    argv = command_argv(command)
    cwd = notification.project_root if os.path.isdir(notification.project_root) else None
    done = subprocess.run(
        argv, env=command_env(notification, os.environ), cwd=cwd, stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT_S
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited with {done.returncode}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"timed out after {exc.timeout:g} s"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _log_failure(paths: Paths, notification: Notification, failure: str) -> None:
    """Append one line to ``notify.log`` (0600; started afresh past ``LOG_MAX_BYTES``); never raises."""
    log.warning("notification of %s failed: %s", notification.session, failure)
    try:
        ensure_dir(paths.logs)
        path = paths.logs / LOG_FILE
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            flags |= os.O_TRUNC
        fd = os.open(path, flags, FILE_MODE)
        try:
            os.write(fd, f"{iso(utc_now())} {notification.session} {notification.state}: {failure}\n".encode())
        finally:
            os.close(fd)
    except OSError:
        pass


def main(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int:
    """``python -m shellkeep.app.notifiers`` with the facts in ``SHELLKEEP_NOTIFICATION``; returns
    0, 2 without valid facts, 1 when a notifier failed."""
    env = os.environ if env is None else env
    try:
        notification = Notification.from_json(env.get(FACTS_ENV, ""))
    except (ValueError, TypeError):
        return 2
    paths = resolve_paths()
    root = Path(notification.project_root)
    config = load_config_with_fallback(paths, root if root.is_dir() else None, dict(env), {}).config
    failures = deliver(paths, notification, config.notify, config)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
