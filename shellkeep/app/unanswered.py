"""The prompt an agent never answered: found when a session's exchanges are collected, offered again on resume.

An agent killed mid-turn (a prompt sent, no answer yet) loses that turn: its own resume
shows the conversation without it (or with the prompt and no answer) and waits. shellkeep knows the prompt: it is the
session's last exchange when that exchange has no answer text (from the agent's transcript,
``agents.*`` exchange parsers, or for agents without one from the recording,
``agents.generic.exchanges_from_recording``). A turn cut after some tool calls but before any
answer text counts as unanswered too: the work it started was not reported back.

An agent may not have written the prompt to its transcript yet when it died (Claude Code
2.1 writes it with the answer): then the recording has it, as the last line the user typed
(``agents.generic.typed_lines``) after the line that sent the transcript's last prompt; it
is added as an exchange without an answer (``with_typed_prompt``). Only for sessions that
were cut short (not ``finished``). A plain or seekable recording is read from its end, input
events only (``asciicast.tail``), so the cost grows with the output since that prompt, not
with the recording; a sealed one is streamed from its start.

``meta.json`` keeps only where it is (``unanswered_prompt``: ``{"index", "time", "chars"}``);
its text stays in ``exchanges.jsonl``, redacted and sealed like every exchange. A prompt
holding a redaction marker (``[REDACTED:<name>]``) is never sent again: the agent would get
the marker, not the secret. Nor is one that a later resume of the session sent again and got
an answer to (``find_unanswered``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from shellkeep.agents.base import Exchange
from shellkeep.agents.generic import TypedLine, typed_lines
from shellkeep.agents.records import one_line, shorten
from shellkeep.asciicast.model import Event
from shellkeep.asciicast.tail import TailReader, decode_line
from shellkeep.capture.redaction import MARKER_PREFIX
from shellkeep.errors import DataError
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta, Status, parse_iso
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import read_exchanges
from shellkeep.vault.recording import open_tail_source

__all__ = [
    "RESEND_INTRO",
    "UNANSWERED_KEY",
    "UnansweredPrompt",
    "banner_line",
    "find_unanswered",
    "last_unanswered",
    "resend_block",
    "with_typed_prompt",
    "with_unanswered",
]

log = get_logger(__name__)

UNANSWERED_KEY = "unanswered_prompt"
"""The meta.json key: ``{"index": int (0-based, in exchanges.jsonl), "time": ISO 8601 UTC or
null, "chars": int (the prompt's length)}``; absent when the last exchange was answered."""

RESEND_INTRO = "The session was cut short before this last prompt was answered; answer it now:"
"""The line that puts the unanswered prompt at the end of a re-injected block."""

MAX_INPUT_EVENTS_BACK = 20_000
"""Input events read back from a recording's end looking for the line that sent the last prompt."""

_INPUT_NEEDLES = (b', "i", ', b',"i",')
"""How an input event line holds its code (``asciicast.encoder`` writes the first)."""

BANNER_PROMPT_CHARS = 60
"""Longest prompt text the banner shows, in characters (one line, ``…`` when cut)."""


@dataclass(frozen=True, slots=True)
class UnansweredPrompt:
    """A session's last prompt that got no answer.

    prompt: its text as stored (redacted). index: 0-based position in the session's
    exchanges. time: when it was sent (ISO 8601 UTC) or None.
    """

    prompt: str
    index: int
    time: str | None = None

    @property
    def is_redacted(self) -> bool:
        """Return whether the stored text holds a redaction marker (a secret was taken out)."""
        return MARKER_PREFIX in self.prompt

    @property
    def refusal(self) -> str | None:
        """Return why it is never sent again (None: it may be)."""
        if self.is_redacted:
            return "it holds a redacted secret; type it again yourself"
        if not self.prompt.strip():
            return "it is empty"
        return None

    def short(self, max_chars: int = BANNER_PROMPT_CHARS) -> str:
        """Return the prompt on one line, at most ``max_chars`` characters."""
        return shorten(one_line(self.prompt), max_chars)


def last_unanswered(exchanges: Sequence[Exchange]) -> Exchange | None:
    """Return the last exchange when it has no answer text, else None (also for no exchange)."""
    if not exchanges:
        return None
    last = exchanges[-1]
    return last if not last.answer.strip() and last.prompt.strip() else None


def with_typed_prompt(exchanges: list[Exchange], meta: SessionMeta, vault: Vault) -> list[Exchange]:
    """Return ``exchanges`` with the prompt typed after the last one and never answered, if any.

    exchanges: the session's own exchanges from the agent's transcript, oldest first, the
    last one answered. The recording's typed lines (input events) are matched to the last
    exchange's prompt; the last line typed after it that reads as a prompt (not a ``/``
    command or a one-key answer to a dialog) is appended as an exchange without an answer,
    dated when it was sent. Unchanged when the session ended by itself (``finished``), the
    last exchange is unanswered already, or its prompt was not typed (pasted by shellkeep,
    recalled from history): never a guess. A recording that cannot be read changes nothing.
    """
    if meta.status == Status.FINISHED.value or not meta.record_input or last_unanswered(exchanges) is not None:
        return exchanges
    prompt = exchanges[-1].prompt if exchanges else None
    try:
        typed = _typed_since(meta, vault, prompt)
    except Exception as exc:  # noqa: BLE001 - the transcript's exchanges stand
        log.debug("cannot read the typed input of %s: %s", meta.id, exc)
        return exchanges
    line = _typed_after(typed, prompt)
    if line is None:
        return exchanges
    try:
        sent = (parse_iso(meta.started_at) + timedelta(seconds=line.submitted_s)).isoformat(timespec="milliseconds")
        time: str | None = sent.replace("+00:00", "Z")
    except ValueError:
        time = None
    return [*exchanges, Exchange(index=len(exchanges), time=time, prompt=line.text.strip(), answer="")]


def _typed_since(meta: SessionMeta, vault: Vault, prompt: str | None) -> list[TypedLine]:
    """Return the lines typed in ``meta``'s recording, from the one that sent ``prompt`` on where it can.

    A plain or seekable asciicast v2 recording is read backwards, input lines only, until a
    line typed whole is ``prompt`` (or ``MAX_INPUT_EVENTS_BACK`` input events were read): what
    comes before it does not count. Otherwise (sealed, v1/v3, no ``prompt``) the whole input,
    streamed. Raises OSError, DataError (``ShellkeepError``) for an unreadable recording.
    """
    cast = vault.open_recording(Path(meta.cast))
    with open_tail_source(Path(meta.cast)) as mapped:
        if mapped is not None and prompt is not None and cast.header.version == 2:
            wanted = one_line(prompt)
            reader = TailReader(mapped, 2, cast.name)
            events: list[Event] = []
            for _, raw in reader.lines_holding(_INPUT_NEEDLES, len(mapped)):
                event = decode_line(raw)
                if event is None or event.code != "i":
                    continue
                events.append(event)
                if len(events) >= MAX_INPUT_EVENTS_BACK:
                    break
                if "\r" in event.data or "\n" in event.data:
                    lines = typed_lines(reversed(events))
                    if any(one_line(line.text) == wanted for line in lines[1:]):  # the first may be cut
                        return lines
            return typed_lines(reversed(events))
    return typed_lines(e for e in cast.events() if e.code == "i")


def _typed_after(typed: Sequence[TypedLine], prompt: str | None) -> TypedLine | None:
    """Return the last prompt-like line typed after the line that sent ``prompt`` (None: the first)."""
    start = 0
    if prompt is not None:
        wanted = one_line(prompt)
        sent = [i for i, line in enumerate(typed) if one_line(line.text) == wanted]
        if not sent:
            return None
        start = sent[-1] + 1
    for line in reversed(typed[start:]):
        text = line.text.strip()
        if len(text) > 1 and not text.startswith(("/", "!")):
            return line
    return None


def with_unanswered(meta: SessionMeta, exchanges: Sequence[Exchange]) -> SessionMeta:
    """Return ``meta`` with ``unanswered_prompt`` set from ``exchanges`` (or removed when answered).

    exchanges: the session's own exchanges, as stored, oldest first. Writes nothing.
    """
    extra = {k: v for k, v in meta.extra.items() if k != UNANSWERED_KEY}
    last = last_unanswered(exchanges)
    if last is not None:
        extra[UNANSWERED_KEY] = {"index": last.index, "time": last.time, "chars": len(last.prompt)}
    return dataclasses.replace(meta, extra=extra)


def find_unanswered(
    meta: SessionMeta, vault: Vault, own: Sequence[Exchange], later: Callable[[], Sequence[SessionMeta]] = tuple
) -> UnansweredPrompt | None:
    """Return ``meta``'s unanswered prompt, or None when it has none or it was answered since.

    own: the session's last exchanges as the resume read them (empty: read the stored ones).
    later: returns the sessions that resumed it, oldest first (``app.resume.session_chain``),
    called only when there is an unanswered prompt: one of them that sent it again and got an
    answer makes it answered. Unreadable later sessions are
    skipped. Raises KeyUnavailable when the stored exchanges are sealed and no key is had.
    """
    exchanges = list(own) if own else read_exchanges(meta, vault, 1)
    last = last_unanswered(exchanges)
    if last is None:
        return None
    wanted = one_line(last.prompt)
    for other in later():
        try:
            answered = any(one_line(e.prompt) == wanted and e.answer.strip() for e in read_exchanges(other, vault))
        except (OSError, DataError) as exc:
            log.debug("cannot read the exchanges of %s: %s", other.id, exc)
            continue
        if answered:
            return None
    index = meta.extra.get(UNANSWERED_KEY)
    stored = index.get("index") if isinstance(index, dict) else None
    return UnansweredPrompt(last.prompt, stored if isinstance(stored, int) else last.index, last.time)


def resend_block(block: str | None, prompt: str) -> str:
    """Return the re-injected ``block`` with the unanswered ``prompt`` as its last item.

    ``block`` None (no answered exchange to re-inject): the prompt alone, as typed.
    """
    if not block:
        return prompt
    return f"{block}\n{RESEND_INTRO}\nUser: {prompt.strip()}"


def banner_line(unanswered: UnansweredPrompt, decision: str | None = None) -> str:
    """Return the resume banner's line: ``prompt never answered: "…" (<decision>)``, shortened."""
    line = f'prompt never answered: "{unanswered.short()}"'
    return f"{line} ({decision})" if decision else line
