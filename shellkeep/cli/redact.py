"""``shellkeep redact``: re-apply the current redaction rules to a stored session."""

from __future__ import annotations


import click

from shellkeep.cli.options import context, json_option, require_ref, session_argument, warn
from shellkeep.cli.output import print_json


@click.command()
@session_argument
@json_option
def redact(ref: str | None, last: bool, as_json: bool) -> None:
    """Redact a stored session again with the current rules (built-in and your own).

    Rewrites its recording, exchanges, agent transcript copies and metadata, each file
    atomically; for rules added after it was recorded, or a --no-redact session.

    Example: shellkeep redact --last
    """
    from shellkeep.app.redact import redact_stored

    require_ref(ref, last)
    ctx = context(strict=True)
    meta = ctx.resolve(ref, last=last)
    result = redact_stored(ctx, meta)
    if as_json:
        print_json(result)
    elif result.files or result.meta_changed:
        names = ", ".join([*result.files, *(["meta.json"] if result.meta_changed else [])])
        click.echo(f"redacted {result.secrets} secrets in {meta.id} ({names})")
    else:
        click.echo(f"no secrets found in {meta.id}; nothing changed")
    if not result.reindexed:
        warn("the search index could not be updated; run 'shellkeep reindex'")
