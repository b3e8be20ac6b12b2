"""``shellkeep key`` init, status, import with sessions sealed under a lost key: shellkeep/cli/key.py
and shellkeep/vault/keys.py. Real key files, really deleted; real sealed sessions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from click.testing import CliRunner, Result  # noqa: E402

from shellkeep.errors import KeyUnavailable  # noqa: E402
from shellkeep.store.paths import Paths  # noqa: E402
from shellkeep.vault.crypto import key_id_of_file, split_records, write_records_atomic  # noqa: E402
from shellkeep.vault.keys import (  # noqa: E402
    NOTICE_FILE,
    KeyHidden,
    KeyLost,
    current_key,
    default_key_file,
    forget_cached_keys,
    plain_key_notice,
)
from tests.factory import make_session  # noqa: E402
from tests.unit.test_cli_config import _entry  # noqa: E402


pytestmark = pytest.mark.usefixtures("no_os_keyring")  # tests/conftest.py


def sk(*args: str) -> Result:
    return CliRunner().invoke(_entry, ["key", *args])


def _sealed_session(home: Paths, n: int) -> Path:
    """Write a session whose recording is sealed with the current key (made if needed)."""
    meta = make_session(home, home.home.parent / "project", n, events=[(0.5, "o", f"secret text {n}\r\n")])
    cast = Path(meta.cast)
    write_records_atomic(cast, split_records(cast.read_bytes()), current_key(home, create=True))
    return cast


def _lose_the_key(home: Paths, tmp_path: Path) -> Path:
    """Move the key file out of the data folder, as a user deleting it would; return where it went."""
    saved = tmp_path / "saved-keys.json"
    os.replace(default_key_file(home), saved)
    forget_cached_keys()
    return saved


def test_key_init_refuses_a_second_key_beside_sessions_sealed_under_a_lost_one(home: Paths, tmp_path: Path) -> None:
    cast = _sealed_session(home, 1)
    _sealed_session(home, 2)
    lost_id = key_id_of_file(cast)
    saved = _lose_the_key(home, tmp_path)

    refused = sk("init")
    assert refused.exit_code == 1
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"2 sessions in {home.home} are encrypted with key {lost_id}, which no key store holds" in refused.stderr
    assert "shellkeep key import FILE" in refused.stderr and "Traceback" not in refused.stderr
    assert not default_key_file(home).exists()

    status = sk("status", "--json")
    assert status.exit_code == 0 and json.loads(status.stdout)["lost"] == [lost_id]
    said = sk("status")
    assert said.exit_code == 0 and said.stdout.count("\n") == 1, said.stdout
    assert said.stdout.startswith(f"no key: sessions are encrypted with {lost_id}, which no key store holds; ")
    assert "'shellkeep key import FILE'" in said.stdout and "key init" not in said.stdout  # init is refused here

    imported = sk("import", str(saved))
    assert imported.exit_code == 0, imported.stderr
    assert current_key(home).id == lost_id
    assert json.loads(sk("status", "--json").stdout)["lost"] == []


def test_key_init_force_makes_a_key_and_the_old_sessions_stay_unreadable(home: Paths, tmp_path: Path) -> None:
    cast = _sealed_session(home, 1)
    _lose_the_key(home, tmp_path)
    made = sk("init", "--force", "--json")
    assert made.exit_code == 0, made.stderr
    assert json.loads(made.stdout)["current"] != key_id_of_file(cast)
    said = sk("status").stdout
    assert said.startswith("current key ") and f"missing: sessions are encrypted with {key_id_of_file(cast)}; " in said


def test_the_implicit_first_key_is_refused_too(home: Paths, tmp_path: Path) -> None:
    _sealed_session(home, 1)
    _lose_the_key(home, tmp_path)
    with pytest.raises(KeyLost, match="shellkeep key import FILE") as caught:
        current_key(home, create=True)
    assert isinstance(caught.value, KeyUnavailable)
    assert not default_key_file(home).exists()


def test_a_new_key_file_never_hides_the_key_sealed_sessions_need(home: Paths, tmp_path: Path) -> None:
    """encryption.key_file set to a new file: no second key is made while sessions are sealed
    with the old one (kept in the default key file); one line says how to copy it there."""
    cast = _sealed_session(home, 1)
    old_id = key_id_of_file(cast)
    new_file = tmp_path / "elsewhere" / "keys.json"
    set_file = CliRunner().invoke(_entry, ["config", "set", "encryption.key_file", str(new_file)])
    assert set_file.exit_code == 0, set_file.stderr
    forget_cached_keys()
    with pytest.raises(KeyHidden) as caught:  # what the next recording's writer asks for
        current_key(home, str(new_file), create=True)
    assert isinstance(caught.value, KeyUnavailable) and not new_file.exists()
    said = str(caught.value)
    assert f"1 session in {home.home} is encrypted with key {old_id}, kept in {default_key_file(home)} but not in {new_file}" in said
    refused = sk("init")
    assert refused.exit_code == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert "shellkeep key export - | shellkeep key import -" in refused.stderr and not new_file.exists()
    exported = sk("export", "-")
    assert exported.exit_code == 0, exported.stderr
    imported = CliRunner().invoke(_entry, ["key", "import", "-"], input=exported.stdout)
    assert imported.exit_code == 0, imported.stderr
    forget_cached_keys()
    assert current_key(home, str(new_file), create=True).id == old_id  # the key in use, now in the new file
    assert json.loads(new_file.read_text())["current"] == old_id


def test_a_first_key_is_made_where_no_session_is_sealed(home: Paths) -> None:
    make_session(home, home.home.parent / "project", 1)  # a plain session needs no key
    made = sk("init", "--json")
    assert made.exit_code == 0, made.stderr
    assert default_key_file(home).is_file()


def test_a_key_file_beside_the_data_is_called_out_by_status_and_warned_once(home: Paths) -> None:
    made = sk("init")
    assert made.exit_code == 0
    assert made.stderr.count("plain file inside the data folder") == 1
    assert (home.home / "keys" / NOTICE_FILE).is_file()
    assert "plain file inside the data folder" not in sk("import", str(default_key_file(home))).stderr
    assert plain_key_notice(home) is None
    for _ in range(2):
        status = sk("status")
        assert "warning: the encryption key is a plain file inside the data folder" in status.stdout
    assert json.loads(sk("status", "--json").stdout)["beside_data"] is True


def test_a_key_file_outside_the_data_is_not_called_out(home: Paths, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "keys.json"
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text(f'[encryption]\nkey_file = "{outside}"\n')
    made = sk("init")
    assert made.exit_code == 0, made.stderr
    assert "plain file inside" not in made.stderr
    status = sk("status")
    assert str(outside) in status.stdout and "warning" not in status.stdout


def test_key_export_to_a_symlink_writes_its_target(home: Paths, tmp_path: Path) -> None:
    assert sk("init").exit_code == 0
    target = tmp_path / "backup" / "keys.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "keys-link.json"
    link.symlink_to(target)
    result = sk("export", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink()
    assert json.loads(target.read_text()) == json.loads(sk("export").stdout)
    assert oct(target.stat().st_mode & 0o777) == "0o600"


def test_key_export_to_an_empty_name_is_refused(home: Paths) -> None:
    assert sk("init").exit_code == 0
    result = sk("export", "")
    assert result.exit_code == 2 and result.stderr.startswith("shellkeep: the output file name is empty")
