"""Turn relay reads into asciicast v2 lines on disk, on a writer thread behind a queue.

The relay only appends to a deque; the writer thread coalesces reads that arrive
close together, decodes UTF-8 incrementally (a character split across reads joins; invalid
bytes become U+FFFD), filters input, redacts, encodes and writes with a timed flush. A
failing disk suspends the recording, reports once through ``on_error`` and never reaches
the relay.

What reaches the writer is on disk within ``flush_interval_s``, except a possible secret
the redaction filter holds back: typed input waits, with no time limit, for the text that
decides it (or for ``close``, which writes it redacted as it stands); output held back is
written, redacted as it stands, once output has been quiet for ``OUTPUT_IDLE_RELEASE_S``,
unless a rule's starting literal (``ghp_``, ``password``...) begins it (``TextFilter.release``). A recording
cut by kill -9 while a filter holds loses that held text only (at most a few KiB, usually a
few characters).
"""

from __future__ import annotations

import codecs
import errno
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Header
from shellkeep.capture.activity import OutputActivity, RecentOutput, last_line, looks_like_prompt
from shellkeep.capture.input_filter import TerminalReplyFilter
from shellkeep.termsize import TermSize
from shellkeep.logs import get_logger

log = get_logger(__name__)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import BinaryIO, Protocol
else:
    Protocol = object  # at run time the protocol is documentation only

HIDDEN_INPUT_MARKER = "input hidden"
_FSYNC_INTERVAL_S = 1.0
# An unfinished escape sequence the terminal-reply filter holds back (a lone Esc key press)
# is written once input has been quiet this long. Typed text a redaction filter holds back (a
# possible secret still arriving) has no such clock: it waits for the text that decides it,
# or the end of the recording.
_REPLY_IDLE_FLUSH_S = 1.0
OUTPUT_IDLE_RELEASE_S = 1.0
"""Output a redaction filter holds back is offered to its ``release`` once output has been
quiet this long (what reached the screen reaches the disk within about a second)."""
_POLL_S = 0.01  # while events flow, the writer looks for more this often
# ...and while keys are typed it does its work this long after a key's echo: the echo is on
# the user's screen by then and the next key is still far off (a CPU-bound slice begun as a
# key arrived held up the relay, or the kernel's pty work on that core: ~0.6 ms, keystroke p99).
_AFTER_ECHO_S = 0.0002
_NEXT_ECHO_S = 0.003  # ...waiting this long at most for the next key's echo when none is due
_QUIET_S = 1.0  # ...and after this long without any, it sleeps until woken
ACTIVITY_INTERVAL_S = 1.0
"""``on_activity`` is called at most this often: while output flows, and once more when it has
been quiet this long (what the program left on screen and its pty's modes have settled)."""


class TextFilter(Protocol):
    """A streaming text filter (redaction): ``feed`` returns what is safe to write now."""

    @property
    def held(self) -> int:
        """Return the number of characters held back."""

    def feed(self, text: str) -> str:
        """Take more text; return the part that can be written now."""

    def flush(self) -> str:
        """Return everything still held back."""

    def release(self) -> str:
        """After a quiet spell (output only): return what may be written of the held text."""


@dataclass(frozen=True, slots=True)
class RecordingStats:
    """What a recording holds once closed.

    output_bytes / input_bytes: raw bytes relayed (input counts stored keystrokes only).
    last_time: float seconds since session start of the last event written.
    error: why recording was suspended, or None.
    """

    output_bytes: int
    input_bytes: int
    events: int
    last_time: float
    error: str | None
    hidden_input: bool


