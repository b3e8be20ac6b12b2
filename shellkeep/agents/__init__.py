"""Adapt shellkeep to each agent CLI: one adapter per agent behind the ``AgentAdapter`` protocol.

Use ``adapter_for(argv)`` to pick the adapter of a command line and ``adapter_named(name)``
for the one recorded in a session's metadata. Importing this package loads no adapter.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from shellkeep.agents.base import AgentAdapter, AgentSession, Exchange, Launch, ToolCall, Usage
    from shellkeep.agents.registry import adapter_for, adapter_named, adapter_names

__all__ = [
    "AgentAdapter",
    "AgentSession",
    "Exchange",
    "Launch",
    "ToolCall",
    "Usage",
    "adapter_for",
    "adapter_named",
    "adapter_names",
]

HISTORY_AGENTS = ("claude", "codex", "gemini", "qwen", "opencode", "copilot")
"""The agents whose own histories can be listed (``agents.history``), in the order ``all`` takes them.

Here rather than in ``agents.history``, which loads every adapter: ``shellkeep import --help``
lists them without loading any."""

_HOMES = {"adapter_for": "registry", "adapter_named": "registry", "adapter_names": "registry"}


def __getattr__(name: str) -> Any:
    """Load the names above on first use, so importing a submodule loads nothing else."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES.get(name, 'base')}"), name)
