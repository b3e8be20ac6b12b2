"""The pieces of a benchmark's results section: its table, its machine line, its place in bench/RESULTS.md."""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path


def put_section(results: Path, heading: str, section: str) -> None:
    """Write ``section`` (starting with ``heading``) into ``results`` in place of an older one.

    A section runs from its ``## `` heading to the next ``## `` heading or the end of the file;
    a heading not found yet adds the section at the end.
    """
    section = section.rstrip("\n")
    text = results.read_text() if results.exists() else "# shellkeep benchmarks\n"
    start = text.find(heading)
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    else:
        end = text.find("\n## ", start + len(heading))
        text = text[:start] + section + ("\n" + text[end:] if end >= 0 else "\n")
    results.write_text(text)


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> list[str]:
    """Return the lines of a Markdown table: ``header``, then one line a row.

    align: one letter a column, ``l`` (the default) or ``r`` (right-aligned numbers).
    """
    marks = ["---:" if align[i : i + 1] == "r" else "---" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(marks) + "|", *("| " + " | ".join(str(c) for c in row) + " |" for row in rows)]


def machine(load_at_start: float, *extra: str) -> str:
    """Return the line a results section ends its description with: the machine, when, how busy.

    extra: more of the machine to name (``SQLite 3.45.1``), after the Python version.
    """
    said = ", ".join((f"Python {platform.python_version()}", *extra))
    return (
        f"Machine: {os.cpu_count()} cores, {said}. Run on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"load average {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end."
    )
