"""Make session folders on disk as the recorder leaves them, without running a pty."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from shellkeep.asciicast.encoder import encode_event, encode_header
from shellkeep.asciicast.model import Header
from shellkeep.store.paths import Paths, project_key
from shellkeep.store.session import CAST_FILE, EXCHANGES_FILE, SessionMeta, iso, write_meta
from shellkeep.termsize import TermSize

BASE = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def make_session(
    paths: Paths,
    project_root: Path,
    n: int,
    *,
    events: Sequence[tuple[float, str, str]] = ((0.5, "o", "hello world\r\n"),),
    name: str | None = None,
    agent: str = "bash",
    status: str = "finished",
    started: datetime | None = None,
    exchanges: Sequence[dict[str, object]] = (),
    size: TermSize = TermSize(80, 24),
    pid: int = 0,
    host: str = "elsewhere",
) -> SessionMeta:
    """Write session number ``n`` (ids sort by n) with a v2 recording of ``events``."""
    at = started or BASE + timedelta(minutes=n)
    session_id = at.strftime("%Y%m%d-%H%M%S-") + f"{n % 1000:03d}{n % 256:02x}"
    folder = paths.session_dir(project_root, session_id)
    folder.mkdir(parents=True)
    with open(folder / CAST_FILE, "wb") as fh:
        fh.write(encode_header(Header(size=size, timestamp=int(at.timestamp()))))
        for t, code, data in events:
            fh.write(encode_event(t, code, data))
    if exchanges:
        with open(folder / EXCHANGES_FILE, "w", encoding="utf-8") as fh:
            for i, ex in enumerate(exchanges):
                fh.write(json.dumps({"index": i, "answer": "", "time": None, **ex}) + "\n")
    duration = max((t for t, _, _ in events), default=0.0)
    meta = SessionMeta(
        id=session_id,
        project=project_key(project_root),
        project_root=str(project_root),
        cwd=str(project_root),
        command=[agent],
        agent=agent,
        started_at=iso(at),
        name=name,
        host=host,
        pid=pid,
        cols=size.cols,
        rows=size.rows,
        status=status,
        ended_at=None if status == "running" else iso(at + timedelta(seconds=duration)),
        duration=None if status == "running" else duration,
        exit_code=0 if status == "finished" else None,
        cast=str(folder / CAST_FILE),
        exchange_count=len(exchanges),
    )
    write_meta(meta)
    return meta

