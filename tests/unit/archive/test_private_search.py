"""Search over encrypted sessions: text kept encrypted beside the recording, scanned in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from shellkeep.errors import UserInputError  # noqa: E402
from shellkeep.vault.crypto import SEARCH_FILE, is_encrypted, split_records, write_records_atomic  # noqa: E402
from shellkeep.vault.keys import current_key, forget_cached_keys  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from shellkeep.vault.access import Vault  # noqa: E402
from shellkeep.archive.private_search import load_content, save_content, search_private  # noqa: E402
from shellkeep.store.session import SessionMeta  # noqa: E402

from tests.factory import make_session  # noqa: E402

CHUNKS = [
    ("transcript", None, 1.0, "1.00 1.50 2.00", "$ pytest\nFAILED test_login - pineapple error\nexit 1"),
    ("prompt", 1, 3.0, "", "please fix the pineapple bug in login"),
    ("answer", 1, 4.0, "", "I changed login.py; the tests pass now"),
    ("marker", 1, 5.0, "", "checkpoint before deploy"),
]


pytestmark = pytest.mark.usefixtures("no_os_keyring")  # tests/conftest.py


def encrypted_session(home: Paths, root: Path, n: int) -> SessionMeta:
    meta = make_session(home, root, n, events=[(0.5, "o", "pineapple\r\n")])
    cast = Path(meta.cast)
    write_records_atomic(cast, split_records(cast.read_bytes()), current_key(home, create=True))
    return meta


def test_content_is_stored_encrypted_and_read_back(home: Paths, tmp_path: Path) -> None:
    meta = encrypted_session(home, tmp_path / "p", 1)
    save_content(meta, CHUNKS, Vault(home))
    path = meta.folder / SEARCH_FILE
    assert is_encrypted(path) and b"pineapple" not in path.read_bytes()
    assert load_content(meta, Vault(home)) == CHUNKS


def test_search_words_phrases_prefixes_or_not(home: Paths, tmp_path: Path) -> None:
    meta = encrypted_session(home, tmp_path / "p", 1)
    plain = make_session(home, tmp_path / "p", 2)  # not encrypted: the index's job, skipped here
    save_content(meta, CHUNKS, Vault(home))

    def kinds(query: str) -> list[str]:
        return sorted(h.kind for h in search_private(Vault(home), [meta, plain], query))

    assert kinds("pineapple") == ["prompt", "transcript"]
    assert kinds("PINEAPPLE login") == ["prompt", "transcript"]
    assert kinds('"pineapple bug"') == ["prompt"]
    assert kinds("pine*") == ["prompt", "transcript"]
    assert kinds("pine") == []
    assert kinds("deploy OR tests") == ["answer", "marker"]
    assert kinds("login NOT pytest") == ["answer", "prompt"]
    hit = next(h for h in search_private(Vault(home), [meta], "pineapple") if h.kind == "transcript")
    assert hit.time == 1.5  # the line holding the match
    start, end = hit.highlights[0]
    assert hit.snippet[start:end].lower() == "pineapple"
    assert next(h for h in search_private(Vault(home), [meta], "pineapple") if h.kind == "prompt").exchange == 1


def test_missing_content_is_built_once(home: Paths, tmp_path: Path) -> None:
    meta = encrypted_session(home, tmp_path / "p", 1)
    calls: list[str] = []

    def build(m: SessionMeta) -> list[tuple[str, int | None, float, str, str]]:
        calls.append(m.id)
        return CHUNKS

    assert len(search_private(Vault(home), [meta], "pineapple", build=build)) == 2
    assert len(search_private(Vault(home), [meta], "pineapple", build=build)) == 2
    assert calls == [meta.id]


def test_a_session_whose_key_is_missing_is_skipped(home: Paths, tmp_path: Path) -> None:
    meta = encrypted_session(home, tmp_path / "p", 1)
    save_content(meta, CHUNKS, Vault(home))
    (home.home / "keys" / "keys.json").unlink()
    forget_cached_keys()
    assert search_private(Vault(home), [meta], "pineapple") == []


def test_an_empty_query_is_a_user_error(home: Paths, tmp_path: Path) -> None:
    meta = encrypted_session(home, tmp_path / "p", 1)
    save_content(meta, CHUNKS, Vault(home))
    with pytest.raises(UserInputError):
        search_private(Vault(home), [meta], ' "" * ')



def test_the_index_keeps_an_encrypted_sessions_row_only_and_search_merges_its_hits(home: Paths, tmp_path: Path) -> None:
    import sqlite3

    from shellkeep.archive.index import connect
    from shellkeep.archive.listing import SessionQuery, list_indexed
    from shellkeep.archive.search import SearchRequest, search

    root = tmp_path / "p"
    meta = make_session(home, root, 1, name="fruit", events=[(0.5, "o", "mango\r\n"), (0.7, "m", "mango mark")])
    cast = Path(meta.cast)
    write_records_atomic(cast, split_records(cast.read_bytes()), current_key(home, create=True))
    plain = make_session(home, root, 2, events=[(0.5, "o", "papaya\r\n")])
    found = search(home, SearchRequest("mango OR papaya"))
    assert sorted((h.session_id, h.kind) for h in found) == [
        (meta.id, "marker"), (meta.id, "transcript"), (plain.id, "transcript")
    ]
    assert is_encrypted(meta.folder / SEARCH_FILE)
    listed = {s.id: s for s in list_indexed(home, SessionQuery())}
    assert listed[meta.id].meta() == meta and listed[meta.id].to_json()["name"] == "fruit"
    with sqlite3.connect(home.index) as conn:
        counts = {
            table: conn.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", (meta.id,)).fetchone()[0]
            for table, column in (("chunks", "session_id"), ("markers", "session_id"), ("session_json", "id"), ("sessions", "id"))
        }
    assert counts == {"chunks": 0, "markers": 0, "session_json": 0, "sessions": 1}
    for path in home.home.glob("index.sqlite3*"):
        assert b"mango" not in path.read_bytes(), path
    conn = connect(home.index)
    try:
        assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1  # deleted rows are zeroed
    finally:
        conn.close()


SAME_EVENTS = [
    (0.5, "o", "$ make serve\r\n"),
    (1.0, "o", "le café est prêt\r\n"),
    (1.5, "o", "server error: connection refused on port 8080\r\n"),
    (1.7, "o", "│ İstanbul build │ foo bar │ Straße │ naïve-cache-key\r\n"),
    (2.0, "m", "deploy café"),
]
SAME_EXCHANGES = [{"prompt": "fix the connection refused error in café.py", "answer": "done: restarted the server"}]


@pytest.mark.parametrize(
    "query",
    [
        "cafe", "CAFÉ", '"connection refused"', "conn*", "deploy OR restarted", "server NOT restarted", "cafe port",
        "istanbul", "foo_bar", "naive-cache-key", "strasse OR straße", "prêt",
    ],
    ids=[
        "accent-folded", "upper-accented", "phrase", "prefix", "or", "not", "two-words",
        "dotted-capital-i", "underscore-splits", "hyphenated-phrase", "sharp-s", "accented-query",
    ],
)
def test_a_plain_and_an_encrypted_session_with_the_same_text_give_the_same_hits(
    home: Paths, tmp_path: Path, query: str
) -> None:
    import json

    from shellkeep.archive.search import SearchRequest, search

    root = tmp_path / "p"
    plain = make_session(home, root, 1, events=SAME_EVENTS, exchanges=SAME_EXCHANGES)
    sealed = make_session(home, root, 2, events=SAME_EVENTS, exchanges=SAME_EXCHANGES)
    key = current_key(home, create=True)
    for path in (Path(sealed.cast), sealed.folder / "exchanges.jsonl"):
        write_records_atomic(path, split_records(path.read_bytes()), key)
    assert json.loads((sealed.folder / "meta.json").read_text())["id"] == sealed.id

    hits = search(home, SearchRequest(query, limit=50))

    def of(meta: SessionMeta) -> list[tuple[object, ...]]:
        return sorted(
            (h.kind, h.exchange, h.time, h.snippet, tuple(map(tuple, h.highlights)))
            for h in hits
            if h.session_id == meta.id
        )

    assert of(plain), f"no hit for {query!r}"
    assert of(sealed) == of(plain)
    assert is_encrypted(sealed.folder / SEARCH_FILE)


TRICKY_TEXTS = [
    "le café est prêt", "LE CAFÉ", "cafe\u0301 decomposed", "re\u0301sume\u0301 decomposed", "│ İstanbul │", "foo bar", "foo_bar", "Straße", "strasse",
    "naïve-cache-key", "naive cache key", "ﬁle ligature", "ＦＵＬＬ width", "Ǆungla", "plain ascii words", "x42y 42",
    "connection refused", "refused connection", "Ørsted", "łódź", "привет мир", "日本語テキスト",
]


@pytest.mark.parametrize(
    "query",
    ["cafe", "resume", "CAFÉ", "istanbul", "foo_bar", "naive-cache-key", "strasse", "file", "full", "dzungla", "42",
     '"connection refused"', "conn* OR mir", "orsted", "lodz", "привет", "テキスト", "refused NOT foo"],
)
def test_the_chunks_left_out_of_the_memory_index_could_not_have_matched(query: str) -> None:
    from shellkeep.archive.fts import could_match, fts_query, memory_index

    keep = could_match(query)
    conn = memory_index()
    try:
        conn.executemany("INSERT INTO chunks (session_id, kind, time_s, text) VALUES ('s', 'transcript', 0, ?)", [(t,) for t in TRICKY_TEXTS])
        matched = {row[0] for row in conn.execute("SELECT c.text FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?", (fts_query(query),))}
    finally:
        conn.close()
    assert keep is None or all(keep(text) for text in matched), sorted(t for t in matched if keep and not keep(t))
    if keep is not None:
        assert not all(keep(text) for text in TRICKY_TEXTS)  # it does leave chunks out
