"""Test the agent-test harness itself: the stand-in servers, the screen driver, the reaper.

These need no agent CLI and run everywhere; they pin the wire shapes the stand-ins promise
(Anthropic Messages API streaming events, OpenAI Responses API streaming events) so a failing
agent test points at the agent, not at the harness.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import wait_until

from shellkeep.asciicast.model import TermSize

from .agent_processes import processes_using, reap
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin
from .standin_openai import OpenAIStandin

TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


def post(url: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    """POST *body* as JSON; return status, content type and payload."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json", "x-api-key": "k"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.headers["Content-Type"], response.read()


def sse_events(payload: bytes) -> list[tuple[str, dict[str, Any]]]:
    """Parse a server-sent-event payload into ``(event, data)`` pairs."""
    events = []
    for block in payload.decode().strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def user_body(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
                {"type": "text", "text": text},
            ]},
        ],
        **extra,
    }


@pytest.fixture
def anthropic() -> Any:
    with AnthropicStandin() as standin:
        yield standin


@pytest.fixture
def openai() -> Any:
    with OpenAIStandin() as standin:
        yield standin


def test_anthropic_stream_has_the_messages_api_event_sequence(anthropic: AnthropicStandin) -> None:
    status, content_type, payload = post(
        anthropic.base_url + "/v1/messages?beta=true",
        user_body("say the word apricot", tools=TOOLS, stream=True),
    )
    events = sse_events(payload)

    assert (status, content_type) == (200, "text/event-stream")
    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in events)
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta")
    assert text == "STANDIN-ANSWER-1: apricot"
    usage_keys = {"input_tokens", "output_tokens", "cache_read_input_tokens",
                  "cache_creation_input_tokens"}
    assert set(events[0][1]["message"]["usage"]) == usage_keys
    delta = dict(events)["message_delta"]
    assert delta["delta"]["stop_reason"] == "end_turn"
    assert set(delta["usage"]) == usage_keys
    (request,) = anthropic.requests()
    assert (request.path, request.query, request.is_conversation) == (
        "/v1/messages", "beta=true", True
    )
    assert request.last_user_text() == "say the word apricot"


def test_anthropic_answers_json_count_tokens_head_and_get(anthropic: AnthropicStandin) -> None:
    _, content_type, payload = post(anthropic.base_url + "/v1/messages", user_body("hi x", tools=TOOLS))
    message = json.loads(payload)
    _, _, counted = post(anthropic.base_url + "/v1/messages/count_tokens", user_body("hi"))
    head = urllib.request.urlopen(urllib.request.Request(anthropic.base_url + "/", method="HEAD"))
    get = urllib.request.urlopen(anthropic.base_url + "/v1/models", timeout=10)

    assert content_type == "application/json"
    assert message["content"] == [{"type": "text", "text": "STANDIN-ANSWER-1: x"}]
    assert message["stop_reason"] == "end_turn"
    assert json.loads(counted)["input_tokens"] > 0
    assert (head.status, get.status) == (200, 200)
    assert [r.method for r in anthropic.requests()] == ["POST", "POST", "HEAD", "GET"]


