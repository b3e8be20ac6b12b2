"""Put one benchmark's section into bench/RESULTS.md, replacing the section of the same heading."""

from __future__ import annotations

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
