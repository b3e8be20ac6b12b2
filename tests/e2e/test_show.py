"""``shellkeep show``: metadata, exchanges and token totals; the read is audited."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from tests.factory import make_session

EXCHANGES = [
    {
        "prompt": "add a login page",
        "answer": "Added login.html\nand a route.",
        "time": "2024-05-01T12:01:05.000Z",
        "tool_calls": [{"name": "Write", "summary": "login.html"}],
        "usage": {"input": 120, "output": 30, "cache_read": 5, "cache_write": 0},
    },
    {"prompt": "now the tests", "answer": "Tests pass.", "time": "2024-05-01T12:01:40.000Z"},
]


def test_show_lists_exchanges_and_token_totals(home: Paths) -> None:
    import dataclasses

    from shellkeep.store.session import write_meta

    meta = make_session(home, Path.cwd(), 1, name="web", exchanges=EXCHANGES)
    write_meta(dataclasses.replace(meta, usage={"input": 120, "output": 30, "cache_read": 5, "cache_write": 0}))
    result = CliRunner().invoke(main, ["show", "web"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "tokens     120 in · 30 out · 5 cache read · 0 cache write" in out
    assert "#1  at 5.0s  120 in / 30 out tokens" in out
    assert "  > add a login page" in out and "  < Added login.html" in out
    assert "    Write: login.html" in out
    assert "#2  at 40.0s" in out and "  > now the tests" in out
    full = CliRunner().invoke(main, ["show", "web", "--full"]).stdout
    assert "and a route." in full
    assert [(e.command, e.session) for e in audit.read_entries(home)] == [("show", meta.id), ("show", meta.id)]


def test_show_json_is_the_metadata(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, name="web")
    shown = json.loads(CliRunner().invoke(main, ["show", "--last", "--json"]).stdout)
    assert shown["id"] == meta.id and shown["name"] == "web"
