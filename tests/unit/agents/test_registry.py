"""Tests for shellkeep/agents/registry.py: choosing adapters, names, and entry-point plug-ins."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.agents import registry
from shellkeep.agents.registry import adapter_for, adapter_named, adapter_names
from shellkeep.errors import UserInputError


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    registry.clear_cache()
    yield
    registry.clear_cache()


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["claude", "--resume"], "claude"),
        (["npx", "-y", "@anthropic-ai/claude-code"], "claude"),
        (["codex", "resume", "--last"], "codex"),
        (["node", "/opt/lib/node_modules/@openai/codex/bin/codex.js"], "codex"),
        (["opencode"], "opencode"),
        (["bunx", "opencode-ai"], "opencode"),
        (["gemini"], "gemini"),
        (["node", "/g/node_modules/@google/gemini-cli/bundle/gemini.js"], "gemini"),
        (["qwen"], "qwen"),
        (["copilot"], "copilot"),
        (["npx", "@github/copilot"], "copilot"),
        (["aider", "calc.py"], "aider"),
        (["python3", "-m", "aider"], "aider"),
        (["uvx", "aider-chat"], "aider"),
        (["bash"], "generic"),
        (["vim", "claude.txt"], "generic"),
        ([], "generic"),
    ],
    ids=lambda value: "-".join(value) if isinstance(value, list) else value,
)
def test_adapter_for_picks_by_command_line(argv: list[str], name: str) -> None:
    assert adapter_for(argv).name == name
    # The quick look run uses to skip the adapters never rules out a built-in that matches.
    if name != "generic":
        assert registry.builtin_may_match(argv)


@pytest.mark.parametrize(
    "argv",
    [["bash"], ["/usr/bin/vim", "claude.txt"], ["true"], ["git", "commit"], ["claude-wrapper"], []],
    ids=lambda value: "-".join(value) or "empty",
)
def test_a_plain_program_is_known_not_to_be_an_agent_without_loading_adapters(argv: list[str]) -> None:
    assert not registry.builtin_may_match(argv)
    assert adapter_for(argv, plugins=False).name == "generic"


@pytest.mark.parametrize(
    "argv",
    [["npx", "cowsay"], ["node", "server.js"], ["python3", "-m", "http.server"], ["npm", "exec", "x"], ["uv", "run", "y"]],
    ids=lambda value: "-".join(value),
)
def test_launchers_are_looked_at_by_the_adapters(argv: list[str]) -> None:
    assert registry.builtin_may_match(argv)
    assert adapter_for(argv, plugins=False).name == "generic"


def test_adapter_named_and_names() -> None:
    assert adapter_names() == ["claude", "codex", "opencode", "gemini", "qwen", "copilot", "aider", "generic"]
    for name in adapter_names():
        assert adapter_named(name).name == name
    assert adapter_named("claude") is adapter_for(["claude"])
    with pytest.raises(UserInputError, match="no agent adapter named 'nope'"):
        adapter_named("nope")


def _install_plugin(site: Path, body: str, entry_points: str) -> None:
    """Write a tiny installed distribution (module + dist-info) into ``site``."""
    (site / "skplugin.py").write_text(textwrap.dedent(body))
    dist = site / "skplugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: skplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points))


PLUGIN = """
    from shellkeep.agents.generic import GenericAdapter

    class AmpAdapter(GenericAdapter):
        name = "amp"

        def matches(self, argv):
            return bool(argv) and argv[0].endswith("amp")

    class ClaudeImpostor(AmpAdapter):
        name = "claude"

    NOT_AN_ADAPTER = 42

    def broken():
        raise RuntimeError("boom")
"""


def test_entry_point_plugins_are_loaded_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    _install_plugin(
        site,
        PLUGIN,
        """
        [shellkeep.agents]
        amp = skplugin:AmpAdapter
        impostor = skplugin:ClaudeImpostor
        number = skplugin:NOT_AN_ADAPTER
        broken = skplugin:broken
        missing = skplugin_missing:Nothing
        """,
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "skplugin", raising=False)
    assert adapter_for(["claude"]).name == "claude"
    assert "skplugin" not in sys.modules  # a built-in matched: no plug-in was loaded
    assert adapter_for(["/usr/bin/amp", "threads"]).name == "amp"
    assert adapter_named("amp").name == "amp"
    assert adapter_named("claude").__class__.__name__ == "ClaudeAdapter"
    assert adapter_names()[-2:] == ["amp", "generic"]
    assert adapter_for(["bash"]).name == "generic"
    for name in ("impostor", "number", "broken", "missing"):
        assert f"skipping agent adapter plug-in '{name}'" in caplog.text
