"""The MCP server's tools (shellkeep/mcp, app/archive_scope.py, app/archive_reads.py) through the SDK's
own client, connected in process to the server ``shellkeep mcp`` runs (``build_server``).

Sessions are real folders (tests/factory.py), the index and the audit log real files; the
stdio process itself is tested in tests/e2e/test_mcp_stdio.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, Implementation, Tool

from shellkeep.app.archive_scope import open_scope
from shellkeep.app.checkpoints import add_checkpoint
from shellkeep.app.context import open_context
from shellkeep.mcp.pages import MAX_TEXT_CHARS
from shellkeep.mcp.server import build_server
from shellkeep.mcp.tools import MAX_LIMIT, Reader
from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from tests.factory import make_session
from tests.helpers import git, git_init

CLIENT = Implementation(name="claude-code", version="2.1.197")
AUDITED_AS = "mcp:claude-code 2.1.197"
_MARKER = re.compile(r"\.\.\. \((\d+) more characters, cursor: (\S+)\)$")


def call(
    tool: str,
    args: Mapping[str, object],
    *,
    cwd: Path | None = None,
    all_projects: bool = False,
    remote: bool = False,
    max_chars: int = MAX_TEXT_CHARS,
    client_info: Implementation = CLIENT,
) -> CallToolResult:
    """Call one tool through an in-process client of a server started in ``cwd`` (default: the test's project)."""
    ctx = open_context(cwd=cwd or Path.cwd())
    scope = open_scope(ctx, all_projects=all_projects, remote=remote)
    server = build_server(lambda client: Reader(ctx, scope, client, max_chars))

    async def talk() -> CallToolResult:
        async with Client(server, client_info=client_info) as client:
            return await client.call_tool(tool, dict(args))

    return anyio.run(talk)


def listed_tools() -> list[Tool]:
    ctx = open_context()
    server = build_server(lambda client: Reader(ctx, open_scope(ctx), client))

    async def talk() -> list[Tool]:
        async with Client(server, client_info=CLIENT) as client:
            return (await client.list_tools()).tools

    return anyio.run(talk)


def ok(result: CallToolResult) -> dict[str, object]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_line(result: CallToolResult) -> str:
    assert result.is_error
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert "\n" not in text and "Traceback" not in text, text
    return text


def test_tools_are_listed_with_schemas_descriptions_and_their_bound() -> None:
    tools = {t.name: t for t in listed_tools()}
    assert sorted(tools) == ["get_diff", "get_screen", "get_session", "list_sessions", "search_sessions"]
    expected = {
        "search_sessions": ({"query", "agent", "since", "limit", "cursor"}, ["query"]),
        "list_sessions": ({"status", "agent", "since", "limit", "cursor"}, []),
        "get_session": ({"id", "cursor"}, ["id"]),
        "get_screen": ({"id", "at", "exchange", "marker", "cursor"}, ["id"]),
        "get_diff": ({"id", "from", "to", "cursor"}, ["id"]),
    }
    for name, (properties, required) in expected.items():
        schema = tools[name].input_schema
        assert set(schema["properties"]) == properties, name
        assert schema.get("required", []) == required, name
        assert all(p.get("description") for p in schema["properties"].values()), name
        assert tools[name].annotations is not None and tools[name].annotations.read_only_hint is True
        if "cursor" in properties:
            assert f"{MAX_TEXT_CHARS} characters" in (tools[name].description or ""), name


def test_search_and_reads_stay_in_the_project_of_the_working_directory(home: Paths, tmp_path: Path) -> None:
    ours = make_session(home, Path.cwd(), 1, events=((0.5, "o", "the lemur escaped\r\n"),))
    other_root = tmp_path / "other"
    other_root.mkdir()
    theirs = make_session(home, other_root, 2, events=((0.5, "o", "the okapi escaped\r\n"),))

    hits = ok(call("search_sessions", {"query": "escaped"}))["hits"]
    assert isinstance(hits, list) and [h["source"]["session"] for h in hits] == [ours.id]
    assert ok(call("search_sessions", {"query": "okapi"}))["hits"] == []
    listed = ok(call("list_sessions", {}))["sessions"]
    assert isinstance(listed, list) and [s["id"] for s in listed] == [ours.id]
    # An id outside the scope is answered word for word as an unknown one, by any tool.
    for tool in ("get_session", "get_screen", "get_diff"):
        refused = error_line(call(tool, {"id": theirs.id}))
        unknown = error_line(call(tool, {"id": "20240501-999999-99999"}))
        assert refused.replace(theirs.id, "ID") == unknown.replace("20240501-999999-99999", "ID"), (refused, unknown)
        assert "no session" in refused
    assert error_line(call("get_session", {"id": theirs.id[:13]})).startswith("Error executing tool get_session: no session")  # its own prefix
    # A prefix of both sessions names ours alone: the other project's is not counted, nor told.
    assert ok(call("get_session", {"id": "20240501-12"}))["session"]["id"] == ours.id  # type: ignore[index]

    wide = ok(call("search_sessions", {"query": "okapi"}, all_projects=True))["hits"]
    assert isinstance(wide, list) and [h["source"]["session"] for h in wide] == [theirs.id]
    got = ok(call("get_session", {"id": theirs.id}, all_projects=True))
    assert got["session"]["id"] == theirs.id  # type: ignore[index]
    # Started in the other project, the scope is the other project.
    assert [h["source"]["session"] for h in ok(call("search_sessions", {"query": "escaped"}, cwd=other_root))["hits"]] == [theirs.id]  # type: ignore[union-attr]


def test_each_content_call_leaves_one_audit_entry_naming_the_client(home: Paths) -> None:
    meta = make_session(
        home, Path.cwd(), 1, events=((0.5, "o", "the lemur escaped\r\n"),), exchanges=[{"prompt": "where is the lemur", "answer": "gone"}]
    )
    ok(call("list_sessions", {}))
    error_line(call("get_session", {"id": "nope"}))
    assert read_entries(home) == []  # metadata and refusals read no content
    ok(call("search_sessions", {"query": "lemur"}))
    ok(call("get_session", {"id": meta.id}))
    ok(call("get_screen", {"id": meta.id}))
    ok(call("get_screen", {"id": meta.id, "at": 0.1}))
    entries = read_entries(home)
    assert [(e.command, e.session, e.project) for e in entries] == [(AUDITED_AS, meta.id, meta.project)] * 4
    assert [e.detail for e in entries] == ["search hit", "exchanges (mcp get_session)", "last screen", "screen at 0.1s"]


def test_a_client_name_is_audited_as_printable_words_on_one_line_cut_short(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, events=((0.5, "o", "the lemur escaped\r\n"),))
    evil = Implementation(name="evil\nx 20261206-000000-00000\t" + "y" * 200, version="1\r\n2")
    ok(call("search_sessions", {"query": "lemur"}, client_info=evil))
    [entry] = read_entries(home)
    assert entry.command == ("mcp:evil_x_20261206-000000-00000_" + "y" * 200)[:44] and entry.session == meta.id


def test_get_session_gives_quoted_exchanges_and_its_cursor_reaches_the_end_without_loss_or_repetition(home: Paths) -> None:
    exchanges = [
        {"prompt": f"prompt {i} " + "p" * (1_500 + i), "answer": f"answer {i} " + "a" * (9_000 if i % 3 else 41_000), "time": None}
        for i in range(12)
    ]
    exchanges[4]["tool_calls"] = [{"name": "Bash", "summary": "pytest -q"}]
    meta = make_session(home, Path.cwd(), 1, exchanges=exchanges)
    got: dict[tuple[int, str], str] = {}
    cursor: object = None
    pages = 0
    while True:
        args: dict[str, object] = {"id": meta.id} if cursor is None else {"id": meta.id, "cursor": cursor}
        page = ok(call("get_session", args))
        pages += 1
        assert "not instructions" in str(page["note"])
        items = page["items"]
        assert isinstance(items, list) and items
        text_chars = 0
        for item in items:
            source, text = item["source"], item["text"]
            assert source["session"] == meta.id and source["time"] == meta.started_at
            cut = _MARKER.search(text)
            if cut:
                assert int(cut.group(1)) == source["cut_chars"] and cut.group(2) == page["next_cursor"]
                text = text[: cut.start()]
            key = (source["exchange"], source["kind"])
            assert len(got.get(key, "")) == source.get("offset", 0), (key, "a piece lost or repeated")
            got[key] = got.get(key, "") + text
            text_chars += len(text)
        assert text_chars <= MAX_TEXT_CHARS
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert "checkpoints" not in page or pages == 1
    want = {}
    for i, ex in enumerate(exchanges):
        want[(i + 1, "prompt")] = ex["prompt"]
        want[(i + 1, "answer")] = ex["answer"]
    want[(5, "tool_calls")] = "Bash: pytest -q"
    assert got == want
    total = sum(len(t) for t in want.values())
    assert pages >= total // MAX_TEXT_CHARS + 1


def test_search_pages_with_its_cursor_and_limits_clamp(home: Paths) -> None:
    for n in range(1, 9):
        make_session(home, Path.cwd(), n, events=((0.5, "o", f"giraffe number {n} " + "x" * 60 + "\r\n"),))
    whole = ok(call("search_sessions", {"query": "giraffe", "limit": 500}))
    assert len(whole["hits"]) == 8 and whole["next_cursor"] is None  # type: ignore[arg-type]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        pages += 1
        args: dict[str, object] = {"query": "giraffe", "limit": 500} if cursor is None else {"query": "giraffe", "limit": 500, "cursor": cursor}
        page = ok(call("search_sessions", args, max_chars=150))  # a hit's source takes about 110
        for hit in page["hits"]:  # type: ignore[attr-defined]
            text = _MARKER.sub("", hit["text"])
            seen.append("+" + text if "offset" in hit["source"] else text)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    joined = []
    for piece in seen:
        if piece.startswith("+"):
            joined[-1] += piece[1:]
        else:
            joined.append(piece)
    assert joined == [h["text"] for h in whole["hits"]]  # type: ignore[attr-defined]
    assert pages >= 8 and len(seen) > 8  # paged, and hits cut across pages
    # A cursor is good only with the arguments of the call that made it.
    first = ok(call("search_sessions", {"query": "giraffe"}, max_chars=150))
    assert "other arguments" in error_line(call("search_sessions", {"query": "lemur", "cursor": first["next_cursor"]}))
    assert MAX_LIMIT == 50


def test_long_names_titles_and_labels_stay_within_the_bound(home: Paths) -> None:
    import dataclasses
    import json

    from shellkeep.store.session import write_meta

    huge = "N" * 60_000
    ids = []
    for n in range(1, 31):
        meta = make_session(home, Path.cwd(), n, name=f"{n}{huge}", events=((0.5, "o", "the tapir naps\r\n"),))
        write_meta(dataclasses.replace(meta, title="T" * 60_000, cwd="/" + "c" * 60_000))
        add_checkpoint(meta.folder, meta.id, Path.cwd(), "L" * 60_000, time_s=0.1)
        ids.append(meta.id)
    bound = MAX_TEXT_CHARS + 1_000  # the note, the cut marker, the field names
    calls = [("list_sessions", {"limit": 50}), ("search_sessions", {"query": "tapir", "limit": 50}), ("get_session", {"id": ids[0]})]
    for tool, args in calls:
        got = ok(call(tool, args))
        assert len(json.dumps(got, ensure_ascii=False, separators=(",", ":"))) <= bound, tool
    listed: list[str] = []
    cursor = None
    while True:
        page = ok(call("list_sessions", {"limit": 50} if cursor is None else {"limit": 50, "cursor": cursor}))
        listed += [s["id"] for s in page["sessions"]]  # type: ignore[attr-defined]
        assert "more characters" in page["sessions"][0]["title"]  # type: ignore[index]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert listed == ids[::-1]  # every session once, newest first


@pytest.mark.parametrize(
    ("tool", "args", "says"),
    [
        ("search_sessions", {"query": "lemur", "since": "someday"}, "someday"),
        ("search_sessions", {"query": "NOT"}, "nothing to search for"),
        ("search_sessions", {"query": "lemur", "cursor": "!!!"}, "cursor"),
        ("list_sessions", {"status": "sleeping"}, "unknown status 'sleeping'"),
        ("get_screen", {"id": "S", "at": 1.0, "exchange": 1}, "give only one of at, exchange"),
        ("get_screen", {"id": "S", "exchange": 7}, "has exchanges 1 to 1, not 7; get_session lists them"),
        ("get_diff", {"id": "S"}, "no checkpoints"),
        ("search_sessions", {"query": "x", "limit": "abc"}, "search_sessions: limit: give a whole number"),
        ("search_sessions", {}, "search_sessions: query: required"),
        ("get_diff", {"id": "S", "from": "nope"}, "get_diff: from: give a whole number"),
        ("get_screen", {"id": "S", "at": "soon"}, "get_screen: at: give a number"),
        ("search_sessions", {"query": "x", "limit": -1}, "limit: give 1 to 50, not -1"),
        ("list_sessions", {"limit": 0}, "limit: give 1 to 50, not 0"),
        ("get_screen", {"id": "S", "at": 1e9}, "at: give 0 to 0.5, its length in seconds"),
        ("get_screen", {"id": "S", "at": -5}, "at: give 0 to 0.5"),
        ("get_screen", {"id": "S", "marker": "x"}, "has no markers; give at (seconds since its start) instead"),
    ],
    ids=[
        "bad-since", "bad-query", "bad-cursor", "bad-status", "two-points", "no-such-exchange", "no-checkpoints",
        "limit-not-a-number", "no-query", "from-not-a-number", "at-not-a-number",
        "limit-negative", "limit-zero", "at-past-the-end", "at-negative", "no-markers",
    ],
)
def test_bad_input_is_a_tool_error_of_one_line(home: Paths, tool: str, args: dict[str, object], says: str) -> None:
    meta = make_session(home, Path.cwd(), 1, exchanges=[{"prompt": "hi", "answer": "hello"}])
    given = {k: (meta.id if v == "S" else v) for k, v in args.items()}
    line = error_line(call(tool, given))
    assert line.startswith(f"Error executing tool {tool}: ") and says in line, line
    assert "pydantic" not in line and "validation error" not in line, line
    assert "--" not in line and "shellkeep show" not in line, line  # the tools' argument names, not the commands' options


def test_get_screen_at_a_time_and_the_last_screen(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1, events=((0.5, "o", "first screen\r\n"), (2.0, "o", "\x1b[2J\x1b[Hsecond screen\r\n")))
    early = ok(call("get_screen", {"id": meta.id, "at": 1.0}))["items"]
    last = ok(call("get_screen", {"id": meta.id}))["items"]
    assert isinstance(early, list) and isinstance(last, list)
    assert "first screen" in early[0]["text"] and "second" not in early[0]["text"]
    assert "second screen" in last[0]["text"] and "first" not in last[0]["text"]
    assert early[0]["source"]["kind"] == "screen" and early[0]["source"]["offset_s"] == 1.0


def test_get_diff_gives_the_checkpoint_patch_redacted(home: Paths) -> None:
    project = Path.cwd()
    git_init(project)
    (project / "app.py").write_text("x = 1\n")
    git(project, "add", "app.py")
    git(project, "commit", "-qm", "start")
    meta = make_session(home, project, 1)
    add_checkpoint(meta.folder, meta.id, project, "before", time_s=0.1)
    token = "ghp_" + "Zq8" * 12
    (project / "app.py").write_text(f"x = 2\nTOKEN = '{token}'\n")
    add_checkpoint(meta.folder, meta.id, project, "after", time_s=0.4)
    got = ok(call("get_diff", {"id": meta.id}))
    patch = got["items"][0]["text"]  # type: ignore[index]
    assert "-x = 1" in patch and "+x = 2" in patch
    assert token not in patch and "[REDACTED:github-token]" in patch
    assert got["from"] == "checkpoint 1 'before'" and got["to"] == "checkpoint 2 'after'"
    same = ok(call("get_diff", {"id": meta.id, "from": 2, "to": 2}))
    assert same["items"][0]["text"] == ""  # type: ignore[index]
    assert [e.detail for e in read_entries(home)][-2:] == [
        "diff checkpoint 1 'before' -> checkpoint 2 'after'", "diff checkpoint 2 'after' -> checkpoint 2 'after'"
    ]


def test_an_encrypted_session_without_its_key_is_refused_naming_the_key(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_os_keyring: None
) -> None:
    pytest.importorskip("cryptography")
    from shellkeep.vault.crypto import key_id_of_file
    from shellkeep.vault.keys import forget_cached_keys
    from tests.helpers import invoke_sk

    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    source = tmp_path / "sealed.cast"
    source.write_text('{"version": 2, "width": 80, "height": 24}\n[0.5, "o", "the pangolin sleeps\\r\\n"]\n')
    imported = invoke_sk("import", str(source))
    assert imported.returncode == 0, imported.stderr
    session = imported.stdout.decode().strip().split()[-1]
    cast = next(home.projects.glob("*/*/session.cast"))
    readable = ok(call("get_screen", {"id": session}))  # with its key: read, decrypted
    assert "the pangolin sleeps" in readable["items"][0]["text"]  # type: ignore[index]
    key_id = key_id_of_file(cast)
    (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")
    forget_cached_keys()
    before = len(read_entries(home))
    for tool in ("get_session", "get_screen", "get_diff"):
        line = error_line(call(tool, {"id": session}))
        assert f"encrypted with key {key_id}" in line and "shellkeep key import" in line, line
    searched = ok(call("search_sessions", {"query": "pangolin"}))
    assert searched["hits"] == []
    assert searched["skipped"] == f"1 encrypted session not searched: key {key_id} missing (suspended); import it with 'shellkeep key import FILE'"
    assert len(read_entries(home)) == before  # nothing was read


def test_remote_adds_the_sessions_of_this_repository_pulled_from_another_machine(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from shellkeep.store.session import write_meta
    from tests.helpers import invoke_sk

    project = Path.cwd()
    git_init(project)
    git(project, "commit", "-q", "--allow-empty", "-m", "root")
    root = git(project, "rev-list", "--max-parents=0", "HEAD").strip()
    asked = [{"prompt": "where did the narwhal go", "answer": "it surfaced"}]  # a pulled session's text: its exchanges
    meta = make_session(home, project, 1, exchanges=asked)
    write_meta(dataclasses.replace(meta, git_identity={"remote": None, "root_commit": root}))
    stray = make_session(home, tmp_path, 2, exchanges=asked)  # another project
    share = (tmp_path / "share").as_uri()
    assert invoke_sk("sync", "push", "--remote", share).returncode == 0
    # Machine B: another data folder, a clone of the repository elsewhere, and a stranger project.
    monkeypatch.setenv("SHELLKEEP_HOME", str(tmp_path / "b-data"))
    monkeypatch.setenv("SHELLKEEP_CONFIG", str(tmp_path / "b.toml"))
    pulled = invoke_sk("sync", "pull", "--remote", share, "--all-machines")
    assert pulled.returncode == 0, pulled.stderr
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    assert ok(call("search_sessions", {"query": "narwhal"}, cwd=clone))["hits"] == []
    hits = ok(call("search_sessions", {"query": "narwhal"}, cwd=clone, remote=True))["hits"]
    assert isinstance(hits, list) and [h["source"]["session"] for h in hits] == [meta.id]
    assert hits[0]["source"]["machine"]
    assert ok(call("search_sessions", {"query": "narwhal"}, cwd=stranger, remote=True))["hits"] == []
    assert error_line(call("get_session", {"id": stray.id}, cwd=clone, remote=True)).startswith(
        "Error executing tool get_session: no session"
    )
    everywhere = ok(call("search_sessions", {"query": "narwhal"}, cwd=stranger, remote=True, all_projects=True))["hits"]
    assert sorted(h["source"]["session"] for h in everywhere) == sorted([meta.id, stray.id])  # type: ignore[union-attr]
    got = ok(call("get_session", {"id": meta.id}, cwd=clone, remote=True))
    assert got["session"]["machine"]  # type: ignore[index]
    listed = ok(call("list_sessions", {}, cwd=clone, remote=True))["sessions"]
    assert [s["id"] for s in listed] == [meta.id]  # type: ignore[union-attr]
