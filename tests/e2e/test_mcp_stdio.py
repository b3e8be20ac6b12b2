"""``shellkeep mcp`` as an agent starts it: a real process on stdio, driven by the MCP SDK's own client.

One real recording (bash printing a word and a GitHub token), one server process: the tools
are listed with their schemas, the word is found, the token comes back redacted as stored,
and the audit log names the client from its initialize request. The rest of the server's
behaviour is tested in process (tests/unit/test_mcp_server.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, Implementation

from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from tests.helpers import git_init, run_sk

TOKEN = "ghp_" + "Zq8" * 12  # a GitHub personal access token's shape (redaction rule github-token)


def test_stdio_server_searches_the_project_redacted_and_audited(home: Paths) -> None:
    project = Path.cwd()
    git_init(project)
    done = run_sk("run", "--", "bash", "-c", f"echo zebrafish42 {TOKEN}")
    assert done.returncode == 0, done.stderr

    async def talk() -> tuple[dict[str, object], CallToolResult]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "shellkeep", "mcp"], env=dict(os.environ), cwd=str(project))
        client = Client(params, client_info=Implementation(name="claude-code", version="2.1.197"), mode="legacy")
        async with client as c:
            assert c.server_info is not None and c.server_info.name == "shellkeep"
            listed = await c.list_tools()
            found = await c.call_tool("search_sessions", {"query": "zebrafish42"})
        return {t.name: t.input_schema for t in listed.tools}, found

    schemas, found = anyio.run(talk)
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
