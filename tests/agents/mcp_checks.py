"""What the real-agent tests of ``shellkeep mcp install`` share: the session recorded, the entry installed.

Each test records one session of its project (bash printing ``RECORDED``), registers the
server with ``shellkeep mcp install AGENT`` in process, scripts its stand-in to call
``search_sessions`` for ``WORD`` and answer ``ANSWER``, and then asks the agent ``PROMPT``;
the tool's result must carry ``RECORDED`` whole, not only the word the query named.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.helpers import invoke_sk, run_sk

WORD = "zebrafinch7781"
RECORDED = f"the bird on the sill is a {WORD}"
ANSWER = "FOUND-IT-IN-THE-ARCHIVE"
PROMPT = "what bird did we see"


def record_and_install(agent: str, env: Mapping[str, str], project_dir: Path, settings: Path) -> None:
    """Record the session printing ``RECORDED`` in ``project_dir``, then ``shellkeep mcp install
    AGENT``, which must say it added the entry to ``settings``."""
    recorded = run_sk("run", "--", "bash", "-c", f"echo '{RECORDED}'", env=dict(env), cwd=project_dir)
    assert recorded.returncode == 0, recorded.stderr
    installed = invoke_sk("mcp", "install", agent, env=dict(env))
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.decode() == f"{agent}: added 'shellkeep' to {settings}\n"
