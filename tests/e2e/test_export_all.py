"""``shellkeep export --all``: every session as one jsonl or csv table (app/tables.py, archive/export/table.py)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shellkeep.archive.export.table import COLUMNS, Row, session_rows, write_table
from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from tests.helpers import invoke_sk
from tests.factory import make_session

NAMES = [name for name, _, _ in COLUMNS]
EXCHANGES = [
    {"prompt": "list the files", "answer": "Here they are.", "time": "2024-05-01T12:01:01.000Z", "model": "m-1",
     "usage": {"input": 10, "output": 3, "cache_read": 7, "cache_write": 1}, "tool_calls": [{"name": "Bash", "summary": "ls"}]},
    {"prompt": 'say "hi", twice\nplease', "answer": "hi, hi", "time": "2024-05-01T12:01:03.000Z", "model": "m-2"},
]


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def sessions(home: Paths, tmp_path: Path) -> list[SessionMeta]:
    other = tmp_path / "other-project"
    other.mkdir()
    return [
        make_session(home, Path.cwd(), 1, name="one", exchanges=EXCHANGES),
        make_session(home, other, 2, agent="claude"),
        make_session(home, Path.cwd(), 3, name="three", exchanges=EXCHANGES[:1], status="killed"),
    ]


def test_jsonl_has_a_row_per_session_and_per_exchange_of_every_project(home: Paths, sessions: list[SessionMeta]) -> None:
    result = sk("export", "--all", "--format", "jsonl")
    assert result.exit_code == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(list(row) == NAMES for row in rows)
    one, two, three = sessions
    assert [(r["kind"], r["session_id"], r["exchange_index"]) for r in rows] == [
        ("session", one.id, None), ("exchange", one.id, 0), ("exchange", one.id, 1),
        ("session", two.id, None),
        ("session", three.id, None), ("exchange", three.id, 0),
    ]
    first = rows[0]
    assert (first["session_name"], first["exchange_count"], first["status"], first["exit_code"]) == ("one", 2, "finished", 0)
    assert rows[3]["project"] == two.project and rows[3]["agent"] == "claude" and rows[4]["status"] == "killed"
    ex = rows[1]
    assert (ex["model"], ex["input_tokens"], ex["output_tokens"], ex["cache_read_tokens"], ex["cache_write_tokens"]) == ("m-1", 10, 3, 7, 1)
    assert (ex["tool_calls"], ex["prompt"], ex["time"], ex["session_name"]) == (1, "list the files", "2024-05-01T12:01:01.000Z", "one")
    assert rows[2]["input_tokens"] is None and rows[0]["prompt"] is None
    entries = audit.read_entries(home)  # every session read is audited, in one append
    assert [(e.command, e.session, e.detail) for e in entries] == [("export", m.id, "all") for m in sessions]


def test_csv_parses_with_the_csv_module(sessions: list[SessionMeta], tmp_path: Path) -> None:
    out = tmp_path / "sessions.csv"
    result = sk("export", "--all", "-o", str(out))  # the format from the suffix
    assert result.exit_code == 0 and result.stderr.strip() == f"wrote 6 rows to {out}"
    with open(out, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == NAMES
        rows = list(reader)
    assert [r["kind"] for r in rows] == ["session", "exchange", "exchange", "session", "session", "exchange"]
    assert rows[2]["prompt"] == 'say "hi", twice\nplease' and rows[2]["model"] == "m-2"
    assert rows[1]["input_tokens"] == "10" and rows[2]["input_tokens"] == "" and rows[0]["duration_s"] == "0.5"


def test_since_keeps_the_sessions_started_from_then(sessions: list[SessionMeta]) -> None:
    result = sk("export", "--all", "--since", "2024-05-01T12:02:30+00:00", "--format", "csv")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["session_id"] for r in rows} == {sessions[2].id} and len(rows) == 2


def test_no_session_gives_the_header_only(home: Paths) -> None:
    result = sk("export", "--all", "--format", "csv")
    assert result.exit_code == 0 and result.stdout.splitlines() == [",".join(NAMES)]
    assert sk("export", "--all").stdout == ""


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "csv", "one"], "--format csv is the table of every session; add --all"),
        (["--since", "7d"], "--since needs --all"),
        (["--all", "one"], "leave out SESSION"),
        (["--all", "--format", "md"], "jsonl or csv"),
        (["--all", "--since", "someday"], "cannot read the time 'someday'"),
        (["one", "-o", "one.csv"], "csv is the table of every session (add --all)"),
        (["--all", "-o", "all.md"], "--all writes jsonl or csv, not md"),
        (["--remote"], "--remote and --machine export the table of every pulled session; add --all"),
        (["--all", "--remote", "--machine", ""], "--machine needs a machine id"),
        (["--all", "--machine", "nosuch"], "no machine 'nosuch' among the pulled sessions (none pulled yet); run 'shellkeep sync pull"),
    ],
    ids=["table-format-without-all", "since-without-all", "all-with-a-session", "all-as-md", "bad-since",
         "csv-suffix-for-one", "md-suffix-for-all", "remote-without-all", "empty-machine", "machine-none-pulled"],
)
def test_bad_options_give_one_line_and_exit_2(sessions: list[SessionMeta], args: list[str], needle: str) -> None:
    result = invoke_sk("export", *args)
    assert result.returncode == 2 and result.stdout == b""
    [line] = result.stderr.decode().splitlines()
    assert needle in line
    assert not list(Path.cwd().glob("one.csv")) and not list(Path.cwd().glob("all.md"))  # nothing written


def test_the_table_of_pulled_sessions_with_none_pulled_says_so(home: Paths) -> None:
    result = invoke_sk("export", "--all", "--remote")
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.decode() == "shellkeep: no sessions pulled from other machines; run 'shellkeep sync pull' first\n"


def test_rows_are_written_as_they_come(home: Paths) -> None:
    """Streaming: each row is on the stream before the next session is even read."""
    metas = [make_session(home, Path.cwd(), n, exchanges=EXCHANGES) for n in range(1, 6)]
    out = io.BytesIO()
    seen: list[int] = []

    def rows() -> Iterator[Row]:
        for meta in metas:
            seen.append(out.getvalue().count(b"\n"))  # rows already written when this session starts
            yield from session_rows(meta, [])

    assert write_table(rows(), "jsonl", out) == 5
    assert seen == [0, 1, 2, 3, 4]


def test_the_docs_document_every_column_in_order() -> None:
    readme = (Path(__file__).parents[2] / "docs" / "export.md").read_text()
    table = [line.split("|")[1].strip().strip("`") for line in readme.splitlines() if line.startswith("| `") and line.count("|") == 4]
    assert [(name, kind) for name, kind, _ in COLUMNS] == [
        (line.split("|")[1].strip().strip("`"), line.split("|")[2].strip()) for line in readme.splitlines()
        if line.startswith("| `") and line.count("|") == 4 and line.split("|")[1].strip().strip("`") in NAMES
    ]
    assert set(NAMES) <= set(table)
