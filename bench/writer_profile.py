"""Measure the recording path in-process, stage by stage, without a pty.

Usage: .venv/bin/python bench/writer_profile.py [--mb 40] [--chunk 4095] [--text colour] [--cprofile]

Feeds base64 text (what the throughput benchmark relays; ``--text colour``: escape-heavy
``ls --color``/``grep --color`` output of the standard library, no secrets) in relay-sized reads through:
  decode    the writer's incremental UTF-8 decoder
  redact    the built-in StreamRedactor (one feed per event)
  encode    asciicast v2 event encoding (encode_event)
  recorder  the whole Recorder: on_output calls as fast as a relay could make them, then close
and prints MB/s per stage and chunk size, so a change to the writer shows what it buys.
Then ``keys``: typed keys and their echoes, one character an event (lines of 50 letters), through
an input and an output redaction filter, in µs of thread CPU per event (the writer's work while
a user types; a hot loop: a real writer, woken every 10 ms, pays about 4x for cold caches).
The recorder stage writes to a temporary file that is removed afterwards.
"""

from __future__ import annotations

import argparse
import base64
import codecs
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _text(mb: int) -> bytes:
    raw = base64.encodebytes(os.urandom(mb * 1024 * 1024 * 3 // 4))  # 76-column lines
    return raw.replace(b"\n", b"\r\n")  # as the pty delivers it (ONLCR)


def _colour_text(mb: int) -> bytes:
    """Return escape-heavy output without secrets, from the real tools: ``ls --color=always -laR``
    and ``grep --color=always -rn`` over Python's standard library, repeated up to ``mb`` MiB."""
    import subprocess
    import sysconfig

    stdlib = sysconfig.get_paths()["stdlib"]
    runs = [
        ["ls", "--color=always", "-laR", stdlib],
        ["grep", "--color=always", "-rn", "-E", "import|def |return|self", stdlib, "--include=*.py"],
    ]
    parts = [subprocess.run(cmd, capture_output=True, check=False).stdout[: mb * 1024 * 1024 // 2] for cmd in runs]
    one = b"".join(parts).replace(b"\n", b"\r\n")  # as the pty delivers it (ONLCR)
    return (one * (mb * 1024 * 1024 // max(1, len(one)) + 1))[: mb * 1024 * 1024]


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _time(fn: Callable[[], object]) -> tuple[float, float]:
    """Return (wall seconds, process CPU seconds) of ``fn()``."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=40)
    parser.add_argument("--chunk", type=int, action="append", help="bytes per read/event (repeatable)")
    parser.add_argument("--text", choices=("base64", "colour"), default="base64", help="what to feed")
    parser.add_argument("--cprofile", action="store_true", help="print a cProfile of the redact stage")
    args = parser.parse_args()
    sizes = args.chunk or [4095, 65536]

    from shellkeep.asciicast.encoder import encode_event
    from shellkeep.asciicast.model import Header
    from shellkeep.termsize import TermSize
    from shellkeep.capture.recorder import Recorder

    try:
        from shellkeep.capture.redaction import default_stream_redactor
    except ImportError:
        default_stream_redactor = None  # type: ignore[assignment]

    data = _text(args.mb) if args.text == "base64" else _colour_text(args.mb)
    mb = len(data) / 1e6
    print(f"{mb:.1f} MB of {'base64 text' if args.text == 'base64' else 'coloured output'} with CRLF line ends")
    for size in sizes:
        chunks = _chunks(data, size)
        texts = [c.decode("utf-8") for c in chunks]
        print(f"\n-- {size}-byte reads ({len(chunks)} of them)")

        def decode() -> None:
            dec = codecs.getincrementaldecoder("utf-8")("replace")
            for c in chunks:
                dec.decode(c)

        def encode() -> None:
            for i, t in enumerate(texts):
                encode_event(i * 0.001, "o", t)

        stages: list[tuple[str, Callable[[], None]]] = [("decode", decode), ("encode", encode)]
        if default_stream_redactor is not None:

            def redact() -> None:
                red = default_stream_redactor()
                for t in texts:
                    red.feed(t)
                red.flush()

            stages.insert(1, ("redact", redact))
            if args.cprofile:
                import cProfile
                import pstats

                prof = cProfile.Profile()
                prof.runcall(redact)
                pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        for name, fn in stages:
            wall, cpu = _time(fn)
            print(f"  {name:<9} {mb / wall:8.1f} MB/s  ({wall:.3f} s wall, {cpu:.3f} s CPU)")

        for redact_on in (True, False):
            if redact_on and default_stream_redactor is None:
                continue
            fd, name = tempfile.mkstemp(prefix="shellkeep-writer-profile-")
            out = os.fdopen(fd, "ab", buffering=1 << 16)
            try:
                rec = Recorder(
                    out,
                    header=Header(size=TermSize(80, 24)),
                    make_filter=default_stream_redactor if redact_on else None,
                )

                def feed(rec: Recorder = rec) -> None:
                    start = time.monotonic()
                    for c in chunks:
                        rec.on_output(c, time.monotonic() - start)
                    rec.close(timeout_s=600)

                wall, cpu = _time(feed)
                size_out = os.path.getsize(name)
            finally:
                os.unlink(name)
            label = "recorder" + ("" if redact_on else " (no redaction)")
            print(f"  {label:<9} {mb / wall:8.1f} MB/s  ({wall:.3f} s wall, {cpu:.3f} s CPU, "
                  f"{rec._events} events, {size_out / 1e6:.1f} MB written)")  # noqa: SLF001
    if default_stream_redactor is not None:
        print(f"\n-- keys: {_keys_us(default_stream_redactor):.1f} µs of CPU per event (typed key or echo)")
    return 0


def _keys_us(make: Callable[..., object]) -> float:
    """Return the thread CPU µs per event of typed keys and their echoes through two filters."""
    typed, shown = make(False), make(True)
    letters = [chr(97 + k % 26) for k in range(50)]
    events = 0

    def line() -> None:
        nonlocal events
        for key in letters:
            typed.feed(key)  # type: ignore[attr-defined]
            shown.feed(key)  # type: ignore[attr-defined]
        typed.feed("\r")  # type: ignore[attr-defined]
        shown.feed("\r\n" + "".join(letters) + "\r\n")  # type: ignore[attr-defined]
        events += 2 * len(letters) + 2

    line()
    best = float("inf")
    for _ in range(5):
        events = 0
        start = time.thread_time()
        for _ in range(100):
            line()
        best = min(best, (time.thread_time() - start) / events)
    return best * 1e6


if __name__ == "__main__":
    sys.exit(main())
