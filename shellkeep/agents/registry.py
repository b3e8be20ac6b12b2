"""Pick the adapter for a command line: built-in ones first, plug-ins next, generic last.

Built-in adapters are imported on first use from an explicit name → ``"module:Class"``
table. Third-party adapters register under the entry-point group ``shellkeep.agents``
(``[project.entry-points."shellkeep.agents"] mine = "pkg.module:MyAdapter"``); the target is
an adapter class, a factory, or an instance. Plug-ins are loaded only when no built-in
adapter matches or a name is unknown to the built-ins; one that fails to load or does not
satisfy ``AgentAdapter`` is skipped with a warning. ``agents.base`` (which imports typing)
is imported only where an adapter is built or checked: asking whether a command may be an
agent is on the recording start path.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from shellkeep.errors import UserInputError
from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from shellkeep.agents.base import AgentAdapter

__all__ = [
    "ENTRY_POINT_GROUP",
    "adapter_for",
    "adapter_named",
    "adapter_names",
    "builtin_may_match",
    "builtin_adapters",
    "builtin_names",
    "clear_cache",
    "plugin_adapters",
    "typed_command",
]

log = get_logger(__name__)

ENTRY_POINT_GROUP = "shellkeep.agents"
"""The entry-point group third-party adapters register under."""

_BUILTINS: tuple[tuple[str, str], ...] = (
    ("claude", "shellkeep.agents.claude:ClaudeAdapter"),
    ("codex", "shellkeep.agents.codex:CodexAdapter"),
    ("opencode", "shellkeep.agents.opencode:OpenCodeAdapter"),
    ("gemini", "shellkeep.agents.gemini:GeminiAdapter"),
    ("qwen", "shellkeep.agents.qwen:QwenAdapter"),
    ("copilot", "shellkeep.agents.copilot:CopilotAdapter"),
    ("aider", "shellkeep.agents.aider:AiderAdapter"),
)
_GENERIC = ("generic", "shellkeep.agents.generic:GenericAdapter")

_loaded: dict[str, AgentAdapter] = {}
_plugins: list[AgentAdapter] | None = None


def _builtin(name: str, target: str) -> AgentAdapter:
    """Return the built-in adapter ``target`` (``"module:Class"``), imported on first use."""
    adapter = _loaded.get(name)
    if adapter is None:
        module_name, _, class_name = target.partition(":")
        adapter = getattr(importlib.import_module(module_name), class_name)()
        _loaded[name] = adapter
    return adapter


def builtin_adapters() -> list[AgentAdapter]:
    """Return the built-in adapters in matching order, the generic one last."""
    return [_builtin(name, target) for name, target in (*_BUILTINS, _GENERIC)]


def _instantiate(value: object) -> object:
    """Return an adapter from an entry point's target: a class or factory is called, an instance kept."""
    from shellkeep.agents.base import AgentAdapter  # deferred: base imports typing; the record path must not

    if isinstance(value, type) or (callable(value) and not isinstance(value, AgentAdapter)):
        return value()
    return value


def plugin_adapters() -> list[AgentAdapter]:
    """Return the third-party adapters of the ``shellkeep.agents`` entry points (loaded once)."""
    global _plugins
    if _plugins is not None:
        return _plugins
    from importlib.metadata import entry_points

    from shellkeep.agents.base import AgentAdapter

    found: list[AgentAdapter] = []
    builtin_names = {name for name, _ in (*_BUILTINS, _GENERIC)}
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            adapter = _instantiate(entry.load())
        except Exception as exc:  # a broken plug-in must not break shellkeep
            log.warning("skipping agent adapter plug-in %r (%s): %s", entry.name, entry.value, exc)
            continue
        if not isinstance(adapter, AgentAdapter):
            log.warning("skipping agent adapter plug-in %r (%s): not an AgentAdapter", entry.name, entry.value)
            continue
        if adapter.name in builtin_names:
            log.warning("skipping agent adapter plug-in %r: the name %r is built in", entry.name, adapter.name)
            continue
        found.append(adapter)
    _plugins = found
    return found


def _matches(adapter: AgentAdapter, argv: Sequence[str]) -> bool:
    """Return ``adapter.matches(argv)``, False (with a warning) when a plug-in's check fails."""
    try:
        return bool(adapter.matches(argv))
    except Exception as exc:  # a broken plug-in must not break shellkeep
        log.warning("agent adapter %r failed to check %r: %s", adapter.name, argv[:1], exc)
        return False


def adapter_for(argv: Sequence[str], *, plugins: bool = True) -> AgentAdapter:
    """Return the first adapter that recognises ``argv``: built-ins, then plug-ins, then generic.

    ``plugins=False`` skips the entry-point scan (tens of milliseconds): ``shellkeep run``
    uses it before the child starts; plug-ins then take part when the session is read.
    """
    for name, target in _BUILTINS:
        adapter = _builtin(name, target)
        if _matches(adapter, argv):
            return adapter
    for adapter in plugin_adapters() if plugins else ():
        if _matches(adapter, argv):
            return adapter
    return _builtin(*_GENERIC)


def builtin_may_match(argv: Sequence[str]) -> bool:
    """Return False when no built-in adapter can recognise ``argv`` (none is imported to say so)."""
    from shellkeep.agents.launchers import may_run_agent

    return may_run_agent(argv, (name for name, _ in _BUILTINS))


def builtin_names() -> list[str]:
    """Return the names of the built-in adapters (without importing them), generic last."""
    return [name for name, _ in (*_BUILTINS, _GENERIC)]


def adapter_named(name: str) -> AgentAdapter:
    """Return the adapter called ``name`` (as stored in meta.json).

    Raises ``UserInputError`` when no built-in or installed plug-in adapter has that name.
    """
    for builtin_name, target in (*_BUILTINS, _GENERIC):
        if builtin_name == name:
            return _builtin(builtin_name, target)
    for adapter in plugin_adapters():
        if adapter.name == name:
            return adapter
    known = ", ".join(adapter_names())
    raise UserInputError(f"no agent adapter named '{name}'; known adapters: {known}")


def adapter_names() -> list[str]:
    """Return the names of the built-in and plug-in adapters, the generic one last."""
    names = [name for name, _ in _BUILTINS]
    names.extend(adapter.name for adapter in plugin_adapters())
    names.append(_GENERIC[0])
    return names


def clear_cache() -> None:
    """Forget loaded adapters and plug-ins, so newly installed entry points are seen."""
    global _plugins
    _loaded.clear()
    _plugins = None


def typed_command(command: Sequence[str], agent: str, agent_session_id: str | None) -> list[str]:
    """Return a session's ``command`` as the user typed it: without the option naming the
    agent's session id that shellkeep added (``CommandAdapter.typed_argv``). Only built-in
    adapters are asked (no plug-in is loaded to title a list); ``command`` itself otherwise."""
    target = dict(_BUILTINS).get(agent)
    if not agent_session_id or target is None:
        return list(command)
    adapter = _builtin(agent, target)
    typed_argv = getattr(adapter, "typed_argv", None)
    return list(command) if typed_argv is None else list(typed_argv(command, agent_session_id))
