"""``shellkeep cat``: print a session's raw output, or its plain-text transcript."""

from __future__ import annotations

import sys

import click

from shellkeep.cli.options import cwd, paths, require_ref, session_argument


@click.command()
@session_argument
@click.option("--text", "as_text", is_flag=True, help="The plain-text transcript (what the screen showed, each line once).")
def cat(ref: str | None, last: bool, as_text: bool) -> None:
    """Print a session's output as recorded (escape sequences and all), or with --text as
    plain text.

    Example: shellkeep cat --last --text | grep -i error
    """
    from shellkeep.export import export_session
    from shellkeep.export.formats import write_output
    from shellkeep.store.audit import record_read
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.session import resolve_session

    require_ref(ref, last)
    where = paths()
    meta = resolve_session(where, project_root_of(cwd()), ref, last=last)
    record_read(where, "cat", meta, detail="text" if as_text else "raw")
    out = sys.stdout.buffer
    if as_text:
        export_session(meta, "txt", out)
    else:
        write_output(meta, out)
    out.flush()
