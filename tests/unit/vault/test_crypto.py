"""Encryption at rest: the sealed-record format, its writer and reader, keys and rotation.

Real files under ``tmp_path`` and real AES-GCM; the only stand-in is the OS keyring, which
is switched off (``keyring.backends.null``) or replaced by a real file-backed keyring
backend where the keyring path itself is tested.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

pytest.importorskip("cryptography")
import keyring  # noqa: E402
import keyring.backend  # noqa: E402
import keyring.backends.null  # noqa: E402

from tests.recordings import open_binary, open_cast  # noqa: E402
from shellkeep.errors import DataError  # noqa: E402
from shellkeep.vault import crypto  # noqa: E402
from shellkeep.vault.access import Vault  # noqa: E402
from tests.recordings import vault  # noqa: E402
from shellkeep.vault.crypto import (  # noqa: E402
    HEADER_BYTES,
    MAGIC,
    EncryptedWriter,
    is_encrypted,
    key_id_of_file,
    repair_tail,
)
from shellkeep.vault.keys import (  # noqa: E402
    FileKeyStore,
    KeyringStore,
    KeySet,
    KeyUnavailable,
    current_key,
    default_key_file,
    export_keys,
    forget_cached_keys,
    import_keys,
    init_key,
    new_key,
    primary_store,
)
from shellkeep.store.paths import Paths  # noqa: E402
from shellkeep.vault.rotation import journal_path, rotate_key  # noqa: E402
from shellkeep.store.session import SessionMeta  # noqa: E402

from tests.factory import make_session  # noqa: E402

HEADER_LINE = b'{"version": 2, "width": 80, "height": 24}\n'


pytestmark = pytest.mark.usefixtures("no_os_keyring")  # tests/conftest.py


def event_line(i: int) -> bytes:
    return b'[%d.5, "o", "line %d \\u001b[1mbold\\u001b[0m\\r\\n"]\n' % (i, i)


def write_cast(path: Path, paths: Paths, records: int = 5, per_record: int = 3) -> list[bytes]:
    """Write an encrypted recording of ``records`` records; return each record's plaintext."""
    key = current_key(paths, create=True)
    plain: list[bytes] = []
    with EncryptedWriter(open(path, "ab"), lambda: key) as writer:
        writer.write(HEADER_LINE)
        writer.flush()
        plain.append(HEADER_LINE)
        for r in range(records):
            chunk = b"".join(event_line(r * per_record + k) for k in range(per_record))
            writer.write(chunk)
            writer.flush()
            plain.append(chunk)
    return plain


def record_ends(path: Path) -> list[int]:
    """Return the file offset just after each whole record."""
    data = path.read_bytes()
    ends = []
    pos = HEADER_BYTES
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        pos += 8 + 12 + length
        ends.append(pos)
    return ends


# -- round trip --------------------------------------------------------------------------


