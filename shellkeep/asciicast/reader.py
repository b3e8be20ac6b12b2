"""Read asciicast v1, v2 and v3 recordings into the neutral model, lazily.

Formats: asciicast v1 (one JSON document, ``stdout`` frames of ``[delay, data]``),
v2 (docs.asciinema.org/manual/asciicast/v2: header line, ``[time, code, data]`` lines with
absolute times) and v3 (docs.asciinema.org/manual/asciicast/v3: ``term`` object in the
header, intervals between events, ``#`` comment lines, ``x`` exit events).

A cut *last* line (not valid JSON: a recorder killed mid-write) ends the stream; a
malformed line elsewhere, a negative, infinite, NaN or absurd time (past ``MAX_TIME_S``) or
a bad resize anywhere raises ``DataError``. A lone surrogate in event data (``"\\ud800"``,
valid JSON but no Unicode text) becomes U+FFFD, so no encoder fails on it later.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from shellkeep.asciicast.model import Event, Header, TermSize
from shellkeep.errors import DataError

_CODES = frozenset("oirmx")

MAX_TIME_S = 1e10
"""The latest event time taken, in seconds (about 317 years); later ones mark a damaged file."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Cast:
    """An opened recording: its header and a way to iterate its events.

    name: where it came from, for messages (usually the file's path).
    opener: returns a new binary stream of plain asciicast bytes from the start; ``events()``
    calls it once per iteration, so a Cast can be iterated more than once.
    """

    name: str
    header: Header
    opener: Callable[[], IO[bytes]]
    preloaded: tuple[Event, ...] | None = None  # v1 is one JSON document, parsed at open

    def events(self) -> Iterator[Event]:
        """Yield the events in order; ``time`` is float seconds since session start.

        Raises DataError on a malformed line that is not the last one.
        """
        if self.preloaded is not None:
            yield from self.preloaded
            return
        with self.opener() as fh:
            yield from _iter_events(fh, self.header.version, self.name)


def read_cast(opener: Callable[[], IO[bytes]], name: str) -> Cast:
    """Parse the header of a recording of any supported version from a byte stream.

    opener: returns a new binary stream of plain (decrypted, decompressed) asciicast bytes
    positioned at the start; it is called once here and again by each ``Cast.events()``.
    Opening files (plain, zstd, sealed) is ``vault.recording``'s job.
    Raises DataError when the stream is empty, not asciicast, or of an unknown version.
    """
    with opener() as fh:
        first = fh.readline()
        if not first.strip():
            raise DataError(f"{name} is empty or has no asciicast header; it is not a recording")
        try:
            obj = json.loads(first)
        except (ValueError, UnicodeDecodeError):
            obj = None
        if obj is None or (isinstance(obj, dict) and "version" not in obj) or (isinstance(obj, dict) and obj.get("version") == 1):
            # asciicast v1 is one JSON document spread over many lines.
            return _open_v1(name, first + fh.read(), opener)
    if not isinstance(obj, dict):
        raise DataError(f"{name}: the first line is not an asciicast header object")
    version = obj.get("version")
    if version == 2:
        return Cast(name, _header_v2(obj, name), opener)
    if version == 3:
        return Cast(name, _header_v3(obj, name), opener)
    raise DataError(f"{name}: unsupported asciicast version {version!r}; shellkeep reads versions 1, 2 and 3")


def _size(width: object, height: object, path: str) -> TermSize:
    if not isinstance(width, int) or not isinstance(height, int) or width <= 0 or height <= 0:
        raise DataError(f"{path}: the header has no valid terminal size ({width!r}x{height!r})")
    return TermSize(width, height)


def _env(obj: object) -> dict[str, str | None]:
    if not isinstance(obj, dict):
        return {}
    return {str(k): (v if isinstance(v, str) else None) for k, v in obj.items()}


def _opt_str(value: object) -> str | None:
    return _text(value) if isinstance(value, str) else None


def _opt_float(value: object) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None  # type: ignore[arg-type]


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_KNOWN_V2 = {"version", "width", "height", "timestamp", "command", "title", "idle_time_limit", "env"}


def _header_v2(obj: dict[str, object], path: str) -> Header:
    return Header(
        size=_size(obj.get("width"), obj.get("height"), path),
        version=2,
        timestamp=_opt_int(obj.get("timestamp")),
        command=_opt_str(obj.get("command")),
        title=_opt_str(obj.get("title")),
        idle_time_limit=_opt_float(obj.get("idle_time_limit")),
        env=_env(obj.get("env")),
        extra={k: v for k, v in obj.items() if k not in _KNOWN_V2},
    )


