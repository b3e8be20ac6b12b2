"""``shellkeep audit`` and ``audit verify`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.store.paths import Paths
from tests.helpers import invoke_sk, run_sk
from tests.factory import make_session


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_every_read_is_listed_and_the_log_verifies(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, name="web", events=[(0.1, "o", "findme\r\n")])
    for args in (["show", "web"], ["cat", "web"], ["export", "web", "--format", "json"], ["search", "findme"]):
        assert sk(*args).exit_code == 0
    entries = json.loads(sk("audit", "--json").stdout)
    assert [(e["seq"], e["command"], e["session"]) for e in entries] == [
        (1, "show", meta.id),
        (2, "cat", meta.id),
        (3, "export", meta.id),
        (4, "search", meta.id),
    ]
    assert set(entries[0]) == {"seq", "time", "user", "host", "command", "session", "project", "detail", "prev", "hash"}
    table = sk("audit", "--limit", "2").stdout.splitlines()
    assert len(table) == 2 and "export" in table[0] and "search" in table[1]
    assert sk("audit", "verify").stdout == "audit log intact: 4 entries\n"


def test_verify_names_the_line_after_an_edit(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, name="web")
    for _ in range(3):
        sk("show", "web")
    lines = home.audit_log.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"command":"show"', '"command":"ls"')
    home.audit_log.write_text("".join(lines))
    result = invoke_sk("audit", "verify")
    assert result.returncode == 3
    assert result.stderr.startswith(b"shellkeep: audit log line 2 was edited") and result.stderr.count(b"\n") == 1


def test_verify_finds_a_removed_line(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, name="web")
    for _ in range(3):
        sk("show", "web")
    lines = home.audit_log.read_text().splitlines(keepends=True)
    home.audit_log.write_text(lines[0] + lines[2])
    result = invoke_sk("audit", "verify")
    assert result.returncode == 3 and b"line 2 does not follow" in result.stderr


def test_an_empty_audit_log(home: Paths) -> None:
    result = sk("audit")
    assert result.exit_code == 0 and result.stdout == "" and "empty" in result.stderr


def test_an_entry_after_a_cut_line_starts_on_its_own_line(home) -> None:  # type: ignore[no-untyped-def]
    from shellkeep.store.audit import record

    record(home, "show", "a")
    with open(home.audit_log, "ab") as fh:
        fh.write(b'{"seq":')  # a crash mid-write
    record(home, "show", "b")
    lines = home.audit_log.read_bytes().splitlines()
    assert lines[-2] == b'{"seq":'
    assert json.loads(lines[-1])["session"] == "b"


def test_resume_redrawing_the_last_screen_is_audited(home: Paths) -> None:
    recorded = run_sk("run", "--", "sh", "-c", "echo last words")
    assert recorded.returncode == 0
    [first] = json.loads(sk("ls", "--json").stdout)
    resumed = run_sk("resume", first["id"])
    assert resumed.returncode == 0
    entries = json.loads(sk("audit", "--json").stdout)
    assert [(e["command"], e["session"], e["detail"]) for e in entries] == [("resume", first["id"], "last screen")]


def test_a_long_command_stays_in_its_column_apart_from_the_session(home: Paths) -> None:
    from shellkeep.store.audit import record

    record(home, "show", "20261206-010101-00101")
    record(home, "mcp:" + "x" * 100 + "\n20261206-999999-99999", "20261206-020202-00202")
    rows = sk("audit").stdout.splitlines()
    assert len(rows) == 2  # nothing in a name starts a row of its own
    starts = [row.index("20261206-010101-00101") for row in rows[:1]] + [row.index("20261206-020202-00202") for row in rows[1:]]
    assert starts[0] == starts[1] and rows[1][starts[1] - 2 : starts[1]] == "  "  # one column, kept apart
    assert "…" in rows[1] and "20261206-999999-99999" not in rows[1]
