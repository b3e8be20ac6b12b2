"""Keep an agent's task list: the ``Plan`` record, its item states, and the builder adapters feed.

Agents keep a task list through tools: a whole-list writer (Claude Code's ``TodoWrite``,
Codex's ``update_plan``, Gemini CLI's ``write_todos``, Qwen Code's ``todo_write``, OpenCode's
``todowrite``) sends every item with its state each time; Claude Code's task tools
(``TaskCreate``, then ``TaskUpdate`` by task id) change one item at a time. An adapter reads
those calls from the agent's transcript in order and feeds them to ``PlanBuilder``; the last
state is the plan the agent stopped at. ``meta.json`` keeps it as ``Plan.to_json()``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from shellkeep.agents.records import JsonObject, as_dict, as_list, as_str, one_line, shorten

__all__ = ["Plan", "PlanBuilder", "PlanItem", "PlanState", "items_from", "scan_records", "state_of"]

MAX_ITEM_CHARS = 200
"""Longest ``PlanItem.text`` kept, in characters."""


class PlanState(enum.Enum):
    """Where one item of a plan stands, in the words the agents use (``in_progress``...)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    BLOCKED = "blocked"


_STATE_WORDS = {
    "pending": PlanState.PENDING,
    "todo": PlanState.PENDING,
    "not_started": PlanState.PENDING,
    "in_progress": PlanState.IN_PROGRESS,
    "in-progress": PlanState.IN_PROGRESS,
    "inprogress": PlanState.IN_PROGRESS,
    "active": PlanState.IN_PROGRESS,
    "completed": PlanState.COMPLETED,
    "complete": PlanState.COMPLETED,
    "done": PlanState.COMPLETED,
    "cancelled": PlanState.CANCELLED,
    "canceled": PlanState.CANCELLED,
    "blocked": PlanState.BLOCKED,
}

_MARKS = {
    PlanState.PENDING: "[ ]",
    PlanState.IN_PROGRESS: "[>]",
    PlanState.COMPLETED: "[x]",
    PlanState.CANCELLED: "[-]",
    PlanState.BLOCKED: "[!]",
}


def state_of(value: object) -> PlanState | None:
    """Return the state an agent's status word names (``"in_progress"``, ``"done"``...), or None."""
    text = as_str(value)
    if text is None:
        return None
    return _STATE_WORDS.get(text.strip().lower())


@dataclass(frozen=True, slots=True)
class PlanItem:
    """One task of a plan.

    text: what is to be done, one line of at most ``MAX_ITEM_CHARS`` characters.
    state: where it stands. active: the agent's present-continuous label shown while it is
    in progress (Claude Code's ``activeForm``), or None. id: the agent's task id, or None.
    """

    text: str
    state: PlanState
    active: str | None = None
    id: str | None = None

    def to_json(self) -> dict[str, str | None]:
        """Return ``{"text", "state", "active", "id"}``."""
        return {"text": self.text, "state": self.state.value, "active": self.active, "id": self.id}


@dataclass(frozen=True, slots=True)
class Plan:
    """An agent's task list at one moment, items in the agent's order.

    tool: the tool that last changed it (``TodoWrite``, ``TaskUpdate``, ``update_plan``...).
    explanation: a note the agent gave with it (Codex's ``explanation``), or None.
    """

    items: tuple[PlanItem, ...]
    tool: str
    explanation: str | None = None

    @property
    def done(self) -> int:
        """Return how many items are completed."""
        return sum(1 for item in self.items if item.state is PlanState.COMPLETED)

    @property
    def in_progress(self) -> tuple[PlanItem, ...]:
        """Return the items in progress."""
        return tuple(item for item in self.items if item.state is PlanState.IN_PROGRESS)

    def summary(self) -> str:
        """Return where the plan stopped: ``3 of 7 done; in progress: migrate the index``.

        Without an item in progress, the next pending one is named (``next: ...``).
        """
        text = f"{self.done} of {len(self.items)} done"
        active = self.in_progress
        if active:
            return f"{text}; in progress: " + "; ".join(item.text for item in active)
        pending = next((item for item in self.items if item.state is PlanState.PENDING), None)
        return f"{text}; next: {pending.text}" if pending is not None else text

    def lines(self) -> list[str]:
        """Return one line per item: ``[x] done``, ``[>] in progress``, ``[ ] pending``, ``[-]``, ``[!]``."""
        return [f"{_MARKS[item.state]} {item.text}" for item in self.items]

    def to_json(self) -> dict[str, object]:
        """Return the ``meta.json`` ``plan`` object: ``items``, ``tool``, ``explanation``, ``done``, ``total``, ``summary``."""
        return {
            "items": [item.to_json() for item in self.items],
            "tool": self.tool,
            "explanation": self.explanation,
            "done": self.done,
            "total": len(self.items),
            "summary": self.summary(),
        }

    @classmethod
    def from_json(cls, value: object) -> Plan | None:
        """Return the plan ``to_json`` wrote, or None when ``value`` is not one (items with an unknown state are left out)."""
        obj = as_dict(value)
        if obj is None:
            return None
        items: list[PlanItem] = []
        for entry in (as_dict(e) for e in as_list(obj.get("items"))):
            state = state_of(entry.get("state")) if entry is not None else None
            text = as_str(entry.get("text")) if entry is not None else None
            if entry is None or state is None or not text:
                continue
            items.append(PlanItem(text, state, as_str(entry.get("active")), as_str(entry.get("id"))))
        if not items:
            return None
        return cls(tuple(items), as_str(obj.get("tool")) or "?", as_str(obj.get("explanation")))


