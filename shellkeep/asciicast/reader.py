"""Read asciicast v1, v2 and v3 recordings into the neutral model, lazily.

Formats: asciicast v1 (one JSON document, ``stdout`` frames of ``[delay, data]``),
v2 (docs.asciinema.org/manual/asciicast/v2: header line, ``[time, code, data]`` lines with
absolute times) and v3 (docs.asciinema.org/manual/asciicast/v3: ``term`` object in the
header, intervals between events, ``#`` comment lines, ``x`` exit events).

A cut *last* line (not valid JSON: a recorder killed mid-write) ends the stream; a
malformed line elsewhere, a negative time or a bad resize anywhere raises ``DataError``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from shellkeep.asciicast.model import Event, Header, TermSize
from shellkeep.errors import DataError

_CODES = frozenset("oirmx")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True, slots=True)
class Cast:
    """An opened recording: its header and a way to iterate its events.

    ``events()`` opens the file again on each call, so it can be iterated more than once.
    """

    path: Path
    header: Header
    preloaded: tuple[Event, ...] | None = None  # v1 is one JSON document, parsed at open

    def events(self) -> Iterator[Event]:
        """Yield the events in order; ``time`` is float seconds since session start.

        Raises DataError on a malformed line that is not the last one.
        """
        if self.preloaded is not None:
            yield from self.preloaded
            return
        with open_binary(self.path) as fh:
            yield from _iter_events(fh, self.header.version, self.path)


def open_binary(path: Path) -> IO[bytes]:
    """Open a recording for binary reading, decrypting and decompressing zstd transparently.

    An encrypted file (shellkeep's sealed-record format, ``store/crypto.py``) is decrypted
    with its key from the key stores; a cut last record ends the stream. What it holds, or
    the plain file, is then decompressed when it is zstd. The caller always reads plain
    asciicast bytes.
    Raises DataError when the file is compressed and no zstd decoder is installed, or an
    encrypted record is damaged (also while reading); ``KeyUnavailable`` (exit 1) when the
    file's key is in no key store.
    """
    fh: IO[bytes] = open(path, "rb")  # noqa: SIM115 - returned to the caller
    magic = fh.read(8)
    fh.seek(0)
    if magic == b"\x89SKE\r\n\x1a\n":  # encrypted at rest (store/crypto.py MAGIC)
        from shellkeep.store.crypto import open_decrypting

        fh = open_decrypting(fh, str(path))
        try:
            magic = fh.peek(4)[:4]
        except BaseException:
            fh.close()
            raise
    if magic[:4] != _ZSTD_MAGIC:
        return fh
    try:
        import zstandard
    except ImportError as exc:  # pragma: no cover - zstandard is a dependency
        fh.close()
        raise DataError(f"{path} is zstd-compressed and zstandard is not installed; pip install zstandard") from exc
    reader = zstandard.ZstdDecompressor().stream_reader(fh, closefd=True)
    return io.BufferedReader(reader)


def open_cast(path: Path) -> Cast:
    """Open a recording of any supported version and parse its header.

    Raises DataError when the file is empty, not asciicast, or of an unknown version;
    FileNotFoundError when it does not exist.
    """
    with open_binary(path) as fh:
        first = fh.readline()
        if not first.strip():
            raise DataError(f"{path} is empty or has no asciicast header; it is not a recording")
        try:
            obj = json.loads(first)
        except (ValueError, UnicodeDecodeError):
            obj = None
        if obj is None or (isinstance(obj, dict) and "version" not in obj):
            # asciicast v1 is one JSON document spread over many lines.
            fh.seek(0)
            return _open_v1(path, fh.read())
    if not isinstance(obj, dict):
        raise DataError(f"{path}: the first line is not an asciicast header object")
    version = obj.get("version")
    if version == 1:
        with open_binary(path) as fh:
            return _open_v1(path, fh.read())
    if version == 2:
        return Cast(path, _header_v2(obj, path))
    if version == 3:
        return Cast(path, _header_v3(obj, path))
    raise DataError(f"{path}: unsupported asciicast version {version!r}; shellkeep reads versions 1, 2 and 3")


def read_events(path: Path) -> Iterator[Event]:
    """Yield the events of a recording of any supported version (see ``Cast.events``)."""
    return open_cast(path).events()


def _size(width: object, height: object, path: Path) -> TermSize:
    if not isinstance(width, int) or not isinstance(height, int) or width <= 0 or height <= 0:
        raise DataError(f"{path}: the header has no valid terminal size ({width!r}x{height!r})")
    return TermSize(width, height)


def _env(obj: object) -> dict[str, str | None]:
    if not isinstance(obj, dict):
        return {}
    return {str(k): (v if isinstance(v, str) else None) for k, v in obj.items()}


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _opt_float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _opt_int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_KNOWN_V2 = {"version", "width", "height", "timestamp", "command", "title", "idle_time_limit", "env"}


def _header_v2(obj: dict[str, object], path: Path) -> Header:
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


def _header_v3(obj: dict[str, object], path: Path) -> Header:
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


def _open_v1(path: Path, raw: bytes) -> Cast:
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
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
            raise DataError(f"{path}: v1 frame {n} has an invalid delay {delay!r}")
        now += float(delay)
        events.append(Event(now, "o", frame[1]))
    header = Header(
        size=_size(obj.get("width"), obj.get("height"), path),
        version=1,
        timestamp=None,
        command=_opt_str(obj.get("command")),
        title=_opt_str(obj.get("title")),
        env=_env(obj.get("env")),
    )
    return Cast(path, header, tuple(events))


def _parse_event(line: bytes, version: int, prev_time: float) -> Event:
    """Parse one event line; raises ValueError on anything malformed."""
    obj = json.loads(line)
    if not isinstance(obj, list) or len(obj) != 3:
        raise ValueError("not a [time, code, data] array")
    t, code, data = obj
    if not isinstance(t, (int, float)) or isinstance(t, bool) or t < 0:
        raise ValueError(f"invalid time {t!r}")
    if not isinstance(code, str) or not isinstance(data, str):
        raise ValueError("code and data must be strings")
    if code == "r":
        TermSize.parse(data)
    time = prev_time + float(t) if version == 3 else float(t)
    return Event(time, code, data)


def _iter_events(fh: IO[bytes], version: int, path: Path) -> Iterator[Event]:
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


def _parse_or_raise(pending: tuple[int, bytes], version: int, prev_time: float, path: Path) -> Event:
    lineno, line = pending
    try:
        return _parse_event(line, version, prev_time)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: line {lineno} is not a valid asciicast v{version} event ({exc})") from exc
