"""Add, update or remove shellkeep's entry in the text of an agent's MCP settings file.

Pure text in, text out: no file is read or written here (``app.mcp_install`` does that).
JSON files (RFC 8259) are rewritten with two-space indentation and their keys in order, as the
agents write them; TOML files (TOML 1.0, Codex's ``config.toml``) are edited with tomlkit, so
comments, blank lines and every other table stay as they were.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass

from shellkeep.agents.mcp_config import SERVER_NAME, McpTarget, ServerCommand, runs_shellkeep
from shellkeep.errors import ShellkeepError

__all__ = ["BrokenSettings", "Edit", "ForeignEntry", "Outcome", "edit_settings"]


class BrokenSettings(ShellkeepError):
    """The settings file does not parse, or its servers' table is not a table (exit 1)."""


class ForeignEntry(ShellkeepError):
    """An entry named ``shellkeep`` is there and does not start shellkeep (exit 1)."""


class Outcome(enum.Enum):
    """What an edit did to shellkeep's entry."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class Edit:
    """The outcome, and the file's new text when it changed (None when nothing is to be written)."""

    outcome: Outcome
    text: str | None


def edit_settings(target: McpTarget, text: str | None, command: ServerCommand | None) -> Edit:
    """Put ``command`` in ``target``'s servers table in ``text``, or remove shellkeep's entry.

    Args:
        target: the agent's file, table and entry shape.
        text: the file's text; None or blank when there is no file yet.
        command: the server to register, or None to remove shellkeep's entry.

    Returns the outcome: ADDED / UPDATED (its launch keys rewritten, the rest of the entry
    kept) / UNCHANGED, or REMOVED / ABSENT; with the new text when it changed, ``""`` when
    removing shellkeep's entry left nothing else in the file.
    Raises BrokenSettings (the file is left alone) and ForeignEntry (an entry of that name that
    does not run shellkeep, see ``runs_shellkeep``).
    """
    blank = text is None or not text.strip()
    if target.is_toml:
        return _edit_toml(target, "" if blank else str(text), command)
    doc = {} if blank else _parse_json(target, str(text))
    outcome = _apply(target, doc, command)
    if outcome in (Outcome.UNCHANGED, Outcome.ABSENT):
        return Edit(outcome, None)
    if outcome is Outcome.REMOVED and not doc:
        return Edit(outcome, "")  # nothing but shellkeep's entry was there
    return Edit(outcome, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _parse_json(target: McpTarget, text: str) -> MutableMapping[str, object]:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        where = f" (line {exc.lineno}: {exc.msg})" if isinstance(exc, json.JSONDecodeError) else ""
        raise BrokenSettings(f"'{target.path}' is not valid JSON{where}; fix it, then run this again") from exc
    if not isinstance(doc, dict):
        raise BrokenSettings(f"'{target.path}' holds no JSON object; fix it, then run this again")
    return doc


def _edit_toml(target: McpTarget, text: str, command: ServerCommand | None) -> Edit:
    import tomlkit  # only this command edits TOML with its comments kept
    from tomlkit.exceptions import ParseError

    try:
        doc = tomlkit.parse(text)
    except ParseError as exc:
        raise BrokenSettings(f"'{target.path}' is not valid TOML ({exc}); fix it, then run this again") from exc
    outcome = _apply(target, doc, command, new_table=lambda: tomlkit.table(is_super_table=True))
    if outcome in (Outcome.UNCHANGED, Outcome.ABSENT):
        return Edit(outcome, None)
    rendered = tomlkit.dumps(doc)
    if outcome is Outcome.REMOVED:
        rendered = rendered.rstrip("\n") + "\n" if rendered.strip() else ""
    return Edit(outcome, rendered)


def _apply(
    target: McpTarget,
    doc: MutableMapping[str, object],
    command: ServerCommand | None,
    new_table: Callable[[], MutableMapping[str, object]] = dict,
) -> Outcome:
    """Change ``doc`` in place; return what was done (see ``edit_settings``)."""
    servers = doc.get(target.table)
    if servers is not None and not isinstance(servers, MutableMapping):
        raise BrokenSettings(f"'{target.table}' in '{target.path}' is not a table of servers; fix it, then run this again")
    existing = servers.get(SERVER_NAME) if servers is not None else None
    if existing is not None:
        if not isinstance(existing, Mapping) or not runs_shellkeep(target.argv_of(existing)):
            shown = " ".join(target.argv_of(existing) or ()) if isinstance(existing, Mapping) else repr(existing)
            raise ForeignEntry(
                f"'{target.path}' already has an MCP server named '{SERVER_NAME}' that is not shellkeep's"
                f" ('{shown}'); rename or remove it, then run this again"
            )
    if command is None:
        if servers is None or existing is None:
            return Outcome.ABSENT
        del servers[SERVER_NAME]
        if not servers:
            del doc[target.table]
        return Outcome.REMOVED
    wanted = target.entry(command)
    if servers is None:
        doc[target.table] = new_table()
        servers = doc[target.table]
    assert isinstance(servers, MutableMapping)  # what was stored under the key: a table (tomlkit copies)
    if existing is None:
        servers[SERVER_NAME] = wanted
        return Outcome.ADDED
    assert isinstance(existing, MutableMapping)
    env_key = target.env_key
    same_env = (_plain(existing.get(env_key)) or {}) == wanted.get(env_key, {})
    if same_env and all(_plain(existing.get(key)) == wanted[key] for key in target.launch_keys):
        return Outcome.UNCHANGED
    for key in target.launch_keys:
        existing[key] = wanted[key]
    if env_key in wanted:
        existing[env_key] = wanted[env_key]
    elif env_key in existing:
        del existing[env_key]
    return Outcome.UPDATED


def _plain(value: object) -> object:
    """Return a tomlkit item as plain Python (lists, strings...); a JSON value as it is."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value
