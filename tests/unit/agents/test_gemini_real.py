"""Gemini CLI 0.57.0 and 0.61.0 chat files recorded from real runs (tests/data/agents/gemini-real).

Each holds a real session against the loopback stand-in: two exchanges, a kill -9 of the
process group, ``gemini -r <id>`` and a third exchange (0.61.0 resumed in the same minute,
appending to the one file; 0.57.0 in the next minute, leaving the content-less second file of
the resume trap beside the transcript). Paths were made ``/home/bob/...``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shellkeep.agents.base import AgentSession, Usage
from shellkeep.agents.gemini import GeminiAdapter

from .conftest import DATA

SID = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
REAL = DATA / "gemini-real"
CHATS = {v: REAL / v / ".gemini" / "tmp" / "calc" / "chats" for v in ("0.57.0", "0.61.0")}
TRANSCRIPT = f"session-2026-12-03T16-08-{SID[:8]}.jsonl"
LEFTOVER = f"session-2026-12-03T16-09-{SID[:8]}.jsonl"
ADAPTER = GeminiAdapter()
PROMPTS = ("guard divide() against zero", "add a test for it", "run the tests")
ANSWERS = ("STANDIN-ANSWER-1: zero", "STANDIN-ANSWER-2: it", "STANDIN-ANSWER-3: tests")


def _tokens(path: Path) -> list[dict[str, int]]:
    return [r["tokens"] for r in map(json.loads, path.read_text().splitlines()) if r.get("type") == "gemini"]


@pytest.mark.parametrize("version", sorted(CHATS))
def test_reads_the_three_exchanges_of_a_resumed_session(version: str) -> None:
    path = CHATS[version] / TRANSCRIPT
    exchanges = ADAPTER.read_exchanges(AgentSession("gemini", SID, path))
    assert [(e.prompt, e.answer) for e in exchanges] == list(zip(PROMPTS, ANSWERS))
    assert {e.model for e in exchanges} == {"gemini-3.1-pro-preview"}
    assert [e.usage for e in exchanges] == [Usage(input=t["input"], output=t["output"], cache_read=0) for t in _tokens(path)]
    assert all(e.time is not None for e in exchanges)
    assert ADAPTER.knows_version(version)


def test_the_chat_file_with_the_messages_is_the_session_s_not_the_resume_leftover() -> None:
    folder = CHATS["0.57.0"]
    assert ADAPTER.session_file([folder], SID) == folder / TRANSCRIPT
    assert ADAPTER.read_exchanges(AgentSession("gemini", SID, folder / LEFTOVER)) == []


def test_the_resume_leftover_is_removed_and_the_transcript_kept(tmp_path: Path) -> None:
    folder = shutil.copytree(CHATS["0.57.0"], tmp_path / "chats")
    session = AgentSession("gemini", SID, folder / TRANSCRIPT)
    assert ADAPTER.remove_resume_leftovers(session) == [folder / LEFTOVER]
    assert sorted(p.name for p in folder.iterdir()) == [TRANSCRIPT]
    assert ADAPTER.remove_resume_leftovers(session) == []
    # Without a transcript (already deleted), nothing is judged a leftover.
    (folder / TRANSCRIPT).unlink()
    shutil.copy(CHATS["0.57.0"] / LEFTOVER, folder / LEFTOVER)
    assert ADAPTER.remove_resume_leftovers(session) == []
    assert (folder / LEFTOVER).exists()


def test_a_second_file_holding_anything_the_transcript_lacks_is_kept(tmp_path: Path) -> None:
    folder = shutil.copytree(CHATS["0.57.0"], tmp_path / "chats")
    transcript, second = folder / TRANSCRIPT, folder / LEFTOVER
    session = AgentSession("gemini", SID, transcript)
    lines = second.read_text().splitlines()
    own = json.dumps({"id": "m-new", "timestamp": "2026-12-03T16:09:10Z", "type": "user", "content": [{"text": "hi"}]})
    second.write_text("\n".join([*lines, own]) + "\n")  # a message record of its own
    assert ADAPTER.remove_resume_leftovers(session) == []
    state = json.loads(lines[1])
    state["$set"]["messages"].append({"id": "m-unknown", "type": "user", "content": [{"text": "lost?"}]})
    second.write_text("\n".join([lines[0], json.dumps(state)]) + "\n")  # a message only it holds
    assert ADAPTER.remove_resume_leftovers(session) == []
    other = folder / f"session-2026-12-03T16-10-{SID[:8]}.jsonl"
    other.write_text(lines[0].replace(SID, "9d8c7b6a-0000-4000-8000-000000000000") + "\n")  # another session's id
    assert ADAPTER.remove_resume_leftovers(session) == []
    assert second.exists() and other.exists() and transcript.exists()


def test_a_resumed_session_is_found_in_the_file_with_its_messages_not_the_newer_leftover(tmp_path: Path) -> None:
    """The resumed run's leftover started after the launch; the launch named the id with ``-r``."""
    import os

    from shellkeep.agents.base import Launch

    from .conftest import utc

    home, workdir = tmp_path / "home", tmp_path / "work" / "calc"
    workdir.mkdir(parents=True)
    folder = shutil.copytree(CHATS["0.57.0"], home / ".gemini" / "tmp" / "calc" / "chats")
    for path in folder.iterdir():
        os.utime(path, (utc("2026-12-03T16:10:00").timestamp(),) * 2)
    launch = Launch(argv=("gemini", "-r", SID), agent_session_id=SID)
    found = ADAPTER.find_session(launch, workdir, {"HOME": str(home)}, utc("2026-12-03T16:09:00"), "")
    assert found == AgentSession("gemini", SID, folder / TRANSCRIPT)


_PEAK_PROBE = """
import resource, sys
from pathlib import Path
from shellkeep.agents.base import AgentSession
from shellkeep.agents.gemini import GeminiAdapter
from shellkeep.app.native import remove_resume_leftovers
transcript = Path(sys.argv[1])
removed = remove_resume_leftovers(GeminiAdapter(), AgentSession("gemini", sys.argv[2], transcript))
# VmHWM: this process image's own peak; ru_maxrss keeps, across exec, the peak of the process
# that started it (a pytest worker grown past 150 MB after two thousand tests)
hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")] if sys.platform == "linux" else []
print(len(removed), int(hwm[0]) * 1024 if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def test_the_leftover_check_of_a_100_mb_transcript_holds_under_one_and_a_half_times_its_size(tmp_path: Path) -> None:
    """What resume does before the agent starts (``app.native.remove_resume_leftovers``) reads the
    transcript line by line: the peak RSS of the process stays under 1.5 times its size."""
    import subprocess
    import sys

    folder = shutil.copytree(CHATS["0.57.0"], tmp_path / "chats")
    transcript = folder / TRANSCRIPT
    filler = "x" * 20_000
    with transcript.open("a", encoding="utf-8") as fh:  # earlier answers of a long chat, in its format
        for i in range(5_300):
            fh.write(json.dumps({"id": f"m-fill-{i}", "timestamp": "2026-12-03T16:08:30Z", "type": "gemini", "content": filler}) + "\n")
    size = transcript.stat().st_size
    assert size >= 100 << 20
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_PROBE, str(transcript), SID], capture_output=True, text=True, check=True, timeout=600
    )
    removed, peak = (int(word) for word in done.stdout.split())
    assert removed == 1 and not (folder / LEFTOVER).exists()
    assert peak < 1.5 * size, f"peak RSS {peak >> 20} MB for a {size >> 20} MB transcript"
