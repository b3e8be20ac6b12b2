"""List the conversations an agent CLI keeps of its own under a HOME, for ``shellkeep import --agent``.

Each agent's store (where its adapter module says it is) is walked without writing anything:

- Claude Code: ``<claude root>/projects/<dash-encoded cwd>/<session uuid>.jsonl`` (subagents'
  ``<id>/subagents/*.jsonl`` are part of their parent); cwd and start from the first records.
- Codex: ``<codex home>/sessions/YYYY/MM/DD/rollout-*.jsonl[.zst]`` and ``archived_sessions/``;
  id, cwd and start from the ``session_meta`` record.
- Gemini CLI: ``<gemini dir>/tmp/<project>/chats/session-*.jsonl`` (older: ``.json``); id and
  start from the metadata line, cwd from ``projects.json`` or the folder's ``.project_root``.
  A resume writes a second, content-less file with the same id: the largest file is the session.
- Qwen Code: ``<qwen root>/projects/<dash-encoded cwd>/chats/<id>.jsonl``; cwd from the records.
- OpenCode: the top-level rows of the ``session`` table of each database (opened read-only).
- Copilot CLI: ``<copilot home>/session-state/<uuid>/events.jsonl``; cwd from ``session.start``.

A session's ``state`` says how far it has been written (its transcript's size, or the
database row's update time): a changed state means the conversation grew since it was read.
Exchanges are read by the agent's adapter (``read_native``); nothing here parses a conversation.
"""

from __future__ import annotations

import json
import os
import stat as stat_mode
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from shellkeep.agents import HISTORY_AGENTS, jsonl
from shellkeep.agents.base import AgentSession
from shellkeep.agents.claude import claude_root
from shellkeep.agents.codex import codex_home
from shellkeep.agents.copilot import copilot_home
from shellkeep.agents.gemini import chat_head, gemini_dir
from shellkeep.agents.opencode import database_paths
from shellkeep.agents.qwen import qwen_root
from shellkeep.agents.records import as_dict, as_str, dig, parse_time
from shellkeep.logs import get_logger

