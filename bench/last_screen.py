"""Time ``last_screen`` on a generated 100 MB recording against a full replay.

The recording imitates what a coding agent's TUI draws in the main screen (Ink-style: lines
that scroll up, a spinner and input box erased and redrawn in place under synchronized
output, truecolour and 256-colour SGR, diff lines with backgrounds), with a full-screen
program now and then on the alternate screen, resizes, typed input, and a full clear and
redraw every few megabytes. Target: the last screen of 100 MB in under 0.5 s.

Usage: .venv/bin/python bench/last_screen.py [--mb 100] [--runs 5] [--no-full] [--keep DIR] [--write]
Prints a markdown table on stdout (--write: also bench/RESULTS-last-screen.md). Standalone:
not part of bench/run.py. Compressed copies: one zstd frame (as before seek tables) and the
seekable format the upkeep writes (shellkeep/vault/seekable.py).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shellkeep.asciicast.encoder import encode_event, encode_header  # noqa: E402
from shellkeep.asciicast.model import Header  # noqa: E402
from shellkeep.terminal import replay as _replay  # noqa: E402
from shellkeep.terminal import tail as _tail  # noqa: E402
from shellkeep.terminal.snapshot import ScreenSnapshot  # noqa: E402
from shellkeep.vault.recording import open_recording, open_tail_source  # noqa: E402


def last_screen(path: Path) -> ScreenSnapshot:
    """The last screen as ``shellkeep resume`` reads it: from the end when the file is plain."""
    cast = open_recording(path)
    with open_tail_source(path) as mapped:
        return _replay.last_screen(cast, mapped=mapped)


def read_tail(path: Path) -> _tail.Tail:
    cast = open_recording(path)
    with open_tail_source(path) as mapped:
        return _tail.read_tail(cast, mapped=mapped)


def screen_at(path: Path, time_s: float) -> ScreenSnapshot:
    return _replay.screen_at(open_recording(path), time_s)
from shellkeep.termsize import TermSize  # noqa: E402

WORDS = (
    "the function returns a list of events read from the recording and the index is rebuilt "
    "when the session ends so that search finds every exchange fix test pass fail error "
    "refactor module import typing dataclass frozen snapshot terminal cursor colour"
).split()
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _sentence(rng: random.Random, width: int) -> str:
    words: list[str] = []
    length = 0
    target = rng.randint(width // 3, width - 4)
    while length < target:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[: width - 4]


def _static_block(rng: random.Random, cols: int) -> str:
    """Lines an agent prints once and that then scroll: prose, a tool call, a diff."""
    kind = rng.random()
    out: list[str] = []
    if kind < 0.5:
        out.append(f"\x1b[38;2;215;119;87m⏺\x1b[39m \x1b[1m{_sentence(rng, cols - 2)}\x1b[22m\r\n")
        for _ in range(rng.randint(1, 6)):
            out.append(f"  {_sentence(rng, cols - 2)}\r\n")
    elif kind < 0.8:
        out.append(f"\x1b[38;2;0;175;0m⏺\x1b[39m \x1b[1mUpdate\x1b[22m(shellkeep/{rng.choice(WORDS)}.py)\r\n")
        for n in range(rng.randint(2, 10)):
            sign, bg = rng.choice((("+", "48;2;2;40;0"), ("-", "48;2;61;1;0"), (" ", "49")))
            out.append(
                f"  \x1b[38;5;244m{100 + n:>4}\x1b[39m \x1b[{bg}m{sign} {_sentence(rng, cols - 12)}\x1b[49m\x1b[K\r\n"
            )
    else:
        out.append(f"\x1b[38;5;246m  ⎿  \x1b[39m\x1b[2m{_sentence(rng, cols - 8)}\x1b[22m\r\n")
    return "".join(out)


def _live_region(rng: random.Random, cols: int, tick: int) -> tuple[str, int]:
    """The region redrawn in place: spinner, input box, status line; returns (text, lines - 1)."""
    bar = "─" * (cols - 2)
    lines = [
        f"\x1b[38;2;215;119;87m{SPINNER[tick % len(SPINNER)]}\x1b[39m \x1b[38;5;174mThinking…\x1b[39m "
        f"\x1b[2m({tick % 300}s · esc to interrupt)\x1b[22m",
        "",
        f"\x1b[38;5;244m╭{bar}╮\x1b[39m",
        f"\x1b[38;5;244m│\x1b[39m > {_sentence(rng, cols - 6):<{cols - 5}}\x1b[38;5;244m│\x1b[39m",
        f"\x1b[38;5;244m╰{bar}╯\x1b[39m",
        f"  \x1b[2m? for shortcuts\x1b[22m{' ' * (cols - 40)}\x1b[38;5;114m◯ ide\x1b[39m",
    ]
    return "\r\n".join(lines), len(lines) - 1


def _alternate_session(rng: random.Random, cols: int, rows: int) -> Iterator[str]:
    """A full-screen program (a pager) drawn with absolute positioning, then left."""
    yield "\x1b[?1049h\x1b[22;0;0t\x1b[?1h\x1b=\x1b[H\x1b[2J"
    for _ in range(rng.randint(3, 12)):
        screen = [f"\x1b[{y + 1};1H\x1b[K{_sentence(rng, cols)}" for y in range(rows - 1)]
        yield "".join(screen) + f"\x1b[{rows};1H\x1b[7m:\x1b[27m\x1b[K"
    yield "\x1b[?1l\x1b>\x1b[?1049l\x1b[23;0;0t"


def _full_redraw(rng: random.Random, cols: int, rows: int) -> str:
    return "\x1b[2J\x1b[3J\x1b[H" + "".join(_static_block(rng, cols) for _ in range(rows // 4))


def generate(path: Path, target_bytes: int, *, seed: int = 7, clear_every_bytes: int = 4 << 20) -> None:
    """Write a TUI-like asciicast v2 recording of about ``target_bytes`` to ``path``."""
    rng = random.Random(seed)
    size = TermSize(120, 40)
    with open(path, "wb") as fh:
        fh.write(encode_header(Header(size=size, command="claude", title="bench")))
        written = 0
        next_clear = clear_every_bytes
        now = 0.0
        live = 0
        tick = 0
        while written < target_bytes:
            now += rng.random() * 0.05
            roll = rng.random()
            if written >= next_clear:
                data = _full_redraw(rng, size.cols, size.rows)
                live = 0
                next_clear += clear_every_bytes
            elif roll < 0.002:
                for chunk in _alternate_session(rng, size.cols, size.rows):
                    now += 0.1
                    line = encode_event(now, "o", chunk)
                    fh.write(line)
                    written += len(line)
                continue
            elif roll < 0.003:
                size = TermSize(rng.choice((100, 120, 132)), rng.choice((30, 40, 50)))
                line = encode_event(now, "r", f"{size.cols}x{size.rows}")
                fh.write(line)
                written += len(line)
                continue
            elif roll < 0.02:
                line = encode_event(now, "i", rng.choice("abcdefgh\r"))
                fh.write(line)
                written += len(line)
                continue
            else:
                # Erase the live region (cursor up over it), maybe print lines that stay, redraw it.
                erase = "\x1b[2K\x1b[1A" * live + "\x1b[2K\x1b[G"
                printed = _static_block(rng, size.cols) if roll < 0.25 else ""
                region, live = _live_region(rng, size.cols, tick)
                tick += 1
                data = f"\x1b[?2026h{erase}{printed}{region}\x1b[?2026l"
            line = encode_event(now, "o", data)
            fh.write(line)
            written += len(line)


def _median_time(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="recording size in MB")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--no-full", action="store_true", help="skip the full replay (slow)")
    parser.add_argument("--keep", type=Path, help="write the recordings here and keep them")
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS-last-screen.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        target = int(args.mb * 1_000_000)
        cases = [
            ("TUI, full redraw every 512 KB", folder / "tui.cast", 512 << 10),
            ("TUI, no clear at all (budget path)", folder / "noclear.cast", 1 << 40),
        ]
        rows: list[tuple[str, str, str, str, str]] = []
        for label, path, clear_every in cases:
            t0 = time.perf_counter()
            generate(path, target, clear_every_bytes=clear_every)
            gen_s = time.perf_counter() - t0
            size_mb = path.stat().st_size / 1e6
            print(f"generated {path.name}: {size_mb:.1f} MB in {gen_s:.1f} s", file=sys.stderr)
            last_screen(path)  # warm the page cache and pyte's import
            tail = read_tail(path)
            median = _median_time(lambda p=path: last_screen(p), args.runs)
            rows.append(
                (label, f"{size_mb:.0f} MB", f"last_screen (median of {args.runs})", f"{median:.3f} s",
                 f"tail from {tail.reason}, {tail.bytes_read / 1e6:.2f} MB decoded")  # fmt: skip
            )
            if not args.no_full:
                t0 = time.perf_counter()
                full = screen_at(path, float("inf"))
                full_s = time.perf_counter() - t0
                same = full == last_screen(path)
                rows.append((label, f"{size_mb:.0f} MB", "full replay (1 run)", f"{full_s:.1f} s",
                             "same screen" if same else "DIFFERENT screen"))  # fmt: skip
        import zstandard

        from shellkeep.vault.compress import LEVEL
        from shellkeep.vault.seekable import compressed_frames

        single = folder / "tui.cast.zst"
        with open(folder / "tui.cast", "rb") as src, open(single, "wb") as dst:
            zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).copy_stream(src, dst)
        median = _median_time(lambda: last_screen(single), max(1, args.runs // 2))
        packed_mb = f"{single.stat().st_size / 1e6:.0f} MB"
        one_frame_bytes = single.stat().st_size
        rows.append((f"TUI, zstd, one frame (as compressed before seek tables), level {LEVEL}", packed_mb, "last_screen (streams it all)",
                     f"{median:.2f} s", "whole file read"))  # fmt: skip
        for name, label in (("tui.cast", "TUI"), ("noclear.cast", "TUI, no clear")):
            seekable = folder / f"{name}.seekable.zst"
            compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
            with open(folder / name, "rb") as src, open(seekable, "wb") as dst:
                for piece in compressed_frames(compressor, src):
                    dst.write(piece)
            same = last_screen(seekable) == last_screen(folder / name)
            with open_tail_source(seekable) as source:
                tail = _tail.read_tail(open_recording(seekable), mapped=source)
            frames = getattr(source, "frames_read", 0)
            median = _median_time(lambda p=seekable: last_screen(p), args.runs)
            rows.append((f"{label}, zstd seekable (1 MiB frames, level {LEVEL})", f"{seekable.stat().st_size / 1e6:.0f} MB",
                         f"last_screen (median of {args.runs})", f"{median:.3f} s",
                         f"{frames} frames decompressed, tail from {tail.reason}, "
                         f"{'same screen as plain' if same else 'DIFFERENT screen'}"
                         + (f"; {(seekable.stat().st_size / one_frame_bytes - 1) * 100:+.1f} % size vs one frame"
                            if name == "tui.cast" else "")))  # fmt: skip

    table = ["| recording | size | measurement | time | note |", "|---|---|---|---|---|"]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    print("\n".join(table))
    if args.write:
        _write_results(table, args)
    return 0


def _write_results(table: list[str], args: argparse.Namespace) -> None:
    import os
    import platform
    from datetime import datetime, timezone

    lines = [
        "## Last screen of a long recording (bench/last_screen.py)",
        "",
        f"A generated {args.mb:.0f} MB agent-TUI recording (see the script), plain, compressed as one zstd "
        "frame (how recordings were compressed before), and compressed by the upkeep's writer as zstd's "
        f"seekable format (frames of about 1 MiB with a seek table). Machine: {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; run on {datetime.now(timezone.utc):%Y-%m-%d}, "
        f"load average {os.getloadavg()[0]:.1f} at the end. Target: a compressed 100 MB recording under 0.3 s.",
        "",
        *table,
        "",
        "The seekable file is read backwards like a plain one: only the frames holding the tail, and "
        "those the searches for the last resize and alternate-screen switch cross, are decompressed. "
        "A recording with neither anywhere makes those searches go back to its start: every frame is "
        "then decompressed once (100 MB of plain lines measured 0.30 s, plain file 0.25 s).",
        "",
    ]
    (Path(__file__).resolve().parent / "RESULTS-last-screen.md").write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
