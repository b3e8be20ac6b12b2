"""Record a real multi-exchange Claude Code session under shellkeep (for compress_bench.py).

Not collected by the test suite (``bench/`` is outside ``testpaths``). Run by
``compress_bench.py`` as::

    pytest -p tests.conftest -p tests.agents.conftest bench/claude_session_recorder.py \
        --basetemp=DIR -q

Claude Code (the pinned CLI the agent tests use) talks to the loopback Anthropic stand-in,
which waits ``THINK_S`` (Claude's spinner runs meanwhile) and answers each prompt with a few
KB of Markdown (real README and docs/ paragraphs and real shellkeep functions) streamed in pieces; the test types ``EXCHANGES`` prompts key by key, as a user would, and exits with
Ctrl-C twice. The recording is left in ``DIR/.../home/projects/*/*/session.cast`` with
``record.compress = false`` so the benchmark sees the plain file.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.agents.screen_driver import ScreenDriver
from tests.agents.standin_anthropic import AnthropicRequest, AnthropicStandin
from tests.agents.test_claude_standin_direct import READY, WAIT_S, quit_claude
from tests.helpers import SK

EXCHANGES = int(os.environ.get("BENCH_CLAUDE_EXCHANGES", "12"))
THINK_S = float(os.environ.get("BENCH_CLAUDE_THINK_S", "2.0"))
_ROOT = Path(__file__).resolve().parent.parent


def _sources() -> tuple[list[str], list[str]]:
    """Return real prose (README and docs/ paragraphs) and real code (shellkeep's own functions)."""
    text = "\n\n".join(path.read_text() for path in [_ROOT / "README.md", *sorted((_ROOT / "docs").glob("*.md"))])
    prose = [p.replace("\n", " ") for p in text.split("\n\n") if len(p) > 120]
    code: list[str] = []
    for path in sorted((_ROOT / "shellkeep").rglob("*.py")):
        for block in path.read_text().split("\n\n\ndef ")[1:]:
            if 200 < len(block) < 1500:
                code.append("def " + block.strip())
    return prose, code


def _answer(n: int) -> str:
    """Return a few KB of Markdown: real README and docs/ paragraphs, a list, real code blocks."""
    prose, code = _sources()
    rng = random.Random(n)
    parts = [f"STANDIN-LONG-{n}: here is what I found.", ""]
    for _ in range(rng.randint(2, 4)):
        parts += [rng.choice(prose), ""]
        parts += [f"- {rng.choice(prose)[:rng.randint(40, 90)]}" for _ in range(rng.randint(2, 4))]
        parts += ["", "```python", rng.choice(code), "```", ""]
    parts.append(f"DONE-{n}")
    return "\n".join(parts)


@pytest.fixture
def anthropic_standin() -> Iterator[AnthropicStandin]:
    """A stand-in whose conversation answers are a few KB of Markdown each."""
    count = {"n": 0}

    def answer(request: AnthropicRequest) -> str:
        count["n"] += 1
        time.sleep(THINK_S)  # the model's latency: Claude shows its spinner meanwhile
        return _answer(count["n"])

    with AnthropicStandin(answer=answer) as standin:
        yield standin


def test_record_a_long_claude_session(
    home: Paths, drive: Callable[..., ScreenDriver], agent_env: dict[str, str], project_dir: Path
) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("[record]\ncompress = false\n")
    env = {**agent_env, "SHELLKEEP_CONFIG": str(home.config_file)}
    driver = drive([*SK, "claude"], env=env, cwd=project_dir)
    driver.wait_for_screen(READY, WAIT_S)
    for n in range(1, EXCHANGES + 1):
        prompt = f"question {n}: explain how the recorder and the reader handle a cut line, part {n}"
        driver.type(prompt)
        driver.wait_for_screen(prompt[-20:], WAIT_S)
        driver.press("enter")
        driver.wait_for_screen(f"DONE-{n}", WAIT_S)
    quit_claude(driver)
    assert list(home.projects.glob("*/*/session.cast"))
