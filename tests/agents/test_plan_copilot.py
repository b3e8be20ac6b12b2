"""Keep the real Copilot CLI's todos through a kill -9 of shellkeep and Copilot together.

Copilot CLI 1.0.88 and 1.0.102 offer no todo tool: their system prompt has the model keep its
todos in the session's own SQLite database through the ``sql`` tool (built-in tables ``todos``
and ``todo_deps``, in ``session-state/<id>/session.db``). ``shellkeep copilot --allow-all-tools``
runs against the chat-completions stand-in, which answers the prompt with two ``sql`` tool calls
(an INSERT of three todos, then an UPDATE moving them on), then a text. ``ps`` shows the list
live; then shellkeep and Copilot's process group are killed with SIGKILL, ``show`` reads the
table, and ``resume --dry-run --inject`` prints it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import PROMPT, assert_plan_carried, assert_ps_plan
from .screen_driver import ScreenDriver
from .standin_chat import ChatStandin, ToolCall, tool_messages
from .test_resume_copilot import READY, WAIT_S, copilot_cache, copilot_env, copilot_home

__all__ = ["copilot_cache", "copilot_env", "copilot_home"]  # fixtures used by name

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]

ANSWER = "TODOS-ARE-SET"
STEPS = ("Reading calc.py", "Guarding divide()", "Running the tests")
SUMMARY = "1 of 3 done; in progress: Guarding divide()"
CALLS = [
    ToolCall("sql", {"description": "Insert todos", "query": (
        "INSERT INTO todos (id, title, description) VALUES "
        f"('read', '{STEPS[0]}', 'read it'), ('guard', '{STEPS[1]}', 'raise on zero'), ('test', '{STEPS[2]}', 'pytest')"
    )}),
    ToolCall("sql", {"description": "Move todos on", "query": (
        "UPDATE todos SET status = CASE id WHEN 'read' THEN 'done' WHEN 'guard' THEN 'in_progress' ELSE status END"
    )}),
]


def test_copilot_todos_survive_a_kill_of_shellkeep_and_copilot(
    home: Paths,
    drive: Drive,
    copilot_env: dict[str, str],
    chat_standin: ChatStandin,
    project_dir: Path,
) -> None:
    env = {**copilot_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "COLUMNS": "200"}
    chat_standin.script_tool_calls(CALLS)
    chat_standin.script([ANSWER])
    first = drive([*SK, "copilot", "--allow-all-tools"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    first.type(PROMPT)
    first.wait_for_screen(PROMPT, WAIT_S)
    first.press("enter")
    first.wait_for_screen(ANSWER, WAIT_S)
    last = chat_standin.wait_for_request(lambda r: r.is_conversation and len(tool_messages(r)) == len(CALLS), WAIT_S)
    assert "todo" not in " ".join(str(t.get("function", {}).get("name")) for t in last.body_dict()["tools"])  # no todo tool
    _, meta = running_meta(first, home, WAIT_S)

    assert_ps_plan(SUMMARY, env=env, cwd=project_dir)

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=True)

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", STEPS[0]), (">", STEPS[1]), (" ", STEPS[2])], env=env, cwd=project_dir)
    assert plan["tool"] == "sql" and [i["id"] for i in plan["items"]] == ["read", "guard", "test"]
