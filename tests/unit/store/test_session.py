"""Text that is not UTF-8 in a session's metadata: readable in meta.json, exact in ``raw``
(shellkeep/store/session.py). Real meta.json files, written and read back."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from shellkeep.store.session import RAW_KEY, exact_meta, raw_values, read_meta, readable_text, write_meta
from tests.factory import make_session


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("żółć", "żółć"),
        (os.fsdecode(b"a\xffb"), "a\\xffb"),
        ("lone \ud800", "lone \\ud800"),
    ],
    ids=["ascii", "utf8", "surrogateescape", "lone-surrogate"],
)
def test_readable_text_shows_bytes_that_are_not_utf8_as_escapes(text: str, shown: str) -> None:
    assert readable_text(text) == shown
    readable_text(text).encode("utf-8")


def test_raw_values_are_none_for_utf8_and_exact_bytes_otherwise() -> None:
    assert raw_values("/home/a", "/home/a", ["claude", "żółć"]) is None
    raw = raw_values(os.fsdecode(b"/d\xfe"), "/", ["ls", os.fsdecode(b"\xff")])
    assert raw == {"cwd": "L2T+", "project_root": None, "command": [None, "/w=="]}


def test_exact_meta_gives_back_the_bytes_and_an_old_meta_json_is_unchanged(home: Paths) -> None:
    meta = make_session(home, Path.cwd(), 1)
    old = read_meta(meta.folder)
    assert RAW_KEY not in json.loads((meta.folder / "meta.json").read_text())
    assert exact_meta(old) == old  # written before 'raw' existed: its text is exact
    arg = os.fsdecode(b"x\xff")
    stored = dataclasses.replace(old, command=["ls", readable_text(arg)], extra={RAW_KEY: raw_values(old.cwd, old.project_root, ["ls", arg])})
    write_meta(stored)
    again = read_meta(meta.folder)
    assert again.command == ["ls", "x\\xff"]
    assert exact_meta(again).command == ["ls", arg] and exact_meta(again).cwd == old.cwd


def test_a_damaged_raw_field_falls_back_to_the_readable_text(home: Paths) -> None:
    meta = read_meta(make_session(home, Path.cwd(), 1).folder)
    broken = dataclasses.replace(meta, extra={RAW_KEY: {"cwd": "not base64!", "command": ["??"]}})
    assert exact_meta(broken) == broken
