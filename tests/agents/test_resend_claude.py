"""Send the prompt Claude Code never answered again on resume (``--resend``, ``--no-resend``, asked).

The real Claude Code runs under ``shellkeep claude`` against the Anthropic stand-in. One
exchange is answered; the next prompt is held by the stand-in (received, never answered);
then shellkeep and Claude are killed together with kill -9, mid-turn (Claude Code has not
written the prompt to its transcript yet: the recording has it). ``shellkeep resume``
in a new terminal collects the interrupted session, names the prompt in its banner and:

- ``resend``: with ``--resend``, types it into the natively resumed Claude once it is ready:
  the stand-in gets a new conversation request whose last user text is that prompt, and
  its answer is recorded in the new session; resuming the old session again offers nothing;
- ``no-resend``: with ``--no-resend``, sends nothing: the next request is the user's own;
- ``ask-yes``: with neither, asks y/N on the terminal; "y" sends it as ``--resend`` does;
- ``resend-claude-killed``: only Claude is killed; shellkeep records the prompt at the end of
  the run, and ``--resend`` sends it as above.

A prompt sent again and cut short again (the run that sent it killed in turn) is that run's
unanswered prompt, offered by the next resume.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from shellkeep.agents.generic import typed_lines
from shellkeep.store.paths import Paths
from tests.helpers import SK, load_session, meta_of, process_gone, session_folders

from .screen_driver import ScreenDriver
from .standin_anthropic import AnthropicRequest, AnthropicStandin
from .test_claude_standin_direct import READY, WAIT_S, ask, quit_claude, turn_stored

pytestmark = [pytest.mark.agent, pytest.mark.timeout(180)]

FIRST_PROMPT, FIRST_ANSWER = "the first word is kiwi", "STANDIN-ANSWER-1: kiwi"
HELD_PROMPT = "the held word is plum"
RESENT_ANSWER = "STANDIN-ANSWER-2: plum"  # the held request took no answer from the count
OWN_PROMPT, OWN_ANSWER = "the next word is fig", "STANDIN-ANSWER-2: fig"
QUESTION = "send it again once the agent is ready?"

Drive = Callable[..., ScreenDriver]


def _asks_held(request: AnthropicRequest, prompt: str = HELD_PROMPT) -> bool:
    return request.is_conversation and request.last_user_text() == prompt


def _killed_mid_turn(
    home: Paths,
    drive: Drive,
    env: dict[str, str],
    standin: AnthropicStandin,
    project_dir: Path,
    *,
    both: bool = True,
    held: str = HELD_PROMPT,
    recorded: str | None = None,
) -> Path:
    """Record one answered exchange and one held prompt, then kill -9 shellkeep and Claude; return the folder.

    both False: kill -9 of Claude only; shellkeep lives on and collects the conversation at the end.
    held: the prompt held; recorded: as the recording keeps it (redacted; default ``held``).
    """
    asks_held: Callable[[AnthropicRequest], bool] = lambda r: _asks_held(r, held)  # noqa: E731
    standin.hold(asks_held)
    first = drive([*SK, "claude"], env=env, cwd=project_dir)
    first.wait_for_screen(READY, WAIT_S)
    ask(first, FIRST_PROMPT, FIRST_ANSWER)
    [meta_path] = session_folders(home)
    folder = meta_path.parent
    claude_id = meta_of(folder)["command"][2]  # claude --session-id <id>
    transcripts = Path(env["HOME"]) / ".claude" / "projects"
    first.wait_until(  # Claude writes its transcript after the screen: the answered exchange is in it
        lambda: any(turn_stored(p, FIRST_ANSWER) for p in transcripts.glob(f"*/{claude_id}.jsonl")),
        WAIT_S,
        "answer 1 stored",
    )
    first.type(held)
    first.wait_for_screen(held, WAIT_S)
    first.press("enter")
    standin.wait_for_request(asks_held, WAIT_S)  # Claude sent it; no answer will come
    # What was typed reaches the disk within about a second (Claude writes the prompt to its transcript later).
    first.wait_until(
        lambda: (recorded or held) in [line.text for line in typed_lines(load_session(folder)[2])], WAIT_S, "prompt on disk"
    )
    first.wait_until(lambda: meta_of(folder).get("child_pid"), WAIT_S, "child_pid")
    meta = meta_of(folder)
    if both:
        os.kill(meta["pid"], signal.SIGKILL)
    os.kill(meta["child_pid"], signal.SIGKILL)
    first.wait_exit(WAIT_S)
    first.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "claude gone")
    standin.release()  # its answer goes to a closed connection
    if both:  # the next command finds it interrupted and collects it
        assert meta_of(folder)["status"] == "running" and not (folder / "exchanges.jsonl").exists()
    else:  # collected at the end of the run
        assert meta_of(folder)["status"] == "killed" and meta_of(folder)["unanswered_prompt"]["index"] == 1
    return folder


@pytest.mark.parametrize(
    "how",
    ["resend", *(pytest.param(how, marks=pytest.mark.newest_only) for how in ("no-resend", "ask-yes", "resend-claude-killed"))],
)
def test_resume_sends_the_unanswered_prompt_again(
    home: Paths,
    drive: Drive,
    agent_env: dict[str, str],
    anthropic_standin: AnthropicStandin,
    project_dir: Path,
    how: str,
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _killed_mid_turn(home, drive, env, anthropic_standin, project_dir, both=how != "resend-claude-killed")
    flags = {"resend": ["--resend"], "no-resend": ["--no-resend"], "ask-yes": [], "resend-claude-killed": ["--resend"]}[how]

    second = drive([*SK, "resume", *flags], env=env, cwd=project_dir)
    second.wait_for_output(f'prompt never answered: "{HELD_PROMPT}"', WAIT_S)
    if how == "ask-yes":
        second.wait_for_screen(QUESTION, WAIT_S)
        second.type("y")
        second.press("enter")
    second.wait_for_screen(READY, WAIT_S)

    # The interrupted session was collected: its answered exchange, and where its unanswered prompt is.
    old = meta_of(folder)
    assert old["status"] == ("killed" if how == "resend-claude-killed" else "interrupted") and old["exchange_count"] == 2
    assert old["unanswered_prompt"]["index"] == 1 and old["unanswered_prompt"]["chars"] == len(HELD_PROMPT)
    assert "plum" not in (folder / "meta.json").read_text()  # the text stays in exchanges.jsonl
    stored = [json.loads(line) for line in (folder / "exchanges.jsonl").read_text().splitlines()]
    assert [(e["prompt"], e["answer"]) for e in stored] == [(FIRST_PROMPT, FIRST_ANSWER), (HELD_PROMPT, "")]

    if how == "no-resend":
        ask(second, OWN_PROMPT, OWN_ANSWER)  # Claude was ready before: a resend would have come first
        assert len([r for r in anthropic_standin.conversation_requests() if _asks_held(r)]) == 1
        assert anthropic_standin.answered == 2  # the first answer and the user's own, nothing else
    else:
        held = anthropic_standin.wait_for_request(_asks_held, 0)
        resent = anthropic_standin.wait_for_request(lambda r: _asks_held(r) and r.seq > held.seq, WAIT_S)
        assert resent.session_id == old["agent_session_id"]  # in the resumed conversation
        second.wait_for_screen(RESENT_ANSWER, WAIT_S)
    quit_claude(second)

    new_folder = next(f.parent for f in session_folders(home) if f.parent != folder)
    new = meta_of(new_folder)
    assert new["parent"] == old["id"] and new["command"][:2] == ["claude", "--resume"]
    new_exchanges = [json.loads(line) for line in (new_folder / "exchanges.jsonl").read_text().splitlines()]
    if how == "no-resend":
        assert [(e["prompt"], e["answer"]) for e in new_exchanges] == [(OWN_PROMPT, OWN_ANSWER)]
        return
    assert [(e["prompt"], e["answer"]) for e in new_exchanges] == [(HELD_PROMPT, RESENT_ANSWER)]
    assert "unanswered_prompt" not in new
    # Answered now: resuming the old session again names no unanswered prompt.
    again = subprocess.run(
        [*SK, "resume", old["id"], "--resend", "--dry-run"], env=env, cwd=project_dir, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    assert "never answered" not in again.stderr and "would send again" not in again.stdout
    assert "mode: native" in again.stdout


def test_a_dry_run_reads_a_held_secret_redacted_as_the_real_run(
    home: Paths, drive: Drive, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    """A prompt holding a token, cut short: the dry run shows and types it redacted, and sends it not again."""
    token = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _killed_mid_turn(
        home, drive, env, anthropic_standin, project_dir, held=f"HOLDME use {token}", recorded="HOLDME use [REDACTED:github-token]"
    )
    sid = meta_of(folder)["id"]
    dry = subprocess.run(
        [*SK, "resume", "--dry-run", "--resend", "--inject", sid], env=env, cwd=project_dir, capture_output=True, text=True
    )
    assert dry.returncode == 0, dry.stderr
    assert token not in dry.stdout and token not in dry.stderr
    assert "[REDACTED:github-token]" in dry.stderr and "would send it again" not in dry.stderr + dry.stdout
    assert "not sent again: it holds a redacted secret" in dry.stderr + dry.stdout
    assert not (folder / "exchanges.jsonl").exists()  # a dry run writes nothing


@pytest.mark.newest_only
def test_a_prompt_sent_again_and_cut_short_again_is_offered_again(
    home: Paths, drive: Drive, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _killed_mid_turn(home, drive, env, anthropic_standin, project_dir)
    held = anthropic_standin.wait_for_request(_asks_held, 0)
    anthropic_standin.hold(_asks_held)  # the prompt sent again is held too

    second = drive([*SK, "resume", "--resend"], env=env, cwd=project_dir)
    again = anthropic_standin.wait_for_request(lambda r: _asks_held(r) and r.seq > held.seq, WAIT_S)
    new_folder = next(f.parent for f in session_folders(home) if f.parent != folder)
    # What shellkeep typed is recorded as input, and reaches the disk within about a second.
    second.wait_until(lambda: HELD_PROMPT in [line.text for line in typed_lines(load_session(new_folder)[2])], WAIT_S, "typed")
    meta = meta_of(new_folder)
    os.kill(meta["pid"], signal.SIGKILL)
    os.kill(meta["child_pid"], signal.SIGKILL)
    second.wait_exit(WAIT_S)
    second.wait_until(lambda: process_gone(meta["child_pid"]), WAIT_S, "claude gone")
    anthropic_standin.release()

    third = drive([*SK, "resume", "--resend"], env=env, cwd=project_dir)  # the newest session cut short
    third.wait_for_output(f'prompt never answered: "{HELD_PROMPT}" (sending it again once the agent is ready)', WAIT_S)
    anthropic_standin.wait_for_request(lambda r: _asks_held(r) and r.seq > again.seq, WAIT_S)
    third.wait_for_screen(RESENT_ANSWER, WAIT_S)
    quit_claude(third)
    assert meta_of(new_folder)["unanswered_prompt"]["index"] == 0  # the run that sent it again
    newest = [f.parent for f in session_folders(home)][-1]
    assert meta_of(newest)["parent"] == meta["id"] and "unanswered_prompt" not in meta_of(newest)


def test_show_names_the_unanswered_prompt_before_any_resume(
    home: Paths, drive: Drive, agent_env: dict[str, str], anthropic_standin: AnthropicStandin, project_dir: Path
) -> None:
    env = {**agent_env, "SHELLKEEP_CONFIG": os.environ["SHELLKEEP_CONFIG"]}
    folder = _killed_mid_turn(home, drive, env, anthropic_standin, project_dir)

    def sk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*SK, *args], env=env, cwd=project_dir, capture_output=True, text=True, stdin=subprocess.DEVNULL)

    as_json = json.loads(sk("show", "--last", "--json").stdout)  # read live: nobody collected it yet
    assert as_json["status"] == "interrupted" and as_json["exchange_count"] == 2
    assert as_json["unanswered_prompt"]["index"] == 1 and as_json["unanswered_prompt"]["chars"] == len(HELD_PROMPT)
    shown = sk("show", "--last")
    assert shown.returncode == 0, shown.stderr
    assert f'prompt never answered: "{HELD_PROMPT}"' in shown.stdout, shown.stdout
    assert f"  > {FIRST_PROMPT}\n  < {FIRST_ANSWER}" in shown.stdout and "#2" in shown.stdout
    dry = sk("resume", "--last", "--dry-run")
    assert f'prompt never answered: "{HELD_PROMPT}"' in dry.stderr, dry.stderr  # the same prompt
    assert not (folder / "exchanges.jsonl").exists() and "unanswered_prompt" not in meta_of(folder)  # nothing written
