"""``shellkeep sync`` at its edges, against moto's S3 server on loopback (tests/e2e/test_sync.py's).

A push right after a session ended (its upkeep not done), a plain-http endpoint such as
MinIO's, Claude Code's ``<id>/`` side folder, a pulled session with an object missing, and
the one-line refusals of ``--machine``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto")

from shellkeep.store.paths import Paths  # noqa: E402
from tests.e2e.test_sync import WORD, S3Server, bucket_url, machine, record, s3_server, sk  # noqa: E402,F401 - fixtures
from tests.helpers import wait_for_background  # noqa: E402

pytestmark = pytest.mark.timeout(300)


def test_a_push_right_after_a_session_ends_sends_its_recording_once(home: Paths, bucket_url: str, s3_server: S3Server) -> None:  # noqa: F811
    from shellkeep.app import housekeeping

    # The session has ended and its upkeep has not compressed the recording yet (record.compress
    # is off while it runs, on again after): what a push right after the session ends finds.
    sk("config", "set", "record.compress", "false")
    sk("run", "--", sys.executable, "-c", f"print('{WORD} ' * 5000)")
    wait_for_background(home)
    sk("config", "set", "record.compress", "true")
    [folder] = [p.parent for p in home.projects.glob("*/*/meta.json")]
    assert (folder / "session.cast").is_file()

    first = json.loads(sk("sync", "push", "--remote", bucket_url, "--json").stdout)
    assert first["sessions_pushed"] == 1
    housekeeping.run(home, folder, compress=True, auto_gc=False)  # the upkeep reaches the session
    assert (folder / "session.cast.zst").is_file() and not (folder / "session.cast").exists()
    second = json.loads(sk("sync", "push", "--remote", bucket_url, "--json").stdout)
    assert (second["sessions_pushed"], second["parts_sent"], second["bytes_sent"]) == (0, 0, 0), second
    assert len(s3_server.puts("/objects/")) == first["parts_sent"]  # each object went once
    assert len([path for path in s3_server.puts("/machines/") if path.endswith("manifest.json")]) == 1  # one manifest


def test_a_plain_http_endpoint_is_allowed_and_said_in_one_line(
    home: Paths, bucket_url: str, s3_server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.delenv("AWS_ALLOW_HTTP")  # MinIO on the LAN, as a user sets it up: AWS_ENDPOINT_URL=http://...
    session_id = record(home)

    def said(result: subprocess.CompletedProcess[bytes]) -> list[str]:
        return [line for line in result.stderr.decode().splitlines() if "AWS_ALLOW_HTTP" in line]

    pushed = sk("sync", "push", "--remote", bucket_url, "--json")  # (in this process: it sets the variable here)
    assert json.loads(pushed.stdout)["sessions_pushed"] == 1
    [line] = said(pushed)
    assert line.startswith("shellkeep: ") and s3_server.endpoint in line and "plain http" in line, line
    assert "allowing it (AWS_ALLOW_HTTP)" in line and "set AWS_ALLOW_HTTP" not in line, line  # what it did, not an order
    laptop = {k: v for k, v in machine(tmp_path, "laptop").items() if k != "AWS_ALLOW_HTTP"}  # a process of its own
    assert len(said(sk("sync", "pull", "--remote", bucket_url, env=laptop))) == 1
    replayed = sk("replay", "--speed", "1000", session_id, env=laptop)  # fetched on use, through the same endpoint
    assert WORD in replayed.stdout.decode() and len(said(replayed)) == 1

    # The user's own AWS_ALLOW_HTTP=false is kept, and the error says what to change.
    refused = sk("sync", "status", "--remote", bucket_url, env={**os.environ, "AWS_ALLOW_HTTP": "false"}, ok=False)
    err = refused.stderr.decode()
    assert refused.returncode == 1 and err.count("\n") == 1 and "needs AWS_ALLOW_HTTP=true" in err, err


def test_show_of_a_pulled_session_with_an_object_missing_shows_the_rest_and_names_it(
    home: Paths, bucket_url: str, tmp_path: Path  # noqa: F811
) -> None:
    from shellkeep.store.bucket import open_bucket
    from tests.e2e.test_sync import _pulled_pair

    session_id, laptop, folder = _pulled_pair(home, bucket_url, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    [recording] = [name for name in manifest["files"] if name.startswith("session.cast")]
    part = manifest["files"][recording]["parts"][0]
    open_bucket(bucket_url).delete(f"objects/{part[:2]}/{part}")
    host = manifest["machine"]["host"]

    shown = sk("show", session_id, env=laptop)
    out, err = shown.stdout.decode(), shown.stderr.decode()
    assert session_id in out and "promptword-42" in out, out  # the metadata and the exchanges it has
    assert err.count("\n") == 1 and recording in err and f"object {part[:12]}" in err and f"from machine {host}" in err, err
    assert not (folder / recording).exists()
    as_json = sk("show", session_id, "--json", env=laptop)
    assert json.loads(as_json.stdout)["id"] == session_id and recording in as_json.stderr.decode()
    refused = sk("replay", session_id, env=laptop, ok=False)  # a command that needs the recording still refuses
    assert refused.returncode == 3 and f"object {part[:12]}" in refused.stderr.decode()


def test_a_pull_with_an_exchanges_object_missing_pulls_the_session_and_names_it(home: Paths, tmp_path: Path) -> None:
    from tests.factory import make_session

    share = tmp_path / "share"
    meta = make_session(home, Path.cwd(), 1, events=((0.5, "o", "screenword\r\n"),), exchanges=[{"prompt": "p-77", "answer": "a"}])
    sk("sync", "push", "--remote", share.as_uri())
    [manifest_file] = share.glob(f"machines/*/sessions/{meta.id}/manifest.json")
    part = json.loads(manifest_file.read_text())["files"]["exchanges.jsonl"]["parts"][0]
    (share / "objects" / part[:2] / part).unlink()
    laptop = machine(tmp_path, "laptop")
    pulled = sk("sync", "pull", "--remote", share.as_uri(), "--json", env=laptop)
    err = pulled.stderr.decode()
    assert json.loads(pulled.stdout)["sessions_pulled"] == 1
    assert err.count("\n") == 1 and "exchanges.jsonl" in err and f"object {part[:12]}" in err, err
    shown = sk("show", meta.id, env=laptop)
    assert meta.id in shown.stdout.decode() and "exchanges.jsonl" in shown.stderr.decode()


def test_pull_of_this_machine_ls_of_no_machine_and_a_bare_s3_url_are_one_line_each(home: Paths, bucket_url: str) -> None:  # noqa: F811
    record(home)
    sk("sync", "push", "--remote", bucket_url)
    me = json.loads(home.machine_file.read_text())
    for name in (me["id"][:8], me["host"]):
        refused = sk("sync", "pull", "--remote", bucket_url, "--machine", name, ok=False)
        err = refused.stderr.decode()
        assert refused.returncode == 2 and err.count("\n") == 1 and f"'{name}' is this machine" in err, err
        assert refused.stdout == b""
    assert not home.remotes.exists() or not any(home.remotes.iterdir())  # nothing pulled
    mine = json.loads(sk("sync", "pull", "--remote", bucket_url, "--machine", me["host"], "--all-machines", "--json").stdout)
    assert mine["sessions_pulled"] == 1  # asked for with --all-machines: read
    nosuch = sk("ls", "--remote", "--machine", "NOSUCH", ok=False)
    assert nosuch.returncode == 2 and nosuch.stderr.decode().count("\n") == 1 and "'NOSUCH'" in nosuch.stderr.decode()
    for command in (("sync", "push"), ("sync", "pull"), ("sync", "status")):
        bare = sk(*command, "--remote", "s3://", ok=False)
        assert bare.returncode == 2 and bare.stderr.decode() == "shellkeep: 's3://' names no bucket; use s3://bucket/prefix\n"
    blank = sk("sync", "status", "--remote", "s3://  ", ok=False)  # a bucket of blanks (a pasted URL) is none
    assert blank.returncode == 2 and blank.stderr.decode() == "shellkeep: 's3://  ' names no bucket; use s3://bucket/prefix\n"
    missing = bucket_url.split("/")[2] + "-nosuch"  # a bucket nobody made: one line naming it, no XML
    for command in (("sync", "push"), ("sync", "pull"), ("sync", "status")):
        gone = sk(*command, "--remote", f"s3://{missing}/team", ok=False)
        err = gone.stderr.decode()
        assert gone.returncode != 0 and err.count("\n") == 1 and f"bucket '{missing}' does not exist" in err, err
        assert "<?xml" not in err and "404" not in err, err
    unset = sk("config", "set", "sync.url", "s3://", ok=False)
    assert unset.returncode == 2 and unset.stderr.decode().count("\n") == 1 and "'s3://'" in unset.stderr.decode()


def test_a_push_before_the_upkeep_drops_a_recording_not_kept_never_sends_it(home: Paths, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.store.session import write_meta
    from tests.factory import make_session

    # record.detail = "conversation": the upkeep removes the recording once the exchanges are
    # built; a push in between must not send what the user chose not to keep.
    meta = make_session(home, Path.cwd(), 1, events=((0.5, "o", "screen-only-word\r\n"),), exchanges=[{"prompt": "p", "answer": "a"}])
    write_meta(dataclasses.replace(meta, detail="conversation"))
    share = tmp_path / "share"
    sk("sync", "push", "--remote", share.as_uri())
    [manifest] = share.glob(f"machines/*/sessions/{meta.id}/manifest.json")
    assert sorted(json.loads(manifest.read_text())["files"]) == ["exchanges.jsonl", "meta.json"]
    assert not any(b"screen-only-word" in p.read_bytes() for p in share.rglob("*") if p.is_file())


def test_no_storage_credentials_at_all_is_one_line_naming_them(
    home: Paths, bucket_url: str, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    """With no key in the environment, obstore asks the instance-metadata service (IMDSv2) for one;
    off a cloud machine that is refused. The stand-in on loopback refuses as a proxy does (403)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    class Refuse(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            self.send_error(403, "resolve_deny")

        do_GET = do_PUT

        def log_message(self, *args: object) -> None:
            pass

    metadata = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    Thread(target=metadata.serve_forever, daemon=True).start()
    try:
        for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("AWS_METADATA_ENDPOINT", f"http://127.0.0.1:{metadata.server_port}")
        record(home)
        for command in ("push", "pull"):
            result = sk("sync", command, "--remote", bucket_url, ok=False)
            err = result.stderr.decode()
            assert result.returncode == 1 and err.count("\n") == 1, err
            assert "no storage credentials found; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE" in err, err
            assert "latest/api/token" not in err and "Generic S3 error" not in err, err
    finally:
        metadata.shutdown()
