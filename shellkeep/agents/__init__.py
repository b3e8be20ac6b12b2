"""Adapt shellkeep to each agent CLI: one adapter per agent behind the ``AgentAdapter`` protocol.

Use ``adapter_for(argv)`` to pick the adapter of a command line and ``adapter_named(name)``
for the one recorded in a session's metadata. Importing this package loads no adapter.
"""

from __future__ import annotations

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
