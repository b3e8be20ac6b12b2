"""Tests for shellkeep/agents/argv.py: recognising launchers and splitting agents' arguments."""

from __future__ import annotations

import pytest

from shellkeep.agents.argv import Arity, Grammar, Option, find_option, program_name, rebuild, split_command, tokenize

NAMES = ("claude",)
PACKAGES = ("@anthropic-ai/claude-code",)


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (["claude", "-c"], ["claude"]),
        (["/opt/bin/claude.exe"], ["/opt/bin/claude.exe"]),
        (
            ["npx", "-y", "@anthropic-ai/claude-code@2.1.0", "--model", "x"],
            ["npx", "-y", "@anthropic-ai/claude-code@2.1.0"],
        ),
        (
            ["npx", "--package=@anthropic-ai/claude-code", "claude"],
            ["npx", "--package=@anthropic-ai/claude-code", "claude"],
        ),
        (["bunx", "@anthropic-ai/claude-code"], ["bunx", "@anthropic-ai/claude-code"]),
        (["npm", "exec", "--", "@anthropic-ai/claude-code"], ["npm", "exec", "--", "@anthropic-ai/claude-code"]),
        (["pnpm", "dlx", "@anthropic-ai/claude-code"], ["pnpm", "dlx", "@anthropic-ai/claude-code"]),
        (
            ["node", "--no-warnings", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js", "-r"],
            ["node", "--no-warnings", "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js"],
        ),
    ],
    ids=["plain", "path-exe", "npx-version", "npx-package", "bunx", "npm-exec", "pnpm-dlx", "node-script"],
)
def test_split_command_finds_the_launcher_prefix(argv: list[str], prefix: list[str]) -> None:
    found = split_command(argv, NAMES, PACKAGES)
    assert found is not None
    assert list(found.prefix) == prefix
    assert list(found.args) == argv[len(prefix) :]


@pytest.mark.parametrize(
    "argv",
    [[], ["bash"], ["claudette"], ["npx", "cowsay"], ["node", "app.js"], ["node"], ["python3", "-m", "claude"]],
    ids=["empty", "other", "similar-name", "npx-other", "node-other", "node-bare", "python-module"],
)
def test_split_command_rejects_other_programs(argv: list[str]) -> None:
    assert split_command(argv, NAMES, PACKAGES) is None


def test_python_module_and_uvx_forms() -> None:
    assert split_command(["python3.12", "-m", "aider", "x.py"], ("aider",), ("aider-chat",), ("aider",)) is not None
    found = split_command(["uvx", "--python", "3.12", "aider-chat", "x.py"], ("aider",), ("aider-chat",))
    assert found is not None and found.args == ("x.py",)
    assert split_command(["pipx", "run", "aider-chat"], ("aider",), ("aider-chat",)) is not None


@pytest.mark.parametrize(
    ("path", "name"),
    [("claude", "claude"), ("/a/b/codex.js", "codex"), ("C:\\bin\\gemini.cmd", "gemini"), ("opencode.exe", "opencode")],
    ids=["bare", "js", "windows-cmd", "exe"],
)
def test_program_name_strips_dirs_and_suffixes(path: str, name: str) -> None:
    assert program_name(path) == name


RESUME = Option(("--resume", "-r"), Arity.OPTIONAL)
MODEL = Option(("--model",), Arity.ONE)
ADD_DIR = Option(("--add-dir",), Arity.MANY)
VERBOSE = Option(("--verbose",))
GRAMMAR = Grammar(options=(RESUME, MODEL, ADD_DIR, VERBOSE))


@pytest.mark.parametrize(
    ("args", "kept"),
    [
        (["--model", "opus", "fix the bug"], ["--model", "opus"]),
        (["--resume", "abc", "--verbose"], ["--verbose"]),
        (["--resume=abc", "--model=x"], ["--model=x"]),
        (["-r", "--verbose", "hello"], ["--verbose"]),
        (["--add-dir", "a", "b", "--verbose", "prompt"], ["--add-dir", "a", "b", "--verbose"]),
        (["--unknown", "value", "--verbose"], ["--unknown", "value", "--verbose"]),
        (["--verbose", "--", "-not-an-option"], ["--verbose"]),
    ],
    ids=[
        "prompt-after-value",
        "resume-value",
        "inline-values",
        "resume-without-value",
        "variadic",
        "unknown",
        "dashdash",
    ],
)
def test_rebuild_drops_resume_options_and_prompts(args: list[str], kept: list[str]) -> None:
    tokens = tokenize(args, GRAMMAR)
    assert rebuild(tokens, (RESUME,), drop_positionals=True) == kept


def test_find_option_returns_the_last_occurrence_with_its_value() -> None:
    tokens = tokenize(["-r", "one", "--resume=two", "--model", "m"], GRAMMAR)
    found = find_option(tokens, RESUME)
    assert found is not None and found.value == "two"
    assert find_option(tokens, VERBOSE) is None