def test_anthropic_side_requests_leave_the_script_alone(anthropic: AnthropicStandin) -> None:
    anthropic.script(["first scripted", "second scripted"])
    title_format = {"type": "json_schema", "schema": {
        "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}

    _, _, side = post(anthropic.base_url + "/v1/messages",
                      user_body("<session>x</session>", output_config={"format": title_format}))
    _, _, one = post(anthropic.base_url + "/v1/messages", user_body("a", tools=TOOLS))
    _, _, two = post(anthropic.base_url + "/v1/messages", user_body("b", tools=TOOLS))
    _, _, three = post(anthropic.base_url + "/v1/messages", user_body("c", tools=TOOLS))

    assert json.loads(json.loads(side)["content"][0]["text"]) == {"title": "Standin title"}
    texts = [json.loads(p)["content"][0]["text"] for p in (one, two, three)]
    assert texts == ["first scripted", "second scripted", "STANDIN-ANSWER-3: c"]
    assert anthropic.answered == 3
    assert len(anthropic.side_requests()) == 1
    assert len(anthropic.conversation_requests()) == 3


def test_anthropic_answer_callable_chooses_the_text() -> None:
    with AnthropicStandin(answer=lambda r: r.last_user_text().upper()) as standin:
        _, _, payload = post(standin.base_url + "/v1/messages", user_body("shout", tools=TOOLS))
    assert json.loads(payload)["content"][0]["text"] == "SHOUT"


def test_openai_stream_has_the_responses_api_event_sequence(openai: OpenAIStandin) -> None:
    body = {
        "model": "m", "stream": True, "tools": [{"type": "function", "name": "exec"}],
        "input": [
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "<environment_context/>"}]},
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "say the word fig"}]},
        ],
    }
    status, content_type, payload = post(openai.api_base + "/responses", body)
    events = sse_events(payload)

    assert (status, content_type) == (200, "text/event-stream")
    names = [name for name, _ in events]
    assert names[0] == "response.created"
    assert names[-4:] == ["response.output_text.done", "response.content_part.done",
                          "response.output_item.done", "response.completed"]
    assert "response.output_item.added" in names and "response.content_part.added" in names
    text = "".join(d["delta"] for n, d in events if n == "response.output_text.delta")
    assert text == "STANDIN-ANSWER-1: fig"
    completed = events[-1][1]["response"]
    assert completed["status"] == "completed"
    assert completed["usage"]["total_tokens"] > 0
    assert openai.requests()[0].last_user_text() == "say the word fig"


def test_openai_title_request_gets_json(openai: OpenAIStandin) -> None:
    body = {
        "model": "m", "stream": False, "tools": [],
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "Generate a title"}]}],
        "text": {"format": {"type": "json_schema", "name": "s", "schema": {
            "type": "object", "properties": {"title": {"type": "string"}}}}},
    }
    _, _, payload = post(openai.api_base + "/responses", body)
    text = json.loads(payload)["output"][0]["content"][0]["text"]
    assert json.loads(text) == {"title": "Standin title"}
    assert openai.answered == 0


PRINTER = r"""
import os, sys, termios, tty
tty.setraw(0)
os.write(1, b"foo\x1b[20Gbar\r\n")
os.write(1, b"a\x1b[>1ub\x1b[<uc\x1b[4:3md\r\n")
os.write(1, b"\x1b[6n")
reply = b""
while not reply.endswith(b"R"):
    reply += os.read(0, 1)
os.write(1, b"cursor " + reply[1:] + b"\r\n")
os.write(1, ("size %d %d\r\n" % os.get_terminal_size(1)).encode())
os.read(0, 1)
"""


def test_screen_driver_renders_answers_queries_and_drops_unknown_csi(tmp_path: Path) -> None:
    env = {"PATH": os.defpath, "TERM": "xterm-256color"}
    with ScreenDriver([sys.executable, "-c", PRINTER], env=env, cwd=tmp_path,
                      size=TermSize(cols=50, rows=8)) as driver:
        driver.wait_for_screen("size", 20)
        lines = driver.lines()
        driver.type("q")
        assert driver.wait_exit(20) == 0

    assert lines[0] == "foo" + " " * 16 + "bar"
    assert b"foo" + b" " * 16 + b"bar" not in bytes(driver.raw)  # drawn by cursor movement
    assert lines[1] == "abcd"
    assert lines[2] == "cursor [3;1R"
    assert lines[3] == "size 50 8"
    assert len(lines) == 8 and all(len(line) <= 50 for line in lines)


def test_wait_for_screen_times_out_with_the_screen_in_the_message(tmp_path: Path) -> None:
    env = {"PATH": os.defpath}
    with ScreenDriver([sys.executable, "-c", "print('ready'); input()"], env=env,
                      cwd=tmp_path) as driver:
        driver.wait_for_screen("ready", 20)
        with pytest.raises(TimeoutError, match="(?s)never shown.*ready"):
            driver.wait_for_screen("never shown", 0.3)


def test_reap_ends_a_detached_process_that_uses_the_folder(tmp_path: Path) -> None:
    marker = tmp_path / "agent-home"
    marker.mkdir()
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"],
        env={"HOME": str(marker), "PATH": os.defpath}, start_new_session=True,
    )
    try:
        # /proc shows the new process's environment once its exec is through; under load that takes a moment.
        wait_until(lambda: processes_using(marker) == [daemon.pid], 10)
        assert reap(marker) == [daemon.pid]
        assert daemon.wait(timeout=10) != 0
        assert processes_using(marker) == []
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