__all__ = ["HISTORY_AGENTS", "NativeSession", "agents_named", "native_sessions", "regular_files"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class NativeSession:
    """One conversation in an agent's own store.

    agent: the adapter name. session_id: the agent's id for it. transcript: its file (for
    OpenCode the database). cwd: the directory it ran in, as the agent recorded it, or None.
    started_at / updated_at: aware UTC datetimes; updated_at is the newest ``timestamp`` among
    the transcript's last records (else the file's mtime: a copied file's is the copy's
    time), or the database row's update time. state: how far it was written
    (``bytes:<size>``, ``updated:<ms>``); it changes when the conversation grows.
    """

    agent: str
    session_id: str
    transcript: Path
    cwd: str | None
    started_at: datetime | None
    updated_at: datetime
    state: str

    def agent_session(self) -> AgentSession:
        """Return the session as the adapters take it."""
        return AgentSession(agent=self.agent, session_id=self.session_id, transcript=self.transcript)


def native_sessions(agent: str, env: Mapping[str, str]) -> list[NativeSession]:
    """Return ``agent``'s own conversations under ``env``'s HOME (and its agent variables), oldest first.

    agent: one of ``HISTORY_AGENTS``. A file or database that cannot be read is skipped with
    a logged warning; never raises for the agent's files. Raises KeyError for another agent.
    """
    lister = _LISTERS[agent]
    found = list(lister(env))
    found.sort(key=lambda s: (s.started_at or s.updated_at, s.session_id))
    return found


def regular_files(paths: Iterable[Path]) -> list[Path]:
    """Return the paths that are regular files (after following links), sorted; skip others with a log line.

    A FIFO or device named like a transcript (``x.jsonl`` -> ``/dev/zero``) would block or
    never end; a transcript is only ever a regular file.
    """
    kept: list[Path] = []
    for path in sorted(paths):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if stat_mode.S_ISREG(mode):
            kept.append(path)
        else:
            log.warning("skipping %s: not a regular file", path)
    return kept


def _mtime(path: Path) -> tuple[datetime, int] | None:
    """Return a file's mtime (aware UTC) and size, or None when it is gone."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return datetime.fromtimestamp(stat.st_mtime, timezone.utc), stat.st_size


_TAIL_RECORDS = 16
"""How many of a transcript's last lines are read for the time it was last written to."""


def _last_written(path: Path) -> datetime | None:
    """Return the newest ``timestamp`` of a JSONL transcript's last records, or None (also for ``.zst``)."""
    if path.suffix != ".jsonl":
        return None
    try:
        lines = jsonl.tail_lines(path, _TAIL_RECORDS)
    except OSError:
        return None
    times = [t for line in lines for record in jsonl.parse_line(line) if (t := parse_time(record.get("timestamp")))]
    return max(times) if times else None


def _file_session(
    agent: str, path: Path, session_id: str | None, cwd: str | None, started_at: datetime | None
) -> NativeSession | None:
    if not session_id:
        return None
    stat = _mtime(path)
    if stat is None:
        return None
    mtime, size = stat
    updated = _last_written(path) or mtime
    return NativeSession(agent, session_id, path, cwd, started_at, updated, f"bytes:{size}")


def _claude(env: Mapping[str, str]) -> Iterator[NativeSession]:
    for path in regular_files((claude_root(env) / "projects").glob("*/*.jsonl")):
        started, cwd = jsonl.head_start(path, max_records=16)
        found = _file_session("claude", path, path.stem, cwd, started)
        if found is not None:
            yield found


def _codex(env: Mapping[str, str]) -> Iterator[NativeSession]:
    home = codex_home(env)
    paths: list[Path] = []
    for pattern in ("*/*/*/rollout-*.jsonl", "*/*/*/rollout-*.jsonl.zst"):
        paths.extend((home / "sessions").glob(pattern))
    for pattern in ("rollout-*.jsonl", "rollout-*.jsonl.zst"):
        paths.extend((home / "archived_sessions").glob(pattern))
    best: dict[str, NativeSession] = {}
    for path in regular_files(paths):
        meta = next((r for r in jsonl.read_head(path, max_records=4) if r.get("type") == "session_meta"), None)
        payload = as_dict(meta.get("payload")) if meta is not None else None
        if payload is None:
            continue
        started = parse_time(payload.get("timestamp")) or parse_time(meta.get("timestamp") if meta else None)
        found = _file_session("codex", path, as_str(payload.get("id")), as_str(payload.get("cwd")), started)
        if found is not None and (found.session_id not in best or not path.name.endswith(".zst")):
            best[found.session_id] = found  # plain over .zst, as find_rollout prefers it
    yield from best.values()


def _gemini_project_dirs(root: Path) -> dict[Path, str]:
    """Return project folder -> cwd, from ``projects.json`` and the ``.project_root`` markers."""
    tmp = root / "tmp"
    where: dict[Path, str] = {}
    try:
        mapping = as_dict(json.loads((root / "projects.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        mapping = None
    projects = as_dict(mapping.get("projects")) if mapping is not None else None
    for cwd, slug in (projects or {}).items():
        if isinstance(slug, str) and slug:
            where[tmp / slug] = cwd
    for base in (tmp, root / "history"):
        for marker in sorted(base.glob("*/.project_root")):
            try:
                recorded = marker.read_text(encoding="utf-8").strip()
            except OSError:
                continue
            if recorded:
                where.setdefault(tmp / marker.parent.name, recorded)
    return where


def _gemini(env: Mapping[str, str]) -> Iterator[NativeSession]:
    root = gemini_dir(env)
    cwds = _gemini_project_dirs(root)
    best: dict[str, tuple[int, NativeSession]] = {}
    for path in regular_files([*(root / "tmp").glob("*/chats/session-*.jsonl"), *(root / "tmp").glob("*/chats/session-*.json")]):
        session_id, started = chat_head(path)
        found = _file_session("gemini", path, session_id, cwds.get(path.parent.parent), started)
        if found is None:
            continue
        size = int(found.state.split(":", 1)[1])
        if found.session_id not in best or size > best[found.session_id][0]:
            best[found.session_id] = (size, found)
    yield from (found for _, found in best.values())


def _qwen(env: Mapping[str, str]) -> Iterator[NativeSession]:
    for path in regular_files((qwen_root(env) / "projects").glob("*/chats/*.jsonl")):
        started, cwd = jsonl.head_start(path, max_records=4)
        found = _file_session("qwen", path, path.stem, cwd, started)
        if found is not None:
            yield found


def _copilot(env: Mapping[str, str]) -> Iterator[NativeSession]:
    for path in regular_files((copilot_home(env) / "session-state").glob("*/events.jsonl")):
        start = next((r for r in jsonl.read_head(path, max_records=4) if r.get("type") == "session.start"), None)
        data = as_dict(start.get("data")) if start is not None else None
        if data is None:
            continue
        started = parse_time(data.get("startTime")) or parse_time(start.get("timestamp") if start else None)
        session_id = as_str(data.get("sessionId")) or path.parent.name
        found = _file_session("copilot", path, session_id, as_str(dig(data, "context", "cwd")), started)
        if found is not None:
            yield found


def _ms_time(value: object) -> datetime | None:
    """Return OpenCode's epoch milliseconds as an aware UTC datetime, or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value / 1000, timezone.utc)
    return None


def _opencode(env: Mapping[str, str]) -> Iterator[NativeSession]:
    import sqlite3  # on this path only (start-up time of the other commands)

    for path in database_paths(env):
        try:
            connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=2.0)
            try:
                rows = connection.execute(
                    "SELECT id, directory, time_created, time_updated FROM session WHERE parent_id IS NULL"
                ).fetchall()
            finally:
                connection.close()
        except sqlite3.Error as exc:
            log.warning("cannot read opencode database %s: %s", path, exc)
            continue
        for session_id, directory, created, updated in rows:
            started = _ms_time(created)
            last = _ms_time(updated) or started
            if last is None:
                continue
            yield NativeSession(
                "opencode", str(session_id), path, as_str(directory), started, last, f"updated:{updated}"
            )


_LISTERS = {
    "claude": _claude,
    "codex": _codex,
    "gemini": _gemini,
    "qwen": _qwen,
    "opencode": _opencode,
    "copilot": _copilot,
}


def agents_named(names: Iterable[str]) -> list[str]:
    """Return the agents ``names`` stand for (``all``: every one of ``HISTORY_AGENTS``), in order."""
    wanted = set(names)
    if "all" in wanted:
        return list(HISTORY_AGENTS)
    return [agent for agent in HISTORY_AGENTS if agent in wanted]