class Recorder:
    """A relay sink that writes an asciicast v2 recording; call ``close`` at the end.

    Args:
        out: the recording, opened for binary append.
        header: written first, its command and title redacted like the output.
        record_input: store ``i`` events for what the user types.
        flush_interval_s: longest time written events stay in the buffer.
        coalesce_s: output reads closer than this to the first of a run become one event.
        make_filter: builds one redaction filter per stream, or None; called with True for
            the output stream (drawn on a screen: the filter may keep its columns), False for
            input and the header.
        on_error: called once, from the writer thread, with a one-line reason.
        on_activity: called from the writer thread with what it saw of the output, at most
            once per ``ACTIVITY_INTERVAL_S`` (the session's outputs, ``capture.output``: the
            live status of ``shellkeep ps``, the waiting notifier); an error
            it raises stops these calls, never the recording.
        recent: keeps the latest output text (redacted) when given; each ``on_activity``
            report then carries its judgement (the adapter's hint, the last line). Read it
            elsewhere only after ``close``.
        on_events: called from the writer thread with the output, resize and marker events
            of each batch just encoded, as (code, redacted text, asciicast v2 line) tuples
            (the session's outputs, ``capture.output``: the live socket); never input. It must not block; an error it
            raises stops these calls, never the recording.
    """

    def __init__(
        self,
        out: BinaryIO,
        *,
        header: Header,
        record_input: bool = True,
        flush_interval_s: float = 0.25,
        coalesce_s: float = 0.005,
        make_filter: Callable[[bool], TextFilter] | None = None,
        on_error: Callable[[str], None] | None = None,
        on_activity: Callable[[OutputActivity], None] | None = None,
        recent: RecentOutput | None = None,
        on_events: Callable[[list[tuple[str, str, bytes]]], None] | None = None,
    ) -> None:
        self._out = out
        self._header = header
        self._record_input = record_input
        self._flush_interval_s = flush_interval_s
        self._coalesce_s = coalesce_s
        self._make_filter = make_filter
        self._on_error = on_error
        # A deque the relay appends to without waking the writer in the middle of a
        # keystroke's round trip: while events flow the writer polls every _POLL_S; while keys
        # are typed it then asks (_echo_wanted) to be woken through _wake once the next echo
        # is on the screen (once per poll: a wake per key cost the relay's p50 under load);
        # a writer asleep after a quiet spell is woken by any event.
        self._items: deque[tuple[float, str, bytes | str] | None] = deque()
        self._wake = threading.Event()
        self._asleep = False
        self._echo_due = False  # the relay's: input came and no output since
        self._typed = False  # input came since the writer last looked (set by the relay, cleared by the writer)
        self._echo_wanted = False  # the writer's: wake it at the next echo
        self._output_bytes = 0
        self._input_bytes = 0
        self._events = 0
        self._steps = 0  # the writer's progress, for close: its start-up steps and each batch
        self._last_time = 0.0
        self._error: str | None = None
        self._hidden_seen = False
        self._in_hidden = False
        self._replies = TerminalReplyFilter()  # used by the writer thread only
        self._on_activity = on_activity
        self._output_at: float | None = None  # the writer's wall clock when output last came
        self._output_mono = 0.0  # ...and its monotonic clock
        self._tail = ""  # the output text after its last newline
        self._recent = recent
        self._on_events = on_events
        self._published: list[tuple[str, str, bytes]] = []  # this batch's events for on_events
        self._thread = threading.Thread(target=self._run, name="shellkeep-writer", daemon=True)
        self._thread.start()

    # -- the relay's side: enqueue only -----------------------------------------------

    def _put(self, item: tuple[float, str, bytes | str] | None) -> None:
        self._items.append(item)
        if self._asleep:
            self._wake.set()

    def on_output(self, raw: bytes, at: float) -> None:
        """Enqueue child output (see ``Sink``); called once per read, so ``_put`` is inlined."""
        self._items.append((at, "o", raw))
        if self._asleep or (self._echo_due and self._echo_wanted):
            self._wake.set()
        self._echo_due = False

    def on_input(self, raw: bytes, at: float, hidden: bool) -> None:
        """Enqueue typed input unless input is not recorded; hidden input becomes a marker."""
        self._echo_due = self._typed = True
        if hidden:
            if not self._in_hidden:
                self._in_hidden = True
                self._put((at, "m", HIDDEN_INPUT_MARKER))
            return
        self._in_hidden = False
        if self._record_input:
            self._put((at, "i", raw))

    def on_resize(self, size: TermSize, at: float) -> None:
        """Enqueue a resize event ``COLSxROWS``."""
        self._put((at, "r", str(size)))

    def add_marker(self, label: str, at: float) -> None:
        """Enqueue a marker event with ``label``."""
        self._put((at, "m", label))

    def close(self, timeout_s: float = 10.0) -> RecordingStats:
        """Write what is queued, flush, fsync and close the file; return the stats.

        Blocks while the writer thread writes what is queued, however long that takes on a
        loaded machine; gives up (what it still holds is lost) only once it made no progress
        for ``timeout_s`` (a hung disk), so the program's exit never waits on it for ever.
        """
        self._put(None)
        self._wake.set()
        seen = -1
        while self._thread.is_alive() and self._progress() != seen:
            seen = self._progress()
            self._thread.join(timeout_s)
        return RecordingStats(
            output_bytes=self._output_bytes,
            input_bytes=self._input_bytes,
            events=self._events,
            last_time=self._last_time,
            error=self._error,
            hidden_input=self._hidden_seen,
        )

    def _progress(self) -> int:
        """Return a number the writer thread raises as it works (read without a lock: a hint)."""
        return self._steps + self._events

    # -- the writer thread ------------------------------------------------------------

    def _run(self) -> None:
        out_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        in_decoder = codecs.getincrementaldecoder("utf-8")("replace")
        out_filter = self._new_filter(screen=True)
        in_filter = self._new_filter()
        last_flush = time.monotonic()
        last_fsync = last_flush
        dirty = False
        closing = False
        last_item = last_flush
        last_output = last_flush  # monotonic time output last came
        release_due = False  # the output filter holds text that a quiet second may release
        activity_at = last_flush - ACTIVITY_INTERVAL_S  # monotonic time of the last on_activity
        activity_due = False  # a report is owed (see _report_activity)
        self._steps += 1  # the redaction rules are built
        try:
            self._out.write(encode_header(self._redacted_header()))
            self._out.flush()  # a sealed recording loads its key here
        except Exception as exc:  # noqa: BLE001
            self._suspend(exc)
        self._steps += 1
        while not closing:
            self._steps += 1
            # When the writer must wake even if nothing arrives (None: only when woken).
            deadline = self._deadline(
                last_flush + self._flush_interval_s if dirty else None,
                last_item + _REPLY_IDLE_FLUSH_S if self._replies.held else None,
                last_output + OUTPUT_IDLE_RELEASE_S if release_due else None,
                max(activity_at, self._output_mono) + ACTIVITY_INTERVAL_S if activity_due else None,
            )
            self._wait_for_items(time.monotonic() - last_item, deadline)
            batch, closing = self._take_batch()
            if batch:
                last_item = time.monotonic()
                if any(item[1] == "o" for item in batch):
                    last_output = last_item
            if self._error is not None:
                if self._on_events is not None and batch and (self._make_filter is None or out_filter is not None):
                    self._publish_unwritten(batch, out_decoder, in_decoder, out_filter, in_filter)
                if self._on_activity is not None:
                    activity_at, activity_due = self._report_activity(batch, activity_at, activity_due)
                continue  # suspended: keep draining so memory stays flat
            try:
                chunks = self._encode(batch, out_decoder, in_decoder, out_filter, in_filter)
                now = time.monotonic()
                timer_due = now - last_flush >= self._flush_interval_s
                if out_filter is not None and last_output == last_item and batch:
                    release_due = out_filter.held > 0
                if closing:
                    chunks.extend(self._flush_filters(out_decoder, in_decoder, out_filter, in_filter))
                else:
                    if self._replies.held and now - last_item >= _REPLY_IDLE_FLUSH_S:
                        chunks.extend(self._flush_replies(in_filter))
                    if release_due and now - last_output >= OUTPUT_IDLE_RELEASE_S:
                        release_due = False  # until output comes again: a token format's hold stays
                        chunks.extend(self._release_output(out_filter))  # type: ignore[arg-type]
                if self._published:
                    self._hand_on_events()
                if chunks:
                    self._out.write(b"".join(chunks))
                    dirty = True
                if dirty and (closing or timer_due):
                    self._out.flush()
                    last_flush = now
                    dirty = False
                    if closing or now - last_fsync >= _FSYNC_INTERVAL_S:
                        _fsync(self._out.fileno())
                        last_fsync = now
            except Exception as exc:  # noqa: BLE001 - nothing here may reach the relay
                self._suspend(exc)
            if self._on_activity is not None and not closing:
                activity_at, activity_due = self._report_activity(batch, activity_at, activity_due)
        try:
            self._out.close()
        except Exception as exc:  # noqa: BLE001
            if self._error is None:
                self._suspend(exc)

    @staticmethod
    def _deadline(*due: float | None) -> float | None:
        """Return the earliest of the monotonic times ``due`` that are set, or None."""
        times = [t for t in due if t is not None]
        return min(times) if times else None

    def _take_batch(self) -> tuple[list[tuple[float, str, bytes | str]], bool]:
        """Take every queued item; return them and whether ``close`` asked to end (its None came)."""
        batch: list[tuple[float, str, bytes | str]] = []
        items = self._items
        while items:
            item = items.popleft()
            if item is None:
                return batch, True
            batch.append(item)
        return batch, False

    def _publish_unwritten(
        self,
        batch: list[tuple[float, str, bytes | str]],
        out_decoder: codecs.IncrementalDecoder,
        in_decoder: codecs.IncrementalDecoder,
        out_filter: TextFilter | None,
        in_filter: TextFilter | None,
    ) -> None:
        """While suspended by the disk (not by redaction): encode ``batch`` for the viewers
        only, so they still see the session. The stats stay those of what was written."""
        written = (self._output_bytes, self._input_bytes, self._events, self._last_time)
        try:
            self._encode(batch, out_decoder, in_decoder, out_filter, in_filter)
        except Exception:  # noqa: BLE001
            self._published.clear()
        self._output_bytes, self._input_bytes, self._events, self._last_time = written
        self._hand_on_events()

    def _report_activity(self, batch: list[tuple[float, str, bytes | str]], reported_at: float, due: bool) -> tuple[float, bool]:
        """Call ``on_activity`` if a report is owed and the last one is a second old.

        A report is owed once output comes, and stays owed until one is made after the output
        has been quiet for ``ACTIVITY_INTERVAL_S``. Returns (monotonic time of the last report,
        whether one is still owed).
        """
        now = time.monotonic()
        if any(item[1] == "o" for item in batch):
            self._output_at = time.time()
            self._output_mono = now
            due = True
        if not due or now - reported_at < ACTIVITY_INTERVAL_S:
            return reported_at, due
        try:
            hint, line = (None, "") if self._recent is None else self._recent.judge()
            report = OutputActivity(self._output_at, self._output_bytes, looks_like_prompt(self._tail), hint, line)
            self._on_activity(report)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - the live status is a hint; recording goes on
            log.info("live status stopped for this session: %s", exc)  # ps falls back to the recording's mtime
            self._on_activity = None
        return now, now - self._output_mono < ACTIVITY_INTERVAL_S

    def _hand_on_events(self) -> None:
        """Give this batch's published events to ``on_events``; an error stops these calls."""
        events, self._published = self._published, []
        if self._on_events is None or not events:
            return
        try:
            self._on_events(events)
        except Exception as exc:  # noqa: BLE001 - viewers are extras; recording goes on
            log.info("live events stopped for this session: %s", exc)
            self._on_events = None

    def _wait_for_items(self, quiet_s: float, deadline: float | None) -> None:
        """Sleep until there may be items: poll while busy, sleep on ``_wake`` when quiet.

        While busy and keys are being typed, the poll goes on until the next key's echo is on
        the screen (one poll longer at most while an echo is due, ``_NEXT_ECHO_S`` when the
        last key's echo came already) and the work follows ``_AFTER_ECHO_S`` later, in the
        pause before the next key.
        deadline: monotonic time of a pending flush (dirty buffer or a held lone Esc), or
        None: then a quiet writer sleeps until the relay wakes it, using no CPU.
        """
        if self._items:
            return
        if quiet_s < _QUIET_S:
            self._wake.wait(_POLL_S)
            if self._typed:  # keys are being typed: work just after the next echo
                self._typed = False
                self._echo_wanted = True
                # A key's echo still due: wait for it (one poll more at most). Its echo came
                # already: only a key typed right after (fast typing, a key repeat) is waited
                # for, briefly; else the work is done now (viewers wait for it).
                woken = self._wake.wait(_POLL_S if self._echo_due else _NEXT_ECHO_S)
                self._echo_wanted = False
                if woken:
                    time.sleep(_AFTER_ECHO_S)
            self._wake.clear()
            return
        self._asleep = True
        if not self._items:  # checked after _asleep is set: a put now sets _wake
            self._wake.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        self._asleep = False
        self._wake.clear()
        if self._items and self._items[-1] is not None:
            time.sleep(_POLL_S / 5)  # let the relay finish the round trip that woke us

    def _redacted_header(self) -> Header:
        def redact(text: str | None) -> str | None:
            if text is None:
                return None
            text_filter = self._new_filter()
            return text if text_filter is None else text_filter.feed(text) + text_filter.flush()

        def redact_command(text: str | None) -> str | None:
            # Redact argument by argument: shlex's quoting of an argument that holds a
            # quote would otherwise hide a ``password='...'`` value from the rules.
            import shlex

            if text is None:
                return None
            try:
                args = shlex.split(text)
            except ValueError:
                return redact(text)
            return shlex.join(redact(arg) or "" for arg in args)

        import dataclasses

        return dataclasses.replace(
            self._header, command=redact_command(self._header.command), title=redact(self._header.title)
        )

    def _new_filter(self, *, screen: bool = False) -> TextFilter | None:
        if self._make_filter is None:
            return None
        try:
            return self._make_filter(screen)
        except Exception as exc:  # noqa: BLE001
            log.warning("redaction disabled for this session: %s", exc)
            self._suspend(exc)
            return None

    def _suspend(self, exc: BaseException) -> None:
        if self._error is not None:
            return
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            reason = "disk full"
        elif isinstance(exc, OSError) and exc.strerror:
            reason = exc.strerror[:1].lower() + exc.strerror[1:]  # keep paths and commands as they are
        else:
            reason = f"{type(exc).__name__}: {exc}"
            log.exception("recording writer failed")
        self._error = reason
        if self._on_error is not None:
            try:
                self._on_error(f"recording suspended: {reason}; the program keeps running")
            except Exception:  # noqa: BLE001
                pass

    def _encode(
        self,
        batch: list[tuple[float, str, bytes | str]],
        out_decoder: codecs.IncrementalDecoder,
        in_decoder: codecs.IncrementalDecoder,
        out_filter: TextFilter | None,
        in_filter: TextFilter | None,
    ) -> list[bytes]:
        chunks: list[bytes] = []
        i = 0
        n = len(batch)
        while i < n:
            at, code, payload = batch[i]
            i += 1
            if code == "o":
                assert isinstance(payload, bytes)
                if i < n and batch[i][1] == "o":
                    parts = [payload]
                    limit = at + self._coalesce_s
                    while i < n and batch[i][1] == "o" and batch[i][0] <= limit:
                        parts.append(batch[i][2])  # type: ignore[arg-type]
                        i += 1
                    payload = b"".join(parts)
                self._output_bytes += len(payload)
                text = out_decoder.decode(payload)
                if out_filter is not None:
                    text = out_filter.feed(text)
                if self._on_activity is not None:
                    self._tail = last_line(self._tail, text)
                    if self._recent is not None:
                        self._recent.feed(text)
            elif code == "i":
                assert isinstance(payload, bytes)
                text = self._replies.feed(in_decoder.decode(payload))
                if in_filter is not None:
                    text = in_filter.feed(text)
                self._input_bytes += len(text.encode("utf-8"))
            else:
                assert isinstance(payload, str)
                text = payload
                if code == "m" and payload == HIDDEN_INPUT_MARKER:
                    self._hidden_seen = True
            if text or code in "rm":
                line = encode_event(at, code, text)
                chunks.append(line)
                self._events += 1
                self._last_time = at
                if self._on_events is not None and code != "i":
                    self._published.append((code, text, line))
        return chunks

    def _flush_filters(
        self,
        out_decoder: codecs.IncrementalDecoder,
        in_decoder: codecs.IncrementalDecoder,
        out_filter: TextFilter | None,
        in_filter: TextFilter | None,
    ) -> list[bytes]:
        """At the end: write out the undecoded bytes and the text the filters held back, redacted."""
        chunks: list[bytes] = []
        for code, decoder, text_filter in (("o", out_decoder, out_filter), ("i", in_decoder, in_filter)):
            text = decoder.decode(b"", final=True)
            if code == "i":
                text = self._replies.feed(text) + self._replies.flush()
            if text_filter is not None:
                text = text_filter.feed(text) + text_filter.flush() if text else text_filter.flush()
            if text:
                line = encode_event(self._last_time, code, text)
                chunks.append(line)
                self._events += 1
                if code == "o":
                    if self._on_activity is not None:
                        self._tail = last_line(self._tail, text)
                        if self._recent is not None:
                            self._recent.feed(text)
                    if self._on_events is not None:
                        self._published.append((code, text, line))
        return chunks

    def _release_output(self, out_filter: TextFilter) -> list[bytes]:
        """After output has been quiet: write what the output's redaction filter releases of
        the text it holds (see ``TextFilter.release``), for the disk and the viewers."""
        text = out_filter.release()
        if not text:
            return []
        if self._on_activity is not None:
            self._tail = last_line(self._tail, text)
            if self._recent is not None:
                self._recent.feed(text)
        line = encode_event(self._last_time, "o", text)
        self._events += 1
        if self._on_events is not None:
            self._published.append(("o", text, line))
        return [line]

    def _flush_replies(self, in_filter: TextFilter | None) -> list[bytes]:
        """After a quiet spell: pass the unfinished escape sequence held as a possible terminal
        reply (a lone Esc) on to the input's redaction filter, which still holds a possible secret."""
        text = self._replies.flush()
        if in_filter is not None:
            text = in_filter.feed(text)
        if not text:
            return []
        self._events += 1
        return [encode_event(self._last_time, "i", text)]


def _fsync(fd: int) -> None:
    """fsync ``fd``; an output that cannot be synced (``/dev/null`` of ``record.detail =
    "metadata"``, a pipe: EINVAL) has nothing to sync. Other errors raise OSError."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
