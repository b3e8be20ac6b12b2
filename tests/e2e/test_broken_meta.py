"""A meta.json with wrong-typed fields (a pulled session anyone with the bucket can edit),
and what restore-files says of a session without checkpoints.

Every command reading it either goes on (a wrong optional field is dropped) or says one line
and exits non-zero (a wrong required field): never a traceback, never an internal error
(exit 70), and a command given as a string is never split and run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from shellkeep.store.session import META_FILE
from tests.factory import make_session
from tests.helpers import invoke_sk

EDITS: list[tuple[str, object]] = [
    ("plan", "x"),
    ("plan", {"items": 3, "done": "x", "total": []}),
    ("plan", {"items": ["x", {"text": 5, "state": []}]}),
    ("place", 5),
    ("place", {"tmux": "x", "cols": "x", "pane": 3}),
    ("place", {"kind": "tmux", "pane_id": 3, "window_layout": 5, "window_panes": "x", "socket": [], "layout_at": 1}),
    ("place", {"kind": "terminal", "cols": [], "screen": {}}),
    ("env", "x"),
    ("env", {"values": {"PATH": 3, "HOME": None}, "home": 5, "sealed": 7}),
    ("env", {"values": 3}),
    ("env", {"values": {"A": 3}, "secrets": "x", "home": 5, "scope": []}),
    ("unanswered_prompt", "x"),
    ("unanswered_prompt", {"index": "x", "chars": []}),
    ("usage", "x"),
    ("usage", {"input": "x"}),
    ("git_identity", {"remote": 5, "root_commit": []}),
    ("agent_transcript_damage", "x"),
    ("id", 5),
    ("git_start", "x"),
    ("cols", "wide"),
    ("cwd", None),
    ("command", "rm -rf ~"),
    ("command", []),
    ("command", [1]),
]


@pytest.mark.parametrize("agent", ["bash", "claude"])
@pytest.mark.parametrize(("key", "value"), EDITS, ids=[f"{k}={json.dumps(v)}" for k, v in EDITS])
def test_a_wrong_typed_meta_field_never_crashes(home: Paths, key: str, value: object, agent: str) -> None:
    exchanges = [{"prompt": "do it", "answer": "done"}, {"prompt": "and this"}] if agent == "claude" else []
    meta = make_session(home, Path.cwd(), 1, agent=agent, exchanges=exchanges)
    path = meta.folder / META_FILE
    obj = json.loads(path.read_text(encoding="utf-8"))
    obj[key] = value
    path.write_text(json.dumps(obj), encoding="utf-8")
    for args in (["show", meta.id], ["show", "--json", meta.id], ["ls"], ["resume", "--dry-run", meta.id]):
        result = invoke_sk(*args)
        err = result.stderr.decode()
        out = result.stdout.decode()
        assert result.returncode != 70, (args, err)
        assert "Traceback" not in err + out, (args, err)
        if result.returncode != 0:
            # the listing's "skipping FOLDER: why" warning (as for a meta.json that is not JSON), then one error
            lines = [line for line in err.splitlines() if line.strip() and not line.startswith("shellkeep: skipping ")]
            assert len(lines) == 1 and "meta.json" in lines[0], (args, err)
        assert "r m" not in out + err, (args, out, err)


@pytest.mark.parametrize("status", ["finished", "running"])
def test_restore_files_without_checkpoints_says_mark_only_while_running(home: Paths, status: str) -> None:
    meta = make_session(home, Path.cwd(), 1, agent="bash", status=status)
    result = invoke_sk("restore-files", meta.id, "--checkpoint", "1", "--yes")
    lines = result.stderr.decode().splitlines()
    assert result.returncode != 0 and len(lines) == 1, lines
    assert f"session {meta.id} has no checkpoints" in lines[0]
    assert ("shellkeep mark" in lines[0]) == (status == "running"), lines[0]
