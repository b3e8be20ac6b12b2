"""Encode a header and events as asciicast v2 lines (bytes); no I/O here.

Format: asciicast v2 (docs.asciinema.org/manual/asciicast/v2): a JSON header object on the
first line, then one ``[time, code, data]`` JSON array per line.
"""

from __future__ import annotations

import json

from shellkeep.asciicast.model import Header

# ensure_ascii=False keeps UTF-8 text compact; json escapes every control character,
# NUL included, so each line stays valid JSON.
_encode_str = json.JSONEncoder(ensure_ascii=False).encode


def encode_header(header: Header) -> bytes:
    """Return the v2 header line of ``header``, newline included."""
    obj: dict[str, object] = {
        "version": 2,
        "width": header.size.cols,
        "height": header.size.rows,
    }
    if header.timestamp is not None:
        obj["timestamp"] = header.timestamp
    if header.idle_time_limit is not None:
        obj["idle_time_limit"] = header.idle_time_limit
    if header.command is not None:
        obj["command"] = header.command
    if header.title is not None:
        obj["title"] = header.title
    if header.env:
        obj["env"] = header.env
    for key, value in header.extra.items():
        obj.setdefault(key, value)
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def encode_event(time: float, code: str, data: str) -> bytes:
    """Return one v2 event line, newline included.

    time: float seconds since session start, written with microsecond precision.
    """
    return f"[{time:.6f}, {_encode_str(code)}, {_encode_str(data)}]\n".encode("utf-8", "replace")