def test_round_trip_through_open_binary_and_open_cast(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    plain = write_cast(path, home)
    raw = path.read_bytes()
    assert raw.startswith(MAGIC) and is_encrypted(path)
    assert b"line" not in raw and b"version" not in raw
    with open_binary(path) as fh:
        assert fh.read() == b"".join(plain)
    events = list(open_cast(path).events())
    assert [e.data for e in events][:2] == ["line 0 \x1b[1mbold\x1b[0m\r\n", "line 1 \x1b[1mbold\x1b[0m\r\n"]
    assert len(events) == 15
    assert vault().read_private(path) == b"".join(plain)


def test_one_record_per_flush_and_large_writes_are_split(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "big.cast"
    key = current_key(home, create=True)
    big = event_line(1) * (crypto.RECORD_TARGET_BYTES // len(event_line(1)) + 10)
    with EncryptedWriter(open(path, "ab"), key) as writer:
        writer.write(HEADER_LINE)
        writer.flush()
        writer.write(b"small\n")
        assert len(record_ends(path)) == 1  # buffered until a flush
        writer.write(big)  # past the target: sealed at once, without waiting for a flush
        assert len(record_ends(path)) == 2
        writer.flush()
    assert len(record_ends(path)) == 2
    assert vault().read_private(path) == HEADER_LINE + b"small\n" + big


def test_the_key_is_loaded_on_the_first_record_only(home: Paths, tmp_path: Path) -> None:
    calls: list[int] = []
    key = current_key(home, create=True)

    def load() -> object:
        calls.append(1)
        return key

    writer = EncryptedWriter(open(tmp_path / "x.cast", "ab"), load)  # type: ignore[arg-type]
    assert calls == []
    writer.write(b"a\n")
    assert calls == []  # buffered
    writer.flush()
    writer.write(b"b\n")
    writer.close()
    assert calls == [1]
    assert vault().read_private(tmp_path / "x.cast") == b"a\nb\n"


def test_a_key_that_cannot_be_had_is_an_oserror_and_nothing_is_written(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "x.cast"

    def load() -> object:
        raise KeyUnavailable("no key")

    writer = EncryptedWriter(open(path, "ab"), load)  # type: ignore[arg-type]
    writer.write(b"secret text\n")
    with pytest.raises(OSError) as caught:
        writer.flush()
    assert caught.value.errno == getattr(errno, "ENOKEY", errno.EACCES)
    assert "no encryption key" in str(caught.value)
    assert path.read_bytes() == b""


# -- a file cut at every byte, a flipped byte, a wrong key -------------------------------


def test_a_file_cut_at_every_byte_reads_up_to_its_last_whole_record(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    plain = write_cast(path, home, records=4, per_record=2)
    data = path.read_bytes()
    ends = record_ends(path)
    cut = tmp_path / "cut.cast"
    for n in range(len(data) + 1):
        cut.write_bytes(data[:n])
        whole = sum(1 for end in ends if end <= n)
        got = vault().read_private(cut) if n >= len(MAGIC) else b""
        assert got == b"".join(plain[:whole]), f"cut at byte {n}"
        if whole >= 1:  # the header line survived: a valid recording of the whole events
            events = list(open_cast(cut).events())
            assert len(events) == 2 * (whole - 1), f"cut at byte {n}"
        elif n >= len(MAGIC):
            with pytest.raises(DataError):
                open_cast(cut)


def test_repair_tail_drops_a_cut_record_only(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    plain = write_cast(path, home, records=3)
    ends = record_ends(path)
    data = path.read_bytes()
    path.write_bytes(data[: ends[-1] - 5])
    assert repair_tail(path) == ends[-1] - 5 - ends[-2]
    assert path.stat().st_size == ends[-2]
    assert vault().read_private(path) == b"".join(plain[:-1])
    assert repair_tail(path) == 0


def test_recovering_an_interrupted_encrypted_session_drops_its_cut_record(home: Paths, tmp_path: Path) -> None:
    from shellkeep.store.space import RESERVE_FILE, reserve_space
    from shellkeep.store.session import parse_iso, read_meta
    from shellkeep.vault.recovery import recover

    meta = make_session(home, tmp_path / "project", 1, status="running")
    cast = Path(meta.cast)
    cast.unlink()
    plain = write_cast(cast, home, records=3)
    ends = record_ends(cast)
    cast.write_bytes(cast.read_bytes()[: ends[-1] - 5])  # the recorder died inside its last record
    assert reserve_space(meta.folder)
    started = parse_iso(meta.started_at).timestamp()
    for written in (cast, meta.folder / "meta.json"):  # dated as a recorder that died at once leaves them
        os.utime(written, (started, started))
    repaired = recover(meta, vault())
    assert cast.stat().st_size == ends[-2]
    assert vault().read_private(cast) == b"".join(plain[:-1])
    assert repaired.status == "interrupted" and read_meta(meta.folder) == repaired
    assert repaired.duration == 5.5  # the last whole event: line 5 of record 2
    assert not (meta.folder / RESERVE_FILE).exists()


def test_every_flipped_byte_is_detected(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    write_cast(path, home, records=2, per_record=1)
    data = path.read_bytes()
    bad = tmp_path / "bad.cast"
    for i in range(len(data)):
        for bit in (0x01, 0x80):
            flipped = bytearray(data)
            flipped[i] ^= bit
            bad.write_bytes(bytes(flipped))
            forget_cached_keys()
            with pytest.raises((DataError, KeyUnavailable)):
                # never a silent success: open and read every event
                list(open_cast(bad).events())
            if i >= len(MAGIC):
                with pytest.raises((DataError, KeyUnavailable)):
                    vault().read_private(bad)


def test_a_wrong_key_is_one_clear_error_and_the_file_is_untouched(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    write_cast(path, home)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    # Another installation's key replaces ours.
    other = new_key()
    FileKeyStore(default_key_file(home)).save(KeySet(other.id, (other,)))
    forget_cached_keys()
    with pytest.raises(KeyUnavailable) as caught:
        open_cast(path)
    message = str(caught.value)
    assert "\n" not in message and str(key_id_of_file(path)) in message and "shellkeep key import" in message
    assert caught.value.exit_code == 1
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_an_unknown_format_version_is_a_data_error(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    write_cast(path, home)
    data = bytearray(path.read_bytes())
    data[8] = 9
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="upgrade shellkeep"):
        open_cast(path)


# -- private files: exchanges and transcript copies --------------------------------------


def test_write_private_follows_the_config(home: Paths, tmp_path: Path) -> None:

    data = b'{"prompt": "hello"}\n' * 1000
    plain_path = tmp_path / "plain.jsonl"
    Vault(home).write_private(plain_path, data)
    assert plain_path.read_bytes() == data
    assert stat.S_IMODE(plain_path.stat().st_mode) == 0o600

    sealed_path = tmp_path / "sealed.jsonl"
    Vault(home, encrypt=True).write_private(sealed_path, data)
    assert is_encrypted(sealed_path) and b"hello" not in sealed_path.read_bytes()
    assert stat.S_IMODE(sealed_path.stat().st_mode) == 0o600
    assert vault().read_private(sealed_path) == data
    assert vault().read_private(plain_path) == data


def test_the_vault_of_a_command_seals_as_the_users_config_says(home: Paths, tmp_path: Path) -> None:
    from shellkeep.app.context import open_context

    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("[encryption]\nencrypt = true\n")
    path = tmp_path / "exchanges.jsonl"
    open_context(paths=home).vault.write_private(path, b"line one\nline two\n")
    assert is_encrypted(path)
    assert vault().read_private(path) == b"line one\nline two\n"


def test_a_cut_private_file_still_gives_whole_lines(home: Paths, tmp_path: Path) -> None:

    lines = b"".join(b'{"n": %d, "text": "%s"}\n' % (i, b"x" * 900) for i in range(800))
    path = tmp_path / "exchanges.jsonl"
    Vault(home, encrypt=True).write_private(path, lines)
    data = path.read_bytes()
    assert len(record_ends(path)) > 2
    path.write_bytes(data[: len(data) * 2 // 3])
    got = vault().read_private(path)
    assert got and got.endswith(b"\n") and lines.startswith(got)


# -- key stores --------------------------------------------------------------------------


def test_key_file_is_private_and_init_never_replaces_a_key(home: Paths) -> None:
    from shellkeep.errors import ShellkeepError

    report = init_key(home)
    path = default_key_file(home)
    assert report.store == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with pytest.raises(ShellkeepError, match="already exists"):
        init_key(home)
    assert json.loads(path.read_text())["current"] == report.current


def test_configured_key_file_wins(home: Paths, tmp_path: Path) -> None:
    custom = tmp_path / "elsewhere" / "my.key"
    report = init_key(home, str(custom))
    assert report.store == str(custom) and custom.is_file()
    assert not default_key_file(home).exists()
    assert current_key(home, str(custom)).id == report.current


def test_export_then_import_on_another_installation(home: Paths, tmp_path: Path) -> None:
    path = tmp_path / "session.cast"
    write_cast(path, home)
    key_set, _ = export_keys(home)
    text = json.dumps(key_set.to_json())
    other = Paths(home=tmp_path / "other-home", config_file=tmp_path / "none.toml")
    with pytest.raises(KeyUnavailable):
        Vault(other).read_private(path)
    report = import_keys(other, text, "export.json")
    assert report.added == (key_set.current,) and report.current == key_set.current
    forget_cached_keys()
    assert Vault(other).read_private(path).startswith(HEADER_LINE)


def test_a_damaged_key_file_is_refused(home: Paths) -> None:
    init_key(home)
    path = default_key_file(home)
    doc = json.loads(path.read_text())
    doc["keys"][0]["key"] = doc["keys"][0]["key"][:-4] + "AAA="
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError, match="does not match its id"):
        current_key(home)


class FileBackedKeyring(keyring.backend.KeyringBackend):
    """A real keyring backend that keeps its entries in a JSON file (a stand-in OS keyring)."""

    priority = 1

    def __init__(self, path: Path) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.path = path

    def _load(self) -> dict[str, str]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}\0{username}"] = password
        self.path.write_text(json.dumps(data))

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        data.pop(f"{service}\0{username}", None)
        self.path.write_text(json.dumps(data))


def test_the_os_keyring_is_used_where_one_is_usable(home: Paths, tmp_path: Path) -> None:
    keyring.set_keyring(FileBackedKeyring(tmp_path / "os-keyring.json"))
    report = init_key(home)
    assert "OS keyring" in report.store
    assert not default_key_file(home).exists()
    store, found = primary_store(home)
    assert isinstance(store, KeyringStore) and found is not None and found.current == report.current
    path = tmp_path / "session.cast"
    write_cast(path, home)
    forget_cached_keys()
    assert vault().read_private(path).startswith(HEADER_LINE)


def test_without_a_usable_keyring_the_key_file_is_used(home: Paths) -> None:
    store, _ = primary_store(home)
    assert isinstance(store, FileKeyStore) and store.path == default_key_file(home)


# -- rotation ----------------------------------------------------------------------------


def _encrypted_sessions(home: Paths, project: Path, count: int) -> list[SessionMeta]:
    from shellkeep.vault.crypto import split_records, write_records_atomic

    key = current_key(home, create=True)
    metas = []
    for n in range(count):
        meta = make_session(home, project, n, events=[(0.5, "o", f"session {n} text\r\n")])
        cast = Path(meta.cast)
        write_records_atomic(cast, split_records(cast.read_bytes()), key)
        Vault(home, encrypt=True).write_private(meta.folder / "exchanges.jsonl", b'{"prompt": "p%d"}\n' % n)
        metas.append(meta)
    return metas


def _contents(home: Paths, metas: list[SessionMeta]) -> list[tuple[bytes, bytes]]:
    forget_cached_keys()
    return [
        (vault().read_private(Path(m.cast)), vault().read_private(m.folder / "exchanges.jsonl"))
        for m in metas
    ]


def test_rotation_re_encrypts_every_session_and_drops_the_old_key(home: Paths, tmp_path: Path) -> None:
    metas = _encrypted_sessions(home, tmp_path / "project", 4)
    before = _contents(home, metas)
    old = current_key(home).id
    result = rotate_key(home)
    assert result.complete and not result.resumed and result.sessions == 4 and result.files == 8
    assert result.dropped_keys == (old,)
    new = current_key(home).id
    assert new == result.new_key != old
    for meta in metas:
        assert key_id_of_file(Path(meta.cast)) == new
    assert _contents(home, metas) == before
    assert not journal_path(home).exists()
    keys = json.loads(default_key_file(home).read_text())["keys"]
    assert [k["id"] for k in keys] == [new]


def test_rotation_interrupted_then_resumed(home: Paths, tmp_path: Path) -> None:
    metas = _encrypted_sessions(home, tmp_path / "project", 6)
    before = _contents(home, metas)
    old = current_key(home).id
    seen: list[str] = []

    def interrupt(session_id: str, done: int, total: int) -> None:
        seen.append(session_id)
        if len(seen) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        rotate_key(home, on_session=interrupt)
    journal = journal_path(home).read_text().splitlines()
    new = json.loads(journal[0])["new"]
    assert journal[1:] == seen == [m.id for m in metas[:2]]
    keys = {k["id"] for k in json.loads(default_key_file(home).read_text())["keys"]}
    assert keys == {old, new}  # both kept while half done: everything stays readable
    assert _contents(home, metas) == before
    under = [key_id_of_file(Path(m.cast)) for m in metas]
    assert under == [new, new, old, old, old, old]

    result = rotate_key(home)
    assert result.resumed and result.complete and result.new_key == new
    assert result.sessions == 4  # the two done before are not redone
    assert all(key_id_of_file(Path(m.cast)) == new for m in metas)
    assert _contents(home, metas) == before
    assert not journal_path(home).exists()


def test_rotation_leaves_running_sessions_and_keeps_the_old_key(home: Paths, tmp_path: Path) -> None:
    metas = _encrypted_sessions(home, tmp_path / "project", 2)
    running = make_session(home, tmp_path / "project", 9, status="running", host="elsewhere")
    old = current_key(home).id
    result = rotate_key(home)
    assert not result.complete and result.running == (running.id,)
    assert journal_path(home).exists()
    assert old in {k["id"] for k in json.loads(default_key_file(home).read_text())["keys"]}
    assert all(key_id_of_file(Path(m.cast)) == result.new_key for m in metas)


def test_rotate_without_a_key_is_one_clear_error(home: Paths) -> None:
    with pytest.raises(KeyUnavailable, match="shellkeep key init"):
        rotate_key(home)


def test_rotation_can_encrypt_plain_sessions(home: Paths, tmp_path: Path) -> None:
    meta = make_session(home, tmp_path / "project", 1, events=[(0.5, "o", "in the clear\r\n")])
    init_key(home)
    result = rotate_key(home, include_plain=True)
    assert result.complete and result.files == 1
    assert is_encrypted(Path(meta.cast)) and b"in the clear" not in Path(meta.cast).read_bytes()
    assert [e.data for e in open_cast(Path(meta.cast)).events()] == ["in the clear\r\n"]


def test_runner_open_cast_wraps_lazily(home: Paths, tmp_path: Path) -> None:
    import sys

    from shellkeep.app.run_request import RecordSettings
    from shellkeep.app.recording import _open_cast

    out = _open_cast(tmp_path / "session.cast", home, RecordSettings(encrypt=True))
    assert isinstance(out, EncryptedWriter)
    assert not default_key_file(home).exists()  # no key loaded (or made) yet
    out.write(HEADER_LINE)
    out.flush()
    out.close()
    assert default_key_file(home).exists() and "cryptography" in sys.modules
    assert vault().read_private(tmp_path / "session.cast") == HEADER_LINE
    plain = _open_cast(tmp_path / "plain.cast", home, RecordSettings())
    assert not isinstance(plain, EncryptedWriter)
    plain.close()
    os.unlink(tmp_path / "plain.cast")


def test_rotation_re_encrypts_compressed_recordings_and_the_leftover_of_a_cut_compression(home: Paths, tmp_path: Path) -> None:
    """session.cast.zst is rotated; so is a session.cast a cut compression left beside it, so
    dropping the old key never strands either (gc then keeps the one meta.json names)."""
    from shellkeep.vault.compress import compress_recording, settle_session

    metas = _encrypted_sessions(home, tmp_path / "project", 2)
    sealed_plain = Path(metas[0].cast).read_bytes()
    for meta in metas:
        assert compress_recording(meta, vault()).compressed
    (metas[0].folder / "session.cast").write_bytes(sealed_plain)  # cut after meta.json named the .zst
    before = [vault().read_private(m.folder / "session.cast.zst") for m in metas]
    result = rotate_key(home)
    assert result.complete and result.dropped_keys
    new = current_key(home).id
    forget_cached_keys()
    for meta, data in zip(metas, before):
        assert key_id_of_file(meta.folder / "session.cast.zst") == new
        assert vault().read_private(meta.folder / "session.cast.zst") == data
    assert key_id_of_file(metas[0].folder / "session.cast") == new
    settle_session(metas[0], vault())
    assert not (metas[0].folder / "session.cast").exists()
