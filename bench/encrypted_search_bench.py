"""Measure search over encrypted sessions (archive/private_search.py) for 100 sessions.

With encryption on, the SQLite index keeps no transcript text; a search decrypts each
session's ``search.jsonl`` and searches it with FTS5 in memory. This bench makes 100 encrypted sessions
whose searchable text is rendered by shellkeep's real transcript code (pyte) from a long
synthetic agent TUI recording (bench/compress_bench.py), then times:

- ``search_private`` over the 100 sessions (decrypt + in-memory FTS5), cold (first run in the
  process, key file read) and warm, for a rare word and a common one;
- for comparison, rendering one session's transcript from its encrypted recording, which
  is what searching without the stored text would cost per session.

Run: ``.venv/bin/python bench/encrypted_search_bench.py``; figures are printed and written
to bench/RESULTS-encrypted-search.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SESSIONS = 100


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    os.environ["SHELLKEEP_HOME"] = str(tmp / "home")
    os.environ["SHELLKEEP_CONFIG"] = str(tmp / "config.toml")
    os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    from bench.compress_bench import synthetic_session
    from shellkeep.vault.recording import open_recording as open_cast
    from shellkeep.terminal.transcript import iter_transcript
    from shellkeep.vault.crypto import split_records, write_records_atomic
    from shellkeep.vault.keys import current_key, forget_cached_keys
    from shellkeep.store.paths import resolve_paths
    from shellkeep.archive.private_search import save_content, search_private
    from shellkeep.store.session import SessionMeta
    from shellkeep.vault.access import Vault

    paths = resolve_paths()
    vault = Vault(paths, encrypt=True)
    key = current_key(paths, create=True)
    cast_bytes = synthetic_session(target_bytes=2 << 20)
    metas = []
    t0 = time.perf_counter()
    chunks_of_one: list[tuple[str, int | None, float, str, str]] = []
    for n in range(SESSIONS):
        folder = paths.projects / "bench-00000000" / f"2024{n:04d}"
        folder.mkdir(parents=True)
        cast = folder / "session.cast"
        write_records_atomic(cast, split_records(cast_bytes), key)
        meta = SessionMeta(id=folder.name, project="bench-00000000", project_root=str(tmp), cwd=str(tmp), command=["claude"],
                           agent="claude", started_at=f"2024-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z", status="finished",
                           cast=str(cast))
        if not chunks_of_one:
            render0 = time.perf_counter()
            parsed = open_cast(cast, vault)
            texts, times = [], []
            for line in iter_transcript(parsed.events(), parsed.header.size):
                texts.append(line.text)
                times.append(line.time_s)
                if len(texts) == 20:
                    chunks_of_one.append(("transcript", None, times[0], " ".join(f"{t:.2f}" for t in times), "\n".join(texts)))
                    texts, times = [], []
            render_s = time.perf_counter() - render0
        unique = [("prompt", 1, 1.0, "", f"unique-word-{n} in session {n}")]
        save_content(meta, chunks_of_one + unique, vault)
        metas.append(meta)
    setup_s = time.perf_counter() - t0
    text_bytes = sum(len(c[4].encode()) for c in chunks_of_one)
    stored = sum((m.folder / "search.jsonl").stat().st_size for m in metas)

    forget_cached_keys()
    rows = []
    for label, query in (("cold, rare word", "unique-word-42"), ("warm, rare word", "unique-word-77"),
                         ("warm, common word", "shellkeep"), ("warm, phrase", '"the recording"')):
        start = time.perf_counter()
        hits = search_private(vault, metas, query, limit=20)
        rows.append(f"| {label} | `{query}` | {len(hits)} | {(time.perf_counter() - start) * 1000:.0f} ms |")
    lines = [
        "# Search over encrypted sessions",
        "",
        f"{SESSIONS} encrypted sessions, each with {text_bytes / 1e3:.0f} KB of searchable text (rendered from a "
        f"{len(cast_bytes) / 1e6:.1f} MB agent TUI recording), {stored / 1e6:.1f} MB of encrypted `search.jsonl` "
        f"in all. Machine: {os.cpu_count()} CPUs. Produced by `bench/encrypted_search_bench.py`.",
        "",
        "| search | query | hits | time for 100 sessions |",
        "| --- | --- | ---: | ---: |",
        *rows,
        "",
        f"Rendering one session's transcript from its encrypted recording (what a search without the stored "
        f"text would do per session): {render_s:.2f} s, so about {render_s * SESSIONS:.0f} s for {SESSIONS} sessions.",
        f"(Set-up, writing the {SESSIONS} sessions: {setup_s:.1f} s.)",
    ]
    (ROOT / "bench" / "RESULTS-encrypted-search.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
