"""Replay keystrokes as a line editor (readline, a TUI's input box) would, to recover what was submitted.

The input of a recording is its keys, redacted: a secret typed is a ``[REDACTED:rule]``
marker in them. The editor keeps a cursor (arrows, Home/End, Ctrl-A/E/B/F) and the edits
readline makes at it (Backspace, Delete, Ctrl-K/U/W); a marker is one unit, moved over and
deleted whole, never cut (the keys that edited inside the secret cannot be mapped onto it).
A key's escape sequence split across two input events is joined before it is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["LineEditor", "TypedLine"]

_KEY_ESCAPE = re.compile(r"(?s)\x1b(?:\[[0-?]*[ -/]*[@-~]|O.|\][^\x07\x1b]*(?:\x07|\x1b\\)|.)?")
_UNFINISHED = re.compile(r"\x1b\[[0-?]*[ -/]*\Z")
"""A key's CSI sequence cut short at the end of an input event (the rest comes in the next;
a lone ESC is a key of its own: Esc)."""
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
_PASTE_START = "\x1b[200~"
_PASTE_END = "\x1b[201~"

_LEFT = frozenset({"\x1b[D", "\x1bOD", "\x02"})
_RIGHT = frozenset({"\x1b[C", "\x1bOC", "\x06"})
_HOME = frozenset({"\x1b[H", "\x1bOH", "\x1b[1~", "\x1b[7~", "\x01"})
_END = frozenset({"\x1b[F", "\x1bOF", "\x1b[4~", "\x1b[8~", "\x05"})
_DELETE = frozenset({"\x1b[3~"})


@dataclass(frozen=True, slots=True)
class TypedLine:
    """One line the user submitted with Enter.

    text: the line after editing (backspace, Ctrl-U, Ctrl-W) without escape sequences.
    started_s / submitted_s: times of its first key and of Enter, seconds since session start.
    """

    text: str
    started_s: float
    submitted_s: float


class LineEditor:
    """A line being typed: ``units`` (characters, or a redaction marker each) and a cursor."""

    def __init__(self) -> None:
        self.units: list[str] = []
        self.cursor = 0
        self.started_s: float | None = None
        self.in_paste = False
        self.after_cr = False
        self._pending = ""

    def feed(self, data: str, time_s: float) -> list[TypedLine]:
        """Apply one input event; return the lines it submitted, each with its first key's time."""
        data, self._pending = self._pending + data, ""
        cut = _UNFINISHED.search(data)
        if cut is not None:
            data, self._pending = data[: cut.start()], data[cut.start() :]
        submitted: list[TypedLine] = []
        position = 0
        while position < len(data):
            char = data[position]
            if char == "\x1b":
                match = _KEY_ESCAPE.match(data, position)
                sequence = match.group(0) if match else char
                position += len(sequence)
                self.after_cr = False
                self._key(sequence)
                continue
            marker = _MARKER.match(data, position) if char == "[" else None
            if marker is not None:
                self._insert(marker.group(0), time_s)
                position = marker.end()
                self.after_cr = False
                continue
            position += 1
            if char in "\r\n":
                line = self._enter(char, time_s)
                if line is not None:
                    submitted.append(line)
                continue
            self.after_cr = False
            self._edit(char, time_s)
        return submitted

    def _enter(self, char: str, time_s: float) -> TypedLine | None:
        if char == "\n" and self.after_cr:
            self.after_cr = False
            return None
        self.after_cr = char == "\r"
        if self.in_paste:
            self._insert("\n", time_s)
            return None
        text = "".join(self.units)
        started = self.started_s if self.started_s is not None else time_s
        self.units, self.cursor, self.started_s = [], 0, None
        return TypedLine(text, started, time_s) if text.strip() else None

    def _key(self, sequence: str) -> None:
        if sequence == _PASTE_START:
            self.in_paste = True
        elif sequence == _PASTE_END:
            self.in_paste = False
        else:
            self._move(sequence)

    def _move(self, key: str) -> bool:
        """Apply a cursor key or Delete; return whether ``key`` was one."""
        if key in _LEFT:
            self.cursor = max(self.cursor - 1, 0)
        elif key in _RIGHT:
            self.cursor = min(self.cursor + 1, len(self.units))
        elif key in _HOME:
            self.cursor = 0
        elif key in _END:
            self.cursor = len(self.units)
        elif key in _DELETE:
            del self.units[self.cursor : self.cursor + 1]
        else:
            return False
        return True

    def _edit(self, char: str, time_s: float) -> None:
        if self._move(char):
            return
        if char in "\x7f\x08":
            if self.cursor:
                self.cursor -= 1
                del self.units[self.cursor]
        elif char == "\x03":  # Ctrl-C abandons the line
            self.units, self.cursor = [], 0
        elif char == "\x15":  # Ctrl-U: what is before the cursor
            del self.units[: self.cursor]
            self.cursor = 0
        elif char == "\x0b":  # Ctrl-K: what is after it
            del self.units[self.cursor :]
        elif char == "\x04":  # Ctrl-D on a line with text: the character under the cursor
            del self.units[self.cursor : self.cursor + 1]
        elif char == "\x17":  # Ctrl-W: the word before the cursor
            start = self.cursor
            while start and self.units[start - 1].isspace():
                start -= 1
            while start and not self.units[start - 1].isspace():
                start -= 1
            del self.units[start : self.cursor]
            self.cursor = start
        elif char == "\t" or char >= " ":
            self._insert(char, time_s)

    def _insert(self, unit: str, time_s: float) -> None:
        """Insert a character (or a marker) at the cursor, noting when the line's first key came."""
        if self.started_s is None:
            self.started_s = time_s
        self.units.insert(self.cursor, unit)
        self.cursor += 1
