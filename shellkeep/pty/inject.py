"""Type a block of text into the child once its output has settled (resume's re-injection).

Knows bytes only: it watches the child's output for quiet, for bracketed paste mode
(``ESC[?2004h`` on, ``ESC[?2004l`` off, xterm ctlseqs "Bracketed Paste Mode") and, when the
agent's adapter says what its ready prompt looks like, for that prompt on screen; and hands
the relay the bytes to write, once.
"""

from __future__ import annotations

import re

PASTE_ON = b"\x1b[?2004h"
PASTE_OFF = b"\x1b[?2004l"
PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"
LINE_JOINER = b" | "
"""What a line break of the block becomes outside a paste (an Enter would submit each line)."""

MAX_WAIT_S = 30.0
"""Seconds after the start when the block is typed whatever the child did."""
PROMPT_MAX_WAIT_S = 60.0
"""``MAX_WAIT_S`` for a child whose ready prompt is awaited (Gemini CLI took 12 s to it with both cores busy)."""
PROMPT_WINDOW_BYTES = 16 << 10
"""How much of the latest output the ready prompt is looked for in (a TUI redraws its whole box)."""
UNSEEN_PROMPT_QUIET_S = 30.0
"""Seconds of quiet after which a child whose ready prompt never showed is taken as ready
(the fallback when an agent's version draws another prompt than its adapter knows). OpenCode
1.18.33, started without its database on a busy machine, was quiet 14.5 s between switching to
its alternate screen and drawing its input box."""
_ESCAPES = rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x1f\x7f]+"
"""ECMA-48 CSI, OSC and two-byte ESC sequences, and C0 controls: each becomes one space."""


