"""Stand in for any program without an adapter: no ids, no transcript, exchanges from the screen.

``exchanges_from_recording`` rebuilds exchanges from a recording alone: what the user
typed up to each Enter is a prompt; what the screen shows after it, until the next prompt,
is the answer, rendered as plain text by shellkeep's terminal emulator
(``shellkeep.terminal.emulator.Terminal``). An adapter's ``ScreenChrome`` says what else a
full-screen agent draws (its input box, status line, footer), so that answers hold answers.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Protocol

from shellkeep.agents.base import INJECTED_CONTEXT_PREFIX, AgentSession, Exchange, Launch, ScreenChrome
from shellkeep.agents.line_editor import LineEditor, TypedLine
from shellkeep.agents.records import ExchangeBuilder, iso_utc, last
from shellkeep.terminal.emulator import Terminal
from shellkeep.termsize import TermSize

__all__ = ["GenericAdapter", "RecordedEvent", "TypedLine", "exchanges_from_recording", "typed_lines"]

DEFAULT_COLS = 80
DEFAULT_ROWS = 24
MAX_SCROLLBACK_LINES = 20_000
"""Most lines of one answer kept from what scrolled off the screen (its last ones)."""

_PROMPT_SIGNS = "$#>%:)]\u276f\u203a\u00bb"  # also the heavy, single and double right angle quotes


class RecordedEvent(Protocol):
    """One asciicast event as shellkeep's reader yields it.

    time: float seconds since session start; code: ``o`` output, ``i`` input, ``r`` resize
    (data ``"COLSxROWS"``), ``m`` marker; data: the text.
    """

    @property
    def time(self) -> float:
        """Return the event's time in seconds since session start."""
        ...

    @property
    def code(self) -> str:
        """Return the event's code."""
        ...

    @property
    def data(self) -> str:
        """Return the event's text."""
        ...


def typed_lines(events: Iterable[RecordedEvent]) -> list[TypedLine]:
    """Return the lines the user submitted in a recording's input (``i``) events."""
    editor = LineEditor()
    lines: list[TypedLine] = []
    for event in events:
        if event.code == "i":
            lines.extend(editor.feed(event.data, event.time))
    return lines


