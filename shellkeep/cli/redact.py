"""``shellkeep redact``: re-apply the current redaction rules to a stored session."""

from __future__ import annotations

import dataclasses
import os

import click

from shellkeep.cli.options import cwd, json_option, paths, require_ref, session_argument, warn
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
    from shellkeep.capture.redaction import build_redactor
    from shellkeep.config import load_config
    from shellkeep.store.paths import project_root_of
    from shellkeep.store.scrubber import redact_session
    from shellkeep.store.session import resolve_session

    require_ref(ref, last)
    root = project_root_of(cwd())
    config = load_config(paths(), root, os.environ)
    meta = resolve_session(paths(), root, ref, last=last)
    redactor = build_redactor(dataclasses.replace(config.redact, enabled=True))
    result = redact_session(paths(), meta, redactor)
    if as_json:
        print_json(result)
    elif result.files or result.meta_changed:
        names = ", ".join([*result.files, *(["meta.json"] if result.meta_changed else [])])
        click.echo(f"redacted {result.secrets} secrets in {meta.id} ({names})")
    else:
        click.echo(f"no secrets found in {meta.id}; nothing changed")
    if not result.reindexed:
        warn("the search index could not be updated; run 'shellkeep reindex'")
