"""Know how agent CLIs are launched: runners (npx, uvx), node, python, launcher suffixes.

Dependency-free on purpose: ``shellkeep run`` asks ``may_run_agent`` whether a command
line could start an agent before it loads any adapter (``agents/argv.py`` does the full split).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

__all__ = ["NODE", "PYTHON_PREFIXES", "RUNNERS", "RUNNER_VERBS", "SHELLS", "SUFFIXES", "may_run_agent", "program_name"]

SUFFIXES = (".exe", ".cmd", ".bat", ".ps1", ".js", ".mjs", ".cjs", ".py", ".sh")
SHELLS = frozenset({"sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "nu", "xonsh", "pwsh", "elvish"})
"""Base names of interactive shells: no agent, and a program of their own at their prompt."""
NODE = frozenset({"node", "nodejs", "bun", "deno", "tsx"})
PYTHON_PREFIXES = ("python", "pypy")
# Runners whose first positional argument is the package to run, and the options of
# theirs that take a value.
RUNNERS: dict[str, frozenset[str]] = {
    "npx": frozenset({"-p", "--package", "-c", "--call", "--cache", "--registry", "--userconfig"}),
    "bunx": frozenset({"-p", "--package"}),
    "pnpx": frozenset({"-p", "--package"}),
    "uvx": frozenset({"--from", "--with", "-p", "--python", "--index", "--index-url"}),
}
# Package managers whose ``<manager> <verb>`` runs a package like a runner does.
RUNNER_VERBS: dict[str, frozenset[str]] = {
    "npm": frozenset({"exec", "x"}),
    "pnpm": frozenset({"dlx", "exec"}),
    "yarn": frozenset({"dlx", "exec"}),
    "pipx": frozenset({"run"}),
    "uv": frozenset({"run"}),
}


def program_name(path: str) -> str:
    """Return a command's base name without directory and launcher suffix (``claude.exe`` → ``claude``)."""
    name = os.path.basename(path.rstrip("/\\").replace("\\", "/"))
    lowered = name.lower()
    for suffix in SUFFIXES:
        if lowered.endswith(suffix):
            return name[: -len(suffix)]
    return name


def may_run_agent(argv: Sequence[str], names: Iterable[str]) -> bool:
    """Return False when ``split_command`` cannot match ``argv`` for any agent in ``names``.

    A cheap look at the first word (an agent's name, a runner, node or python), so a plain
    program is known not to be an agent without loading any adapter.
    """
    if not argv:
        return False
    first = program_name(argv[0]).lower()
    return (
        first in {n.lower() for n in names}
        or first in RUNNERS
        or first in RUNNER_VERBS
        or first in NODE
        or first.startswith(PYTHON_PREFIXES)
    )
