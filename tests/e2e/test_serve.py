"""``shellkeep serve`` as a real process: its security rules over real HTTP and WebSockets.

Each test starts ``shellkeep serve --port 0 --no-open`` and reads the URL it prints; the
requests are real (httpx, the ``websockets`` client). The pages in a real browser are in
``test_serve_browser.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import stat
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import websockets

from shellkeep.store.audit import read_entries
from shellkeep.store.paths import Paths
from tests.e2e.serving import import_claude_session, record_session, serve
from tests.helpers import invoke_sk, run_sk, wait_for_background, wait_until
from tests.live_stand_in import LivePublisher

pytestmark = pytest.mark.timeout(120)


def test_it_binds_loopback_by_default_and_prints_the_url_with_the_token(home: Paths) -> None:
    with serve() as served:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]{43}", served.url), served.url
        assert served.listening_addresses() == {"127.0.0.1"}


def test_the_token_is_kept_0600_reused_and_replaced_on_request(home: Paths) -> None:
    with serve() as first:
        token = first.token
    path = home.home / "serve.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().strip() == token and len(token) >= 43  # 32 random bytes, url-safe base64
    with serve() as again:
        assert again.token == token
    with serve("--new-token") as renewed:
        assert renewed.token != token and path.read_text().strip() == renewed.token


def test_no_token_is_401_everywhere_and_the_token_once_sets_a_strict_cookie(home: Paths) -> None:
    with serve() as served:
        for path in ("/", "/stats", "/api/sessions", "/s/anything", "/static/session.js", "/api/sessions/x/cast"):
            response = httpx.get(served.base + path)
            assert response.status_code == 401, path
            assert "open the URL 'shellkeep serve' printed" in response.text
        first = httpx.get(served.url + "&project=p1")
        assert first.status_code == 303
        assert first.headers["location"] == "/?project=p1"  # the token leaves the address bar
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{served.cookie_name}={served.token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert httpx.get(served.base + "/", cookies={served.cookie_name: served.token}).status_code == 200
        assert httpx.get(served.base + "/", cookies={served.cookie_name: served.token[:-1] + "x"}).status_code == 401


def test_wrong_tokens_are_rate_limited_per_address_and_logged(home: Paths) -> None:
    with serve() as served:
        wrong = "A" * len(served.token)
        codes = [httpx.get(f"{served.base}/?token={wrong}").status_code for _ in range(10)]
        assert codes == [401] * 10
        assert httpx.get(f"{served.base}/?token={wrong}").status_code == 429
        # Once limited, wrong tokens wait, in the URL or a cookie; the owner bringing the
        # right one, in the printed URL or the cookie, is not locked out.
        assert httpx.get(served.base + "/", cookies={served.cookie_name: wrong}).status_code == 429
        assert httpx.get(served.url).status_code == 303
        assert httpx.get(served.base + "/", cookies={served.cookie_name: served.token}).status_code == 200
        assert httpx.get(f"{served.base}/?token={wrong}").status_code == 429
    log = served.stderr()
    assert "wrong token in the URL from 127.0.0.1" in log
    assert wrong not in log and served.token not in log  # values are never logged


def test_the_limit_is_per_client_address_and_never_locks_out_a_signed_in_viewer(home: Paths) -> None:
    # Served on every address, reached from three loopback addresses: three clients.
    with serve("--host", "0.0.0.0") as served:
        base = f"http://127.0.0.1:{served.port}"

        def client(address: str) -> httpx.Client:
            return httpx.Client(transport=httpx.HTTPTransport(local_address=address), base_url=base)

        with client("127.0.0.2") as viewer, client("127.0.0.3") as guesser, client("127.0.0.4") as other:
            assert viewer.get(f"/?token={served.token}").status_code == 303  # signed in: the cookie is kept
            assert viewer.get("/").status_code == 200
            wrong = "B" * len(served.token)
            codes = [guesser.get(f"/?token={wrong}").status_code for _ in range(11)]
            assert codes == [401] * 10 + [429]
            assert guesser.get(f"/?token={wrong}").status_code == 429  # that address waits...
            assert guesser.get(f"/?token={served.token}").status_code == 303  # ...unless it brings the token
            assert other.get(f"/?token={served.token}").status_code == 303  # another address does not
            assert viewer.get("/api/sessions").status_code == 200
            for _ in range(11):  # wrong tokens from the signed-in viewer's own address
                viewer.get(f"/api/sessions?token={wrong}")
            assert viewer.get("/api/sessions").status_code == 200  # its cookie still lets it in
            assert viewer.get(f"/?token={served.token}").status_code == 303
    log = served.stderr()
    assert "wrong token in the URL from 127.0.0.3" in log and "from 127.0.0.2" in log


def test_a_cross_origin_websocket_is_refused(home: Paths) -> None:
    folder, session_id, harness = record_session(home, "print('ready'); input()", expect=b"ready")
    publisher = LivePublisher(folder, session_id=session_id, backlog=[[0.1, "o", "backlog text\r\n"]])
    try:
        with serve() as served:
            url = f"ws://127.0.0.1:{served.port}/ws/s/{session_id}"
            cookie = f"{served.cookie_name}={served.token}"

            async def opens(origin: str | None, with_cookie: bool = True) -> object:
                headers = {"Cookie": cookie} if with_cookie else {}
                if origin is not None:
                    headers["Origin"] = origin
                try:
                    async with websockets.connect(url, additional_headers=headers, subprotocols=["v2.asciicast"], open_timeout=10) as ws:
                        header = json.loads(await asyncio.wait_for(ws.recv(), 10))
                        event = json.loads(await asyncio.wait_for(ws.recv(), 10))
                        return (ws.subprotocol, header["version"], event)
                except websockets.InvalidStatus as exc:
                    return exc.response.status_code

            assert asyncio.run(opens("http://evil.example:8765")) == 403
            assert asyncio.run(opens(f"http://127.0.0.1:{served.port + 1}")) == 403
            assert asyncio.run(opens(None)) == 403
            assert asyncio.run(opens(served.base, with_cookie=False)) == 403
            # The same upgrade from the server's own origin is accepted: the refusals are the Origin's.
            assert asyncio.run(opens(served.base)) == ("v2.asciicast", 2, [0.1, "o", "backlog text\r\n"])
        assert [(e.command, e.detail) for e in read_entries(home) if e.session == session_id] == [("serve", "live")]
    finally:
        publisher.close()
        harness.write(b"\r")
        harness.finish()


def test_input_is_refused_unless_allowed_and_from_the_own_origin(home: Paths) -> None:
    folder, session_id, harness = record_session(home, "print('ready'); input()", expect=b"ready")
    publisher = LivePublisher(folder, session_id=session_id)
    try:
        with serve() as served:
            refused = served.client().post(f"/api/sessions/{session_id}/input", json={"text": "ls\r"}, headers={"Origin": served.base})
            assert refused.status_code == 403 and "--allow-input" in refused.json()["error"]
        with serve("--allow-input") as served:
            client = served.client()
            foreign = client.post(f"/api/sessions/{session_id}/input", json={"text": "ls\r"}, headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
            sent = client.post(f"/api/sessions/{session_id}/input", json={"text": "typed from afar\r"}, headers={"Origin": served.base})
            assert sent.status_code == 200, sent.text
        assert publisher.inputs == [{"input": "typed from afar\r", "viewer": "web 127.0.0.1"}]
    finally:
        publisher.close()
        harness.write(b"\r")
        harness.finish()


def test_viewing_a_recording_leaves_audit_entries(home: Paths) -> None:
    folder, session_id, _ = record_session(home, "print('audited words')")
    with serve() as served:
        client = served.client()
        assert client.get(f"/s/{session_id}").status_code == 200
        cast = client.get(f"/api/sessions/{session_id}/cast")
        assert cast.status_code == 200 and "audited words" in cast.text
        assert json.loads(cast.text.splitlines()[0])["version"] == 2
        assert client.get("/?q=audited").status_code == 200
    entries = [(e.command, e.session, e.detail) for e in read_entries(home)]
    assert ("serve", session_id, "page") in entries
    assert ("serve", session_id, "recording") in entries
    assert ("serve", session_id, "search hit") in entries


def test_an_encrypted_session_whose_key_is_missing_says_so(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.e2e.test_secrets import wait_for_housekeeping
    from tests.helpers import run_sk

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    assert invoke_sk("key", "init").returncode == 0
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    folder, session_id, _ = record_session(home, "print('sealed ' + 'words')")
    wait_for_housekeeping(home)
    with serve() as served:
        client = served.client()
        page = client.get(f"/s/{session_id}")
        assert page.status_code == 200 and "sealed words" not in page.text
        assert client.get(f"/api/sessions/{session_id}/cast").text.count("sealed words") == 1  # the key is there: decrypted
        (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")
        # The same server, which has just used the key, now finds it gone too.
        page = client.get(f"/s/{session_id}")
        assert page.status_code == 200 and "suspended: key missing" in page.text
        cast = client.get(f"/api/sessions/{session_id}/cast")
        assert cast.status_code == 409 and "sealed words" not in cast.text
        (tmp_path / "saved-keys.json").rename(home.home / "keys" / "keys.json")
        assert client.get(f"/api/sessions/{session_id}/cast").text.count("sealed words") == 1  # back: decrypted again
        (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")
    with serve() as served:
        client = served.client()
        page = client.get(f"/s/{session_id}")
        assert page.status_code == 200
        assert "suspended: key missing" in page.text and "shellkeep key import" in page.text
        cast = client.get(f"/api/sessions/{session_id}/cast")
        assert cast.status_code == 409 and "shellkeep key import" in cast.json()["error"]


def test_the_list_filters_by_project_agent_status_and_live_state(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, first, _ = record_session(home, "import time; print('one'); time.sleep(1.1)", name="here")
    other = tmp_path / "other-project"
    other.mkdir()
    monkeypatch.chdir(other)
    _, second, _ = record_session(home, "import time; print('two'); time.sleep(1.1)", name="there")
    wait_for_background(home)  # indexed (a listing while the detached indexer works may miss the newest)
    # A prompt left unanswered: the session settles on "waiting" once quiet (app.ps).
    _, running, harness = record_session(home, "import sys; sys.stdout.write('name? '); sys.stdout.flush(); input()", name="running", expect=b"name? ")
    try:
        with serve() as served:
            client = served.client()

            def names(**params: str) -> list[str]:
                response = client.get("/api/sessions", params=params)
                assert response.status_code == 200, response.text
                return [row["name"] for row in response.json()]

            # The recorder that just started may still be writing the index (a listing can miss a
            # session for that moment): wait for the whole list, then filter it.
            wait_until(lambda: names() == ["running", "there", "here"])
            wait_until(lambda: {r["name"]: r["state"] for r in client.get("/api/sessions").json()}["running"] == "waiting")
            rows = {row["name"]: row for row in client.get("/api/sessions").json()}
            assert rows["running"]["status"] == "running" and rows["there"]["state"] is None
            assert names(project=rows["here"]["project"]) == ["here"]
            assert names(status="finished") == ["there", "here"]
            assert names(status="running") == ["running"]
            assert names(status="waiting") == ["running"]
            assert names(status="working") == []
            assert names(agent="nosuchagent") == []
            assert names(since="1d") == ["running", "there", "here"]
            page = client.get("/", params={"project": rows["there"]["project"]})
            assert "there" in page.text and ">here<" not in page.text
    finally:
        harness.write(b"\r")
        harness.finish()
    assert {first, second, running} == {rows[n]["id"] for n in ("here", "there", "running")}


def test_stats_label_sessions_without_a_model_and_round_durations(home: Paths) -> None:
    for n in range(3):  # plain programs: no agent, no model
        record_session(home, f"import time; time.sleep(0.{n + 1}3); print('plain {n}')")
    wait_for_background(home)
    with serve() as served:
        client = served.client()
        report = client.get("/api/stats", params={"by": "model"}).json()
        [group] = report["groups"]
        assert group["key"] == "" and group["sessions"] == 3
        for row in (group, report["total"]):
            assert row["duration_s"] == round(row["duration_s"], 3), row  # no float noise
            assert len(repr(row["duration_s"]).partition(".")[2]) <= 3
        page = client.get("/stats", params={"by": "model"})
        assert "no model reported" in page.text and "(none)" not in page.text


def test_bad_filters_and_queries_are_one_line_on_the_page(home: Paths) -> None:
    with serve() as served:
        client = served.client()
        since = client.get("/", params={"since": "last tuesday"})
        assert since.status_code == 400 and "last tuesday" in since.text
        query = client.get("/", params={"q": "NOT"})
        assert query.status_code == 400 and 'id="error"' in query.text
        grouped = client.get("/api/stats", params={"by": "colour"})
        assert grouped.status_code == 400 and "colour" in grouped.json()["error"]
        missing = client.get("/s/20990101-000000-00000")
        assert missing.status_code == 404 and "pick one from the list" in missing.text
        assert client.get("/s/..%2F..%2Fetc").status_code == 404
        assert client.get("/api/sessions/nope/cast").json() == {"error": "no session 'nope'; pick one from the list"}
    assert "Traceback" not in served.stderr()


def test_a_lan_address_prints_a_qr_code(home: Paths) -> None:
    with serve("--host", "0.0.0.0") as served:
        host = urlsplit(served.url).hostname
        assert host and host != "0.0.0.0", served.url  # a phone cannot open 0.0.0.0
        assert served.listening_addresses() == {"0.0.0.0"}  # still bound to every address
        # The URL printed is one the server answers at (the LAN address is this machine's).
        assert httpx.get(served.url, timeout=30).status_code == 303
    err = served.stderr()  # complete once it stopped
    assert "▀" in err or "█" in err or "▄" in err
    assert f"serving http://{host}:{served.port}" in err


def test_a_port_in_use_is_one_line_and_exit_2(home: Paths) -> None:
    with serve() as served:
        from tests.helpers import run_sk

        busy = run_sk("serve", "--port", str(served.port), "--no-open", timeout_s=30)
    assert busy.returncode == 2
    err = busy.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(f"shellkeep: cannot listen on 127.0.0.1:{served.port}") and "--port" in err, err



def test_search_keeps_to_the_filters_and_the_limit(home: Paths) -> None:
    _, first, _ = record_session(home, "print('line1'); print('line2')", name="first")
    _, second, _ = record_session(home, "print('line2 again')", name="second")
    _, other, _ = record_session(home, "print('something else')", name="other")
    wait_for_background(home)
    with serve() as served:
        client = served.client()

        def hit_names(**params: str) -> set[str]:
            page = client.get("/", params=params)
            assert page.status_code == 200, page.text
            return {name for name in ("first", "second", "other") if f">{name}</a>" in page.text}

        def names(**params: str) -> list[str]:
            response = client.get("/api/sessions", params=params)
            assert response.status_code == 200, response.text
            return [row["name"] for row in response.json()]

        assert hit_names(q="line2") == {"first", "second"}
        assert hit_names(q="line2", status="killed") == set()  # both finished
        assert hit_names(q="line2", status="finished") == {"first", "second"}
        assert len(hit_names(q="line2", limit="1")) == 1
        assert sorted(names(q="line2")) == ["first", "second"]
        assert names(q="line2", status="killed") == []
        assert len(names(q="line2", limit="1")) == 1
        assert len(names(limit="2", all="1")) == 2 and len(names(all="1")) == 3  # all: short ones too
        bad = client.get("/api/sessions", params={"limit": "lots"})
        assert bad.status_code == 400 and "limit" in bad.json()["error"]
    assert other and first != second


def test_the_live_view_past_the_viewer_limit_closes_with_the_reason(home: Paths) -> None:
    from shellkeep.capture.live import MAX_CLIENTS, LiveHeader, connect_live, parse_line

    folder, session_id, harness = record_session(home, "print('ready'); input()", expect=b"ready")
    wait_until(lambda: (folder / "live.sock").exists())
    viewers = [connect_live(folder, timeout_s=30) for _ in range(MAX_CLIENTS)]
    try:
        for viewer in viewers:  # each one served: its header came
            assert isinstance(parse_line(viewer.makefile("rb").readline()), LiveHeader)
        with serve() as served:

            async def close_of_the_17th() -> tuple[int | None, str | None]:
                headers = {"Cookie": f"{served.cookie_name}={served.token}", "Origin": served.base}
                url = f"ws://127.0.0.1:{served.port}/ws/s/{session_id}"
                async with websockets.connect(url, additional_headers=headers, subprotocols=["v2.asciicast"], open_timeout=10) as ws:
                    with pytest.raises(websockets.ConnectionClosed):
                        await asyncio.wait_for(ws.recv(), 20)
                    return ws.close_code, ws.close_reason

            assert asyncio.run(close_of_the_17th()) == (1013, f"session {session_id} has {MAX_CLIENTS} viewers already; try again later")
        assert "Traceback" not in served.stderr()
    finally:
        for viewer in viewers:
            viewer.close()
        harness.write(b"\r")
        harness.finish()


def test_a_session_is_found_by_prefix_or_name_and_an_ambiguous_prefix_says_so(home: Paths) -> None:
    _, first, _ = record_session(home, "print('first words')", name="my first")
    _, second, _ = record_session(home, "print('second words')", name="second")
    common = next(i for i in range(len(first)) if first[i] != second[i])
    with serve() as served:
        client = served.client()
        by_prefix = client.get(f"/s/{first[:common + 1]}")
        assert by_prefix.status_code == 200 and f'data-session="{first}"' in by_prefix.text
        by_name = client.get("/s/my first")
        assert by_name.status_code == 200 and f'data-session="{first}"' in by_name.text
        cast = client.get("/api/sessions/second/cast")
        assert cast.status_code == 200 and "second words" in cast.text
        ambiguous = client.get(f"/s/{first[:common]}")
        assert ambiguous.status_code == 400 and "matches 2 sessions" in ambiguous.text
        assert "matches 2 sessions" in client.get(f"/api/sessions/{first[:common]}/cast").json()["error"]
        assert client.get("/s/nosuchname").status_code == 404
    entries = [(e.command, e.session, e.detail) for e in read_entries(home)]
    assert ("serve", first, "page") in entries and ("serve", second, "recording") in entries


def test_an_imported_session_shows_its_exchanges_and_has_no_cast(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    session_id = import_claude_session(home, tmp_path / "user-home", ("how do quokkas sleep", "and wombats"))
    wait_for_background(home)
    with serve() as served:
        client = served.client()
        hits = client.get("/", params={"q": "quokkas"})
        assert hits.status_code == 200 and f'href="/s/{session_id}?t=' in hits.text, hits.text
        link = re.search(rf'href="(/s/{session_id}\?t=[^"]*)"', hits.text)
        assert link is not None
        for path in (f"/s/{session_id}", link.group(1).replace("&amp;", "&")):
            page = client.get(path)
            assert page.status_code == 200, page.text
            assert "how do quokkas sleep" in page.text and "and wombats" in page.text and "answer 1" in page.text
            assert "imported from Claude Code&#39;s own history" in page.text
            assert "record.detail" not in page.text
            assert 'id="player"' not in page.text and "asciinema-player.min.js" not in page.text
        cast = client.get(f"/api/sessions/{session_id}/cast")
        assert cast.status_code == 404, cast.text
        assert "imported from claude" in cast.json()["error"] and "\n" not in cast.json()["error"]
    entries = [(e.command, e.session, e.detail) for e in read_entries(home)]
    assert ("serve", session_id, "page") in entries


def test_a_session_kept_without_a_recording_gives_the_setting_and_no_cast(home: Paths) -> None:
    assert invoke_sk("config", "set", "record.detail", "conversation").returncode == 0
    folder, session_id, _ = record_session(home, "print('unkept words')")
    wait_for_background(home)  # the upkeep after the session drops its recording
    assert not (folder / "session.cast").exists()
    with serve() as served:
        client = served.client()
        page = client.get(f"/s/{session_id}")
        assert page.status_code == 200
        assert "kept no terminal recording (record.detail = &#39;conversation&#39;)" in page.text
        assert 'id="timeline"' in page.text and 'id="player"' not in page.text
        cast = client.get(f"/api/sessions/{session_id}/cast")
        assert cast.status_code == 404 and "record.detail" in cast.json()["error"], cast.text
