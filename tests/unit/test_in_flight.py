"""The files in flight: paths from the agents' edit tools, the completion rule, the resume line."""

from __future__ import annotations

import pytest

from shellkeep.agents.base import Exchange, ToolCall
from shellkeep.app.in_flight import InFlight, InFlightFile, edited_paths, in_flight_line
from shellkeep.app.live_snapshots import completed


@pytest.mark.parametrize(
    ("name", "summary", "paths"),
    [
        ("Edit", "/repo/a.py", ["/repo/a.py"]),
        ("Write", "b/c.py", ["b/c.py"]),
        ("MultiEdit", "/repo/m.py", ["/repo/m.py"]),
        ("NotebookEdit", "/repo/n.ipynb", ["/repo/n.ipynb"]),
        ("apply_patch", "update parse.py, add new/mod.py, delete old.py", ["parse.py", "new/mod.py", "old.py"]),
        ("apply_patch", "*** Begin Patch *** Update File: src/x.rs @@ fn main", ["src/x.rs"]),
        ("write_file", "/repo/g.txt", ["/repo/g.txt"]),
        ("replace", "/repo/r.txt", ["/repo/r.txt"]),
        ("str_replace_editor", "/repo/s.txt", ["/repo/s.txt"]),
        ("Read", "/repo/a.py", []),
        ("Bash", "echo hi > a.py", []),
        ("Edit", "/a/very/long/path/cut…", []),
        ("Write", "  ", []),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_edited_paths_by_agent_tool(name: str, summary: str, paths: list[str]) -> None:
    assert edited_paths(ToolCall(name, summary)) == paths


def _exchange(i: int, answer: str, calls: int = 0, results: int = 0) -> Exchange:
    return Exchange(
        index=i,
        time=None,
        prompt=f"p{i}",
        answer=answer,
        tool_calls=tuple(ToolCall("Bash", "make") for _ in range(calls)),
        tool_results=tuple("ok" for _ in range(results)),
    )


@pytest.mark.parametrize(
    ("exchanges", "complete"),
    [
        ([], 0),
        ([_exchange(0, "done")], 1),
        ([_exchange(0, "")], 0),  # a prompt, no answer yet
        ([_exchange(0, "running the tests", calls=1)], 0),  # its command still runs
        ([_exchange(0, "all pass", calls=1, results=1)], 1),
        ([_exchange(0, "done"), _exchange(1, "")], 1),  # a later prompt: the one before is done
    ],
    ids=["none", "answered", "unanswered", "tool-running", "tool-done", "next-prompt"],
)
def test_which_exchanges_are_complete(exchanges: list[Exchange], complete: int) -> None:
    assert completed(exchanges) == complete


def test_the_resume_line_names_the_files_and_counts_them() -> None:
    files = tuple(InFlightFile(p, "M", ()) for p in ("a.py", "b/c.py"))
    assert in_flight_line(InFlight(2, 3, files)) == "files in flight: a.py, b/c.py (2 changed since the last answer)"
    assert in_flight_line(InFlight(0, 1, files[:1])) == "files in flight: a.py (1 changed since the session started)"
    many = tuple(InFlightFile(f"f{i}", "A", ()) for i in range(7))
    assert in_flight_line(InFlight(1, 2, many)) == "files in flight: f0, f1, f2, f3, f4, … (2 more) (7 changed since the last answer)"
    assert in_flight_line(InFlight(1, 2, ())) is None and in_flight_line(None) is None
