"""``shellkeep sync push|pull|status`` against a real S3 API on loopback (moto's server) and file://.

Two machines are two data folders (SHELLKEEP_HOME) on one bucket. The S3 server counts the
requests it serves, so "nothing new sends nothing" and "a resumed push skips the parts that
arrived" are counted, not guessed.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("obstore")
pytest.importorskip("moto")

from shellkeep.store.audit import read_entries  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from tests.e2e.test_secrets import wait_for_housekeeping  # noqa: E402
from tests.helpers import SK, invoke_sk, run_sk, wait_for_background, wait_until  # noqa: E402

pytestmark = pytest.mark.timeout(300)

WORD = "kumquat-5d2a"


@dataclass
class S3Server:
    """moto's S3 on 127.0.0.1, counting requests; ``put_delay_s`` slows each object upload."""

    port: int
    requests: list[tuple[str, str]] = field(default_factory=list)
    put_delay_s: float = 0.0
    active: int = 0
    """Requests being served now (a killed client's upload may still be under way)."""

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def puts(self, under: str = "/objects/") -> list[str]:
        """Return the paths (after the bucket's name) of the PUT requests served under ``under``."""
        return [path.split("/", 3)[3] for method, path in self.requests if method == "PUT" and under in path]


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    app = DomainDispatcherApplication(create_backend_app)
    server = S3Server(0)

    def counted(environ: dict[str, object], start_response: object) -> object:
        method, path = str(environ["REQUEST_METHOD"]), str(environ.get("PATH_INFO"))
        server.requests.append((method, path))
        server.active += 1
        try:
            if method == "PUT" and "/objects/" in path and server.put_delay_s:
                time.sleep(server.put_delay_s)  # a slow link, server side: the upload takes a while
            return app(environ, start_response)  # type: ignore[arg-type]
        finally:
            server.active -= 1

    httpd = make_server("127.0.0.1", 0, counted, threaded=True)
    server.port = httpd.server_port
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield server
    httpd.shutdown()


