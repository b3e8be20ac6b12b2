"""``shellkeep cat``: print a session's raw output, or its plain-text transcript."""

from __future__ import annotations

import sys

import click

from shellkeep.cli.options import context, require_ref, session_argument


@click.command()
@session_argument
@click.option("--text", "as_text", is_flag=True, help="The plain-text transcript (what the screen showed, each line once).")
def cat(ref: str | None, last: bool, as_text: bool) -> None:
    """Print a session's output as recorded (escape sequences and all), or with --text as
    plain text.

    Example: shellkeep cat --last --text | grep -i error
    """
    from shellkeep.app.reads import read_session
    from shellkeep.archive.export.formats import write_output, write_transcript

    require_ref(ref, last)
    ctx = context()
    meta, cast = read_session(ctx, ref, last=last, command="cat", detail="text" if as_text else "raw")
    out = sys.stdout.buffer
    if as_text:
        write_transcript(cast, out)
    else:
        write_output(cast, out)
    out.flush()
