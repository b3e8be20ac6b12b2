"""``shellkeep ps``: the live sessions of every project, and what each is doing."""

from __future__ import annotations

import click

from shellkeep.cli.options import context, json_option
from shellkeep.cli.output import format_duration, format_size, print_json


@click.command()
@json_option
def ps(as_json: bool) -> None:
    """List the sessions recording now, in every project, newest first.

    STATE is working (output in the last 3 seconds), waiting (quiet, and the agent shows its
    own prompt or approval dialog, or the program reads keys one by one, or reads a line
    after printing a prompt or with echo off) or idle.

    Example: shellkeep ps --json
    """
    from shellkeep.app.ps import live_sessions

    sessions = live_sessions(context())
    if as_json:
        print_json(sessions)
        return
    if not sessions:
        click.echo("no live sessions; run 'shellkeep ls --all' for past ones", err=True)
        return
    header = ("ID", "AGENT", "PROJECT", "PID", "STATE", "DURATION", "SIZE", "TITLE", "PLAN")
    rows = [
        (s.id, s.agent, s.project, str(s.pid), s.state, format_duration(s.duration), format_size(s.size_bytes),
         _cut(s.title or "-", _TITLE_CHARS), _cut(s.plan or "-", _PLAN_CHARS))
        for s in sessions
    ]
    widths = [max(map(len, column)) for column in zip(header, *rows)]  # PLAN last: a long one only runs on
    template = "  ".join(f"{{:<{w}}}" for w in widths)
    click.echo("\n".join(template.format(*row).rstrip() for row in (header, *rows)))


_PLAN_CHARS = 60
"""Most characters of the PLAN column (``--json`` has the whole summary)."""
_TITLE_CHARS = 40
"""Most characters of the TITLE column (``--json`` has it whole)."""


def _cut(text: str, cols: int) -> str:
    """Return ``text`` cut to ``cols`` characters, ending in ``…`` when cut."""
    return text if len(text) <= cols else text[: cols - 1] + "…"
