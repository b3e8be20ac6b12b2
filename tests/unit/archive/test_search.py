"""Full-text search over the index: ranking, kinds, filters, the FTS5 form of queries."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from shellkeep.errors import UserInputError
from shellkeep.archive.fts import fts_query
from shellkeep.archive.search import SearchRequest, search
from shellkeep.store.paths import Paths, project_key
from tests.factory import BASE, make_session



def test_search_ranks_highlights_and_dates_each_hit(home: Paths, project: Path) -> None:
    many = make_session(home, project, 1, events=[(2.0, "o", "error error error in the build\r\n")])
    make_session(home, project, 2, events=[(1.0, "o", "all good\r\n"), (7.5, "o", "one error here, and more text\r\n")])
    hits = search(home, SearchRequest("error", project=project_key(project)))
    assert [h.session_id for h in hits][0] == many.id
    assert [h.time for h in hits] == [2.0, 7.5]
    second = hits[1]
    assert second.kind == "transcript" and second.exchange is None
    for start, end in second.highlights:
        assert second.snippet[start:end].lower() == "error"


def test_search_covers_prompts_answers_and_markers(home: Paths, project: Path) -> None:
    meta = make_session(
        home,
        project,
        1,
        events=[(0.1, "o", "screen\r\n"), (3.0, "m", "deploy started")],
        exchanges=[
            {"prompt": "please refactor the parser", "answer": "done", "time": "2024-05-01T12:01:04.000Z"},
            {"prompt": "now tests", "answer": "added pytest coverage", "time": "2024-05-01T12:01:30.000Z"},
        ],
    )
    by_kind = {h.kind: h for q in ("parser", "coverage", "deploy") for h in search(home, SearchRequest(q))}
    assert by_kind["prompt"].exchange == 1 and by_kind["prompt"].time == 4.0
    assert by_kind["answer"].exchange == 2 and by_kind["answer"].time == 30.0
    assert by_kind["marker"].time == 3.0
    assert {h.session_id for h in by_kind.values()} == {meta.id}


def test_search_filters_by_project_agent_and_start(home: Paths, project: Path) -> None:
    make_session(home, project, 1, agent="claude", events=[(0.1, "o", "needle\r\n")], started=BASE)
    make_session(home, project, 2, agent="codex", events=[(0.1, "o", "needle\r\n")], started=BASE + timedelta(days=2))
    make_session(home, project.parent / "elsewhere", 3, events=[(0.1, "o", "needle\r\n")])
    key = project_key(project)
    assert len(search(home, SearchRequest("needle"))) == 3
    assert len(search(home, SearchRequest("needle", project=key))) == 2
    assert [h.agent for h in search(home, SearchRequest("needle", project=key, agents=("codex",)))] == ["codex"]
    assert [h.agent for h in search(home, SearchRequest("needle", project=key, since=BASE + timedelta(days=1)))] == ["codex"]


@pytest.mark.parametrize(
    ("typed", "fts"),
    [
        ("connection refused", '"connection" "refused"'),
        ('"connection refused"', '"connection refused"'),
        ("conn*", '"conn"*'),
        ("a OR b", '"a" OR "b"'),
        ('foo" -bar (x', '"foo" "-bar" "(x"'),
        ("a NOT b", '"a" NOT "b"'),
        ("a b AND NOT c", '("a" "b") NOT "c"'),
        ("a b OR c", '("a" "b") OR "c"'),
        ("OR a NOT", '"a"'),
        ("NOT", None),
    ],
    ids=["words", "phrase", "prefix", "or", "odd-characters", "not", "and-not", "or-binds-loosest", "misplaced-operators", "operator-only"],
)
def test_fts_query_never_is_a_syntax_error(typed: str, fts: str | None) -> None:
    """The FTS5 form of queries FTS5 can express; ``NOT x`` alone is tested on recorded sessions (e2e/test_search.py)."""
    if fts is None:
        with pytest.raises(UserInputError):
            fts_query(typed)
        return
    assert fts_query(typed) == fts
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    conn.execute("SELECT * FROM t WHERE t MATCH ?", (fts_query(typed),)).fetchall()
