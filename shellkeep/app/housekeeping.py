"""Upkeep after a session has ended: its git root commit, conversation, compression, index, OTLP export, automatic gc,
and the daily import of the agents' own histories (``app.history_import.maybe_auto_import``).

Compression and indexing take seconds on a long session, so ``runner`` starts this module
as its own detached process (``python -m shellkeep.app.housekeeping``, new session, no
terminal, stdio on /dev/null) and returns the prompt at once: ``app.after_run`` spawns it.
``run`` does the work in-process; it never raises.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from shellkeep.app.context import open_context
from shellkeep.app.conversation import collect
from shellkeep.app.env_restore import agent_files_env
from shellkeep.app.gc import maybe_auto_gc
from shellkeep.app.history_import import maybe_auto_import
from shellkeep.app.moves import complete_git_identity
from shellkeep.app.otlp import export_session
from shellkeep.archive.index import index_ended_session
from shellkeep.logs import get_logger
from shellkeep.store.paths import Paths, resolve_paths
from shellkeep.store.session import drop_recording, read_meta
from shellkeep.vault.compress import compress_after_session
from shellkeep.vault.exchanges import is_collected

log = get_logger(__name__)


def run(paths: Paths, folder: Path, *, compress: bool, auto_gc: bool) -> None:
    """Build exchanges, compress, index, export and garbage-collect after the session in ``folder``; never raises.

    Exchanges are built here for programs without a transcript of their own that were typed
    into (from the recording; slow for long ones, so not at the end of the run), and for
    agents whose transcript was too big to read and copy at the end of the run (streamed,
    up to ``agent_transcript_bytes``), before the recording is compressed and indexed: the
    index only ever reads what is stored. A session that keeps less than its full detail
    (``record.detail``) has its recording removed once the exchanges are built. With
    ``export.otlp.endpoint`` set the session is then sent as traces (``app.otlp``), retried
    for up to ``export.otlp.timeout_s``, queued for a later run when it does not arrive, and
    the sessions queued earlier are sent after it; a failure is logged, never raised.
    """
    try:
        meta = complete_git_identity(read_meta(folder))  # the root commit: a git process, so not at start
        ctx = open_context(paths=paths, cwd=Path(meta.project_root) if os.path.isdir(meta.project_root) else None)
        wanted = meta.detail != "metadata"  # record.detail = "metadata" keeps no exchanges
        if wanted and (meta.input_bytes or meta.agent_transcript) and not is_collected(meta):
            try:
                env = agent_files_env(ctx, meta)  # the agent's files where its session had them
                meta = collect(meta, ctx.vault, ctx.config.redact if meta.redacted else None, env)
            except Exception as exc:  # noqa: BLE001 - the recording is safe; exchanges can be rebuilt
                log.warning("could not build the exchanges of %s: %s", meta.id, exc)
        if meta.detail != "full":  # record.detail: the recording served the exchanges only
            drop_recording(meta)
        elif compress:
            meta = compress_after_session(meta, ctx.vault)  # the index names the recording as renamed
        index_ended_session(paths, meta, vault=ctx.vault)
        if ctx.config.export_otlp.endpoint:
            export_session(paths, meta, ctx.config, ctx.vault)  # queued when it does not arrive; never raises
        if auto_gc:
            maybe_auto_gc(ctx)
        maybe_auto_import(ctx)  # the agents' own histories, at most once a day (history.auto_import)
    except Exception as exc:  # noqa: BLE001 - the session is stored; this is only upkeep
        log.warning("housekeeping after %s failed: %s", folder.name, exc)


def main(argv: Sequence[str]) -> int:
    """``python -m shellkeep.app.housekeeping FOLDER [--compress] [--auto-gc]``; returns 0."""
    if not argv:
        return 2
    run(resolve_paths(), Path(argv[0]), compress="--compress" in argv[1:], auto_gc="--auto-gc" in argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
