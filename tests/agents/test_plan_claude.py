"""Keep the real Claude Code's task list through a kill -9 of shellkeep and Claude together.

``shellkeep claude`` runs against the Anthropic stand-in, which answers the first prompt with
plan tool calls (``ToolUse``), then a text once the last tool result came back:

- ``todowrite``: ``CLAUDE_CODE_ENABLE_TASKS=false`` offers ``TodoWrite`` (2.1.332 also wants
  ``CLAUDE_CODE_ENABLE_TODO_TOOLS=true`` for a model it does not know); one call sets three
  todos (one completed, one in progress, one pending);
- ``tasks``: the default 2.1 tools: three ``TaskCreate`` calls (ids 1, 2, 3 given back by
  Claude Code), then ``TaskUpdate`` 1 -> completed and 2 -> in_progress.

While it runs, ``ps`` shows the plan read live. Then shellkeep is killed with SIGKILL, and
Claude with it (its own kill -9: a crash of both). The next commands find the session
interrupted and show the plan: ``show`` (text and ``--json``) reads it from the transcript,
``resume --dry-run --inject`` prints it in the banner and in the block it would type, and a real
``resume`` shows it in its banner and stores it in the session's ``meta.json`` (collected before
Claude Code starts again). Two last tests end a run normally: the plan is stored, redacted; and
with encryption on it is sealed in ``plan.json``, ``meta.json`` counting it only, ``show`` unsealing it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from shellkeep.vault.crypto import is_encrypted
from tests.helpers import SK, invoke_sk, meta_of, session_folders

from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import assert_plan_carried, assert_ps_plan, sk
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin, ToolUse, tool_results
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]

ITEMS = ("write the parser", "migrate the index", "ship the release")
SUMMARY = "1 of 3 done; in progress: migrate the index"
ANSWER = "PLAN-IS-SET"

TODOWRITE = [
    ToolUse("TodoWrite", {"todos": [
        {"content": ITEMS[0], "status": "completed", "activeForm": "Writing the parser"},
        {"content": ITEMS[1], "status": "in_progress", "activeForm": "Migrating the index"},
        {"content": ITEMS[2], "status": "pending", "activeForm": "Shipping the release"},
    ]}),
]
TASKS = [
    *(ToolUse("TaskCreate", {"subject": item, "description": f"do: {item}"}) for item in ITEMS),
    ToolUse("TaskUpdate", {"taskId": "1", "status": "completed"}),
    ToolUse("TaskUpdate", {"taskId": "2", "status": "in_progress"}),
]


@pytest.mark.parametrize("tools", ["todowrite", "tasks"])
def test_claude_plan_survives_a_kill_of_shellkeep_and_claude(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    tools: str,
) -> None:
    # 2.1.332 offers its todo tools only to some models, or with CLAUDE_CODE_ENABLE_TODO_TOOLS=true
    # (seen in its bundle: the stand-in's default model is not one of them); 2.1.197 always does.
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "COLUMNS": "200", "CLAUDE_CODE_ENABLE_TODO_TOOLS": "true"}
    if tools == "todowrite":
        env["CLAUDE_CODE_ENABLE_TASKS"] = "false"
    uses = TODOWRITE if tools == "todowrite" else TASKS
    anthropic_standin.script_tool_uses(uses)
    anthropic_standin.script([ANSWER])

    first = drive([*SK, "claude"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, "make a plan and start on it", ANSWER)
    # Every tool call was run by Claude Code itself: each came back as a tool_result, none an error.
    last = anthropic_standin.wait_for_request(lambda r: r.is_conversation and len(tool_results(r)) == len(uses), WAIT_S)
    offered = [t["name"] for t in last.body_dict()["tools"]]
    assert not any(block.get("is_error") for block in tool_results(last)), (offered, json.dumps(tool_results(last)))
    folder, meta = running_meta(first, home, WAIT_S)
    claude_id = meta["agent_session_id"]
    transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{claude_id}.jsonl"))
    first.wait_until(lambda: ANSWER in transcript.read_text(), WAIT_S, "the answer in the transcript")

    listed = sk("ps", env=env, cwd=project_dir)  # live: read from the transcript as it runs
    assert listed.returncode == 0, listed.stderr
    assert SUMMARY in listed.stdout, listed.stdout
    assert_ps_plan(SUMMARY, env=env, cwd=project_dir)

    # -- a crash of both: kill -9 of shellkeep, then of Claude -------------------------------
    kill_shellkeep_and_agent(first, meta, WAIT_S, group=False)
    assert meta_of(folder)["status"] == "running" and meta_of(folder).get("plan") is None

    plan = assert_plan_carried(meta["id"], SUMMARY, [("x", ITEMS[0]), (">", ITEMS[1]), (" ", ITEMS[2])], env=env, cwd=project_dir)
    assert [(i["text"], i["state"]) for i in plan["items"]] == [
        (ITEMS[0], "completed"), (ITEMS[1], "in_progress"), (ITEMS[2], "pending")
    ]
    assert plan["tool"] == ("TodoWrite" if tools == "todowrite" else "TaskUpdate")
    if tools == "tasks":
        assert [i["id"] for i in plan["items"]] == ["1", "2", "3"]
    assert meta_of(folder).get("plan") is None  # a dry run writes nothing

    # A real resume collects the session first: the plan is kept in its meta.json, and Claude
    # Code, resumed natively, still has its own task list.
    second = drive([*SK, "resume", meta["id"]], env=env, cwd=project_dir)
    second.wait_for_screen(f"plan: {SUMMARY}", WAIT_S)  # the banner, above the redrawn screen
    second.wait_until(lambda: len(session_folders(home)) == 2, WAIT_S, "the resumed session")  # collected before
    assert meta_of(folder)["plan"]["summary"] == SUMMARY
    assert meta_of(folder)["status"] == "interrupted"


SECRET = "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000"


def test_claude_plan_is_stored_redacted_when_the_run_ends(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "CLAUDE_CODE_ENABLE_TODO_TOOLS": "true"}
    anthropic_standin.script_tool_uses([
        ToolUse("TaskCreate", {"subject": f"rotate the token {SECRET}", "description": "d"}),
        ToolUse("TaskCreate", {"subject": ITEMS[1], "description": "d"}),
        ToolUse("TaskUpdate", {"taskId": "2", "status": "in_progress", "activeForm": "Migrating the index"}),
    ])
    anthropic_standin.script([ANSWER])
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, "plan it", ANSWER)
    quit_claude(driver)  # a normal end: the conversation is collected before shellkeep exits

    [meta_path] = session_folders(home)
    plan = meta_of(meta_path.parent)["plan"]
    assert plan["summary"] == f"0 of 2 done; in progress: {ITEMS[1]}"
    assert [(i["text"], i["state"], i["active"]) for i in plan["items"]] == [
        ("rotate the token [REDACTED:github-fine-grained]", "pending", None),
        (ITEMS[1], "in_progress", "Migrating the index"),
    ]
    assert SECRET not in meta_path.read_text()
    # What the session was about leads the lists: Claude Code's own title, else the first prompt.
    stored = meta_of(meta_path.parent)
    titles = [json.loads(line) for line in Path(stored["agent_transcript"]).read_text().splitlines() if '"ai-title"' in line]
    assert stored["about"] == (titles[-1]["aiTitle"] if titles else "plan it")


def test_claude_plan_is_sealed_with_encryption_on(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")  # keys in the 0600 key file
    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"], "CLAUDE_CODE_ENABLE_TODO_TOOLS": "true",
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    anthropic_standin.script_tool_uses(TASKS)
    anthropic_standin.script([ANSWER])
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    ask(driver, "plan it", ANSWER)
    quit_claude(driver)

    [meta_path] = session_folders(home)
    assert meta_of(meta_path.parent)["plan"] == {"sealed": True, "done": 1, "total": 3}
    assert ITEMS[1] not in meta_path.read_text()
    sealed = meta_path.parent / "plan.json"
    assert is_encrypted(sealed) and ITEMS[1].encode() not in sealed.read_bytes()
    shown = sk("show", "--last", env=env, cwd=project_dir)
    assert f"plan: {SUMMARY}\n  [x] {ITEMS[0]}\n  [>] {ITEMS[1]}\n  [ ] {ITEMS[2]}" in shown.stdout, shown.stderr
    # Its title (Claude Code's own, else the first prompt) is sealed too, and lists read it.
    stored = meta_of(meta_path.parent)
    titles = [json.loads(line) for line in Path(stored["agent_transcript"]).read_text().splitlines() if '"ai-title"' in line]
    title = titles[-1]["aiTitle"] if titles else "plan it"
    assert stored.get("about") is None and is_encrypted(meta_path.parent / "about.txt")
    assert sk("ls", env=env, cwd=project_dir).stdout.splitlines()[1].endswith(f"  {title}")
