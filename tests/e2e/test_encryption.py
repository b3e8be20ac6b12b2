"""Encryption at rest with the real CLI: ``shellkeep key ...``, recording sealed as it is
written, every reader decrypting, a wrong key, and a rotation killed and resumed.

The OS keyring is switched off (``PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring``,
as on a headless CI box), so keys go to the 0600 key file in the data directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from tests.recordings import open_cast  # noqa: E402
from shellkeep.vault.crypto import MAGIC, is_encrypted, key_id_of_file  # noqa: E402
from shellkeep.errors import KeyUnavailable  # noqa: E402
from shellkeep.vault.access import Vault  # noqa: E402
from tests.recordings import vault  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from tests.e2e.test_secrets import wait_for_housekeeping  # noqa: E402
from tests.helpers import SK, invoke_sk, only_session, recording_of, run_sk, session_folders, wait_for_background, wait_until  # noqa: E402

pytestmark = pytest.mark.timeout(300)

WORD = "pineapple-7c1e"
CHILD = f"print('{WORD}'); print('\\x1b[1mbold line\\x1b[0m')"


@pytest.fixture(autouse=True)
def encrypted_home(home: Paths, monkeypatch: pytest.MonkeyPatch) -> Iterator[Paths]:
    """No OS keyring; a key made with ``shellkeep key init``; ``encryption.encrypt = true``."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    made = invoke_sk("key", "init")
    assert made.returncode == 0, made.stderr
    assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    yield home


def files_under(root: Path) -> list[Path]:
    """Return the files under ``root`` (a session folder or the data directory), once the
    background work after sessions (compression) is done."""
    home = next(p for p in [root, *root.parents] if (p / "projects").is_dir())
    wait_for_housekeeping(Paths(home, home / "none.toml"))
    return [p for p in root.rglob("*") if p.is_file()]


def test_key_init_status_and_file_modes(home: Paths) -> None:
    status = invoke_sk("key", "status", "--json")
    assert status.returncode == 0
    report = json.loads(status.stdout)
    key_file = home.home / "keys" / "keys.json"
    assert report["store"] == str(key_file) and len(report["keys"]) == 1
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    again = invoke_sk("key", "init")
    assert again.returncode == 1
    assert again.stderr.decode().count("\n") == 1 and "already exists" in again.stderr.decode()


