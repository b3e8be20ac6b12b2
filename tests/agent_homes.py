"""A user's HOME holding sessions of every agent in their own stores, for ``import --agent`` tests.

The transcripts are the adapters' fixtures (tests/data/agents, the real formats; see its
README), put where each agent keeps them, with their recorded cwd ``/home/bob/work/calc``
replaced by a real directory. OpenCode's database is built from its rows file.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.locations import dash_encoded
from tests.unit.agents.conftest import DATA, FIXTURE_CWD
from tests.unit.agents.test_opencode import build_database

CLAUDE_ID = "0b6f3c2a-91d4-4c7e-a8b5-2f1e0d9c8b7a"
CODEX_ID = "019c2e4f-7a10-7b3c-8d4e-5f6a7b8c9d0e"
GEMINI_ID_PREFIX = "9d8c7b6a"
QWEN_ID = "4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b"
COPILOT_ID = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"
OPENCODE_ID = "ses_0a1b2c3d4e5fCALCsession0001"


@dataclass(frozen=True)
class AgentHome:
    """Where each agent's session of ``workdir`` was put under ``home``."""

    home: Path
    workdir: Path
    claude: Path
    codex: Path
    gemini: Path
    qwen: Path
    copilot: Path
    opencode: Path

    def env(self) -> dict[str, str]:
        """Return the variables that point every agent at ``home`` (none of their own overrides)."""
        return {"HOME": str(self.home), "XDG_DATA_HOME": str(self.home / ".local" / "share")}


def _put(source: Path, target: Path, workdir: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text(encoding="utf-8").replace(FIXTURE_CWD, str(workdir)), encoding="utf-8")
    return target


def build_agent_home(home: Path, workdir: Path) -> AgentHome:
    """Write one session of each of the six agents under ``home``, recorded in ``workdir``."""
    encoded = dash_encoded(workdir)
    claude = _put(
        DATA / "claude" / "projects" / "-home-bob-work-calc" / f"{CLAUDE_ID}.jsonl",
        home / ".claude" / "projects" / encoded / f"{CLAUDE_ID}.jsonl",
        workdir,
    )
    rollout = next((DATA / "codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
    codex = _put(rollout, home / ".codex" / rollout.relative_to(DATA / "codex"), workdir)
    gemini_src = DATA / "gemini" / ".gemini"
    gemini_dst = home / ".gemini"
    shutil.copytree(gemini_src, gemini_dst)
    for path in [gemini_dst / "projects.json", *gemini_dst.glob("tmp/*/.project_root"), *gemini_dst.glob("tmp/*/chats/*")]:
        _put(path, path, workdir)
    gemini = next(gemini_dst.glob(f"tmp/*/chats/session-*-{GEMINI_ID_PREFIX}.jsonl"))
    qwen = _put(
        DATA / "qwen" / "projects" / "-home-bob-work-calc" / "chats" / f"{QWEN_ID}.jsonl",
        home / ".qwen" / "projects" / encoded / "chats" / f"{QWEN_ID}.jsonl",
        workdir,
    )
    state = DATA / "copilot" / "session-state" / COPILOT_ID
    copilot = _put(state / "events.jsonl", home / ".copilot" / "session-state" / COPILOT_ID / "events.jsonl", workdir)
    _put(state / "workspace.yaml", copilot.parent / "workspace.yaml", workdir)
    opencode = build_database(home / ".local" / "share" / "opencode" / "opencode.db", cwd=str(workdir))
    return AgentHome(home, workdir, claude, codex, gemini, qwen, copilot, opencode)
