"""Keep the real Qwen Code's todo list (``todo_write``) through a kill -9 of shellkeep and Qwen.

``shellkeep qwen --yolo`` runs (with ``tools.todoWrite.enabled`` in its settings: Qwen Code
answers "a built-in tool that is disabled by default" otherwise) against the OpenAI stand-in's chat completions, which answer the
prompt with two ``todo_write`` tool calls (``ToolCall``: a list, then the list one step further),
then a text. Then shellkeep and Qwen's process group are killed with SIGKILL; ``show`` reads the
list from the chat file, and ``resume --dry-run --inject`` prints it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK

from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import PROMPT, STEPS, SUMMARY, assert_plan_carried
from .screen_driver import ScreenDriver
from .standin_chat import ToolCall, tool_messages
from .standin_openai import OpenAIStandin
from .test_resume_qwen import WAIT_S, ask, wait_ready

pytestmark = [pytest.mark.agent, pytest.mark.timeout(240)]

Drive = Callable[..., ScreenDriver]

ANSWER = "TODOS-ARE-SET"
CALLS = [
    ToolCall("todo_write", {"todos": [
        {"id": "1", "content": STEPS[0], "status": "in_progress"}, {"id": "2", "content": STEPS[1], "status": "pending"},
        {"id": "3", "content": STEPS[2], "status": "pending"},
    ]}),
    ToolCall("todo_write", {"todos": [
        {"id": "1", "content": STEPS[0], "status": "completed"}, {"id": "2", "content": STEPS[1], "status": "in_progress"},
        {"id": "3", "content": STEPS[2], "status": "pending"},
    ]}),
]


@pytest.mark.newest_only
def test_qwen_todos_survive_a_kill_of_shellkeep_and_qwen(
    home: Paths,
    drive: Drive,
    qwen_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    env = {**qwen_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "COLUMNS": "200"}
    settings = Path(env["HOME"]) / ".qwen" / "settings.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "tools": {"todoWrite": {"enabled": True}}}))
    openai_standin.script_chat_tool_calls(CALLS)
    openai_standin.script([ANSWER])
    first = drive([*SK, "qwen", "--yolo"], env=env, cwd=project_dir)
    wait_ready(first)
    ask(first, openai_standin, PROMPT, ANSWER)
    last = openai_standin.wait_for_request(lambda r: r.is_chat and r.is_conversation and len(tool_messages(r)) == len(CALLS), WAIT_S)
    offered = [t.get("function", {}).get("name") for t in last.body_dict()["tools"]]
    assert "todo_write" in offered, json.dumps([offered, tool_messages(last)])
    _, meta = running_meta(first, home, WAIT_S)
    chats = Path(env["HOME"]) / ".qwen" / "projects"
    chat = first.wait_until(lambda: next(chats.glob(f"*/chats/{meta['agent_session_id']}.jsonl"), None), WAIT_S, "chat file")
    assert chat is not None
    first.wait_until(lambda: ANSWER in chat.read_text(), WAIT_S, "the answer in the chat file")

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=True)

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", STEPS[0]), (">", STEPS[1]), (" ", STEPS[2])], env=env, cwd=project_dir)
    assert plan["tool"] == "todo_write" and [i["id"] for i in plan["items"]] == ["1", "2", "3"]
