"""``shellkeep search``: ranked hits with highlighted snippets, their session and time."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from tests.helpers import run_sk
from tests.unit.store.factory import make_session


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_search_json_gives_session_time_and_highlights(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, name="db", events=[(1.0, "o", "starting\r\n"), (12.5, "o", "ERROR: connection refused by host\r\n")])
    result = sk("search", "connection", "refused", "--json")
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) == 1
    hit = hits[0]
    assert set(hit) == {"session_id", "session_name", "project", "agent", "started_at", "kind", "exchange", "time", "snippet", "highlights", "rank"}
    assert (hit["session_id"], hit["session_name"], hit["time"], hit["kind"]) == (meta.id, "db", 12.5, "transcript")
    assert [hit["snippet"][a:b] for a, b in hit["highlights"]] == ["connection", "refused"]
    assert [(e.command, e.session) for e in audit.read_entries(home)] == [("search", meta.id)]


def test_search_text_output_and_the_replay_hint(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, events=[(3.0, "o", "the quick brown fox\r\n")])
    result = sk("search", "fox")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [f"{meta.id}  bash  transcript  at 3.0s", "  the quick brown [fox]"]
    assert f"shellkeep replay {meta.id} --at 3.0" in result.stderr


def test_search_scope_is_the_project_unless_all(home: Paths) -> None:
    make_session(home, Path.cwd().parent / "other", 1, events=[(0.1, "o", "only elsewhere\r\n")])
    result = sk("search", "elsewhere")
    assert result.exit_code == 0 and result.stdout == "" and "try --all" in result.stderr
    assert len(json.loads(sk("search", "elsewhere", "--all", "--json").stdout)) == 1


def test_search_agent_and_since_filters(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, agent="claude", events=[(0.1, "o", "needle\r\n")])
    make_session(home, Path.cwd(), 2, agent="codex", events=[(0.1, "o", "needle\r\n")])
    assert [h["agent"] for h in json.loads(sk("search", "needle", "--agent", "codex", "--json").stdout)] == ["codex"]
    assert json.loads(sk("search", "needle", "--since", "1d", "--json").stdout) == []


def test_search_a_query_of_odd_characters_is_no_error(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "a (weird) \"quoted\" -line\r\n")])
    assert sk("search", '"quoted', "(weird", "--json").exit_code == 0
    result = run_sk("search", "--", "-")
    assert result.returncode == 2 and b"nothing to search for" in result.stderr


def test_eight_sessions_recorded_at_once_are_all_listed_and_found(home: Paths) -> None:
    import subprocess

    from tests.helpers import SK

    procs = [
        subprocess.Popen([*SK, "run", "--", "sh", "-c", f"echo concurrent-{n}-marker"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for n in range(8)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and b"locked" not in err, err
    listed = json.loads(sk("ls", "--json").stdout)
    assert len(listed) == 8 and {s["status"] for s in listed} == {"finished"}
    for n in range(8):
        hits = json.loads(sk("search", f"concurrent-{n}-marker", "--json").stdout)
        assert len({h["session_id"] for h in hits}) == 1, n