_TEXT_KEYS = ("content", "description", "step", "subject", "text", "title")


def _text(entry: JsonObject, keys: Sequence[str]) -> str | None:
    for key in keys:
        text = as_str(entry.get(key))
        if text is not None and text.strip():
            return shorten(one_line(text), MAX_ITEM_CHARS)
    return None


def items_from(entries: object, text_keys: Sequence[str] = _TEXT_KEYS) -> list[PlanItem]:
    """Return the items of a whole-list writer's list (``[{"content", "status"}, ...]``).

    The text is the first of ``text_keys`` present; the state is ``status``; ``activeForm``
    and ``id`` are kept when given. An entry without text or with an unknown status is
    left out.
    """
    items: list[PlanItem] = []
    for entry in (as_dict(e) for e in as_list(entries)):
        if entry is None:
            continue
        text, state = _text(entry, text_keys), state_of(entry.get("status"))
        if text is None or state is None:
            continue
        ident = entry.get("id")
        items.append(PlanItem(text, state, as_str(entry.get("activeForm")), str(ident) if isinstance(ident, (str, int)) else None))
    return items


class PlanBuilder:
    """Follow an agent's plan tool calls in transcript order; ``plan()`` gives the last state."""

    def __init__(self) -> None:
        """Start with no plan."""
        self._items: list[PlanItem] = []
        self._tool: str | None = None
        self._explanation: str | None = None

    def replace(self, tool: str, items: Iterable[PlanItem], explanation: str | None = None) -> None:
        """Take a whole list from a whole-list writer (an empty list clears the plan)."""
        self._items = list(items)
        self._tool = tool
        self._explanation = explanation

    def create(self, tool: str, text: str, task_id: str | None, active: str | None = None) -> None:
        """Add a pending task (Claude Code's ``TaskCreate``); a known id is replaced."""
        item = PlanItem(shorten(one_line(text), MAX_ITEM_CHARS), PlanState.PENDING, active, task_id)
        self._items = [i for i in self._items if task_id is None or i.id != task_id] + [item]
        self._tool = tool

    def update(self, tool: str, task_id: str, status: object = None, text: str | None = None, active: str | None = None) -> None:
        """Change the task ``task_id`` (Claude Code's ``TaskUpdate``); status ``deleted`` removes it.

        An unknown id or status changes nothing.
        """
        if as_str(status) == "deleted":
            self._items = [i for i in self._items if i.id != task_id]
            self._tool = tool
            return
        state = state_of(status)
        for n, item in enumerate(self._items):
            if item.id != task_id:
                continue
            self._items[n] = PlanItem(
                shorten(one_line(text), MAX_ITEM_CHARS) if text and text.strip() else item.text,
                state or item.state,
                active or item.active,
                item.id,
            )
            self._tool = tool

    def plan(self) -> Plan | None:
        """Return the plan as it stands, or None when no tool ever wrote one or it is empty."""
        if self._tool is None or not self._items:
            return None
        return Plan(tuple(self._items), self._tool, self._explanation)


def scan_records(path: Path, needles: Sequence[bytes]) -> Iterator[JsonObject]:
    """Yield, in file order, the JSON records of a JSONL transcript whose line holds one of ``needles``.

    Only lines that mention a plan tool are parsed (a transcript of many megabytes is read
    in one pass, line by line). A ``.zst`` transcript is decompressed. Raises OSError when
    the file cannot be read.
    """
    from shellkeep.agents.jsonl import open_transcript, parse_line

    fh = open_transcript(path)
    if fh is None:
        return
    with fh:
        rest = b""
        while True:
            block = fh.read(_SCAN_BLOCK_BYTES)
            if not block:
                break
            data = rest + block
            cut = data.rfind(b"\n") + 1  # whole lines only; the rest waits for the next block
            for line in _lines_with(data[:cut], needles):
                yield from parse_line(line)
            rest = data[cut:]
        for line in _lines_with(rest, needles):  # a last line without its newline
            yield from parse_line(line)


_SCAN_BLOCK_BYTES = 4 << 20
"""How much of a transcript ``scan_records`` reads at a time."""


def _lines_with(data: bytes, needles: Sequence[bytes]) -> list[bytes]:
    """Return the lines of ``data`` that hold one of ``needles``, in order, each once.

    The needles are found with ``bytes.find`` over the whole block (the lines that hold none,
    nearly all of a transcript, are never split apart or looked at one by one).
    """
    starts: set[int] = set()
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            starts.add(start)
            end = data.find(b"\n", at)
            at = data.find(needle, len(data) if end < 0 else end)
    lines = []
    for start in sorted(starts):
        end = data.find(b"\n", start)
        lines.append(data[start : len(data) if end < 0 else end])
    return lines