@pytest.fixture
def bucket_url(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh bucket; the AWS_* variables obstore reads point at the loopback server."""
    import urllib.request

    name = f"b{uuid.uuid4().hex[:12]}"
    urllib.request.urlopen(urllib.request.Request(f"{s3_server.endpoint}/{name}", method="PUT")).close()
    for var, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": s3_server.endpoint,
        "AWS_ALLOW_HTTP": "true",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
    }.items():
        monkeypatch.setenv(var, value)
    s3_server.requests.clear()
    s3_server.put_delay_s = 0.0
    return f"s3://{name}/team"


def machine(tmp_path: Path, name: str) -> dict[str, str]:
    """The environment of a second machine: its own data folder and config."""
    return {**os.environ, "SHELLKEEP_HOME": str(tmp_path / name / "data"), "SHELLKEEP_CONFIG": str(tmp_path / name / "config.toml")}


def sk(*args: str, env: dict[str, str] | None = None, ok: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run ``shellkeep ARGS``: in this process, but ``run`` (it records) in a new one."""
    call = run_sk if args[0] == "run" else invoke_sk
    result = call(*args, env=env or dict(os.environ), timeout_s=120)
    if ok:
        assert result.returncode == 0, (args, result.stderr.decode())
    return result


def record(paths: Paths, word: str = WORD, env: dict[str, str] | None = None) -> str:
    """Record one short session printing ``word``; return its id once housekeeping is done."""
    sk("run", "--", sys.executable, "-c", f"print('{word}')", env=env)
    home = Path((env or os.environ)["SHELLKEEP_HOME"])
    wait_for_housekeeping(Paths(home, home / "none.toml"))
    listed = json.loads(sk("ls", "--all", "--json", env=env).stdout)
    return str(listed[0]["id"])


def bucket_objects(url: str) -> dict[str, bytes]:
    """Every object of the bucket (relative to its prefix) with its bytes, read with obstore."""
    from shellkeep.store.bucket import open_bucket

    bucket = open_bucket(url)
    return {path: bucket.get(path) for path in bucket.list("")}


def encrypt(env: dict[str, str] | None = None) -> None:
    sk("config", "set", "encryption.encrypt", "true", env=env)


def share_key(src: dict[str, str] | None, dst: dict[str, str], tmp_path: Path) -> None:
    """The team's key: exported on one machine, imported on the other."""
    key_file = tmp_path / "team.key"
    sk("key", "export", str(key_file), env=src)
    sk("key", "import", "--make-current", str(key_file), env=dst)


def test_push_then_pull_on_another_machine_shows_replays_and_exports_it(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    session_id = record(home)
    pushed = sk("sync", "push", "--remote", bucket_url, "--json")
    assert json.loads(pushed.stdout)["sessions_pushed"] == 1
    assert pushed.stderr.decode().count("plaintext") == 1  # encryption off: said once
    laptop = machine(tmp_path, "laptop")
    status = json.loads(sk("sync", "status", "--remote", bucket_url, "--json", env=laptop).stdout)
    assert [m["to_pull"] for m in status["machines"]] == [1] and status["machines"][0]["to_pull_bytes"] > 0
    pulled = json.loads(sk("sync", "pull", "--remote", bucket_url, "--json", env=laptop).stdout)
    assert pulled["sessions_pulled"] == 1
    folder = next(Path(laptop["SHELLKEEP_HOME"], "remotes").glob(f"*/projects/*/{session_id}"))
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "meta.json", "screen.jsonl.zst"]  # recordings on demand
    listed = sk("ls", "--remote", env=laptop).stdout.decode()
    assert session_id in listed and os.uname().nodename in listed
    assert WORD in sk("replay", "--speed", "1000", session_id, env=laptop).stdout.decode()
    assert (folder / "session.cast.zst").is_file()
    assert WORD in sk("export", "--format", "txt", session_id[:15], env=laptop).stdout.decode()
    assert sk("show", session_id, env=laptop).returncode == 0
    audit = sk("audit", "--json", env=laptop).stdout.decode()
    assert "sync fetch" in audit and bucket_url in audit
    again = json.loads(sk("sync", "pull", "--remote", bucket_url, "--json", env=laptop).stdout)
    assert (again["sessions_pulled"], again["sessions_known"]) == (0, 1)


def test_a_push_with_nothing_new_makes_no_request(home: Paths, bucket_url: str, s3_server: S3Server) -> None:
    record(home)
    sk("config", "set", "sync.url", bucket_url)
    sk("sync", "push")
    s3_server.requests.clear()
    second = json.loads(sk("sync", "push", "--json").stdout)
    assert (second["sessions_pushed"], second["sessions_unchanged"]) == (0, 1)
    assert s3_server.requests == []
    status = json.loads(sk("sync", "status", "--json").stdout)
    assert (status["to_push"], status["pushed"]) == (0, 1)
    assert len(s3_server.requests) == 1  # one listing of machines; this machine's own index is not read


def test_a_push_killed_halfway_resumes_without_sending_again_the_parts_that_arrived(
    home: Paths, bucket_url: str, s3_server: S3Server, tmp_path: Path
) -> None:
    big = tmp_path / "big.cast"  # 24 MB of incompressible output: 24 parts of 1 MiB
    with open(big, "w") as fh:
        fh.write(json.dumps({"version": 2, "width": 80, "height": 24}) + "\n")
        for i in range(96):
            fh.write(json.dumps([i * 0.01, "o", base64.b64encode(os.urandom(3 << 16)).decode() + "\r\n"]) + "\n")
    # The import indexes the screen text of 24 MB through the terminal emulator: over 60 s with both cores busy.
    assert run_sk("import", str(big), timeout_s=600).returncode == 0
    sk("config", "set", "sync.part_mib", "1")
    s3_server.put_delay_s = 0.2
    proc = subprocess.Popen([*SK, "sync", "push", "--remote", bucket_url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from shellkeep.store.bucket import open_bucket

        bucket = open_bucket(bucket_url)
        wait_until(lambda: len(bucket.list("objects/")) >= 3, timeout_s=60)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    wait_until(lambda: s3_server.active == 0)  # an upload the killed push had begun is stored or dropped
    arrived = set(bucket.list("objects/"))
    assert bucket.list("machines/") == {}  # no manifest: the push was cut before the end
    s3_server.put_delay_s = 0.0
    s3_server.requests.clear()
    # In a process of its own: 20 MiB through the S3 stand-in, which serves from this process.
    resumed = json.loads(run_sk("sync", "push", "--remote", bucket_url, "--json", timeout_s=120).stdout)
    total = set(bucket.list("objects/"))
    assert resumed["sessions_pushed"] == 1 and len(total) > len(arrived) >= 3
    assert resumed["parts_skipped"] >= len(arrived)
    sent = s3_server.puts("/objects/")
    assert not set(sent) & {f"team/{p}" for p in arrived}  # nothing that had arrived went again
    assert len(sent) == len(total - arrived)


def test_two_machines_on_one_bucket_keep_their_own_prefixes(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    desk_id = record(home, "desk-word")
    laptop = machine(tmp_path, "laptop")
    Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
    laptop_id = record(home, "laptop-word", env={**laptop, "PWD": str(Path.cwd())})
    sk("sync", "push", "--remote", bucket_url)
    sk("sync", "push", "--remote", bucket_url, env=laptop)
    machines = {p.split("/")[1] for p in bucket_objects(bucket_url) if p.startswith("machines/")}
    assert len(machines) == 2
    others = json.loads(sk("sync", "pull", "--remote", bucket_url, "--json").stdout)
    assert others["sessions_pulled"] == 1  # the laptop's; not this machine's own
    laptop_machine = json.loads(Path(laptop["SHELLKEEP_HOME"], "machine.json").read_text())["id"]
    listed = json.loads(sk("ls", "--remote", "--machine", laptop_machine[:8], "--json").stdout)
    assert [m["id"] for m in listed] == [laptop_id]
    everyone = json.loads(sk("sync", "pull", "--remote", bucket_url, "--all-machines", "--json").stdout)
    assert everyone["sessions_pulled"] == 1 and everyone["sessions_known"] == 1
    assert {m["id"] for m in json.loads(sk("ls", "--remote", "--json").stdout)} == {desk_id, laptop_id}
    unknown = sk("sync", "pull", "--remote", bucket_url, "--machine", "nosuch", ok=False)
    assert unknown.returncode == 2 and unknown.stderr.decode().count("\n") == 1

    # The team's table for BI tools: every pulled session, or one machine's, with its host.
    rows = [json.loads(line) for line in sk("export", "--all", "--remote").stdout.splitlines()]
    assert {r["session_id"] for r in rows if r["kind"] == "session"} == {desk_id, laptop_id}
    assert all(r["host"] for r in rows)
    one = [json.loads(line) for line in sk("export", "--all", "--remote", "--machine", laptop_machine[:8]).stdout.splitlines()]
    assert {r["session_id"] for r in one} == {laptop_id}
    assert {r["session_id"] for r in map(json.loads, sk("export", "--all").stdout.splitlines())} == {desk_id}  # this machine's own
    exported = [e for e in read_entries(home) if e.command == "export" and e.session == laptop_id]
    assert exported and all(e.detail.startswith("all; pulled from ") for e in exported)
    nowhere = sk("export", "--all", "--remote", "--machine", "nosuch", "-o", str(tmp_path / "t.csv"), ok=False)
    assert nowhere.returncode == 2 and nowhere.stderr.decode().count("\n") == 1 and not (tmp_path / "t.csv").exists()


def test_with_encryption_the_bucket_holds_no_plaintext_and_no_key(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    sk("key", "init")
    encrypt()
    session_id = record(home)
    pushed = sk("sync", "push", "--remote", bucket_url)
    assert b"plaintext" not in pushed.stderr
    keys = json.loads((home.home / "keys" / "keys.json").read_text())
    secret = keys["keys"][0]["key"].encode()
    stored = bucket_objects(bucket_url)
    assert len(stored) >= 4
    for path, data in stored.items():
        assert WORD.encode() not in data and secret not in data, path
        assert b"print(" not in data, path  # the command line is sealed too
    laptop = machine(tmp_path, "laptop")
    Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
    encrypt(laptop)
    share_key(None, laptop, tmp_path)
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    assert WORD in sk("replay", "--speed", "1000", session_id, env=laptop).stdout.decode()
    [hit] = json.loads(sk("search", "--remote", WORD, "--json", env=laptop).stdout)  # searched sealed, as a local one
    assert hit["session_id"] == session_id
    index_files = list(Path(laptop["SHELLKEEP_HOME"], "remotes").glob("*/index.sqlite3*"))  # with its WAL
    assert index_files and not any(WORD.encode() in f.read_bytes() for f in index_files)  # its text stays out of the plain index


def test_without_the_key_a_sealed_remote_is_refused_in_one_line(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    sk("key", "init")
    encrypt()
    record(home)
    sk("sync", "push", "--remote", bucket_url)
    stranger = machine(tmp_path, "stranger")
    Path(stranger["SHELLKEEP_HOME"]).mkdir(parents=True)
    sk("key", "init", env=stranger)
    encrypt(stranger)
    refused = sk("sync", "pull", "--remote", bucket_url, env=stranger, ok=False)
    err = refused.stderr.decode()
    assert refused.returncode == 1 and err.count("\n") == 1 and "key import" in err and "Traceback" not in err


def test_a_changed_object_or_manifest_is_refused_with_a_clear_line(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    from shellkeep.store.bucket import open_bucket

    sk("key", "init")
    encrypt()
    session_id = record(home)
    sk("sync", "push", "--remote", bucket_url)
    laptop = machine(tmp_path, "laptop")
    Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
    encrypt(laptop)
    share_key(None, laptop, tmp_path)
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    bucket = open_bucket(bucket_url)
    folder = next(Path(laptop["SHELLKEEP_HOME"], "remotes").glob(f"*/projects/*/{session_id}"))
    manifest = json.loads((folder / "manifest.json").read_text())
    cast_part = manifest["files"]["session.cast.zst"]["parts"][0]
    path = f"objects/{cast_part[:2]}/{cast_part}"
    blob = bytearray(bucket.get(path))
    blob[-1] ^= 1
    bucket.put(path, bytes(blob))  # changed in place, under the same name
    refused = sk("replay", session_id, env=laptop, ok=False)
    err = refused.stderr.decode()
    assert refused.returncode == 3 and err.count("\n") == 1 and "changed in the remote" in err, err
    assert not (folder / "session.cast.zst").exists()  # nothing half-fetched is left
    # A manifest whose file list was edited (a part swapped for another object) fails its MAC.
    manifest["files"]["session.cast.zst"]["parts"] = manifest["files"]["meta.json"]["parts"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    swapped = sk("show", session_id, env=laptop, ok=False)
    assert swapped.returncode == 3 and "fails authentication" in swapped.stderr.decode()


def test_file_urls_work_as_a_mounted_share(home: Paths, tmp_path: Path) -> None:
    share = tmp_path / "share"
    url = f"file://{share}"
    session_id = record(home)
    sk("sync", "push", "--remote", url)
    assert list(share.glob("machines/*/sessions/*/manifest.json")) and list(share.glob("objects/*/*"))
    laptop = machine(tmp_path, "laptop")
    sk("sync", "pull", "--remote", url, env=laptop)
    assert WORD in sk("replay", "--speed", "1000", session_id, env=laptop).stdout.decode()


def test_ls_remote_shows_each_title_and_a_resumed_original_as_resumed(home: Paths, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.store.session import host_name, write_meta
    from tests.factory import make_session

    events = [(5.0, "o", "hello\r\n")]
    first = make_session(home, Path.cwd(), 1, agent="claude", status="interrupted", host=host_name(), events=events)
    write_meta(dataclasses.replace(first, about="Fix the flaky login test"))
    again = make_session(home, Path.cwd(), 2, agent="claude", host=host_name(), events=events)
    write_meta(dataclasses.replace(again, parent=first.id, about="Fix the flaky login test, again"))
    url = f"file://{tmp_path / 'share'}"
    sk("sync", "push", "--remote", url)
    laptop = machine(tmp_path, "laptop")
    sk("sync", "pull", "--remote", url, env=laptop)
    lines = sk("ls", "--remote", env=laptop).stdout.decode().splitlines()
    assert lines[0].split()[-1] == "TITLE"
    assert [line.split("  ")[-1] for line in lines[1:]] == ["Fix the flaky login test, again", "Fix the flaky login test"]
    assert f"resumed as {again.id}" in lines[2] and "interrupted" not in lines[2]
    listed = json.loads(sk("ls", "--remote", "--json", env=laptop).stdout)
    assert [m["resumed_as"] for m in listed] == [None, again.id]


def test_bad_remotes_are_one_line_each(home: Paths, tmp_path: Path) -> None:
    none = sk("sync", "push", ok=False)
    assert none.returncode == 2 and "sync.url" in none.stderr.decode() and none.stderr.decode().count("\n") == 1
    wrong = sk("sync", "status", "--remote", "ftp://x/y", ok=False)
    assert wrong.returncode == 2 and "not a storage URL" in wrong.stderr.decode()
    relative = sk("sync", "status", "--remote", "file://relative/path", ok=False)
    assert relative.returncode == 2 and relative.stderr.decode().count("\n") == 1
    typo = tmp_path / "typo" / "deep"
    for command in ("status", "pull"):  # commands that only read make no folder for a mistyped URL
        missing = sk("sync", command, "--remote", f"file://{typo}", ok=False)
        assert missing.returncode == 2 and f"no folder {typo}" in missing.stderr.decode(), missing.stderr
    assert not (tmp_path / "typo").exists()


def test_gc_remote_removes_old_sessions_of_this_machine_only_and_their_objects(home: Paths, bucket_url: str) -> None:
    record(home)
    sk("config", "set", "sync.url", bucket_url)
    sk("sync", "push")
    unset = sk("gc", "--remote", ok=False)
    assert unset.returncode == 2 and "sync.max_age_days" in unset.stderr.decode()
    sk("config", "set", "sync.max_age_days", "1")
    kept = json.loads(sk("gc", "--remote", "--json").stdout)
    assert (kept["sessions_removed"], kept["objects_removed"]) == (0, 0)
    state_file = next((home.home / "sync").glob("*.json"))
    state = json.loads(state_file.read_text())
    for entry in state["sessions"].values():
        entry["started_at"] = "2020-01-01T00:00:00.000Z"  # as if pushed long ago
    state_file.write_text(json.dumps(state))
    removed = json.loads(sk("gc", "--remote", "--json").stdout)
    assert removed["sessions_removed"] == 1 and removed["objects_removed"] >= 2
    assert [p for p in bucket_objects(bucket_url) if "/sessions/" in p or p.startswith("objects/")] == []
    assert json.loads(sk("ls", "--all", "--json").stdout)  # the local session stays


def test_a_running_session_is_never_pushed_until_it_ends(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    go = tmp_path / "go"
    child = f"import os, time\nprint('{WORD}', flush=True)\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)"
    proc = subprocess.Popen([*SK, "run", "--", sys.executable, "-c", child], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: any(json.loads(p.read_text()).get("status") == "running" for p in home.projects.glob("*/*/meta.json")))
        skipped = json.loads(sk("sync", "push", "--remote", bucket_url, "--json").stdout)
        assert (skipped["sessions_pushed"], skipped["running_skipped"]) == (0, 1)
        go.touch()
        assert proc.wait(timeout=60) == 0
    finally:
        go.touch()
        proc.wait()
    wait_for_housekeeping(home)
    ended = json.loads(sk("sync", "push", "--remote", bucket_url, "--json").stdout)
    assert (ended["sessions_pushed"], ended["running_skipped"]) == (1, 0)


def test_deleting_here_deletes_remotely_only_with_prune(home: Paths, bucket_url: str) -> None:
    session_id = record(home)
    sk("config", "set", "sync.url", bucket_url)
    sk("sync", "push")
    sk("rm", "--yes", session_id)
    kept = json.loads(sk("sync", "push", "--json").stdout)
    assert kept["pruned"] == 0 and [p for p in bucket_objects(bucket_url) if p.endswith("manifest.json")]
    sk("config", "set", "sync.prune", "true")
    pruned = json.loads(sk("sync", "push", "--json").stdout)
    assert pruned["pruned"] == 1 and not [p for p in bucket_objects(bucket_url) if p.endswith("manifest.json")]


def test_ls_remote_with_an_unknown_machine_names_it_and_the_known_ones(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    none_yet = sk("ls", "--remote", "--machine", "nosuch", ok=False)
    assert none_yet.returncode == 2 and "'nosuch'" in none_yet.stderr.decode() and "none pulled yet" in none_yet.stderr.decode()
    laptop = machine(tmp_path, "laptop")
    record(home)
    sk("sync", "push", "--remote", bucket_url)
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    unknown = sk("ls", "--remote", "--machine", "nosuch", env=laptop, ok=False)
    err = unknown.stderr.decode()
    assert unknown.returncode == 2 and err.count("\n") == 1 and "'nosuch'" in err and os.uname().nodename in err, err
    assert unknown.stdout == b""


@pytest.mark.parametrize("url", ["s3://", "gs://", "az://", "s3:///prefix"], ids=["s3", "gs", "az", "s3-no-bucket"])
def test_a_remote_url_without_a_bucket_is_one_line_exit_2(home: Paths, url: str) -> None:
    refused = sk("sync", "status", "--remote", url, ok=False)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and err.count("\n") == 1 and "names no bucket" in err, err


def test_an_empty_remote_is_refused_not_replaced_by_sync_url(home: Paths, tmp_path: Path) -> None:
    share = tmp_path / "share"
    sk("config", "set", "sync.url", f"file://{share}")
    record(home)
    for command in ("push", "pull", "status"):
        empty = sk("sync", command, "--remote", "", ok=False)
        assert empty.returncode == 2 and "--remote is empty" in empty.stderr.decode() and empty.stderr.decode().count("\n") == 1
    assert not share.exists()  # nothing went to sync.url


def test_the_plaintext_warning_comes_once_and_only_when_something_is_sent(home: Paths, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'share'}"
    nothing = sk("sync", "push", "--remote", url)
    assert b"in plaintext" not in nothing.stderr
    record(home)
    first = sk("sync", "push", "--remote", url)
    assert first.stderr.decode().count("in plaintext") == 1
    again = sk("sync", "push", "--remote", url)
    assert b"in plaintext" not in again.stderr and b"pushed 0 sessions" in again.stdout


def _pulled_pair(home: Paths, url: str, tmp_path: Path) -> tuple[str, dict[str, str], Path]:
    """A session with a prompt on this machine, pushed to ``url`` and pulled by a laptop: (id, laptop env, its folder there)."""
    from tests.factory import make_session

    meta = make_session(
        home, Path.cwd(), 1, events=((0.5, "o", "screenword-77 on the screen\r\n"),), exchanges=[{"prompt": "fix the promptword-42 bug", "answer": "fixed"}]
    )
    sk("sync", "push", "--remote", url)
    laptop = machine(tmp_path, "laptop")
    sk("sync", "pull", "--remote", url, env=laptop)
    folder = next(Path(laptop["SHELLKEEP_HOME"], "remotes").glob(f"*/projects/*/{meta.id}"))
    return meta.id, laptop, folder


def test_search_remote_finds_pulled_sessions_marked_with_their_machine(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    session_id, laptop, folder = _pulled_pair(home, bucket_url, tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["exchanges.jsonl", "manifest.json", "meta.json", "screen.jsonl.zst"]  # no recording
    host = os.uname().nodename
    [hit] = json.loads(sk("search", "--remote", "promptword-42", "--json", env=laptop).stdout)
    assert (hit["session_id"], hit["kind"], hit["machine"]) == (session_id, "prompt", host)
    text = sk("search", "--remote", "promptword-42", env=laptop).stdout.decode()
    assert f"{session_id}  on {host}" in text
    assert json.loads(sk("search", "--all", "promptword-42", "--json", env=laptop).stdout) == []  # local search stays local
    [seen] = json.loads(sk("search", "--remote", "screenword-77", "--json", env=laptop).stdout)  # its screen's text was pulled
    assert (seen["kind"], seen["machine"], seen["time"]) == ("transcript", host, 0.5)
    assert not folder.joinpath("session.cast").exists()  # with no recording fetched
    assert "screenword-77" in sk("replay", "--speed", "1000", session_id, env=laptop).stdout.decode()
    [seen] = json.loads(sk("search", "--remote", "screenword-77", "--json", env=laptop).stdout)  # the recording's own, now
    assert (seen["kind"], seen["machine"], seen["time"]) == ("transcript", host, 0.5)
    assert json.loads(sk("search", "--remote", "--machine", host, "promptword-42", "--json", env=laptop).stdout)
    unknown = sk("search", "--remote", "--machine", "nosuch", "promptword-42", env=laptop, ok=False)
    assert unknown.returncode == 2 and "'nosuch'" in unknown.stderr.decode() and unknown.stderr.decode().count("\n") == 1
    assert [h["machine"] for h in json.loads(sk("search", "--all", "promptword-42", "--json").stdout)] == [None]  # desk's own


def test_every_read_of_a_pulled_session_is_audited_with_its_machine(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    session_id, laptop, _ = _pulled_pair(home, bucket_url, tmp_path)
    host = os.uname().nodename
    sk("search", "--remote", "promptword-42", env=laptop)
    sk("show", session_id, env=laptop)  # fetches the recording first
    sk("replay", "--speed", "1000", session_id, env=laptop)
    sk("export", "--format", "txt", session_id, env=laptop)
    sk("cat", session_id, env=laptop)
    entries = json.loads(sk("audit", "--json", env=laptop).stdout)
    ours = {e["command"]: e for e in entries if e["session"] == session_id}
    assert {"sync pull", "search", "sync fetch", "show", "replay", "export", "cat"} <= set(ours), [e["command"] for e in entries]
    for command in ("sync pull", "search", "show", "replay", "export", "cat"):
        assert f"pulled from {host} (" in (ours[command]["detail"] or ""), (command, ours[command])
    assert bucket_url in ours["sync fetch"]["detail"] and bucket_url in ours["sync pull"]["detail"]
    assert sk("audit", "verify", env=laptop).returncode == 0


def test_three_machines_on_one_bucket_give_a_team_view(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    from tests.factory import make_session

    envs = {"desk-1": dict(os.environ), "laptop-2": machine(tmp_path, "laptop"), "ci-3": machine(tmp_path, "ci")}
    ids: dict[str, str] = {}
    machine_ids: dict[str, str] = {}
    for n, (host, env) in enumerate(envs.items(), start=1):
        data = Path(env["SHELLKEEP_HOME"])
        data.mkdir(parents=True, exist_ok=True)
        machine_ids[host] = uuid.uuid4().hex
        (data / "machine.json").write_text(json.dumps({"id": machine_ids[host], "host": host}))  # as this_machine keeps it
        made = make_session(Paths(data, data / "none.toml"), Path.cwd(), n, exchanges=[{"prompt": f"teamword from {host}", "answer": "ok"}])
        ids[host] = made.id
        sk("sync", "push", "--remote", bucket_url, env=env)
    everyone = json.loads(sk("sync", "pull", "--remote", bucket_url, "--all-machines", "--json").stdout)
    assert everyone["sessions_pulled"] == 3 and sorted(everyone["machines"]) == sorted(envs)
    listed = json.loads(sk("ls", "--remote", "--json").stdout)
    assert {(m["id"], m["machine"]) for m in listed} == {(ids[h], h) for h in envs}
    for host in envs:
        by_host = json.loads(sk("ls", "--remote", "--machine", host, "--json").stdout)
        by_id = json.loads(sk("ls", "--remote", "--machine", machine_ids[host][:8], "--json").stdout)
        assert [m["id"] for m in by_host] == [m["id"] for m in by_id] == [ids[host]]
        hits = json.loads(sk("search", "--remote", "--machine", host, "teamword", "--json").stdout)
        assert [(h["session_id"], h["machine"]) for h in hits] == [(ids[host], host)]
    table = sk("ls", "--remote", "--machine", "ci-3").stdout.decode()
    assert "ci-3" in table and ids["ci-3"] in table and ids["laptop-2"] not in table
    others = json.loads(sk("sync", "pull", "--remote", bucket_url, "--json", env=envs["laptop-2"]).stdout)
    assert others["sessions_pulled"] == 2 and sorted(others["machines"]) == ["ci-3", "desk-1"]  # not its own
    newcomer = machine(tmp_path, "newcomer")
    one = json.loads(sk("sync", "pull", "--remote", bucket_url, "--machine", "ci-3", "--json", env=newcomer).stdout)
    assert (one["sessions_pulled"], one["machines"]) == (1, ["ci-3"])
    assert [m["id"] for m in json.loads(sk("ls", "--remote", "--json", env=newcomer).stdout)] == [ids["ci-3"]]


def test_a_session_pushed_again_with_new_exchanges_is_searched_as_pushed(home: Paths, tmp_path: Path) -> None:
    url = f"file://{tmp_path / 'share'}"
    session_id, laptop, folder = _pulled_pair(home, url, tmp_path)
    assert json.loads(sk("search", "--remote", "promptword-42", "--json", env=laptop).stdout)  # its index is built
    [local] = home.projects.glob(f"*/{session_id}")
    with open(local / "exchanges.jsonl", "a", encoding="utf-8") as fh:  # a later exchange, as the upkeep adds one
        fh.write(json.dumps({"index": 1, "prompt": "now the laterword-9 part", "answer": "ok", "time": None}) + "\n")
    sk("sync", "push", "--remote", url)
    again = json.loads(sk("sync", "pull", "--remote", url, "--json", env=laptop).stdout)
    assert again["sessions_pulled"] == 1
    assert "laterword-9" in (folder / "exchanges.jsonl").read_text()
    assert [h["session_id"] for h in json.loads(sk("search", "--remote", "laterword-9", "--json", env=laptop).stdout)] == [session_id]


def _laptop_with_pulled(home: Paths, url: str, tmp_path: Path) -> tuple[str, dict[str, str], str, str]:
    """A recorded session pushed to ``url`` and pulled by a laptop: (id, laptop env, its recording's first part, this host)."""
    session_id = record(home)
    sk("sync", "push", "--remote", url)
    laptop = machine(tmp_path, "laptop")
    sk("sync", "pull", "--remote", url, env=laptop)
    folder = next(Path(laptop["SHELLKEEP_HOME"], "remotes").glob(f"*/projects/*/{session_id}"))
    manifest = json.loads((folder / "manifest.json").read_text())
    return session_id, laptop, manifest["files"]["session.cast.zst"]["parts"][0], manifest["machine"]["host"]


def _assert_missing_object_line(refused: subprocess.CompletedProcess[bytes], part: str, session_id: str, url: str, host: str) -> None:
    err = refused.stderr.decode()
    assert refused.returncode == 3 and err.count("\n") == 1, err
    assert f"object {part[:12]} of session {session_id} is missing from {url}; push it again from machine {host}" in err, err


def test_an_object_missing_from_a_file_remote_is_one_line_naming_the_pushing_machine(home: Paths, tmp_path: Path) -> None:
    share = tmp_path / "share"
    url = f"file://{share}"
    session_id, laptop, part, host = _laptop_with_pulled(home, url, tmp_path)
    (share / "objects" / part[:2] / part).unlink()
    _assert_missing_object_line(sk("replay", session_id, env=laptop, ok=False), part, session_id, url, host)
    assert json.loads(sk("sync", "push", "--remote", url, "--json").stdout)["parts_sent"] == 0  # a plain push sees nothing new
    again = json.loads(sk("sync", "push", "--again", "--remote", url, "--json").stdout)
    assert again["parts_sent"] == 1 and (share / "objects" / part[:2] / part).is_file()  # as the line says: pushed again
    assert WORD in sk("replay", "--speed", "1000", session_id, env=laptop).stdout.decode()


def test_an_object_missing_from_an_s3_remote_is_one_line_naming_the_pushing_machine(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    from shellkeep.store.bucket import open_bucket

    session_id, laptop, part, host = _laptop_with_pulled(home, bucket_url, tmp_path)
    open_bucket(bucket_url).delete(f"objects/{part[:2]}/{part}")
    _assert_missing_object_line(sk("replay", session_id, env=laptop, ok=False), part, session_id, bucket_url, host)


def test_a_remote_pushed_without_encryption_is_refused_naming_the_machine_and_an_unknown_machine_first(
    home: Paths, tmp_path: Path
) -> None:
    url = f"file://{tmp_path / 'share'}"
    record(home)
    sk("sync", "push", "--remote", url)
    host = json.loads(home.machine_file.read_text())["host"]
    laptop = machine(tmp_path, "laptop")
    Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
    sk("key", "init", env=laptop)
    encrypt(laptop)
    # A third machine pushing sealed, as the laptop reads: one unsealed machine leaves only itself out.
    desk = machine(tmp_path, "desk")
    Path(desk["SHELLKEEP_HOME"]).mkdir(parents=True)
    encrypt(desk)
    share_key(laptop, desk, tmp_path)
    sk("run", "--", sys.executable, "-c", "print('sealed-word')", env=desk)
    desk_home = Path(desk["SHELLKEEP_HOME"])
    wait_for_background(Paths(desk_home, desk_home / "none.toml"))
    sealed_id = str(json.loads(sk("ls", "--all", "--json", env=desk).stdout)[0]["id"])
    sk("sync", "push", "--remote", url, env=desk)
    for args in (("pull",), ("status",)):
        done = sk("sync", *args, "--remote", url, env=laptop)
        err = done.stderr.decode()
        assert err.count("\n") == 1, err
        assert f"is not sealed: machine {host} pushed it without encryption (or it was changed in the remote)" in err, err
        assert "with encryption on, unsealed data is refused" in err and err.rstrip().endswith("its sessions are left out")
    assert [m["id"] for m in json.loads(sk("ls", "--remote", "--json", env=laptop).stdout)] == [sealed_id]
    unknown = sk("sync", "pull", "--remote", url, "--machine", "nosuch", env=laptop, ok=False)
    assert unknown.returncode == 2 and "no machine 'nosuch' in the remote" in unknown.stderr.decode(), unknown.stderr
    by_host = sk("sync", "pull", "--remote", url, "--machine", host, env=laptop, ok=False)
    assert by_host.returncode == 3 and b"is not sealed" in by_host.stderr


@pytest.mark.parametrize("sealed", [False, True], ids=["plain", "sealed"])
def test_status_counts_the_bytes_push_then_sends_agent_copies_too(home: Paths, tmp_path: Path, sealed: bool) -> None:
    from shellkeep.vault.access import Vault
    from shellkeep.vault.copies import store_copy
    from tests.factory import make_session

    if sealed:
        sk("key", "init")
        encrypt()
    sk("config", "set", "record.compress", "false")  # push compresses no recording first: the bytes are known before
    for n in (1, 2):
        meta = make_session(home, Path.cwd(), n, events=((0.5, "o", f"screen {n}\r\n"),), exchanges=[{"prompt": f"p{n}", "answer": "a"}])
        lines = [json.dumps({"n": n, "i": i, "text": "x" * 200}).encode() + b"\n" for i in range(300)]
        store_copy(Vault(home, encrypt=sealed), meta.folder, f"transcript-{n}.jsonl", lines)
    (tmp_path / "share").mkdir()
    url = f"file://{tmp_path / 'share'}"
    status = json.loads(sk("sync", "status", "--remote", url, "--json").stdout)
    pushed = json.loads(sk("sync", "push", "--remote", url, "--json").stdout)
    assert status["to_push"] == pushed["sessions_pushed"] == 2
    assert status["to_push_bytes"] == pushed["bytes_sent"] > 2 * 300 * 200  # the copies' plaintext is counted


def test_no_plaintext_warning_when_the_bucket_cannot_be_listed(home: Paths, bucket_url: str) -> None:
    record(home)
    absent = f"s3://nobucket{uuid.uuid4().hex[:8]}/team"
    failed = sk("sync", "push", "--remote", absent, ok=False)
    err = failed.stderr.decode()
    assert failed.returncode == 1 and err.count("\n") == 1 and f"the bucket '{absent[5:].split('/')[0]}' does not exist" in err, err
    assert "in plaintext" not in err
    assert sk("sync", "push", "--remote", bucket_url).stderr.decode().count("in plaintext") == 1  # a bucket that answers: warned


def test_a_push_waits_for_a_compression_under_way_and_pushes_what_it_left(home: Paths, bucket_url: str) -> None:
    # Compression renames session.cast to session.cast.zst under the session's lock; a push
    # that listed session.cast before must not fail on it (the trial saw 'No such file').
    import fcntl

    from shellkeep.store.session import read_meta
    from shellkeep.vault.access import Vault
    from shellkeep.vault.compress import LEVEL, _compress_locked

    sk("config", "set", "record.compress", "false")
    sk("run", "--", sys.executable, "-c", f"print('{WORD}')")
    wait_for_background(home)
    session_id = str(json.loads(sk("ls", "--all", "--json").stdout)[0]["id"])
    [folder] = list(home.projects.glob(f"*/{session_id}"))
    assert (folder / "session.cast").is_file()
    held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)  # as compress_recording holds it
    try:
        push = subprocess.Popen([*SK, "sync", "push", "--remote", bucket_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        inode = os.stat(folder).st_ino
        wait_until(lambda: any(f":{inode} " in line and "->" in line for line in Path("/proc/locks").read_text().splitlines()), 60)
        _compress_locked(read_meta(folder), Vault(home), LEVEL)  # the push waits on the lock meanwhile
        assert not (folder / "session.cast").exists()
    finally:
        os.close(held)
    out, err = push.communicate(timeout=120)
    assert push.returncode == 0, err.decode()
    assert b"could not push" not in err
    [manifest] = [json.loads(data) for p, data in bucket_objects(bucket_url).items() if p.endswith(f"{session_id}/manifest.json")]
    assert "session.cast.zst" in manifest["files"] and "session.cast" not in manifest["files"]  # what compression left


def test_a_sealed_plan_travels_with_its_session_and_shows_on_the_other_machine(home: Paths, bucket_url: str, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.agents.plan import Plan, PlanItem, PlanState
    from shellkeep.store.session import PLAN_FILE, read_meta, write_meta
    from shellkeep.vault.access import Vault

    sk("key", "init")
    encrypt()
    session_id = record(home)
    [folder] = [p for p in home.projects.glob(f"*/{session_id}")]
    plan = Plan((PlanItem("write the parser", PlanState.COMPLETED), PlanItem("migrate the index", PlanState.IN_PROGRESS)), "TodoWrite")
    Vault(home, encrypt=True).write_private(folder / PLAN_FILE, json.dumps(plan.to_json()).encode())  # as app.plan seals it
    write_meta(dataclasses.replace(read_meta(folder), plan={"sealed": True, "done": 1, "total": 2}))
    sk("sync", "push", "--remote", bucket_url)
    assert not any(b"migrate the index" in data for data in bucket_objects(bucket_url).values())  # sealed in the bucket
    laptop = machine(tmp_path, "laptop")
    Path(laptop["SHELLKEEP_HOME"]).mkdir(parents=True)
    encrypt(laptop)
    share_key(None, laptop, tmp_path)
    sk("sync", "pull", "--remote", bucket_url, env=laptop)
    shown = json.loads(sk("show", session_id, "--json", env=laptop).stdout)
    assert [item["text"] for item in shown["plan"]["items"]] == ["write the parser", "migrate the index"]
    assert "1 of 2 done; in progress: migrate the index" in sk("show", session_id, env=laptop).stdout.decode()
