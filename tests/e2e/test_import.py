"""``shellkeep import``: every valid recording of tests/data/casts (and of the optional corpus
of public recordings) imports, renders, searches and replays; every invalid one is refused
with one line and nothing stored."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.recordings import open_cast
from shellkeep.cli.main import main
from shellkeep.store.paths import Paths
from tests.conftest import REAL_CASTS, needs_shared
from tests.helpers import CASTS, corpus_recordings, invoke_sk, local_recordings, recording_params, run_sk


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _search_word(lines: list[str]) -> str | None:
    words = [w for line in lines for w in re.findall(r"[A-Za-z]{5,}", line)]
    return max(words, key=len) if words else None


def test_the_recordings_are_there() -> None:
    valid, invalid = local_recordings()
    assert len(valid) >= 20 and len(invalid) == 6
    assert {p.name.rsplit("-", 1)[-1] for p in valid} == {"v1.json", "v2.cast", "v3.cast"}


@needs_shared(REAL_CASTS)
def test_the_shared_recordings_are_listed() -> None:
    valid, invalid = corpus_recordings()
    assert len(valid) >= 20 and len(invalid) == 6


@pytest.mark.parametrize("source", recording_params(invalid=False))
def test_a_valid_recording_imports_renders_searches_and_replays(home: Paths, source: Path) -> None:
    result = sk("import", str(source), "--json")
    assert result.exit_code == 0, result.stderr
    meta = json.loads(result.stdout)
    session = meta["id"]
    original = [e for e in open_cast(source).events() if e.code != "x"]
    stored = list(open_cast(Path(meta["cast"])).events())
    assert [(round(e.time, 6), e.code, e.data) for e in stored] == [(round(e.time, 6), e.code, e.data) for e in original]
    assert Path(meta["cast"]).read_bytes().startswith(b'{"version": 2')

    text = sk("cat", session, "--text")
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    if any(e.code == "o" and e.data.strip() for e in original):
        assert lines

    word = _search_word(lines)
    if word:
        hits = json.loads(sk("search", word, "--json").stdout)
        assert session in {h["session_id"] for h in hits}

    played = run_sk("replay", session, "--speed", "100", "--idle-limit", "0.01", start_new_session=True, timeout_s=60)
    assert played.returncode == 0, played.stderr
    expected = "".join(e.data for e in original if e.code == "o").encode()
    assert played.stdout == expected


@pytest.mark.parametrize("source", recording_params(invalid=True))
def test_an_invalid_recording_is_refused_and_nothing_is_stored(home: Paths, source: Path) -> None:
    result = invoke_sk("import", str(source))
    assert result.returncode == 3
    assert result.stdout == b""
    assert result.stderr.startswith(b"shellkeep: cannot import ") and result.stderr.endswith(b"; nothing was imported\n")
    assert result.stderr.count(b"\n") == 1
    assert list(home.projects.glob("*/*")) == []


def test_a_cut_last_line_is_read_up_to_the_last_whole_event(home: Paths, tmp_path: Path) -> None:
    source = tmp_path / "cut.cast"
    whole = (CASTS / "shell-v2.cast").read_bytes()
    source.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 15])
    result = sk("import", str(source), "--json")
    assert result.exit_code == 0, result.stderr
    stored = list(open_cast(Path(json.loads(result.stdout)["cast"])).events())
    assert len(stored) == len(list(open_cast(CASTS / "shell-v2.cast").events())) - 1


def test_import_of_a_missing_file_is_a_usage_error(home: Paths) -> None:
    result = invoke_sk("import", "nowhere.cast")
    assert result.returncode == 2 and result.stderr == b"shellkeep: no file 'nowhere.cast'; give the path of an asciicast recording (.cast or .json)\n"


def test_an_imported_session_is_listed_with_its_name_and_exit_code(home: Paths) -> None:
    result = sk("import", str(CASTS / "resizing-v3.cast"), "--name", "resizing")
    assert result.exit_code == 0
    listed = json.loads(sk("ls", "--json").stdout)
    assert [(s["name"], s["status"]) for s in listed] == [("resizing", "finished")]
    assert (listed[0]["imported_version"], listed[0]["exit_code"]) == (3, 3)  # from the v3 exit event


def test_secrets_in_an_imported_recording_are_redacted(home, tmp_path) -> None:  # type: ignore[no-untyped-def]
    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
    source = tmp_path / "leaky.cast"
    source.write_text(
        '{"version": 2, "width": 80, "height": 24}\n'
        f'[0.5, "o", "export GITHUB_TOKEN={token}\\r\\n"]\n'
        f'[0.6, "i", "echo {token}\\r"]\n'
    )
    result = invoke_sk("import", str(source))
    assert result.returncode == 0, result.stderr
    stored = [p for p in home.home.rglob("*") if p.is_file()]
    assert stored
    for path in stored:
        assert token.encode() not in path.read_bytes(), path
    assert b"[REDACTED:github-token]" in invoke_sk("cat", result.stdout.decode().strip().split()[-1]).stdout


@pytest.mark.parametrize(
    ("agent", "replies"),
    [("claude-2.1.332", ["STANDIN-ANSWER-1: kiwi", "STANDIN-ANSWER-2: lime"]), ("codex-0.171.0", ["STANDIN-ANSWER-1: plum", "STANDIN-ANSWER-2: pear"])],
    ids=["claude", "codex"],
)
def test_an_imported_agent_recording_has_its_answers_without_the_chrome(home: Paths, agent: str, replies: list[str]) -> None:
    # Real sessions recorded under shellkeep (header command "claude ..." / "codex"): the
    # exchanges are rebuilt with the screen chrome of the agent the command names.
    source = Path(__file__).resolve().parents[1] / "data" / "agents" / "screens" / f"{agent}.cast"
    result = sk("import", str(source), "--json")
    assert result.exit_code == 0, result.stderr
    folder = Path(json.loads(result.stdout)["cast"]).parent
    exchanges = [json.loads(line) for line in (folder / "exchanges.jsonl").read_text().splitlines()]
    assert [e["answer"].split("\n")[0] for e in exchanges] == replies


@pytest.mark.parametrize("time", [b"Infinity", b"NaN", b"1e400", b"12345678901.5"], ids=["inf", "nan", "overflow", "absurd"])
def test_an_impossible_event_time_is_a_damaged_recording_exit_3(home: Paths, tmp_path: Path, time: bytes) -> None:
    path = tmp_path / "bad.cast"
    path.write_bytes(b'{"version": 2, "width": 5, "height": 5}\n[1, "o", "a"]\n[' + time + b', "o", "b"]\n[3, "o", "c"]\n')
    result = invoke_sk("import", str(path))
    assert result.returncode == 3, result.stderr
    assert result.stderr.count(b"\n") == 1 and b"line 3 is not a valid asciicast v2 event (invalid time" in result.stderr
    assert not home.projects.exists() or not list(home.projects.glob("*/*"))


def test_a_lone_surrogate_is_imported_as_the_replacement_character(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "surrogate.cast"
    path.write_bytes(b'{"version": 2, "width": 5, "height": 5}\n[1, "o", "a\\ud800b"]\n[2, "o", "c"]\n')
    result = invoke_sk("import", str(path), "--name", "sur")
    assert result.returncode == 0, result.stderr
    shown = invoke_sk("cat", "sur")
    assert shown.returncode == 0 and shown.stdout == "a\ufffdbc".encode()
    page = invoke_sk("export", "sur", "--format", "html")
    assert page.returncode == 0 and "a\ufffdb".encode() in page.stdout


@pytest.mark.parametrize(
    ("command", "agent"),
    [
        ("npx @anthropic-ai/claude-code", "claude"),
        ("env TERM=xterm-256color /usr/local/bin/codex", "codex"),
        ("/bin/sh -c 'vim notes.txt'", "vim"),
        ("/bin/bash -l", "bash"),
        (None, "imported"),
    ],
)
def test_an_imported_recordings_agent_is_read_from_its_command(home: Paths, tmp_path: Path, command: str | None, agent: str) -> None:
    header = {"version": 2, "width": 80, "height": 24, **({"command": command} if command else {})}
    source = tmp_path / "some.cast"
    source.write_text(json.dumps(header) + '\n[0.5, "o", "hello\\r\\n"]\n')
    result = invoke_sk("import", str(source))
    assert result.returncode == 0, result.stderr
    [meta] = home.projects.glob("*/*/meta.json")
    assert json.loads(meta.read_text())["agent"] == agent


def test_an_import_keeps_its_dates_but_ages_from_the_import_for_gc(home: Paths) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text("[retention]\nmax_age_days = 30\n")
    assert sk("import", str(CASTS / "full-v2.cast"), "--name", "old").exit_code == 0
    [meta] = json.loads(sk("ls", "--json").stdout)
    header = json.loads((CASTS / "full-v2.cast").read_text().splitlines()[0])
    assert meta["started_at"].startswith(datetime.fromtimestamp(header["timestamp"], timezone.utc).strftime("%Y-%m-%d"))
    assert meta["imported_at"] > meta["started_at"]  # recorded long ago, imported now
    gc = invoke_sk("gc", "--json")
    assert gc.returncode == 0, gc.stderr
    assert json.loads(gc.stdout)["removed"] == []  # imported today: not 30 days old yet
    assert [s["name"] for s in json.loads(sk("ls", "--json").stdout)] == ["old"]


def test_bytes_that_are_not_utf8_in_an_import_name_path_filter_or_label_are_kept_readably(home: Paths, tmp_path: Path) -> None:
    source = tmp_path / "plain.cast"
    source.write_text('{"version": 2, "width": 80, "height": 24}\n[0.5, "o", "hello\\r\\n"]\n')
    odd = os.fsdecode(bytes(tmp_path) + b"/f\xff.cast")
    Path(odd).write_bytes(source.read_bytes())
    named = invoke_sk("import", str(source), "--name", os.fsdecode(b"i\xff"))
    assert named.returncode == 0, named.stderr
    from_odd_path = invoke_sk("import", odd)
    assert from_odd_path.returncode == 0, from_odd_path.stderr
    listed = invoke_sk("ls", "--name", os.fsdecode(b"i\xff"), "--all-sessions")
    assert listed.returncode == 0 and b"i\\xff" in listed.stdout, listed.stderr
    session = named.stdout.decode().strip().split()[-1]
    marked = invoke_sk("mark", "--session", session, os.fsdecode(b"\xff label"))
    assert marked.returncode == 0, marked.stderr
    metas = [json.loads(p.read_text(encoding="utf-8")) for p in home.projects.glob("*/*/meta.json")]
    assert sorted(m["name"] or "" for m in metas) == ["", "i\\xff"]
    assert "\\xff label" in invoke_sk("show", session).stdout.decode()