def test_a_recording_is_sealed_as_it_is_written_and_every_reader_decrypts(home: Paths) -> None:
    result = run_sk("run", "--", sys.executable, "-c", CHILD)
    assert result.returncode == 0 and WORD.encode() in result.stdout
    wait_for_housekeeping(home)  # compressed inside its sealing, and renamed
    meta, header, events = only_session(home)
    cast = Path(str(meta["cast"]))
    assert cast.name == "session.cast.zst" and cast.read_bytes().startswith(MAGIC)
    for path in files_under(cast.parent):
        if path.name != "meta.json":
            assert WORD.encode() not in path.read_bytes(), path
    assert WORD in "".join(e.data for e in events if e.code == "o")
    assert (header.size.cols, header.size.rows) == (meta["cols"], meta["rows"])
    cat = invoke_sk("cat", "--last")
    assert cat.returncode == 0 and WORD in cat.stdout.decode()
    txt = invoke_sk("export", "--last", "--format", "txt")
    assert txt.returncode == 0 and WORD in txt.stdout.decode()
    as_json = invoke_sk("export", "--last", "--format", "json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["session"]["id"] == meta["id"]


def test_export_cast_of_an_encrypted_session_is_plain_asciicast(home: Paths) -> None:
    ran = run_sk("run", "--", sys.executable, "-c", CHILD)
    assert ran.returncode == 0 and WORD.encode() in ran.stdout, (ran.stdout, ran.stderr)
    # Right away, while the upkeep may be compressing it: a reader gets the old file or the
    # new one whole (tests/unit/vault/test_compress.py races many exports against it).
    exported = invoke_sk("export", "--last", "--format", "cast")
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.decode().splitlines()
    # The output joined: the redaction holds a word's end that may start a token until more
    # comes, so a read cut before the newline stores WORD in two events.
    output = "".join(data for _, code, data in map(json.loads, lines[1:]) if code == "o")
    assert json.loads(lines[0])["version"] == 2 and WORD in output, "\n".join([*lines[1:], exported.stderr.decode(), *map(str, files_under(home.home))])


def test_the_last_screen_of_an_encrypted_session(home: Paths) -> None:
    from tests.recordings import last_screen

    run_sk("run", "--", sys.executable, "-c", CHILD)
    meta, _, _ = only_session(home)
    assert WORD in last_screen(Path(str(meta["cast"]))).to_text()


def test_search_finds_an_encrypted_session_and_the_index_holds_no_plaintext(home: Paths) -> None:
    run_sk("run", "--", sys.executable, "-c", CHILD)
    found = invoke_sk("search", WORD.split("-")[0], "--json")
    assert found.returncode == 0, found.stderr
    assert len(json.loads(found.stdout)) >= 1
    for path in home.home.glob("index.sqlite3*"):
        assert WORD.split("-")[0].encode() not in path.read_bytes(), path


def test_exchanges_are_sealed(home: Paths, tmp_path: Path) -> None:
    from shellkeep.agents.base import Exchange
    from shellkeep.app.context import open_context
    from shellkeep.vault.exchanges import write_exchanges

    folder = tmp_path / "session"
    folder.mkdir()
    write_exchanges(folder, [Exchange(index=0, time=None, prompt=f"say {WORD}", answer="ok")], open_context().vault)
    assert is_encrypted(folder / "exchanges.jsonl")


def test_a_missing_key_is_one_line_exit_1_and_nothing_changes(home: Paths, tmp_path: Path) -> None:
    run_sk("run", "--", sys.executable, "-c", CHILD)
    folder = session_folders(home)[0].parent
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files_under(folder)}
    key_file = home.home / "keys" / "keys.json"
    key_file.rename(tmp_path / "saved-keys.json")
    # No second key beside the sealed session, unless forced: its key is still missing.
    refused = run_sk("key", "init")
    assert refused.returncode == 1 and "shellkeep key import FILE" in refused.stderr.decode(), refused.stderr
    assert not key_file.exists()
    assert run_sk("key", "init", "--force").returncode == 0
    for args in (("cat", "--last"), ("export", "--last", "--format", "txt"), ("redact", "--last")):
        result = run_sk(*args)
        err = result.stderr.decode()
        assert result.returncode == 1, (args, err)
        assert err.count("\n") == 1 and "is not available" in err and "shellkeep key import" in err, err
        assert "Traceback" not in err
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files_under(folder)} == digest
    # Importing the saved key makes it readable again.
    imported = run_sk("key", "import", str(tmp_path / "saved-keys.json"))
    assert imported.returncode == 0, imported.stderr
    assert WORD in run_sk("cat", "--last").stdout.decode()


