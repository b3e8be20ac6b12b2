"""Sealed sync objects and manifest MACs (``vault.objects``), manifests (``app.remote``) and a
bucket in memory (``store.bucket``, obstore's ``memory://``)."""

from __future__ import annotations

import pytest

pytest.importorskip("cryptography")
pytest.importorskip("obstore")

from shellkeep.app.remote import canonical, object_path, read_manifest  # noqa: E402
from shellkeep.errors import DataError, KeyUnavailable, UserInputError  # noqa: E402
from shellkeep.store.bucket import open_bucket  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from shellkeep.vault.access import Vault  # noqa: E402
from shellkeep.vault.keys import new_key  # noqa: E402
from shellkeep.vault.objects import check_manifest_mac, manifest_mac, open_object, seal_object  # noqa: E402


def test_a_sealed_object_opens_with_its_key_and_is_the_same_each_time() -> None:
    key = new_key()
    sealed = seal_object(b"secret line\n", key)
    assert b"secret" not in sealed
    assert seal_object(b"secret line\n", key) == sealed  # a resumed push finds it already there
    assert seal_object(b"other line\n", key) != sealed
    assert open_object(sealed, lambda key_id: key, "part") == b"secret line\n"


@pytest.mark.parametrize("at", [0, 10, 20, -1], ids=["magic", "key-id", "nonce", "tag"])
def test_a_changed_byte_anywhere_is_refused(at: int) -> None:
    key = new_key()
    sealed = bytearray(seal_object(b"x" * 100, key))
    sealed[at] ^= 1
    with pytest.raises((DataError, KeyUnavailable)):
        open_object(bytes(sealed), lambda key_id: key if key_id == key.id else (_ for _ in ()).throw(KeyUnavailable("no")), "part")


def test_another_key_cannot_open_it_and_says_what_to_do() -> None:
    def no_key(key_id: str) -> object:
        raise KeyUnavailable(key_id)

    with pytest.raises(KeyUnavailable, match="key import"):
        open_object(seal_object(b"data", new_key()), no_key, "part")  # type: ignore[arg-type]


def test_a_manifest_mac_covers_every_field_but_itself() -> None:
    key = new_key()
    manifest: dict[str, object] = {"version": 1, "files": {"a": {"parts": ["1"]}}, "sealed": True}
    mac = manifest_mac(canonical(manifest), key)
    check_manifest_mac(canonical({**manifest, "mac": mac}), mac, key, "m")
    with pytest.raises(DataError, match="changed in the remote"):
        check_manifest_mac(canonical({**manifest, "files": {"a": {"parts": ["2"]}}}), mac, key, "m")


def test_with_encryption_on_a_plain_manifest_is_refused(home: Paths) -> None:
    plain = b'{"version": 1, "files": {}, "session": {}, "sealed": false}'
    assert read_manifest(plain, Vault(home), "m")["files"] == {}
    with pytest.raises(DataError, match="not sealed"):
        read_manifest(plain, Vault(home, encrypt=True), "m")
    with pytest.raises(DataError, match="not JSON"):
        read_manifest(b"{cut", Vault(home), "m")


def test_a_memory_bucket_lists_reads_writes_and_deletes() -> None:
    bucket = open_bucket("memory:///")
    bucket.put(object_path("ab" * 32), b"1")
    bucket.put("machines/m1/index.json", b"{}")
    bucket.put("machines/m2/index.json", b"{}")
    assert bucket.list("objects/") == {object_path("ab" * 32): 1}
    assert bucket.list_folders("machines/") == ["m1", "m2"]
    assert bucket.get("machines/m1/index.json") == b"{}"
    bucket.delete("machines/m1/index.json")
    bucket.delete("machines/m1/index.json")  # already gone: no error
    with pytest.raises(FileNotFoundError):
        bucket.get("machines/m1/index.json")


@pytest.mark.parametrize("url", ["", "bucket/x", "ftp://host/x", "file://relative"], ids=["empty", "no-scheme", "ftp", "relative"])
def test_a_bad_url_is_a_user_error(url: str) -> None:
    with pytest.raises(UserInputError):
        open_bucket(url)
