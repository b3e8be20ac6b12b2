"""``shellkeep watch``'s stream (``app.watch._Stream``) over a real Unix socket pair.

The viewer reads the header and the backlog with blocking reads of up to 64 KiB; live events
the recorder published just after the backlog may come in the same read. Those must be drawn
at once: the session may stay quiet for good (a prompt waiting), so no later read wakes the
viewer. (Under load, CI showed a blank viewer for 120 s this way.)
"""

from __future__ import annotations

import json
import socket

from shellkeep.app.watch import _Stream
from shellkeep.asciicast.encoder import encode_event


def _header(backlog: int) -> bytes:
    header = {"version": 2, "width": 40, "height": 5, "shellkeep": {"session": "s1", "backlog": backlog}}
    return (json.dumps(header) + "\n").encode()


def test_live_events_read_with_the_backlog_are_drawn_at_once() -> None:
    viewer, recorder = socket.socketpair()
    with viewer, recorder:
        # One send: the viewer's first recv takes the header, the backlog and the live events.
        recorder.sendall(_header(1) + encode_event(0.1, "o", "$ ") + encode_event(0.2, "o", "echo hi\r\nhi\r\n$ "))
        stream = _Stream(viewer, "s1")
        assert stream.terminal.text_lines()[:3] == ["$ echo hi", "hi", "$"]
        assert not stream.pump()  # nothing more came: nothing more to draw
        recorder.sendall(encode_event(0.3, "o", "later"))
        assert stream.pump()
        assert stream.terminal.text_lines()[2] == "$ later"


def test_an_end_line_read_with_the_backlog_ends_the_stream() -> None:
    viewer, recorder = socket.socketpair()
    with viewer, recorder:
        end = (json.dumps({"end": {"status": "finished", "exit_code": 0}}) + "\n").encode()
        recorder.sendall(_header(0) + encode_event(0.1, "o", "bye\r\n") + end)
        stream = _Stream(viewer, "s1")
        assert stream.terminal.text_lines()[0] == "bye"
        assert stream.end is not None and stream.end.exit_code == 0
