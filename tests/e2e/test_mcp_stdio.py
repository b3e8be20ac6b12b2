"""``shellkeep mcp`` as an agent starts it: a real process on stdio, driven by the MCP SDK's own client.

One real recording (bash printing a word and a GitHub token), one server process: the tools
are listed with their schemas, the word is found, the token comes back redacted as stored,
and the audit log names the client from its initialize request. The rest of the server's
behaviour is tested in process (tests/unit/test_mcp_server.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult, Implementation

from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from tests.factory import make_session
from tests.helpers import SK, PtyHarness, git_init, run_sk

TOKEN = "ghp_" + "Zq8" * 12  # a GitHub personal access token's shape (redaction rule github-token)


def test_stdio_server_searches_the_project_redacted_and_audited(home: Paths, tmp_path: Path) -> None:
    project = Path.cwd()
    git_init(project)
    done = run_sk("run", "--", "bash", "-c", f"echo zebrafish42 {TOKEN}")
    assert done.returncode == 0, done.stderr

    async def talk() -> tuple[dict[str, object], CallToolResult, CallToolResult]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "shellkeep", "mcp"], env=dict(os.environ), cwd=str(project))
        with open(tmp_path / "server-stderr", "w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, client_info=Implementation(name="claude-code", version="2.1.197"), mode="legacy") as c:
                assert c.server_info is not None and c.server_info.name == "shellkeep"
                listed = await c.list_tools()
                found = await c.call_tool("search_sessions", {"query": "zebrafish42"})
                refused = await c.call_tool("get_session", {"id": "no-such-session"})
        return {t.name: t.input_schema for t in listed.tools}, found, refused

    schemas, found, refused = anyio.run(talk)
    assert sorted(schemas) == ["get_diff", "get_screen", "get_session", "list_sessions", "search_sessions"]
    search_schema = schemas["search_sessions"]
    assert isinstance(search_schema, dict) and search_schema["required"] == ["query"]
    assert set(search_schema["properties"]) == {"query", "agent", "since", "limit", "cursor"}
    assert not found.is_error, found.content
    payload = found.structured_content
    assert payload is not None
    hits = payload["hits"]
    assert len(hits) == 1
    assert "zebrafish42" in hits[0]["text"]
    assert TOKEN not in str(found.content) and "[REDACTED:github-token]" in hits[0]["text"]
    assert hits[0]["source"]["kind"] == "transcript"
    assert "not instructions" in payload["note"]
    entries = read_entries(home)
    assert [(e.command, e.session, e.detail) for e in entries] == [
        ("mcp:claude-code 2.1.197", hits[0]["source"]["session"], "search hit")
    ]
    assert refused.is_error and "no session 'no-such-session'" in str(refused.content)
    assert "Traceback" not in (tmp_path / "server-stderr").read_text()


def test_stdout_carries_the_protocol_alone_and_errors_are_one_line(home: Paths) -> None:
    """Raw lines in, as a client writes them, stdin closed right after the last: every request and every
    malformed line gets its reply, every line out is a JSON-RPC message, and stderr is empty."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_sessions", "arguments": {"query": "x", "since": "someday"}}},
        "{not json",
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_screen", "arguments": {"id": "../../etc"}}},
        {"method": "tools/list"},  # JSON, not a JSON-RPC message
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "list_sessions", "arguments": {}}},
    ]
    lines = [m if isinstance(m, str) else json.dumps(m) for m in messages]
    server = subprocess.run([*SK, "mcp"], input="".join(line + "\n" for line in lines).encode(), capture_output=True, timeout=120)
    assert server.returncode == 0, server.stderr
    replies = [json.loads(line) for line in server.stdout.splitlines()]
    assert all(r["jsonrpc"] == "2.0" for r in replies)
    assert sorted(r["id"] for r in replies if r.get("id") is not None) == [1, 2, 3, 4]
    refused = [r["error"]["code"] for r in replies if r.get("id", "") is None]
    assert refused == [-32700, -32600]
    by_id = {r["id"]: r["result"] for r in replies if "result" in r}
    assert by_id[1]["serverInfo"]["name"] == "shellkeep"
    for n in (2, 3):
        assert by_id[n]["isError"] is True
        [text] = [c["text"] for c in by_id[n]["content"]]
        assert "\n" not in text
    assert "'someday'" in by_id[2]["content"][0]["text"]
    assert "no session '../../etc'" in by_id[3]["content"][0]["text"]
    assert by_id[4]["structuredContent"] == {"sessions": [], "next_cursor": None}
    assert server.stderr == b""


def _initialized(server: subprocess.Popen[bytes]) -> None:
    """Send the initialize handshake and wait for its reply: the server is serving."""
    assert server.stdin is not None and server.stdout is not None
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    server.stdin.write(json.dumps(hello).encode() + b"\n" + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1


def test_ctrl_c_in_a_terminal_ends_the_server_and_it_says_what_it_is(home: Paths) -> None:
    term = PtyHarness.start([*SK, "mcp"])
    term.expect(b"MCP server for agents to start")
    term.write(b"\x03")
    assert term.finish() == 130
    out = bytes(term.output)
    assert out.count(b"shellkeep mcp install AGENT") == 1 and b"Traceback" not in out, out


def test_sigint_ends_a_piped_server_quietly(home: Paths) -> None:
    server = subprocess.Popen([*SK, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _initialized(server)
    server.send_signal(signal.SIGINT)
    assert server.wait(timeout=30) == 130
    assert server.stderr is not None and server.stderr.read() == b""  # not a terminal: nothing said


def test_a_warning_is_one_plain_line_on_stderr(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, events=((0.5, "o", "the quokka smiles\r\n"),))
    home.audit_log.mkdir(parents=True)  # the audit log cannot be written
    server = subprocess.Popen([*SK, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    _initialized(server)
    search = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search_sessions", "arguments": {"query": "quokka"}}}
    server.stdin.write(json.dumps(search).encode() + b"\n")
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["result"]["structuredContent"]["hits"]
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    assert server.stderr.read().decode().splitlines() == [f"shellkeep: could not write the audit log {home.audit_log} (Is a directory)"]
