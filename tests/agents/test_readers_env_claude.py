"""Read the real Claude Code's files with the environment its session recorded, from a terminal without it.

``shellkeep claude`` runs with ``CLAUDE_CONFIG_DIR`` (a folder that is not ``~/.claude``) and
``ANTHROPIC_BASE_URL`` (the stand-in) exported; the stand-in answers with a ``TodoWrite`` call,
then a text. From a terminal without those variables, ``ps`` shows the plan while it runs
(read live from the transcript in ``CLAUDE_CONFIG_DIR``). Then shellkeep and Claude are killed
together with kill -9, and ``show`` (text and ``--json``) from that terminal has the exchange
and the plan, read from the transcript where the session had it (``app.env_restore.agent_files_env``),
and writes nothing: the session is collected later (the upkeep, a resume).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, meta_of

from .conftest import claude_config_dir
from .crash import kill_shellkeep_and_agent, running_meta
from .plan_checks import sk
from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicStandin, tool_results
from .test_claude_standin_direct import READY, WAIT_S, ask
from .test_plan_claude import ANSWER, ITEMS, SUMMARY, TODOWRITE

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

Drive = Callable[..., ScreenDriver]

PROMPT = "make a plan and start on it"


def test_ps_and_show_find_claude_files_with_the_recorded_environment(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    tmp_path: Path,
) -> None:
    config_dir = claude_config_dir(tmp_path / "claudecfg", [project_dir])
    env = {
        **agent_env,
        "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"],
        "COLUMNS": "200",
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "CLAUDE_CODE_ENABLE_TASKS": "false",  # TodoWrite (test_plan_claude)
        "CLAUDE_CODE_ENABLE_TODO_TOOLS": "true",
    }
    plain = {k: v for k, v in env.items() if k not in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL")}
    anthropic_standin.script_tool_uses(TODOWRITE)
    anthropic_standin.script([ANSWER])

    first = drive([*SK, "claude"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, PROMPT, ANSWER)
    anthropic_standin.wait_for_request(lambda r: r.is_conversation and len(tool_results(r)) == len(TODOWRITE), WAIT_S)
    folder, meta = running_meta(first, home, WAIT_S)
    transcript = next((config_dir / "projects").glob(f"*/{meta['agent_session_id']}.jsonl"))
    assert not (Path(agent_env["HOME"]) / ".claude" / "projects").exists()  # only in CLAUDE_CONFIG_DIR
    first.wait_until(lambda: ANSWER in transcript.read_text(), WAIT_S, "the answer in the transcript")

    listed = sk("ps", "--json", env=plain, cwd=project_dir)  # a terminal without the variables
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)[0]["plan"] == SUMMARY
    assert SUMMARY in sk("ps", env=plain, cwd=project_dir).stdout

    # -- a crash of both: kill -9 of shellkeep, then of Claude -------------------------------
    kill_shellkeep_and_agent(first, meta, WAIT_S, group=False)
    assert meta_of(folder)["status"] == "running" and not (folder / "exchanges.jsonl").exists()

    shown = sk("show", "--last", env=plain, cwd=project_dir)
    assert shown.returncode == 0, shown.stderr
    assert "does not exist" not in shown.stderr, shown.stderr
    assert f"plan: {SUMMARY}\n  [x] {ITEMS[0]}\n  [>] {ITEMS[1]}\n  [ ] {ITEMS[2]}" in shown.stdout, shown.stdout
    assert re.search(r"^exchanges +1$", shown.stdout, re.M), shown.stdout
    assert "#1" in shown.stdout and f"  > {PROMPT}" in shown.stdout and f"  < {ANSWER}" in shown.stdout
    as_json = json.loads(sk("show", "--last", "--json", env=plain, cwd=project_dir).stdout)
    assert as_json["exchange_count"] == 1 and as_json["status"] == "interrupted"
    assert as_json["agent_transcript"] == str(transcript)
    assert [(i["text"], i["state"]) for i in as_json["plan"]["items"]] == [
        (ITEMS[0], "completed"), (ITEMS[1], "in_progress"), (ITEMS[2], "pending")
    ]
    assert "unanswered_prompt" not in as_json  # answered
    # show writes nothing of the conversation: it is collected later, as before
    assert not (folder / "exchanges.jsonl").exists() and meta_of(folder).get("plan") is None
