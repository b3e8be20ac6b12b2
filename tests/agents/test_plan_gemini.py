"""Keep the real Gemini CLI's todo list (``write_todos``) through a kill -9 of shellkeep and Gemini.

Gemini CLI 0.57 and 0.61 offer ``write_todos`` to a Gemini 2 model that is not a preview (seen in
their bundle, ``useWriteTodos``): the session runs with ``-m gemini-2.5-flash`` against the
Gemini API stand-in (and ``--yolo``: Gemini CLI asks before each ``write_todos`` otherwise), which answers the prompt with two ``write_todos`` calls (``FunctionCall``),
then a text. Then shellkeep and Gemini's process group are killed with SIGKILL; ``show`` reads
the list from the chat file, and ``resume --dry-run --inject`` prints it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import PROMPT, assert_plan_carried
from .screen_driver import ScreenDriver
from .standin_gemini import FunctionCall, GeminiStandin, function_responses
from .test_resume_gemini import READY, WAIT_S, ask, chat_file

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]

ANSWER = "TODOS-ARE-SET"
STEPS = ("read calc.py", "guard divide()", "add a changelog entry")
SUMMARY = "1 of 3 done; in progress: guard divide()"
CALLS = [
    FunctionCall("write_todos", {"todos": [
        {"description": STEPS[0], "status": "in_progress"}, {"description": STEPS[1], "status": "pending"},
        {"description": STEPS[2], "status": "pending"},
    ]}),
    FunctionCall("write_todos", {"todos": [
        {"description": STEPS[0], "status": "completed"}, {"description": STEPS[1], "status": "in_progress"},
        {"description": STEPS[2], "status": "cancelled"},
    ]}),
]


def test_gemini_todos_survive_a_kill_of_shellkeep_and_gemini(
    home: Paths,
    drive: Drive,
    gemini_env: dict[str, str],
    gemini_standin: GeminiStandin,
    project_dir: Path,
) -> None:
    env = {**gemini_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "COLUMNS": "200"}
    gemini_standin.script_function_calls(CALLS)
    gemini_standin.script([ANSWER])
    first = drive([*SK, "gemini", "-m", "gemini-2.5-flash", "--yolo"], env=env, cwd=project_dir)  # write_todos asks first otherwise
    first.wait_for_screen(READY, WAIT_S)
    ask(first, gemini_standin, PROMPT, ANSWER)
    last = gemini_standin.wait_for_request(lambda r: r.is_conversation and len(function_responses(r)) == len(CALLS), WAIT_S)
    offered = [d.get("name") for t in last.body_dict()["tools"] for d in t.get("functionDeclarations", [])]
    assert "write_todos" in offered, offered
    _, meta = running_meta(first, home, WAIT_S)
    chat = first.wait_until(lambda: chat_file(Path(gemini_env["HOME"]), meta["agent_session_id"]), WAIT_S, "chat file")
    assert chat is not None
    first.wait_until(lambda: ANSWER in chat.read_text(), WAIT_S, "the answer in the chat file")

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=True)  # Gemini CLI relaunches itself: its whole group

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", STEPS[0]), (">", STEPS[1]), ("-", STEPS[2])], env=env, cwd=project_dir)
    assert plan["tool"] == "write_todos" and [i["state"] for i in plan["items"]] == ["completed", "in_progress", "cancelled"]
