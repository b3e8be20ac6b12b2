"""Keep the real OpenCode's todo list (``todowrite``) through a kill -9 of shellkeep and OpenCode.

``shellkeep opencode`` runs against the chat-completions stand-in, which answers the prompt with
two ``todowrite`` tool calls (``ToolCall``), then a text. OpenCode takes no id up front: the live
``ps`` finds its session in ``opencode.db`` as the resume does. Then shellkeep and OpenCode's
process group are killed with SIGKILL; ``show`` reads the list from the database's tool parts,
and ``resume --dry-run --inject`` prints it.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import PROMPT, STEPS, SUMMARY, assert_plan_carried, assert_ps_plan
from .screen_driver import ScreenDriver
from .standin_chat import SIDE_ANSWER_TEXT, ChatStandin, ToolCall, tool_messages
from .test_resume_opencode import READY, WAIT_S, ask, database, latest_session, opencode_env, opencode_home, stored_answers

__all__ = ["opencode_env", "opencode_home"]  # fixtures used by name

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]

ANSWER = "TODOS-ARE-SET"
CALLS = [
    ToolCall("todowrite", {"todos": [
        {"content": STEPS[0], "status": "in_progress", "priority": "high"},
        {"content": STEPS[1], "status": "pending", "priority": "high"},
        {"content": STEPS[2], "status": "pending", "priority": "low"},
    ]}),
    ToolCall("todowrite", {"todos": [
        {"content": STEPS[0], "status": "completed", "priority": "high"},
        {"content": STEPS[1], "status": "in_progress", "priority": "high"},
        {"content": STEPS[2], "status": "pending", "priority": "low"},
    ]}),
]


@pytest.mark.newest_only
def test_opencode_todos_survive_a_kill_of_shellkeep_and_opencode(
    home: Paths,
    drive: Drive,
    opencode_env: dict[str, str],
    opencode_home: Path,
    chat_standin: ChatStandin,
    project_dir: Path,
) -> None:
    env = {**opencode_env, "COLUMNS": "200"}
    chat_standin.script_tool_calls(CALLS)
    chat_standin.script([ANSWER])
    first = drive([*SK, "opencode"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, PROMPT, ANSWER, chat_standin)
    last = chat_standin.wait_for_request(lambda r: r.is_conversation and len(tool_messages(r)) == len(CALLS), WAIT_S)
    offered = [t.get("function", {}).get("name") for t in last.body_dict()["tools"]]
    assert "todowrite" in offered, json.dumps([offered, tool_messages(last)])
    db = database(opencode_home)
    session_id = latest_session(db, project_dir)
    assert session_id is not None
    first.wait_until(lambda: ANSWER in stored_answers(db, session_id), WAIT_S, "the answer in the database")
    _, meta = running_meta(first, home, WAIT_S)

    assert_ps_plan(SUMMARY, env=env, cwd=project_dir)
    # ps leads with what the session is about: OpenCode's own title (its title request's answer).
    first.wait_until(lambda: _title(db, session_id) == SIDE_ANSWER_TEXT, WAIT_S, "OpenCode's title in its database")
    listed = json.loads(subprocess.run([*SK, "ps", "--json"], env=env, cwd=project_dir, capture_output=True, text=True, timeout=120).stdout)
    assert [s["title"] for s in listed] == [SIDE_ANSWER_TEXT]

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=True)

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", STEPS[0]), (">", STEPS[1]), (" ", STEPS[2])], env=env, cwd=project_dir)
    assert plan["tool"] == "todowrite"


def _title(db: Path, session_id: str) -> str | None:
    """Return the title OpenCode keeps for ``session_id``, read-only."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        row = connection.execute("SELECT title FROM session WHERE id = ?", (session_id,)).fetchone()
    finally:
        connection.close()
    return None if row is None else str(row[0])
