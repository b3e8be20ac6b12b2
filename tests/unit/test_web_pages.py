"""The web session page (``web/pages.py``, ``/s/{id}``) in process, through Starlette's test
client: what the session was about, and "resumed as" for a session a later run resumed.

The server's security rules and the pages over real HTTP are in ``tests/e2e/test_serve.py``.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from shellkeep.app.context import open_context
from shellkeep.app.serve import ServeSetup
from shellkeep.store.paths import Paths
from shellkeep.store.session import write_meta
from shellkeep.web.app import build_app
from tests.factory import make_session

TOKEN = "t" * 43
PORT = 8765


@contextmanager
def web_client() -> Iterator[TestClient]:
    """Yield a test client of ``shellkeep serve``'s application over this HOME, signed in."""
    with socket.socket() as sock:
        setup = ServeSetup(open_context(), sock, "127.0.0.1", PORT, TOKEN, False)
        with TestClient(build_app(setup), base_url=f"http://127.0.0.1:{PORT}", cookies={f"shellkeep_token_{PORT}": TOKEN}) as made:
            yield made


@pytest.fixture
def client(home: Paths) -> Iterator[TestClient]:
    with web_client() as made:
        yield made


def test_the_session_page_shows_the_title_and_the_run_that_resumed_it(home: Paths, client: TestClient) -> None:
    original = make_session(home, Path.cwd(), 1, agent="claude", name="fix-it", events=[(5.0, "o", "hello\r\n")])
    write_meta(dataclasses.replace(original, about="Add divide to calc", status="interrupted"))
    resumed = make_session(home, Path.cwd(), 2, agent="claude", events=[(5.0, "o", "again\r\n")])
    write_meta(dataclasses.replace(resumed, parent=original.id))
    page = client.get(f"/s/{original.id}")
    assert page.status_code == 200, page.text
    assert 'id="session-title">Add divide to calc<' in page.text
    assert f'resumed as <a href="/s/{resumed.id}">{resumed.id}</a>' in page.text
    later = client.get(f"/s/{resumed.id}")
    assert later.status_code == 200 and 'id="resumed-as"' not in later.text
