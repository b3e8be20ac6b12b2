"""Search on another machine after ``sync pull``: what was only on the pushing machine's screen
is found with no recording fetched (the pushed screen text), sealed when encryption is on;
a local search there says how many hits ``--remote`` would add. Two machines are two
``SHELLKEEP_HOME``s against moto's S3 server (``tests.e2e.test_sync``)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.agent_homes import AgentHome
from tests.e2e.test_import_agents import _go_on_without_shellkeep, agent_home  # noqa: F401 - a fixture
from tests.e2e.test_secrets import wait_for_housekeeping
from tests.e2e.test_sync import bucket_objects, bucket_url, encrypt, machine, s3_server, share_key, sk  # noqa: F401 - fixtures
from tests.helpers import run_sk, wait_for_background

pytestmark = pytest.mark.timeout(300)

SCREEN_WORD = "quincefold-83c1"
"""Only printed by the program: built at run time, so no argument, prompt or answer holds it."""


def _record_printing(home: Paths) -> str:
    """Record a real session whose program prints ``SCREEN_WORD``; return its id."""
    code = "print('quincefold' + '-83c1', 'on the screen only')"
    sk("run", "--", sys.executable, "-c", code)
    wait_for_housekeeping(home)
    return str(json.loads(sk("ls", "--all", "--json").stdout)[0]["id"])


def _pulled_folder(laptop: dict[str, str], session_id: str) -> Path:
    return next(Path(laptop["SHELLKEEP_HOME"], "remotes").glob(f"*/projects/*/{session_id}"))


@pytest.mark.parametrize("sealed", [False, True], ids=["plain", "sealed"])
def test_a_word_only_on_the_pushing_machines_screen_is_found_after_pull_with_no_recording(
    home: Paths, bucket_url: str, tmp_path: Path, sealed: bool  # noqa: F811 - the fixture
) -> None:
    laptop = machine(tmp_path, "laptop")
    if sealed:
        sk("key", "init")
        encrypt()
        Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
        encrypt(laptop)
        share_key(None, laptop, tmp_path)
    session_id = _record_printing(home)
    sk("sync", "push", "--remote", bucket_url)
    if sealed:
        assert not any(SCREEN_WORD.encode() in data for data in bucket_objects(bucket_url).values())
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    folder = _pulled_folder(laptop, session_id)
    assert not list(folder.glob("session.cast*"))  # no recording fetched
    if sealed:
        assert SCREEN_WORD.encode() not in (folder / "screen.jsonl.zst").read_bytes()  # sealed at rest
    [hit] = json.loads(sk("search", "--remote", SCREEN_WORD, "--json", env=laptop).stdout)
    assert (hit["session_id"], hit["kind"], hit["machine"]) == (session_id, "transcript", os.uname().nodename)
    assert SCREEN_WORD in hit["snippet"]
    assert not list(folder.glob("session.cast*"))  # still none: the search needed no recording
    if sealed:
        index = Path(laptop["SHELLKEEP_HOME"], "remotes")
        assert not any(SCREEN_WORD.encode() in p.read_bytes() for p in index.rglob("*") if p.is_file())  # no plaintext at rest


def test_a_local_search_counts_the_hits_remote_would_add(home: Paths, bucket_url: str, tmp_path: Path) -> None:  # noqa: F811
    session_id = _record_printing(home)
    sk("sync", "push", "--remote", bucket_url)
    laptop = machine(tmp_path, "laptop")
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    nothing = sk("search", SCREEN_WORD, env=laptop)
    assert nothing.stdout == b""
    assert nothing.stderr.decode() == (
        f"nothing matches '{SCREEN_WORD}' in this project; 1 hit in sessions pulled from other machines: "
        f"shellkeep search --remote {SCREEN_WORD}\n"
    )
    assert b"try --all" not in sk("search", "--all", SCREEN_WORD, env=laptop).stderr
    here = sk("search", SCREEN_WORD)  # the recording machine has pulled nothing: its own hit, no count
    assert session_id.encode() in here.stdout and b"pulled from other machines" not in here.stderr
    sk("sync", "pull", "--remote", bucket_url, "--all-machines")  # now it has: its hit, and the one --remote adds
    both = sk("search", SCREEN_WORD)
    assert session_id.encode() in both.stdout
    assert f"1 hit in sessions pulled from other machines: shellkeep search --remote {SCREEN_WORD}\n" in both.stderr.decode()
    assert sk("audit", "--json", env=laptop).stdout.count(b'"search"') == 0  # a count shows nothing: nothing read


def test_a_conversation_that_grew_after_it_was_recorded_reaches_the_other_machine_once(
    home: Paths, agent_home: AgentHome, bucket_url: str, tmp_path: Path  # noqa: F811
) -> None:
    recorded = run_sk("run", "--", "claude")
    assert recorded.returncode == 0, recorded.stderr
    wait_for_background(home)
    [own] = json.loads(sk("ls", "--all", "--json").stdout)
    sid = str(own["agent_session_id"])
    [meta_file] = home.projects.glob(f"*/{own['id']}/meta.json")
    transcript = Path(json.loads(meta_file.read_text())["agent_transcript"])
    laptop = machine(tmp_path, "laptop")
    later: set[str] = set()
    for step, first in enumerate((7, 8)):  # the agent run again by hand, twice; each time imported, pushed, pulled
        _go_on_without_shellkeep(transcript, sid, first)
        sk("import", "--agent", "claude")
        sk("sync", "push", "--remote", bucket_url)
        pulled = json.loads(sk("sync", "pull", "--remote", bucket_url, "--json", env=laptop).stdout)
        assert pulled["sessions_pulled"] == (3 if step == 0 else 1)  # the recording, the continuation, the fixture's import; then the grown one
        hits = json.loads(sk("search", "--remote", f"prompt {first}", "--json", env=laptop).stdout)
        later |= {h["session_id"] for h in hits if h["kind"] == "prompt"}
        assert len(later) == 1 and own["id"] not in later  # the same continuation, never the recording
    theirs = [m for m in json.loads(sk("ls", "--remote", "--json", env=laptop).stdout) if m["agent_session_id"] == sid]
    assert sorted(m["id"] for m in theirs) == sorted([own["id"], *later])  # no duplicate session
    [shown] = [m for m in theirs if m["id"] in later]
    assert shown["exchange_count"] == 2  # both later exchanges, none of the recording's
