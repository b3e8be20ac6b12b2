"""A session that was resumed shows as "resumed as <id>" in ``ls``, the picker and the web list.

The sessions are real folders (``tests.factory``); the resumed runs link to the original by
``parent`` as ``shellkeep resume`` writes it. A native resume that failed (``resume_failed``)
resumed nothing: the original names the run that did. An index made before the column was
there (schema 6) is upgraded and fills it in from the stored metadata. The real flow (a
recorder killed, ``shellkeep resume`` in a pty, the shell's notice) is in
``test_shell_init.py``.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import timedelta
from pathlib import Path

from shellkeep.app.context import open_context
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta, write_meta
from shellkeep.tui.rows import columns, list_entries, list_width, row_cells
from tests.e2e.serving import serve
from tests.factory import BASE, make_session
from tests.helpers import invoke_sk

EVENTS = [(5.0, "o", "hello world\r\n")]  # longer than a second: never hidden as trivial


def _sessions(home: Paths) -> tuple[SessionMeta, SessionMeta, SessionMeta]:
    """Return (original cut short, the run that resumed it, a newer failed native resume of it)."""
    here = Path.cwd()
    original = make_session(home, here, 1, agent="claude", status="killed", events=EVENTS)
    resumed = make_session(home, here, 2, agent="claude", started=BASE + timedelta(hours=1), events=EVENTS)
    write_meta(dataclasses.replace(resumed, parent=original.id))
    failed = make_session(home, here, 3, agent="claude", started=BASE + timedelta(hours=2), events=EVENTS)
    write_meta(dataclasses.replace(failed, parent=original.id, resume_failed="exit status 1 after 0.4 s"))
    return original, resumed, failed


def _status_cells(table: str) -> dict[str, str]:
    """Return each row's STATUS cell of an ``ls`` table (cut at the STARTED column)."""
    header, *rows = table.splitlines()
    start, end = header.index("STATUS"), header.index("STARTED")
    return {row.split()[0]: row[start:end].strip() for row in rows}


def test_ls_the_picker_and_the_web_list_name_the_run_that_resumed_a_session(home: Paths) -> None:
    original, resumed, failed = _sessions(home)
    shown = invoke_sk("ls")
    assert shown.returncode == 0, shown.stderr
    cells = _status_cells(shown.stdout.decode())
    assert cells == {original.id: f"resumed as {resumed.id}", resumed.id: "finished", failed.id: "finished"}

    entries = {e.meta.id: e for e in list_entries(open_context(paths=home, cwd=Path.cwd()), all_projects=False)}
    assert entries[original.id].resumed_as == resumed.id and not entries[failed.id].resumed_as
    cells_of = dict(zip(columns(False, list_width(200)), row_cells(entries[original.id], False, 200)))
    assert cells_of["status"] == "resumed" and cells_of["title or prompt"].startswith(f"resumed as {resumed.id} · ")

    with serve() as served:
        client = served.client()
        rows = {row["id"]: row for row in client.get("/api/sessions").json()}
        page = client.get("/").text
    assert (rows[original.id]["status"], rows[original.id]["resumed_as"]) == ("killed", resumed.id)
    assert rows[failed.id]["resumed_as"] is None
    assert f'resumed as <a href="/s/{resumed.id}">{resumed.id}</a>' in page


def test_a_dry_run_of_a_session_already_resumed_names_the_run_and_still_plans(home: Paths) -> None:
    original, resumed, failed = _sessions(home)
    shown = invoke_sk("resume", original.id, "--dry-run")
    assert shown.returncode == 0, shown.stderr
    line = f"already resumed as {resumed.id}; this starts another branch (resume {resumed.id} to go on with it)"
    assert line in shown.stdout.decode().splitlines() and "would run: claude" in shown.stdout.decode()
    latest = invoke_sk("resume", resumed.id, "--dry-run")  # the newest run: resumed by none
    assert latest.returncode == 0 and "already resumed" not in latest.stdout.decode() + latest.stderr.decode()


def test_an_index_of_the_schema_before_is_upgraded_with_the_runs_that_resumed(home: Paths) -> None:
    original, resumed, _ = _sessions(home)
    assert invoke_sk("ls").returncode == 0  # the index, made now
    with sqlite3.connect(home.index) as conn:  # as schema 6 left it: no resumes column
        conn.execute("DROP INDEX sessions_by_resumes")
        conn.execute("ALTER TABLE sessions DROP COLUMN resumes")
        conn.execute("PRAGMA user_version = 6")
    cells = _status_cells(invoke_sk("ls").stdout.decode())
    assert cells[original.id] == f"resumed as {resumed.id}"
