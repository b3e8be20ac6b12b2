"""The pure parts of ``serve``'s guard: the wrong-token window, the Origin rule, the stored token."""

from __future__ import annotations

import stat

import pytest

from shellkeep.app.serve import load_token
from shellkeep.store.paths import Paths
from shellkeep.web.auth import FailureLimiter, allowed_origin


def test_wrong_tokens_age_out_of_the_window() -> None:
    limiter = FailureLimiter(max_failures=3, window_s=60.0)
    for t in (0.0, 1.0, 2.0):
        assert not limiter.is_blocked("10.0.0.2", now=t)
        limiter.fail("10.0.0.2", now=t)
    assert limiter.is_blocked("10.0.0.2", now=30.0)
    assert not limiter.is_blocked("10.0.0.3", now=30.0)  # per address
    assert not limiter.is_blocked("10.0.0.2", now=60.5)  # the first one aged out
    assert limiter.fail("10.0.0.2", now=60.5) == 3
    assert limiter.is_blocked("10.0.0.2", now=60.6)


@pytest.mark.parametrize(
    ("origin", "host", "served", "allowed"),
    [
        ("http://127.0.0.1:8765", "127.0.0.1:8765", {"http://127.0.0.1:8765"}, True),
        ("http://evil.example", "127.0.0.1:8765", {"http://127.0.0.1:8765"}, False),
        ("http://127.0.0.1:8766", "127.0.0.1:8765", {"http://127.0.0.1:8765"}, False),
        (None, "127.0.0.1:8765", {"http://127.0.0.1:8765"}, False),
        ("null", "127.0.0.1:8765", {"http://127.0.0.1:8765"}, False),
        # Listening on every address: the origin must be the host the browser asked for.
        ("http://192.168.1.5:8765", "192.168.1.5:8765", set(), True),
        ("http://evil.example:8765", "192.168.1.5:8765", set(), False),
        ("http://192.168.1.5:8765", None, set(), False),
    ],
    ids=["own", "foreign", "other-port", "none", "null", "lan-own", "lan-foreign", "lan-no-host"],
)
def test_the_origin_rule(origin: str | None, host: str | None, served: set[str], allowed: bool) -> None:
    assert allowed_origin(origin, host, frozenset(served)) is allowed


def test_the_token_is_made_once_0600_and_a_short_one_is_replaced(home: Paths) -> None:
    token = load_token(home)
    assert len(token) == 43 and stat.S_IMODE(home.serve_token.stat().st_mode) == 0o600
    assert load_token(home) == token
    home.serve_token.write_text("short\n")
    replaced = load_token(home)
    assert replaced != "short" and len(replaced) == 43
    assert load_token(home, new=True) != replaced


def test_addresses_whose_failures_aged_out_are_forgotten() -> None:
    limiter = FailureLimiter(max_failures=2, window_s=10.0)
    for n in range(10_000):
        limiter.fail(f"10.1.{n // 256}.{n % 256}", now=0.0)
    limiter.fail("10.9.9.9", now=100.0)  # the table is full: the aged-out ones go
    assert len(limiter._failures) == 1