# -- the agent versions the suite tests ---------------------------------------------------

REPO = Path(__file__).resolve().parents[2]


def _npm_installs(script: Path) -> dict[str, set[str]]:
    """Return ``{prefix folder suffix: {package@version}}`` for each ``npm install --prefix`` (or
    ``install_agents PREFIX``) in *script*.

    The prefix is named by what follows ``$NPM_PREFIX`` (``""`` for the pinned one, ``-newest``).
    """
    text = script.read_text().replace("\\\n", " ")
    installs: dict[str, set[str]] = {}
    for line in text.splitlines():
        words = line.replace('"', " ").split()
        if words[:1] == ["install_agents"]:  # scripts/test: install_agents PREFIX PACKAGE@VERSION...
            prefix = words[1]
        elif words[:2] == ["npm", "install"] and "--prefix" in words:
            prefix = words[words.index("--prefix") + 1]
        else:
            continue
        if not prefix.startswith("$NPM_PREFIX"):
            continue  # install_agents's own npm install, of the packages it was given
        prefix = prefix.removeprefix("$NPM_PREFIX")
        installs.setdefault(prefix, set()).update(w for w in words if w[0] not in "-$" and "@" in w[1:])
    return installs


@pytest.mark.parametrize("script", ["scripts/test", ".ci/run"])
def test_the_scripts_install_the_versions_the_agent_tests_name(script: str) -> None:
    from .conftest import (
        CI_NPM_NEWEST_PREFIX, CI_NPM_PREFIX, CLAUDE_VERSIONS, CODEX_NEWEST, CODEX_PINNED, COPILOT_VERSIONS,
        GEMINI_VERSIONS, OPENCODE_VERSIONS, QWEN_VERSIONS,
    )

    suffix = {CI_NPM_PREFIX: "", CI_NPM_NEWEST_PREFIX: "-newest"}
    expected: dict[str, set[str]] = {"": set(), "-newest": set()}
    for package, versions in (
        ("@anthropic-ai/claude-code", CLAUDE_VERSIONS), ("@google/gemini-cli", GEMINI_VERSIONS),
        ("@qwen-code/qwen-code", QWEN_VERSIONS), ("opencode-ai", OPENCODE_VERSIONS), ("@github/copilot", COPILOT_VERSIONS),
    ):
        for version, prefix in versions.items():
            expected[suffix[prefix]].add(f"{package}@{version}")
    expected[""].add(f"@openai/codex@{CODEX_PINNED}")
    expected["-newest"].add(f"@openai/codex@{CODEX_NEWEST}")
    assert _npm_installs(REPO / script) == expected


@pytest.mark.agent
def test_each_installed_agent_is_the_version_its_tests_name() -> None:
    from .conftest import (
        CLAUDE_VERSIONS, CODEX_NEWEST, CODEX_PINNED, CI_NPM_NEWEST_PREFIX, CI_NPM_PREFIX, GEMINI_VERSIONS,
        OPENCODE_VERSIONS, QWEN_VERSIONS,
    )

    wanted = [("claude", v, p) for v, p in CLAUDE_VERSIONS.items()]
    wanted += [("gemini", v, p) for v, p in GEMINI_VERSIONS.items()]
    wanted += [("qwen", v, p) for v, p in QWEN_VERSIONS.items()]
    wanted += [("opencode", v, p) for v, p in OPENCODE_VERSIONS.items()]  # Copilot's tests check the version that wrote
    wanted += [("codex", CODEX_PINNED, CI_NPM_PREFIX), ("codex", CODEX_NEWEST, CI_NPM_NEWEST_PREFIX)]
    checked = 0
    for name, version, prefix in wanted:
        binary = prefix.expanduser() / "node_modules" / ".bin" / name
        if not binary.exists():
            continue
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60).stdout
        assert version in out.split(), (binary, out)
        checked += 1
    if checked == 0:
        pytest.skip("no agent CLI in the CI npm prefixes; run scripts/test to install them")