def test_sessions_whose_key_is_missing_are_suspended_not_errors(home: Paths, tmp_path: Path) -> None:
    """Two sealed sessions, then the key file is gone: ls and show say "suspended: key
    missing"; cat, export and replay give one line and exit 1; search and reindex one
    summarised line for both sessions."""
    for n in (1, 2):
        assert run_sk("run", "--name", f"sealed-{n}", "--", sys.executable, "-c", CHILD).returncode == 0
    plain = run_sk("run", "--name", "plain", "--", "sh", "-c", f"echo {WORD}-plain", env={**os.environ, "SHELLKEEP_ENCRYPTION_ENCRYPT": "false"})
    assert plain.returncode == 0, plain.stderr
    wait_for_housekeeping(home)
    key_id = key_id_of_file(_sealed_cast(home))
    assert key_id is not None
    (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")

    listed = invoke_sk("ls", "--all-sessions")
    assert listed.returncode == 0 and listed.stderr == b"", listed.stderr
    rows = {line.split()[1]: line for line in listed.stdout.decode().splitlines()[1:]}
    assert "suspended: key missing" in rows["sealed-1"] and "suspended: key missing" in rows["sealed-2"]
    assert "suspended" not in rows["plain"] and "finished" in rows["plain"]
    shown = invoke_sk("show", "sealed-1")
    assert shown.returncode == 0 and shown.stderr == b"", shown.stderr
    assert f"suspended: key missing ({key_id})" in shown.stdout.decode()
    for args in (("cat", "sealed-1"), ("export", "sealed-1", "--format", "txt"), ("replay", "sealed-1", "--speed", "100")):
        result = run_sk(*args)
        err = result.stderr.decode()
        assert result.returncode == 1 and err.count("\n") == 1 and "shellkeep key import" in err, (args, err)

    found = invoke_sk("search", WORD.split("-")[0], "--json")
    assert found.returncode == 0
    assert [h["session_name"] for h in json.loads(found.stdout)] == ["plain"]
    err = found.stderr.decode()
    assert err.count("\n") == 1 and "2 encrypted sessions not searched" in err and key_id in err, err
    rebuilt = invoke_sk("reindex")
    assert rebuilt.returncode == 0, rebuilt.stderr
    err = rebuilt.stderr.decode()
    assert err.count("\n") == 1 and "2 encrypted sessions" in err and key_id in err, err
    assert "indexed 3 sessions" in rebuilt.stdout.decode()
    doctor = invoke_sk("doctor", "--json")
    [keys] = [c for c in json.loads(doctor.stdout) if c["check"] == "key storage"]
    assert keys["status"] == "warn" and f"2 sessions sealed with key {key_id}, which no key store holds" in keys["detail"]
    assert keys["fix"].startswith("import your key export with 'shellkeep key import FILE'")

    assert invoke_sk("key", "import", str(tmp_path / "saved-keys.json")).returncode == 0
    assert "suspended" not in invoke_sk("ls", "--all-sessions").stdout.decode()
    again = invoke_sk("search", WORD.split("-")[0], "--json")
    assert sorted(h["session_name"] for h in json.loads(again.stdout)) == ["plain", "sealed-1", "sealed-2"], again.stderr


def _sealed_cast(home: Paths) -> Path:
    return next(c for c in [*home.projects.glob("*/*/session.cast"), *home.projects.glob("*/*/session.cast.zst")] if is_encrypted(c))


def test_a_damaged_recording_is_exit_3(home: Paths) -> None:
    run_sk("run", "--", sys.executable, "-c", CHILD)
    wait_for_housekeeping(home)
    meta, _, _ = only_session(home)
    cast = Path(str(meta["cast"]))
    data = bytearray(cast.read_bytes())
    data[-3] ^= 0x40
    cast.write_bytes(bytes(data))
    result = invoke_sk("cat", "--last")
    assert result.returncode == 3
    err = result.stderr.decode()
    assert err.count("\n") == 1 and "fails authentication" in err


def test_export_and_import_keys_between_installations(home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_sk("run", "--", sys.executable, "-c", CHILD)
    exported = invoke_sk("key", "export", str(tmp_path / "backup.json"))
    assert exported.returncode == 0 and "keep it somewhere safe" in exported.stderr.decode()
    assert oct((tmp_path / "backup.json").stat().st_mode & 0o777) == "0o600"
    to_stdout = invoke_sk("key", "export")
    assert json.loads(to_stdout.stdout)["format"] == "shellkeep-keys"
    other = tmp_path / "other-home"
    monkeypatch.setenv("SHELLKEEP_HOME", str(other))
    wait_for_background(home)  # the upkeep renames the compressed recording
    cast = recording_of(session_folders(home)[0].parent)
    assert cast.name == "session.cast.zst" and is_encrypted(cast)  # sealed and compressed inside
    with pytest.raises(KeyUnavailable):
        Vault(Paths(other, home.config_file)).read_private(cast)
    assert invoke_sk("key", "import", str(tmp_path / "backup.json")).returncode == 0
    from shellkeep.vault.keys import forget_cached_keys

    forget_cached_keys()
    assert Vault(Paths(other, home.config_file)).read_private(cast)


def _many_sessions(home: Paths, project: Path, count: int, size: int) -> list[Path]:
    from shellkeep.vault.crypto import split_records, write_records_atomic
    from shellkeep.vault.keys import current_key
    from tests.factory import make_session

    key = current_key(home)
    casts = []
    for n in range(count):
        meta = make_session(home, project, n, events=[(0.1 * k, "o", f"s{n} line {k} " + "y" * 200 + "\r\n") for k in range(size)])
        cast = Path(meta.cast)
        write_records_atomic(cast, split_records(cast.read_bytes()), key)
        casts.append(cast)
    return casts


def test_rotation_killed_midway_then_resumed(home: Paths, tmp_path: Path) -> None:
    from shellkeep.vault.keys import forget_cached_keys

    casts = _many_sessions(home, tmp_path / "project", 60, 2000)
    before = [vault().read_private(c) for c in casts]
    journal = home.home / "keys" / "rotate.journal"
    for _attempt in range(5):  # a rotation that finished before the kill is tried again (to a new key)
        old = key_id_of_file(casts[0])
        proc = subprocess.Popen([*SK, "key", "rotate"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_until(lambda: journal.exists() and len(journal.read_text().splitlines()) >= 3 or proc.poll() is not None, 60, 0.001)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(30)
        if proc.returncode != 0:
            break
    assert proc.returncode != 0, "each of five rotations finished before it could be killed"
    lines = journal.read_text().splitlines()
    new = json.loads(lines[0])["new"]
    done = len(lines) - 1
    assert 0 < done < len(casts)
    forget_cached_keys()
    assert [vault().read_private(c) for c in casts] == before  # every file readable mid-rotation
    under = [key_id_of_file(c) for c in casts]
    assert set(under) <= {old, new} and under.count(new) >= done

    again = invoke_sk("key", "rotate", "--json")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["resumed"] is True and result["complete"] is True and result["new_key"] == new
    assert result["sessions"] <= len(casts) - done + 1
    forget_cached_keys()
    assert all(key_id_of_file(c) == new for c in casts)
    assert [vault().read_private(c) for c in casts] == before
    assert not journal.exists()
    assert not list(home.projects.rglob("*.tmp"))  # what the killed rewrite left is cleaned up
    keys = json.loads((home.home / "keys" / "keys.json").read_text())["keys"]
    assert [k["id"] for k in keys] == [new]
    assert [e.data[:6] for e in open_cast(casts[5]).events()][:1] == ["s5 lin"]
    assert os.environ["PYTHON_KEYRING_BACKEND"].endswith("null.Keyring")


def test_an_imported_recording_is_sealed_and_redacted_like_a_recorded_one(home: Paths, tmp_path: Path) -> None:
    from shellkeep.vault.crypto import is_encrypted

    token = "ghp_" + "A1b2C3d4E5" * 3 + "F6g7H8"
    source = tmp_path / "leaky.cast"
    source.write_text(
        '{"version": 2, "width": 80, "height": 24, "command": "deploy --token ' + token + '"}\n'
        f'[0.5, "o", "plain words {token[:10]}"]\n'
        f'[0.6, "o", "{token[10:]} and more\\r\\n"]\n'
        f'[0.7, "i", "echo {token}\\r"]\n'
    )
    result = invoke_sk("import", str(source))
    assert result.returncode == 0, result.stderr
    session = result.stdout.decode().strip().split()[-1]
    casts = list(home.projects.glob("*/*/session.cast"))
    assert len(casts) == 1 and is_encrypted(casts[0])
    stored = [p for p in home.home.rglob("*") if p.is_file()]  # imports are not compressed: nothing to wait for
    assert any(p.name == "search.jsonl" for p in stored)  # the encrypted session's search text, sealed too
    for path in stored:
        data = path.read_bytes()
        assert token.encode() not in data, path
        assert b"plain words" not in data, path
    shown = invoke_sk("cat", session).stdout
    # The marker keeps the secret's columns (padded to its width), as in a recording.
    assert re.search(rb"plain words \[REDACTED:github-token\] +and more", shown), shown


def test_recording_with_the_key_file_deleted_makes_no_second_key_and_stores_nothing_in_clear(
    home: Paths, tmp_path: Path
) -> None:
    import shlex

    from tests.helpers import PtyHarness, wait_for_background

    run_sk("run", "--", sys.executable, "-c", CHILD)
    wait_for_background(home)
    key_file = home.home / "keys" / "keys.json"
    old_key = json.loads(key_file.read_text())["current"]
    key_file.unlink()
    marker = "kiwi-" + "4d2a"  # built by the child: the command line in meta.json does not hold it
    child = f"print('kiwi-' + '4d2a'); print('done')"
    sk_cmd = " ".join(shlex.quote(a) for a in SK)
    h = PtyHarness.start(["/bin/sh", "-c", f"{sk_cmd} run -- {shlex.quote(sys.executable)} -c {shlex.quote(child)}; echo rc=$?"])
    h.finish()
    screen = bytes(h.output).decode("utf-8", "replace")
    assert marker in screen and "rc=0" in screen, screen  # the program ran and was relayed
    assert screen.count("recording suspended") == 1, screen
    assert "shellkeep key import FILE" in screen and old_key in screen, screen
    assert not key_file.exists()  # no second key was made
    wait_for_background(home)
    newest = session_folders(home)[-1].parent
    for path in home.home.rglob("*"):
        if path.is_file():
            assert marker.encode() not in path.read_bytes(), path  # nothing stored in the clear
    assert key_id_of_file(newest / "session.cast") is None and (newest / "session.cast").stat().st_size == 0


def test_a_session_recorded_while_the_key_was_missing_says_it_recorded_nothing(home: Paths, tmp_path: Path) -> None:
    assert run_sk("run", "--name", "sealed", "--", "sh", "-c", f"echo {WORD}").returncode == 0
    wait_for_housekeeping(home)
    (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")
    suspended = run_sk("run", "--name", "keyless", "--", "sh", "-c", f"echo {WORD}-keyless")
    assert suspended.returncode == 0 and b"recording suspended" in suspended.stderr
    for args in (("cat", "keyless"), ("replay", "keyless", "--speed", "100"), ("export", "keyless", "--format", "txt")):
        result = run_sk(*args)
        err = result.stderr.decode()
        assert result.returncode == 1 and err.count("\n") == 1 and "recorded nothing (no encryption key" in err, (args, err)


def test_an_encrypted_sessions_title_is_its_first_command_read_through_the_vault(home: Paths) -> None:
    from tests.helpers import PtyHarness

    env = dict(os.environ, PS1="$ ", TERM="xterm-256color")
    harness = PtyHarness.start([*SK, "run", "--", "bash", "--norc", "--noprofile"], env=env)
    harness.expect(b"$ ", 30)
    harness.write(b"echo firstcommandhere\r")
    harness.expect(b"\rfirstcommandhere\r\n", 30)
    harness.write(b"exit\r")
    assert harness.finish(60) == 0
    wait_for_housekeeping(home)  # a shell's exchanges are built from its recording in the background
    title = "echo firstcommandhere"
    listed = invoke_sk("ls")
    assert listed.stdout.decode().splitlines()[1].endswith(f"  {title}"), listed.stdout
    shown = invoke_sk("show", "--last").stdout.decode()
    assert f"title      {title}" in shown or re.search(rf"^title\s+{title}$", shown, re.M), shown
    exported = json.loads(invoke_sk("export", "--last", "--format", "json").stdout)
    assert exported["session"]["title"] == title
    assert f"| title | {title} |" in invoke_sk("export", "--last", "--format", "md").stdout.decode()
    from tests.unit.test_web_pages import web_client

    with web_client() as client:  # the web list and the session page
        assert [row["title"] for row in client.get("/api/sessions").json()] == [title]
        assert f'class="title">{title}</a>' in client.get("/").text
        meta, _, _ = only_session(home)
        assert f'id="session-title">{title}<' in client.get(f"/s/{meta['id']}").text
    # The title is kept sealed beside the session, never in meta.json nor the index.
    assert invoke_sk("reindex").returncode == 0
    assert invoke_sk("ls").stdout.decode().splitlines()[1].endswith(f"  {title}")
    meta, _, _ = only_session(home)
    folder = Path(str(meta["cast"])).parent
    assert meta.get("about") is None and is_encrypted(folder / "about.txt")
    for path in [*files_under(folder), *home.home.glob("index.sqlite3*")]:
        assert b"firstcommandhere" not in path.read_bytes(), path