def _header_v3(obj: dict[str, object], path: str) -> Header:
    term = obj.get("term")
    if not isinstance(term, dict):
        raise DataError(f"{path}: the v3 header has no 'term' object")
    extra = {k: v for k, v in obj.items() if k not in _KNOWN_V2 and k != "term"}
    for key in ("type", "version", "theme"):
        if key in term:
            extra[f"term_{key}"] = term[key]
    return Header(
        size=_size(term.get("cols"), term.get("rows"), path),
        version=3,
        timestamp=_opt_int(obj.get("timestamp")),
        command=_opt_str(obj.get("command")),
        title=_opt_str(obj.get("title")),
        idle_time_limit=_opt_float(obj.get("idle_time_limit")),
        env=_env(obj.get("env")),
        extra=extra,
    )


def _open_v1(path: str, raw: bytes, opener: Callable[[], IO[bytes]]) -> Cast:
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not an asciicast recording (not valid JSON: {exc})") from exc
    if not isinstance(obj, dict) or obj.get("version") != 1:
        raise DataError(f"{path}: not an asciicast recording (no version 1, 2 or 3 header)")
    frames = obj.get("stdout")
    if not isinstance(frames, list):
        raise DataError(f"{path}: the v1 recording has no 'stdout' frame list")
    events: list[Event] = []
    now = 0.0
    for n, frame in enumerate(frames, start=1):
        if not (isinstance(frame, list) and len(frame) == 2 and isinstance(frame[1], str)):
            raise DataError(f"{path}: v1 frame {n} is not [delay, data]")
        delay = frame[0]
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or not 0 <= delay <= MAX_TIME_S:
            raise DataError(f"{path}: v1 frame {n} has an invalid delay {delay!r}")
        now += float(delay)
        if now > MAX_TIME_S:
            raise DataError(f"{path}: v1 frame {n} is at {now!r} s, past any real recording")
        events.append(Event(now, "o", _text(frame[1])))
    header = Header(
        size=_size(obj.get("width"), obj.get("height"), path),
        version=1,
        timestamp=None,
        command=_opt_str(obj.get("command")),
        title=_opt_str(obj.get("title")),
        env=_env(obj.get("env")),
    )
    return Cast(path, header, opener, tuple(events))


def _parse_event(line: bytes, version: int, prev_time: float) -> Event:
    """Parse one event line; raises ValueError on anything malformed."""
    obj = json.loads(line)
    if not isinstance(obj, list) or len(obj) != 3:
        raise ValueError("not a [time, code, data] array")
    t, code, data = obj
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not 0 <= t <= MAX_TIME_S:  # also nan, inf
        raise ValueError(f"invalid time {t!r}")
    if not isinstance(code, str) or not isinstance(data, str):
        raise ValueError("code and data must be strings")
    if code == "r":
        TermSize.parse(data)
    time = prev_time + float(t) if version == 3 else float(t)
    if time > MAX_TIME_S:
        raise ValueError(f"invalid time {time!r}")
    if b"\\u" in line:  # a surrogate can only come from a \u escape
        data = _text(data)
    return Event(time, code, data)


def _text(data: str) -> str:
    """Return ``data`` with each lone surrogate replaced by U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", data)


def _iter_events(fh: IO[bytes], version: int, path: str) -> Iterator[Event]:
    fh.readline()  # header
    prev_time = 0.0
    pending: tuple[int, bytes] | None = None
    lineno = 1
    for raw in fh:
        lineno += 1
        stripped = raw.strip()
        if not stripped or (version == 3 and stripped.startswith(b"#")):
            continue
        if pending is not None:
            event = _parse_or_raise(pending, version, prev_time, path)
            prev_time = event.time
            yield event
        pending = (lineno, stripped if raw.endswith(b"\n") else raw)
    if pending is not None:
        try:
            json.loads(pending[1])
        except (ValueError, UnicodeDecodeError):
            return  # a cut last line is the end of the recording, not an error
        yield _parse_or_raise(pending, version, prev_time, path)


def _parse_or_raise(pending: tuple[int, bytes], version: int, prev_time: float, path: str) -> Event:
    lineno, line = pending
    try:
        return _parse_event(line, version, prev_time)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: line {lineno} is not a valid asciicast v{version} event ({exc})") from exc
