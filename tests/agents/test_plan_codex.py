"""Keep the real Codex CLI's plan (``update_plan``) through a kill -9 of shellkeep and Codex together.

``shellkeep codex`` runs against the OpenAI Responses stand-in, which answers the prompt with
two ``update_plan`` function calls (``FunctionCall``: a first plan, then the same plan one step
further), then a text once Codex sent back the second call's output. Codex takes no id up
front: the live ``ps`` finds its rollout as the resume does (the newest one of this directory
since the session started). Then shellkeep and Codex are killed with SIGKILL; ``show`` reads the
plan from the rollout, and ``resume --dry-run --inject`` prints it in its banner and in the
block it would type.
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
from .plan_checks import PROMPT, STEPS, SUMMARY, assert_plan_carried, assert_ps_plan
from .screen_driver import ScreenDriver
from .standin_openai import FunctionCall, OpenAIStandin, function_outputs
from .test_codex_standin_direct import READY, WAIT_S, find_rollout, request_with_prompt

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]

ANSWER = "PLAN-IS-SET"
UPDATE_PLAN_CONFIG = "\n[tools.update_plan]\nenabled = true\n"
"""Codex 0.165.0 and 0.171.0 offer ``update_plan`` only when their ``config.toml`` enables it
(``tools.update_plan`` is a struct; without it a call gets ``unsupported call: update_plan``)."""
CALLS = [
    FunctionCall("update_plan", {"explanation": "three steps", "plan": [
        {"step": STEPS[0], "status": "in_progress"}, {"step": STEPS[1], "status": "pending"}, {"step": STEPS[2], "status": "pending"},
    ]}),
    FunctionCall("update_plan", {"plan": [
        {"step": STEPS[0], "status": "completed"}, {"step": STEPS[1], "status": "in_progress"}, {"step": STEPS[2], "status": "pending"},
    ]}),
]


def test_codex_plan_survives_a_kill_of_shellkeep_and_codex(
    home: Paths,
    drive: Drive,
    codex_env: dict[str, str],
    openai_standin: OpenAIStandin,
    project_dir: Path,
) -> None:
    env = {**codex_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "COLUMNS": "200"}
    config = Path(codex_env["CODEX_HOME"]) / "config.toml"
    config.write_text(config.read_text() + UPDATE_PLAN_CONFIG)
    openai_standin.script_function_calls(CALLS)
    openai_standin.script([ANSWER])
    first = drive([*SK, "codex"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    first.type(PROMPT)
    first.wait_for_screen(PROMPT, WAIT_S)
    first.press("enter")
    first.wait_for_screen(ANSWER, WAIT_S)
    # Codex ran both calls itself and sent their outputs back.
    last = openai_standin.wait_for_request(lambda r: r.is_conversation and len(function_outputs(r)) == len(CALLS), WAIT_S)
    offered = [t.get("name") for t in last.body_dict()["tools"]]
    assert "update_plan" in offered, json.dumps([offered, function_outputs(last)])
    thread_id = request_with_prompt(openai_standin, PROMPT).headers["session-id"]
    rollout = first.wait_until(lambda: find_rollout(Path(codex_env["CODEX_HOME"]), thread_id), WAIT_S, "rollout")
    assert rollout is not None
    first.wait_until(lambda: ANSWER in rollout.read_text(), WAIT_S, "the answer in the rollout")
    _, meta = running_meta(first, home, WAIT_S)
    assert meta["agent_session_id"] is None  # Codex takes no id up front

    assert_ps_plan(SUMMARY, env=env, cwd=project_dir)

    kill_shellkeep_and_agent(first, meta, WAIT_S, group=False)

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", STEPS[0]), (">", STEPS[1]), (" ", STEPS[2])], env=env, cwd=project_dir)
    assert (plan["tool"], plan["done"], plan["total"], plan["explanation"]) == ("update_plan", 1, 3, None)
