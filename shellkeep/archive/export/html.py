"""Write a session as one self-contained HTML page for audit: no script, no network.

The page holds the session's metadata and, for each exchange, its prompt, its answer (in a
monospace font when it is terminal output: ``formats.answer_is_output``) and
the screen as it stood when that exchange ended (just before the next prompt; the last
one at the end of the recording), rendered in colour by ``shellkeep.terminal``. A session
without exchanges shows the screen at each marker and at the end.
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import IO

from shellkeep import __version__
from shellkeep.archive.export.formats import answer_is_output, summary_rows
from shellkeep.archive.timeline import exchange_offset_s, read_session_markers
from shellkeep.store.session import SessionMeta, iso, utc_now
from shellkeep.terminal.replay import iter_screens
from shellkeep.vault.access import Vault
from shellkeep.vault.exchanges import read_exchanges

__all__ = ["write_html"]

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:72em;
padding:0 1em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table.meta{border-collapse:collapse;font-size:.9em}table.meta td{padding:.15em .8em .15em 0;vertical-align:top}
table.meta td:first-child{color:#666}
.prompt,.answer{white-space:pre-wrap;padding:.6em .8em;border-radius:4px;margin:.4em 0}
.prompt{background:#e8f0fe}.answer{background:#fff;border:1px solid #e2e2e2}
.output,.screen,.tools{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.output{font-size:13px}
.label{font-size:.8em;color:#666;margin-top:.8em}
.screen{overflow-x:auto;border-radius:4px;margin:.4em 0;font-size:13px}
.tools{font-size:.85em;color:#444}
footer{margin-top:3em;font-size:.8em;color:#888}
"""


def write_html(meta: SessionMeta, out: IO[bytes], vault: Vault) -> None:
    """Write the audit page of ``meta``'s session; raises DataError for a corrupt recording."""
    cast_path = Path(meta.cast)
    exchanges = read_exchanges(meta, vault)
    starts = [exchange_offset_s(meta, e) for e in exchanges]
    sections: list[tuple[str, str, float]] = []  # (title, body html, screen time)
    answer_class = "answer output" if answer_is_output(meta) else "answer"  # terminal output: monospace
    following: list[float | None] = [None] * len(starts)  # the next known start after each exchange
    upcoming: float | None = None
    for i in range(len(starts) - 1, -1, -1):
        following[i] = upcoming
        upcoming = starts[i] if starts[i] is not None else upcoming
    for i, exchange in enumerate(exchanges):
        nxt = following[i]
        screen_at = max(0.0, nxt - 0.001) if nxt is not None else math.inf
        when = "" if starts[i] is None else f" <small>at {starts[i]:.1f} s</small>"
        blocks = [
            '<div class="label">prompt</div>',
            f'<div class="prompt">{_esc(exchange.prompt)}</div>',
            '<div class="label">answer</div>',
            f'<div class="{answer_class}">{_esc(exchange.answer) or "<em>(no answer)</em>"}</div>',
        ]
        if exchange.tool_calls:
            calls = "<br>".join(f"{_esc(c.name)}: {_esc(c.summary)}" for c in exchange.tool_calls)
            blocks.append(f'<div class="label">tools</div><div class="tools">{calls}</div>')
        sections.append((f"{i + 1}. exchange{when}", "\n".join(blocks), screen_at))
    if not exchanges:
        for marker in read_session_markers(meta, vault):
            sections.append((f"marker {marker.n}: {_esc(marker.label)} <small>at {marker.time_s:.1f} s</small>", "", marker.time_s))
        sections.append(("the screen at the end", "", math.inf))
    times = _non_decreasing([t for _, _, t in sections])
    screens = iter_screens(vault.open_recording(cast_path), times)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>shellkeep session {_esc(meta.name or meta.id)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Session {_esc(meta.name or meta.id)}</h1>",
        '<table class="meta">',
    ]
    parts += [f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in summary_rows(meta)]
    parts.append("</table>")
    for (title, body, _), at, screen in zip(sections, times, screens):
        label = "screen at the end" if math.isinf(at) else f"screen at {at:.1f} s"
        parts += [f"<h2>{title}</h2>", body, f'<div class="label">{label}</div>', f'<div class="screen">{screen.to_html()}</div>']
    parts.append(f"<footer>exported by shellkeep {__version__} at {iso(utc_now())} from {_esc(str(cast_path))}</footer>")
    parts.append("</body></html>\n")
    out.write("\n".join(parts).encode("utf-8", "replace"))


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _non_decreasing(times: list[float]) -> list[float]:
    out: list[float] = []
    for t in times:
        out.append(max(t, out[-1]) if out else t)
    return out
