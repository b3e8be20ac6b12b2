"""``shellkeep search``: ranked hits with highlighted snippets, their session and time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from tests.helpers import invoke_sk, run_sk
from tests.factory import make_session


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_search_json_gives_session_time_and_highlights(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, name="db", events=[(1.0, "o", "starting\r\n"), (12.5, "o", "ERROR: connection refused by host\r\n")])
    result = sk("search", "connection", "refused", "--json")
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) == 1
    hit = hits[0]
    assert set(hit) == {"session_id", "session_name", "project", "agent", "started_at", "kind", "exchange", "time", "snippet", "highlights", "rank", "machine"}
    assert (hit["session_id"], hit["session_name"], hit["time"], hit["kind"]) == (meta.id, "db", 12.5, "transcript")
    assert [hit["snippet"][a:b] for a, b in hit["highlights"]] == ["connection", "refused"]
    assert [(e.command, e.session) for e in audit.read_entries(home)] == [("search", meta.id)]


def test_a_search_audits_each_session_it_read_once(home: Paths) -> None:
    metas = [make_session(home, Path.cwd(), n, events=[(1.0, "o", f"deploy failed {n}\r\n"), (2.0, "m", "deploy")]) for n in (1, 2, 3)]
    result = sk("search", "deploy", "--json")
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)) == 6  # a transcript and a marker hit each
    entries = audit.read_entries(home)
    assert sorted((e.command, e.session, e.detail) for e in entries) == sorted(("search", m.id, "hit") for m in metas)
    assert audit.verify(home).entries == 3
    listed = sk("audit")
    assert listed.exit_code == 0 and all(m.id in listed.stdout for m in metas)


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


def test_search_remote_with_nothing_pulled_says_to_pull(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "only here\r\n")])  # a local hit is not a pulled one
    result = sk("search", "--remote", "here")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "no sessions pulled; run 'shellkeep sync pull'\n"  # as 'ls --remote' says


def test_search_agent_and_since_filters(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, agent="claude", events=[(0.1, "o", "needle\r\n")])
    make_session(home, Path.cwd(), 2, agent="codex", events=[(0.1, "o", "needle\r\n")])
    assert [h["agent"] for h in json.loads(sk("search", "needle", "--agent", "codex", "--json").stdout)] == ["codex"]
    assert json.loads(sk("search", "needle", "--since", "1d", "--json").stdout) == []


def test_search_a_query_of_odd_characters_is_no_error(home: Paths) -> None:
    make_session(home, Path.cwd(), 1, events=[(0.1, "o", "a (weird) \"quoted\" -line\r\n")])
    assert sk("search", '"quoted', "(weird", "--json").exit_code == 0
    result = invoke_sk("search", "--", "-")
    assert result.returncode == 2 and b"nothing to search for" in result.stderr
    empty = invoke_sk("search", "")  # one clear line, not a pair of empty quotes
    assert empty.returncode == 2 and empty.stderr.decode() == "shellkeep: nothing to search for: the query is empty; give at least one word\n"


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


# -- the query language, the same over plain and encrypted sessions -------------------------

LANGUAGE_SESSIONS = {"s1": "alpha bravo", "s2": "alpha charlie", "s3": "delta echo"}
"""Session name -> the one line its program prints (each session's transcript is one chunk)."""


@pytest.fixture(scope="module")
def recorded_twice(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, str], Path]]:
    """Record ``LANGUAGE_SESSIONS`` with ``shellkeep run`` into a plain and an encrypted data
    folder; return kind -> (environment, project directory) for running ``shellkeep`` there."""
    import os
    import sys

    from tests.helpers import wait_for_background

    homes: dict[str, tuple[dict[str, str], Path]] = {}
    for kind in ("plain", "encrypted"):
        root = tmp_path_factory.mktemp(f"search-{kind}")
        project = root / "project"
        project.mkdir()
        env = {**os.environ, "SHELLKEEP_HOME": str(root / "home"), "SHELLKEEP_CONFIG": str(root / "config.toml"),
               "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}  # fmt: skip
        for var in ("SHELLKEEP_SESSION", "SHELLKEEP_SESSION_DIR", "SHELLKEEP_PROJECT", "SHELLKEEP_DEBUG"):
            env.pop(var, None)
        if kind == "encrypted":
            assert invoke_sk("key", "init", env=env, cwd=project).returncode == 0
            assert invoke_sk("config", "set", "encryption.encrypt", "true", env=env, cwd=project).returncode == 0
        for name, line in LANGUAGE_SESSIONS.items():
            done = run_sk("run", "--name", name, "--", sys.executable, "-c", f"print({line!r})", env=env, cwd=project)
            assert done.returncode == 0, done.stderr
        wait_for_background(Paths(root / "home", root / "config.toml"))
        homes[kind] = (env, project)
    return homes


@pytest.mark.parametrize(
    ("query", "sessions"),
    [
        ("alpha", {"s1", "s2"}),
        ("alpha bravo", {"s1"}),
        ("alpha AND bravo", {"s1"}),
        ('"alpha bravo"', {"s1"}),
        ('"bravo alpha"', set()),
        ("alph*", {"s1", "s2"}),
        ("bravo OR echo", {"s1", "s3"}),
        ("alpha NOT bravo", {"s2"}),
        ("alpha AND NOT bravo", {"s2"}),
        ("bravo OR NOT alpha", {"s1", "s3"}),
        ("NOT alpha", {"s3"}),
        ("NOT alpha NOT echo", set()),
        ("NOT bravo NOT charlie", {"s3"}),
    ],
    ids=["word", "words", "and", "phrase", "phrase-order", "prefix", "or", "not", "and-not", "or-not",
         "not-alone", "not-not", "not-alone-twice"],  # fmt: skip
)
def test_the_query_language_gives_the_same_hits_in_plain_and_encrypted_sessions(
    recorded_twice: dict[str, tuple[dict[str, str], Path]], query: str, sessions: set[str]
) -> None:
    found = {}
    for kind, (env, project) in recorded_twice.items():
        result = invoke_sk("search", query, "--json", env=env, cwd=project)
        assert result.returncode == 0, result.stderr
        hits = json.loads(result.stdout)
        assert {h["session_name"] for h in hits} == sessions, (kind, hits)
        found[kind] = sorted((h["session_name"], h["kind"], h["snippet"], h["highlights"]) for h in hits)
        assert all(h["snippet"] == LANGUAGE_SESSIONS[h["session_name"]] for h in hits), hits
    assert found["plain"] == found["encrypted"]


def test_search_help_documents_the_query_language() -> None:
    out = sk("search", "--help").stdout
    for form in ('"two words"', "word*", "a OR b", "a NOT b", "NOT x"):
        assert form in out, form


def test_a_hit_inside_a_chunk_carries_the_time_its_line_appeared_in_both_outputs(home: Paths) -> None:
    events = [(1.0, "o", "booting\r\n"), (2.0, "o", "loading modules\r\n"), (7.5, "o", "kernel panic at last\r\n")]
    meta = make_session(home, Path.cwd(), 1, events=events)  # one transcript chunk of three lines
    [hit] = json.loads(sk("search", "panic", "--json").stdout)
    assert hit["time"] == 7.5  # the line's own time, not the chunk's (1.0)
    assert sk("search", "panic").stdout.splitlines()[0] == f"{meta.id}  bash  transcript  at 7.5s"
