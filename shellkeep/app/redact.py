"""Redact a stored session again with the current rules, then bring the index up to date."""

from __future__ import annotations

import dataclasses

from shellkeep.app.context import Context
from shellkeep.archive.index import index_session
from shellkeep.capture.redaction import build_redactor
from shellkeep.logs import get_logger
from shellkeep.store.session import SessionMeta
from shellkeep.vault.scrubber import RedactResult, redact_session

log = get_logger(__name__)


def redact_stored(ctx: Context, meta: SessionMeta) -> RedactResult:
    """Apply the built-in rules and the user's (``[redact]``, on even when disabled) to ``meta``'s files.

    The result's ``reindexed`` says whether the index was updated (a failure is logged:
    the files are clean, and 'shellkeep reindex' can redo it). Raises as
    ``vault.scrubber.redact_session``.
    """
    redactor = build_redactor(dataclasses.replace(ctx.config.redact, enabled=True))
    result = redact_session(ctx.vault, meta, redactor)
    if not (result.files or result.meta_changed):
        return dataclasses.replace(result, reindexed=True)
    try:
        index_session(ctx.paths, ctx.resolve(meta.id), vault=ctx.vault)
    except Exception as exc:  # noqa: BLE001 - the files are clean; 'shellkeep reindex' can redo this
        log.warning("could not update the index for %s (%s); run 'shellkeep reindex'", meta.id, exc)
        return result
    return dataclasses.replace(result, reindexed=True)
