"""``shellkeep serve`` in a real headless browser: Chromium from Debian, driven by Playwright.

Playwright is pointed at ``/usr/bin/chromium`` (``executable_path``); it downloads no
browser of its own. Waits are Playwright's own (text appearing in the page), never sleeps.
Set ``SHELLKEEP_SCREENSHOTS`` to a folder to have the list and a session page saved there
(``docs/serve.png`` in the README was made so); a normal run writes nothing in the tree.

The live tests: one uses the stand-in publisher (``tests/live_stand_in.py``) in a real
running session's folder; ``test_a_real_recording_plays_live`` drives the recorder's own
live socket. Without chromium the module is skipped, which fails a CI run (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from shellkeep.store.paths import Paths
from tests.e2e.serving import Served, import_claude_session, record_session, serve
from tests.helpers import invoke_sk, load_session, session_folders, wait_for_background
from tests.live_stand_in import LivePublisher

playwright_sync = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.browser,
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK), reason="needs Debian's chromium (apt-get install chromium)"),
]

WAIT_MS = 20_000
SCREENSHOTS = os.environ.get("SHELLKEEP_SCREENSHOTS")

@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_sync.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    opened = context.new_page()
    yield opened
    context.close()


def _open(page: object, served: Served, path: str = "/") -> None:
    """Visit the printed URL once (the cookie is set), then ``path``."""
    page.goto(served.url)  # type: ignore[attr-defined]
    if path != "/":
        page.goto(served.base + path)  # type: ignore[attr-defined]


def _screenshot(page: object, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / name))  # type: ignore[attr-defined]


def _long_session(home: Paths, name: str, text: str) -> str:
    """Record a program that prints ``text`` and runs past a second (the list leaves shorter ones out)."""
    code = f"import time; print({text!r}); time.sleep(1.2)"
    return record_session(home, code, name=name)[1]


def test_the_list_loads_and_a_search_finds_a_session(home: Paths, page: object) -> None:
    expect = playwright_sync.expect
    _long_session(home, "fix-login", "the login form is fixed")
    other = _long_session(home, "tidy-css", "stylesheet tidied up")
    wait_for_background(home)  # indexed (a listing while the detached indexer works may miss the newest)
    with serve() as served:
        wrong = "W" * len(served.token)  # someone else on this address guessed: it is limited
        assert [httpx.get(f"{served.base}/?token={wrong}").status_code for _ in range(11)] == [401] * 10 + [429]
        _open(page, served)  # the owner's browser, with the printed URL, still gets in
        assert page.url == served.base + "/"  # type: ignore[attr-defined]  # the token left the address bar
        table = page.locator("#sessions")  # type: ignore[attr-defined]
        expect(table).to_contain_text("fix-login", timeout=WAIT_MS)
        expect(table).to_contain_text("tidy-css")
        expect(table).to_contain_text("finished")
        _screenshot(page, "serve-list.png")
        page.fill("#q", "stylesheet")  # type: ignore[attr-defined]
        page.press("#q", "Enter")  # type: ignore[attr-defined]
        hits = page.locator("#hits")  # type: ignore[attr-defined]
        expect(hits).to_contain_text("tidy-css", timeout=WAIT_MS)
        expect(hits.locator("mark")).to_have_text("stylesheet")
        assert "fix-login" not in hits.inner_text()
        hits.locator("a").first.click()
        expect(page.locator("h1")).to_have_text("tidy-css", timeout=WAIT_MS)  # type: ignore[attr-defined]
        assert other in page.url  # type: ignore[attr-defined]


def test_a_search_hit_in_an_imported_session_opens_its_exchanges(
    home: Paths, page: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expect = playwright_sync.expect
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[prices."claude-sonnet-x"]\ninput = 10000.0\noutput = 20000.0\n')  # its cost in dollars, not fractions of a cent
    import_claude_session(home, tmp_path / "user-home", ("where do platypuses nest", "and echidnas"))
    wait_for_background(home)
    cost = json.loads(invoke_sk("stats", "--json").stdout)["total"]["cost_usd"]
    assert cost >= 0.01
    with serve() as served:
        _open(page, served)
        page.fill("#q", "platypuses")  # type: ignore[attr-defined]
        page.press("#q", "Enter")  # type: ignore[attr-defined]
        hits = page.locator("#hits")  # type: ignore[attr-defined]
        expect(hits.locator("mark")).to_have_text("platypuses", timeout=WAIT_MS)
        hits.locator("a").first.click()
        timeline = page.locator("#timeline")  # type: ignore[attr-defined]
        expect(timeline).to_contain_text("where do platypuses nest", timeout=WAIT_MS)
        expect(timeline).to_contain_text("and echidnas")
        expect(page.locator("#no-recording")).to_contain_text("imported from Claude Code's own history")  # type: ignore[attr-defined]
        assert page.locator("#player").count() == 0  # type: ignore[attr-defined]
        # Each exchange shows its tool calls: the tool, what it was given, what came back.
        tools = timeline.locator(".exchanges > li").first.locator(".tool")
        expect(tools).to_have_count(1)
        expect(tools.locator(".tool-name")).to_have_text("Read")
        expect(tools.locator(".tool-input")).to_contain_text("f0.py")
        expect(tools.locator(".tool-result")).to_contain_text("→ ")
        # The list leads with what each session was about (its first prompt here), and its cost.
        page.goto(served.base + "/")  # type: ignore[attr-defined]
        row = page.locator("#sessions tbody tr").first  # type: ignore[attr-defined]
        expect(row.locator(".title")).to_have_text("where do platypuses nest", timeout=WAIT_MS)
        expect(row.locator(".cost")).to_have_text(f"${cost:.2f}")


def test_the_player_plays_a_recording_and_the_timeline_seeks_it(home: Paths, page: object, tmp_path: Path) -> None:
    expect = playwright_sync.expect
    cast = tmp_path / "marked.cast"
    lines = [
        {"version": 2, "width": 80, "height": 24, "timestamp": 1700000000},
        [0.2, "o", "first screen words\r\n"],
        [0.6, "m", "the fix"],
        [1.0, "o", "second screen words\r\n"],
    ]
    cast.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = invoke_sk("import", str(cast), "--name", "played")
    assert imported.returncode == 0, imported.stderr
    session_id = imported.stdout.decode().strip()
    folder = next(p.parent for p in session_folders(home) if p.parent.name == session_id)
    # The exchanges an agent adapter would have stored: one prompt sent 0.4 s in.
    exchange = {"index": 0, "time": "2023-11-14T22:13:20.400Z", "prompt": "fix the login form", "answer": "done: the form posts again"}
    (folder / "exchanges.jsonl").write_text(json.dumps(exchange) + "\n")
    with serve() as served:
        _open(page, served, f"/s/{session_id}")
        player = page.locator("#player")  # type: ignore[attr-defined]
        expect(player).to_contain_text("first screen words", timeout=WAIT_MS)
        expect(player).to_contain_text("second screen words", timeout=WAIT_MS)  # played to the end
        timeline = page.locator("#timeline")  # type: ignore[attr-defined]
        expect(timeline).to_contain_text("the fix")
        expect(timeline).to_contain_text("fix the login form")
        expect(timeline).to_contain_text("done: the form posts again")
        links = timeline.locator("a.seek")
        assert [links.nth(i).get_attribute("data-t") for i in range(links.count())] == ["0.400", "0.600"]
        links.nth(1).click()
        expect(player).not_to_contain_text("second screen words", timeout=WAIT_MS)  # the screen at the marker
        expect(player).to_contain_text("first screen words")
        _screenshot(page, "serve-session.png")


def test_a_live_sessions_new_output_appears_in_the_page(home: Paths, page: object) -> None:
    expect = playwright_sync.expect
    folder, session_id, harness = record_session(home, "print('ready'); input()", name="live-one", expect=b"ready")
    publisher = LivePublisher(folder, session_id=session_id, backlog=[[0.5, "o", "screen before the viewer came\r\n"]])
    try:
        with serve("--allow-input") as served:
            _open(page, served, f"/s/{session_id}")
            player = page.locator("#player")  # type: ignore[attr-defined]
            expect(player).to_contain_text("screen before the viewer came", timeout=WAIT_MS)
            publisher.publish([2.0, "o", "brand new output 7731\r\n"])
            expect(player).to_contain_text("brand new output 7731", timeout=WAIT_MS)
            _screenshot(page, "serve-live.png")
            page.fill("#typed", "echo typed in the browser")  # type: ignore[attr-defined]
            page.click("#typing button")  # type: ignore[attr-defined]
            expect(page.locator("#typing-status")).to_have_text("sent", timeout=WAIT_MS)  # type: ignore[attr-defined]
            assert publisher.inputs == [{"input": "echo typed in the browser\r", "viewer": "web 127.0.0.1"}]
            publisher.end("finished", 0)
            expect(page.locator("#live-status")).to_contain_text("the session ended", timeout=WAIT_MS)  # type: ignore[attr-defined]
    finally:
        publisher.close()
        harness.write(b"\r")
        harness.finish()


def test_a_real_recording_plays_live(home: Paths, page: object) -> None:
    expect = playwright_sync.expect
    code = "import sys\nprint('ready', flush=True)\nfor line in sys.stdin:\n    print('echoed: ' + line.strip().upper(), flush=True)\n"
    folder, session_id, harness = record_session(home, code, name="real-live", expect=b"ready")
    ended = False
    try:
        with serve("--allow-input") as served:
            _open(page, served, f"/s/{session_id}")
            player = page.locator("#player")  # type: ignore[attr-defined]
            expect(player).to_contain_text("ready", timeout=WAIT_MS)
            harness.write(b"from the keyboard\r")
            expect(player).to_contain_text("echoed: FROM THE KEYBOARD", timeout=WAIT_MS)
            page.fill("#typed", "from the browser")  # type: ignore[attr-defined]
            page.click("#typing button")  # type: ignore[attr-defined]
            expect(player).to_contain_text("echoed: FROM THE BROWSER", timeout=WAIT_MS)
            harness.expect(b"echoed: FROM THE BROWSER")
            state = page.locator("#state")  # type: ignore[attr-defined]
            expect(state).to_have_text(re.compile("^(working|waiting|idle)$"))
            harness.write(b"\x04")
            ended = harness.finish() == 0
            expect(state).to_have_text("finished", timeout=WAIT_MS)  # the badge follows, no reload
            expect(page.locator("#exit-code")).to_have_text("exit 0")  # type: ignore[attr-defined]
    finally:
        if not ended:
            harness.write(b"\x04")
            harness.finish()
    _, _, events = load_session(folder)
    marks = [i for i, e in enumerate(events) if e.code == "m" and e.data == "input from viewer web 127.0.0.1"]
    assert len(marks) == 1, [e for e in events if e.code == "m"]
    typed = "".join(e.data for e in events[marks[0] :] if e.code == "i")
    assert typed.startswith("from the browser\r")  # recorded as input, after the marker naming the viewer


def test_the_stats_page_and_the_phone_layout(home: Paths, browser: object) -> None:
    expect = playwright_sync.expect
    session_id = _long_session(home, "phone-view", "seen on a phone " + "W" * 100)
    wait_for_background(home)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)  # type: ignore[attr-defined]
    phone = context.new_page()
    try:
        with serve() as served:
            _open(phone, served)
            expect(phone.locator("#sessions")).to_contain_text("phone-view", timeout=WAIT_MS)
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, width  # nothing wider than the screen: no sideways scrolling
            phone.goto(served.base + f"/s/{session_id}")
            expect(phone.locator("#player")).to_contain_text("seen on a phone", timeout=WAIT_MS)
            box = phone.locator("#player .ap-term").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box  # the terminal is scaled to the screen
            assert phone.evaluate("document.documentElement.scrollWidth") <= 390
            phone.goto(served.base + "/stats")
            expect(phone.locator("#stats")).to_contain_text("total", timeout=WAIT_MS)
            expect(phone.locator("#stats tr.total")).to_contain_text("1")
    finally:
        context.close()



def test_a_live_sessions_timeline_opens_the_recording_so_far_and_the_list_sees_it_end(home: Paths, page: object) -> None:
    expect = playwright_sync.expect
    folder, session_id, harness = record_session(home, "print('ready', flush=True); input()", name="ends-live", expect=b"ready")
    ended = False
    try:
        assert invoke_sk("mark", "before the change", "--session", session_id).returncode == 0
        with serve() as served:
            _open(page, served, f"/s/{session_id}")
            expect(page.locator("#player")).to_have_attribute("data-mode", "live", timeout=WAIT_MS)  # type: ignore[attr-defined]
            link = page.locator("#timeline a.seek").first  # type: ignore[attr-defined]
            expect(link).to_contain_text("s", timeout=WAIT_MS)
            link.click()  # a live stream cannot seek: the link opens the recording so far there
            expect(page.locator("#live-status")).to_contain_text("the recording so far", timeout=WAIT_MS)  # type: ignore[attr-defined]
            expect(page.locator("#player")).to_have_attribute("data-mode", "recording")  # type: ignore[attr-defined]
            assert "replay=1" in page.url and "t=" in page.url  # type: ignore[attr-defined]
            expect(page.locator("#player")).to_contain_text("ready", timeout=WAIT_MS)  # type: ignore[attr-defined]

            page.goto(served.base + "/")  # type: ignore[attr-defined]
            badge = page.locator(f"#sessions tr[data-session='{session_id}'] span.status")  # type: ignore[attr-defined]
            expect(badge).to_have_text(re.compile("^(working|waiting|idle)$"), timeout=WAIT_MS)
            harness.write(b"\r")
            ended = True
            assert harness.finish() == 0
            expect(badge).to_have_text("finished", timeout=WAIT_MS)  # followed without a reload
    finally:
        if not ended:
            harness.write(b"\r")
            harness.finish()
    wait_for_background(home)
