"""Search the sessions pulled from other machines (``shellkeep search --remote``).

Each pulled machine's folder, ``remotes/<machine>/``, is a home of its own
(``Paths.remote_paths``) with a derived index of its own, built and kept current by
``archive.index`` exactly as this machine's: its prompts and answers come from the
exchanges ``sync pull`` fetches, its transcript once the recording was fetched (a replay,
a show). Hits carry the host of the machine the session was recorded on.
"""

from __future__ import annotations

from dataclasses import replace

from shellkeep.app.context import Context
from shellkeep.app.remote import pulled_machines, remote_sessions
from shellkeep.archive.hits import SearchHit
from shellkeep.archive.search import SearchRequest, search
from shellkeep.logs import get_logger
from shellkeep.store.audit import record_many

log = get_logger(__name__)


def count_remote_hits(ctx: Context, request: SearchRequest) -> int:
    """Return how many hits ``search --remote`` would give for ``request`` (at most ``request.limit``);
    0 when no session was pulled here.

    Nothing is shown, so nothing is audited. Blocks while a pulled machine's index is first
    built. Raises UserInputError for a query that cannot be parsed, ShellkeepError when an
    index cannot be opened.
    """
    if not pulled_machines(ctx.paths):
        return 0
    return len(_remote_hits(ctx, request, None))


def search_remote(ctx: Context, request: SearchRequest, machine: str | None = None) -> list[SearchHit]:
    """Search the pulled sessions (of ``machine``: id prefix or host; None: every machine), best first.

    ``request.project`` and ``also_projects`` are ignored: a pulled session's project is
    the other machine's. Blocks while an index is first built (the pulled exchanges are
    read, decrypted when sealed). Each session hit is recorded in the audit log (``search``,
    ``hit; pulled from HOST (ID)``). Raises UserInputError for a query that cannot be parsed
    or a machine pulled from nowhere (``remote_sessions``), ShellkeepError when an index
    cannot be opened.
    """
    hits = _remote_hits(ctx, request, machine)
    reads = dict.fromkeys((h.session_id, h.project, f"hit; pulled from {h.machine} ({mid[:12]})") for h, mid in hits)
    try:  # one entry per session read, in one append
        record_many(ctx.paths, "search", list(reads))
    except OSError as exc:
        log.warning("could not write the audit log %s (%s)", ctx.paths.audit_log, exc.strerror or exc)
    return [h for h, _ in hits]


def _remote_hits(ctx: Context, request: SearchRequest, machine: str | None) -> list[tuple[SearchHit, str]]:
    """Return the best hits in the pulled sessions with the id of the machine each came from."""
    hosts: dict[str, str] = {}
    for meta in remote_sessions(ctx.paths, machine):  # raises for an unknown machine
        remote = meta.extra.get("remote")
        if isinstance(remote, dict):
            hosts.setdefault(str(remote.get("machine")), str(remote.get("host") or ""))
    everywhere = replace(request, project=None, also_projects=())
    hits: list[tuple[SearchHit, str]] = []
    for machine_id in pulled_machines(ctx.paths):
        if machine_id not in hosts:
            continue
        found = search(ctx.paths.remote_paths(machine_id), everywhere, vault=ctx.vault)
        hits += [(replace(hit, machine=hosts[machine_id] or machine_id[:12]), machine_id) for hit in found]
    hits.sort(key=lambda pair: pair[0].rank)
    return hits[: request.limit]