class _Scrollback:
    """Lines scrolled off the top of the screen, addressed by absolute line number.

    Absolute line n is the n-th line the screen ever had at its top (0-based); ``dropped``
    lines at the start are no longer kept. At most ``MAX_SCROLLBACK_LINES`` are kept, so a
    huge answer keeps its last lines.
    """

    def __init__(self) -> None:
        """Start with no line."""
        self.lines: list[str] = []
        self.dropped = 0

    @property
    def total(self) -> int:
        """Return how many lines have scrolled off in all."""
        return self.dropped + len(self.lines)

    def append(self, text: str) -> None:
        """Keep one more scrolled line, forgetting the older half when the limit is reached."""
        self.lines.append(text)
        if len(self.lines) > MAX_SCROLLBACK_LINES:
            self.forget_before(self.total - MAX_SCROLLBACK_LINES // 2)

    def forget_before(self, absolute: int) -> None:
        """Drop the lines before absolute line ``absolute``."""
        count = min(max(absolute - self.dropped, 0), len(self.lines))
        del self.lines[:count]
        self.dropped += count


def _is_echo(line: str, prompt: str) -> bool:
    """Return whether a screen line shows ``prompt`` as typed (alone or after a prompt sign)."""
    text = line.strip()
    typed = prompt.strip()
    if not typed or not text.endswith(typed):
        return False
    before = text[: -len(typed)].rstrip()
    return before == "" or before[-1] in _PROMPT_SIGNS


def _without_stream_repeats(lines: list[str]) -> list[str]:
    """Return ``lines`` without a line the next one repeats and completes (``Answer:`` above
    ``Answer: plum``): a program that streams its answer in a live region (aider's markdown
    stream, through rich) may leave a line drawn while it was still arriving above its whole
    form, when the stream comes slowly (seen on a loaded machine). Only for such a program
    (``ScreenChrome.partial_lines``): ``find . | sort`` prints ``./src`` above ``./src/main.py``."""
    return [
        line
        for line, after in zip(lines, [*lines[1:], ""])
        if not (line.strip() and after.rstrip().startswith(line.rstrip()) and len(after.rstrip()) > len(line.rstrip()))
    ]


def _answer_above(answer: list[str], echoed_in_place: bool, above: list[str], prompt: str) -> list[str]:
    """Return ``answer``, or when it is empty and the row the keys came on does not show them,
    the lines after the echo of ``prompt`` in ``above``: the keys came after what they made the
    program show (redaction held a typed secret back until Enter)."""
    if answer or echoed_in_place:
        return answer
    end = _echo_end(above, prompt)
    return above[end:] if end is not None else []


def _echo_end(lines: Sequence[str], prompt: str, trim: re.Pattern[str] | None = None) -> int | None:
    """Return the index after the last echo of ``prompt`` in ``lines``, or None when none shows it.

    An echo is the prompt's text (spaces and line breaks aside) at the start of a line or
    after a prompt sign (``❯ fix it``), possibly wrapped over the lines that follow; what
    ``trim`` matches is removed from each line first.
    """
    want = " ".join(prompt.split())
    if not want:
        return None
    if trim is not None:
        lines = [trim.sub("", line) for line in lines]
    for i in range(len(lines) - 1, -1, -1):
        text = " ".join(lines[i].split())
        if text and text[0] in _PROMPT_SIGNS:
            text = text[1:].lstrip()
        if not text or not want.startswith(text):
            continue
        got, j = text, i + 1
        while got != want and j < len(lines):
            more = " ".join(lines[j].split())
            joined = next((g for g in (f"{got} {more}", f"{got}{more}") if more and want.startswith(g)), None)
            if joined is None:
                break
            got, j = joined, j + 1
        if got == want:
            return j
    return None


class _Chrome:
    """A ``ScreenChrome`` with its patterns compiled, applied to screen lines."""

    def __init__(self, chrome: ScreenChrome) -> None:
        """Compile ``chrome``'s patterns (a pattern that matches nothing stands for None)."""
        self.boxed = chrome.input_box is not None
        self._box = re.compile(chrome.input_box or r"(?!)")
        self._furniture = [re.compile(pattern) for pattern in chrome.lines]
        self._mark = re.compile(rf"(\s*)(?:{chrome.mark})") if chrome.mark else None
        self._echo_trim = re.compile(chrome.echo_trim) if chrome.echo_trim else None

    def strip(self, lines: Iterable[str]) -> list[str]:
        """Return ``lines`` without the chrome lines, marks turned to spaces, trailing spaces removed."""
        kept: list[str] = []
        for line in lines:
            if any(pattern.fullmatch(line.strip()) for pattern in self._furniture):
                continue
            found = self._mark.match(line) if self._mark is not None else None
            if found is not None and found.end() > found.end(1):
                line = " " * found.end() + line[found.end() :]
            kept.append(line.rstrip())
        return kept

    def answer_after_echo(self, lines: Sequence[str], prompt: str) -> list[str] | None:
        """Return the lines between the last echo of ``prompt`` and the input box, chrome stripped;
        None when no line echoes the prompt above the input box."""
        begin = _echo_end(lines, prompt, self._echo_trim)
        if begin is None:
            return None
        end = next((i for i in range(begin, len(lines)) if self._box.fullmatch(lines[i].strip())), None)
        if end is None and self.boxed:
            return None  # the echo is the input box's own line, or the box is covered (a dialog)
        return self.strip(lines[begin:end])


LOOK_EVERY_S = 0.1
"""Least recording time between two views of an input-box agent's answer taken while it
comes (besides those taken before each erase of the screen and at the next prompt)."""

_ANCHOR_LINES = 3
"""Lines at the top of a view looked for among the answer lines seen before (see ``_ShownAnswer``)."""


class _ShownAnswer:
    """The lines an agent showed as one answer, pieced together from the views it drew.

    An agent that redraws its conversation in place (Codex on the alternate screen) moves a
    long answer up through its view without scrolling the terminal, so the answer's start
    leaves the screen without reaching the scrollback. Each view (the lines after the
    prompt's echo) is placed where its first non-blank lines were seen before (the last
    line seen may since have grown), preferably at or after the previous view's place, and
    replaces everything from there on; a view sharing nothing with them replaces them all
    (what the agent showed before was a passing state, such as a start-up notice).
    """

    def __init__(self) -> None:
        """Start with nothing seen."""
        self.lines: list[str] = []
        self._base = 0

    def add(self, view: list[str]) -> None:
        """Merge one view of the answer into the lines seen so far."""
        first = next((i for i, line in enumerate(view) if line.strip()), None)
        if first is None:
            return
        anchor = view[first : first + _ANCHOR_LINES]
        at = self._find(anchor, self._base)
        if at is None:
            at = self._find(anchor, 0)
        start = 0 if at is None else max(at - first, 0)
        self.lines[start:] = view
        self._base = start

    def _find(self, anchor: Sequence[str], since: int) -> int | None:
        """Return the first index from ``since`` where the lines seen continue with ``anchor``."""
        seen = self.lines
        for at in range(since, len(seen)):
            overlap = min(len(anchor), len(seen) - at)
            if all(
                seen[at + k] == anchor[k]
                or (at + k == len(seen) - 1 and seen[at + k].strip() != "" and anchor[k].startswith(seen[at + k]))
                for k in range(overlap)
            ):
                return at
        return None


def exchanges_from_recording(
    events: Iterable[RecordedEvent],
    *,
    cols: int = DEFAULT_COLS,
    rows: int = DEFAULT_ROWS,
    started_at: datetime | None = None,
    limit: int | None = None,
    chrome: ScreenChrome = ScreenChrome(),
) -> list[Exchange]:
    """Build exchanges from a recording's events, for programs without a transcript.

    Each line typed up to Enter (``\\r`` or ``\\n``; backspace/DEL, Ctrl-U and Ctrl-W applied,
    escape sequences dropped, newlines inside a bracketed paste kept) is a prompt. Its
    answer is what the screen shows, rendered by ``shellkeep.terminal.emulator.Terminal``,
    at the moment the next prompt's first key is typed (or at the end), including lines
    that scrolled off the top meanwhile (at most ``MAX_SCROLLBACK_LINES``, the last):

    - a line-based program (``chrome.input_box`` None): the lines below the line where
      Enter was pressed, up to the line where the next prompt is typed; a first line
      repeating the prompt is dropped. Full-screen programs that redraw in place give the
      last screen.
    - an agent with an input box (``chrome.input_box`` set): the lines after the last
      echo of the prompt in the conversation, up to the input box, as they were shown
      while the answer came, until the next prompt's Enter (the keys typed before it
      change only the box): views taken as it comes (every ``LOOK_EVERY_S`` of recording
      time), before each erase of the screen and at the end are pieced together (see
      ``_ShownAnswer``), so an answer the agent moved up out of view, or erased on exit,
      is kept whole.

    Lines of ``chrome.lines`` are dropped, and with ``chrome.partial_lines`` so is a line that
    the next one repeats and completes (a streamed answer's start left above it); ``chrome.mark`` is removed and the answer
    dedented by the indent that aligned its lines with the mark; blank lines at either end
    are trimmed. Lines of an input event holding the context block
    ``shellkeep resume`` typed in (``INJECTED_CONTEXT_PREFIX``) are not prompts.

    Args:
        events: the recording's events in order (``o``, ``i``, ``r``; others ignored).
        cols / rows: the terminal size in the recording's header.
        started_at: aware UTC datetime of the recording's start, to date the prompts.
        limit: keep only the last ``limit`` exchanges.
        chrome: what the program draws besides its answers (its adapter's ``screen_chrome``).
    """
    scrollback = _Scrollback()
    pending: tuple[TypedLine, int] | None = None  # the prompt waiting for its answer, its line
    compiled = _Chrome(chrome)
    shown = _ShownAnswer()  # what an input-box agent showed of the pending prompt's answer

    def lines_between(start: int, end: int | None) -> list[str]:
        everything = [*scrollback.lines, *terminal.text_lines()]
        begin = max(start - scrollback.dropped, 0)
        return everything[begin:] if end is None else everything[begin : max(end - scrollback.dropped, begin)]

    def look(*, whole: bool) -> None:
        """Add what the screen (and, when ``whole``, the scrollback) shows of the pending answer."""
        if pending is not None and compiled.boxed:
            view = compiled.answer_after_echo(lines_between(0, None) if whole else terminal.text_lines(), pending[0].text)
            if view is not None:
                shown.add(view)

    terminal = Terminal(TermSize(cols, rows), on_scroll_off=scrollback.append, on_screen_lost=lambda: look(whole=True))
    editor = LineEditor()
    builder = ExchangeBuilder()

    def absolute_row() -> int:
        return scrollback.total + terminal.cursor.y

    def below_prompt(typed: TypedLine, row: int, end_row: int | None) -> list[str]:
        entered = (lines_between(row, row + 1) or [""])[0]
        answer = lines_between(row + 1, end_row if end_row is None or end_row > row else row + 1)
        while answer and not answer[-1].strip():
            answer.pop()
        while answer and not answer[0].strip():
            answer.pop(0)
        echoed_in_place = typed.text.strip() in entered
        answer = _answer_above(answer, echoed_in_place, lines_between(max(row - rows, 0), row), typed.text)
        if answer and not echoed_in_place and _is_echo(answer[0], typed.text):
            answer.pop(0)  # the program drew the prompt again below where it was typed
        if end_row is None and answer and echoed_in_place:
            # The recording ends at the program's next prompt, shown empty: not answer text.
            sign = entered.rstrip()[: -len(typed.text.strip())].strip()
            if sign and answer[-1].strip() == sign:
                answer.pop()
        return compiled.strip(_without_stream_repeats(answer) if chrome.partial_lines else answer)

    def close(end_row: int | None) -> None:
        nonlocal pending, shown
        if pending is None:
            return
        typed, row = pending
        if compiled.boxed:
            look(whole=True)
            answer = shown.lines
        else:
            answer = below_prompt(typed, row, end_row)
        when = iso_utc((started_at + timedelta(seconds=typed.submitted_s)).isoformat()) if started_at else None
        builder.prompt(typed.text, when)
        text = "\n".join(answer)
        builder.answer((textwrap.dedent(text) if chrome.mark or compiled.boxed else text).strip("\n"))
        pending = None
        shown = _ShownAnswer()
        scrollback.forget_before(scrollback.total)  # nothing before the next prompt is needed

    looked_s = -math.inf
    for event in events:
        if event.code == "o":
            terminal.feed(event.data)
            if pending is not None and compiled.boxed and event.time - looked_s >= LOOK_EVERY_S:
                look(whole=False)
                looked_s = event.time
        elif event.code == "r":
            try:
                size = TermSize.parse(event.data)
            except ValueError:
                continue  # a malformed resize is ignored
            terminal.resize(size)
        elif event.code == "i":
            # Input is recorded before the program echoes it: the cursor is still on the
            # line where these keys are typed, which ends the previous answer.
            row = absolute_row()
            was_empty = not editor.units
            submitted = editor.feed(event.data, event.time)
            # An input-box agent's answer is read above its box, which the keys do not touch:
            # it ends only at Enter, so what it drew while the next prompt was typed counts
            # (the recording can hold output after keys typed once it showed: redaction holds
            # back a last word until more output or quiet, Copilot CLI's, say).
            if was_empty and (submitted or (editor.units and not compiled.boxed)):
                close(row)
            if INJECTED_CONTEXT_PREFIX in event.data:
                continue  # the context shellkeep typed in on resume: not the user's prompts
            for typed in submitted:
                close(row)
                pending = (typed, row)
    close(None)
    return last(builder.exchanges(), limit)


class GenericAdapter:
    """Adapter for any other program: matches everything, finds nothing, never resumes natively."""

    name = "generic"
    has_native_transcript = False
    screen_chrome = ScreenChrome()

    def matches(self, argv: Sequence[str]) -> bool:
        """Return True: the generic adapter is the last resort."""
        return True

    def agent_name(self, argv: Sequence[str]) -> str:
        """Return the program's base name (``bash``), or ``name`` when ``argv`` is empty."""
        return os.path.basename(argv[0]) if argv else self.name

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """Return the launch unchanged."""
        return Launch(argv=tuple(argv))

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return None: a generic program keeps no conversation shellkeep can find."""
        return None

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return []: use ``exchanges_from_recording`` on the session's recording instead."""
        return []

    def resume_argv(self, original_argv: Sequence[str], session: AgentSession) -> list[str] | None:
        """Return None: there is no native resume."""
        return None

    def transcript_files(self, session: AgentSession) -> list[Path]:
        """Return []: there is no transcript."""
        return []