class SettledInjection:
    """Type ``payload`` when the child has been quiet for ``settle_s`` after its first output.

    Inside bracketed paste (the child switched it on) the block is sent as one paste with
    its line breaks; otherwise its line breaks become ``LINE_JOINER``, so the block is still
    submitted once, as one line. Escape and other control characters in the payload are
    dropped (the paste could otherwise be ended early).

    Enter (when ``submit``) is a write of its own, sent once the child has taken the block
    in: it has drawn something after the block and then been quiet for ``enter_settle_s``,
    or ``enter_max_wait_s`` passed. An Enter in the same write as a paste is read by some
    TUIs as part of the paste (Claude Code shows ``[Pasted text #1 +4 lines]`` and waits).

    Args:
        payload: the text to type, UTF-8 bytes, lines separated by ``\\n``.
        settle_s: float seconds of no output that count as "ready for input".
        silent_s: float seconds after the start after which a child that printed nothing
            at all is taken as ready.
        max_wait_s: float seconds after which the payload is sent even if output never settles.
        submit: press Enter after the block.
        enter_settle_s: float seconds of quiet after the child reacted to the block before Enter.
        enter_max_wait_s: float seconds after the block when Enter is sent whatever the child did.
        wait_for_paste_mode: the child is ready only once it switched bracketed paste on (or
            ``max_wait_s`` passed): for agents whose input box treats fast typing as a paste.
        ready_prompt: a regular expression (Python ``re``, over UTF-8 text) for the agent's
            ready prompt on screen: the child is ready only once it drew text matching it (in
            the latest output, escape sequences and controls as one space, runs of spaces as
            one) and then was quiet for ``settle_s``; ``silent_s`` does not apply (a node
            program may print nothing for seconds on a busy machine). A child quiet for
            ``UNSEEN_PROMPT_QUIET_S`` after output without drawing it, or ``max_wait_s``
            after the start, counts as ready all the same. An
            agent that waits for answers to its terminal queries before it draws its prompt
            (Gemini CLI: about 1.2 s where the terminal answers none) is quiet meanwhile.
        unseen_prompt_quiet_s: the quiet after which a child that never drew ``ready_prompt``
            counts as ready (``UNSEEN_PROMPT_QUIET_S``); None: only ``max_wait_s`` (an agent that
            queries the terminal, then draws nothing for more than that on a busy machine:
            OpenCode, whose keys typed before its input box are lost).
        use_paste: send the block as a bracketed paste when the child switched it on; False:
            always typed as one line (an agent that takes an Enter soon after a paste it does
            not trust for a new line: Gemini CLI where the terminal did not answer its queries).

    The relay calls ``poll`` only once what it wrote before has reached the child, so the
    Enter's wait starts after the whole block was written.

    Times passed to ``on_output`` and ``poll`` are float seconds since the child started.
    """

    def __init__(
        self,
        payload: bytes,
        *,
        settle_s: float = 0.8,
        silent_s: float = 5.0,
        max_wait_s: float = MAX_WAIT_S,
        submit: bool = True,
        enter_settle_s: float = 0.3,
        enter_max_wait_s: float = 3.0,
        wait_for_paste_mode: bool = False,
        ready_prompt: str | None = None,
        use_paste: bool = True,
        unseen_prompt_quiet_s: float | None = UNSEEN_PROMPT_QUIET_S,
    ) -> None:
        self.payload = _printable(payload)
        self.settle_s = settle_s
        self.silent_s = silent_s
        self.max_wait_s = max_wait_s
        self.submit = submit
        self.enter_settle_s = enter_settle_s
        self.enter_max_wait_s = enter_max_wait_s
        self.wait_for_paste_mode = wait_for_paste_mode
        self.use_paste = use_paste
        self.unseen_prompt_quiet_s = unseen_prompt_quiet_s
        self.bracketed = False
        self.done = False
        self._typed_at: float | None = None  # when the block went out; Enter is still due
        self._seen_output = False
        self._last_output_at = 0.0
        self._tail = b""
        self._prompt = re.compile(ready_prompt.encode("utf-8")) if ready_prompt else None  # compiled only for a resume
        self._escapes = re.compile(_ESCAPES) if ready_prompt else None
        self._prompt_seen = False
        self._recent = b""

    @property
    def pending(self) -> bool:
        """Return whether the payload, or the Enter after it, is still to be sent."""
        return not self.done or self._typed_at is not None

    def on_output(self, raw: bytes, at: float) -> None:
        """Observe child output: the time of its last byte, and bracketed paste switches.

        A switch cut between two reads is still seen.
        """
        self._seen_output = True
        self._last_output_at = at
        window = self._tail + raw
        on = window.rfind(PASTE_ON)
        off = window.rfind(PASTE_OFF)
        if on != -1 or off != -1:
            self.bracketed = on > off
        self._tail = window[-(len(PASTE_ON) - 1) :]
        if self._prompt is not None and self._escapes is not None and not self._prompt_seen and not self.done:
            self._recent = (self._recent + raw)[-PROMPT_WINDOW_BYTES:]
            shown = b" ".join(self._escapes.sub(b" ", self._recent).split())  # runs of blanks as one space
            self._prompt_seen = self._prompt.search(shown) is not None

    def is_ready(self, at: float) -> bool:
        """Return whether the child counts as waiting for input at ``at``."""
        if at >= self.max_wait_s:
            return True
        if self.wait_for_paste_mode and not self.bracketed:
            return False
        if self._prompt is not None and not self._prompt_seen:  # a slow start prints nothing for a while
            quiet = self.unseen_prompt_quiet_s
            return quiet is not None and self._seen_output and at - self._last_output_at >= max(self.settle_s, quiet)
        if self._seen_output:
            return at - self._last_output_at >= self.settle_s
        return at >= self.silent_s

    def poll(self, at: float) -> bytes | None:
        """Return the bytes to write now: the block once the child is ready, then its Enter.

        None while nothing is due.
        """
        if self._typed_at is not None:
            return self._enter_due(at)
        if self.done or not self.is_ready(at):
            return None
        self.done = True
        if self.submit:
            self._typed_at = at
        if self.bracketed and self.use_paste:
            return PASTE_START + self.payload + PASTE_END
        return self.payload.replace(b"\n", LINE_JOINER)

    def _enter_due(self, at: float) -> bytes | None:
        typed_at = self._typed_at
        assert typed_at is not None
        reacted = self._last_output_at > typed_at
        if (reacted and at - self._last_output_at >= self.enter_settle_s) or at - typed_at >= self.enter_max_wait_s:
            self._typed_at = None
            return b"\r"
        return None


def _printable(payload: bytes) -> bytes:
    """Return ``payload`` with line breaks as ``\\n`` and other C0 controls and DEL removed (tabs kept)."""
    text = payload.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    keep = {0x09, 0x0A}
    return bytes(b for b in text if b >= 0x20 and b != 0x7F or b in keep)
