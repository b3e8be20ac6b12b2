"""A broken config file never lowers privacy: shellkeep/config/fallback.py and its loader.

While a file does not parse or validate, its last good copy applies (kept by the command
that records), else the strictest privacy settings.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from shellkeep.config import (
    PROJECT_FILE_NAME,
    Config,
    RecordConfig,
    RedactPattern,
    RetentionConfig,
    load_config,
    load_config_with_fallback,
    save_last_good,
)
from shellkeep.config.keys import specs
from shellkeep.errors import ConfigError
from shellkeep.store.paths import Paths
from tests.config_files import project, tree, write  # noqa: F401 (project: a fixture)

CORP = RedactPattern("corp", "corp_[0-9]{8}")
GOOD = (
    "[record]\ncoalesce_ms = 9\n[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n"
    "allowlist = ['ok_.*']\n[encryption]\nkey_file = \"/keys/k\"\n"
)
STRICTEST = {"record.input": False, "record.detail": "metadata", "record.env": "none"}


def record_once(paths: Paths, project_root: Path | None = None) -> None:
    """Do what the recording command does with the config: load it, keep the good files."""
    save_last_good(load_config_with_fallback(paths, project_root, {}).good)


BROKEN = {
    "syntax-error-elsewhere": (
        "[record]\ninput = false\ntitle = \n[redact]\nenabled = false\n"
        "patterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\nallowlist = ['.*']\n"
        "[encryption]\nencrypt = true\nkey_file = \"/keys/k\"\n[retention]\nauto_gc = true\nmax_sessions = 1\n"
    ),
    "bad-rule-beside-a-good-one": (
        "[redact]\npatterns = [\n  { name = 'corp', pattern = 'corp_[0-9]{8}' },\n"
        "  { name = 'half' pattern = 'x' },\n]\n[record]\ninput = false\n"
    ),
    "array-of-tables": (
        "[[redact.patterns]]\nname = 'corp'\npattern = 'corp_[0-9]{8}'\n[[redact.patterns]]\nname = 'bad'\n"
        "pattern = '('\n[record]\ninput = false\n[encryption]\nencrypt = true\nkey_file = \"/keys/k\"\n"
        "title = oops\n"
    ),
    "dotted-keys-at-the-top": (
        "record.input = false\nredact.enabled = false\n"
        "redact.patterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\nredact.allowlist = ['.*']\n"
        "encryption.encrypt = true\nencryption.key_file = \"/keys/k\"\nretention.max_sessions = 1\n"
        "record.title = \n"
    ),
    "dotted-keys-inside-tables": (
        "[retention]\nmax_sessions = 1\n[redact]\nenabled = false\n"
        "patterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n"
        "allowlist.x = ['.*']\n"  # redact.allowlist.x: no such key, and never salvaged
        "[record]\ninput = oops\nredact.patterns = [{ name = 'nested', pattern = 'n_[0-9]{8}' }]\n"  # record.redact
        "input = false\n"
    ),
    "inline-tables": (
        "record = { input = false, title = 'x' }\n"
        "redact = { enabled = false, patterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }], allowlist = ['.*'] }\n"
        "encryption = { encrypt = true, key_file = \"/keys/k\" }\nretention = { max_sessions = 1 }\n[record\n"
    ),
    "inline-table-with-a-bad-rule": (
        "redact = { patterns = [{ name = 'half' pattern = 'x' }, { name = 'corp', pattern = 'corp_[0-9]{8}' }] }\n"
        "record.input = false\n"
    ),
    "quoted-keys-spaced-headers": (
        "[ \"redact\" ]  # custom rules\n'patterns' = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n"
        "[ record ]\n\"input\" = false\noops\n"
    ),
    "one-line-array-with-bad-rules": (
        "[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }, { name = 'half' pattern = 'x' }, "
        "{ name = 'bad', pattern = '(' }]\n[record]\ninput = false\n"
    ),
    "error-mid-table-and-an-array-cut-short": (
        "[record]\ntitle = \ninput = false\n[redact]\nenabled = false\npatterns = [\n"
        "  { name = 'corp', pattern = 'corp_[0-9]{8}' },\n  { name = 'half' pattern = 'x' },\n"
        "[encryption]\nencrypt = true\nkey_file = \"/keys/k\"\n"
    ),
    "header-missing-its-bracket": (
        "[redact\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n[[record\n[record]\ninput = false\n"
    ),
    "keys-stated-twice": (
        "[record]\ninput = false\ninput = true\n[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n"
        "[redact]\nenabled = false\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n"
        "[encryption]\nencrypt = true\nencrypt = false\nkey_file = \"/keys/k\"\n"
    ),
    "valid-toml-rule-with-an-unknown-key": (
        "[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}', note = 'ours' }]\n[record]\ninput = false\n"
    ),
    "utf-8-bom": "\ufeff[redact]\npatterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n[record]\ninput = false\n",
    "valid-toml-wrong-key": (
        "[record]\ninput = false\nflush_intervl_ms = 5\n[redact]\nenabled = false\n"
        "patterns = [{ name = 'corp', pattern = 'corp_[0-9]{8}' }]\n[encryption]\nencrypt = true\n"
        "key_file = \"/keys/k\"\n"
    ),
}


def test_the_strictest_values_are_the_models_most_private_ones() -> None:
    assert {key: spec.private[-1] for key, spec in specs().items() if spec.private} == STRICTEST


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_file_with_no_good_copy_records_with_the_strictest_privacy_settings(home: Paths, text: str) -> None:
    write(home.config_file, text)
    with pytest.raises(ConfigError):
        load_config(home, None, {})
    loaded = load_config_with_fallback(home, None, {})
    [problem] = loaded.problems
    assert str(home.config_file) in str(problem.error) and loaded.good == ()
    config = loaded.config
    assert (config.record.input, config.record.detail) == (False, "metadata")  # nothing but metadata is kept
    assert config.redact.enabled is True and config.redact.allowlist == ()  # never weakened
    assert config.retention == RetentionConfig()  # nothing is deleted on a misread limit
    assert config.encryption == Config().encryption
    line = problem.line("recording with")
    assert "\n" not in line and line.startswith(str(problem.error))
    assert "the strictest privacy settings, as no good copy of it is kept" in line
    assert "record.detail = 'metadata'" in line and "encryption settings cannot be known" in line


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_file_with_a_good_copy_applies_the_copy_with_one_warning(home: Paths, text: str) -> None:
    write(home.config_file, GOOD)
    record_once(home)
    good = load_config(home, None, {})
    write(home.config_file, text)
    loaded = load_config_with_fallback(home, None, {})
    assert loaded.config == good and loaded.config.redact.patterns == (CORP,)
    [problem] = loaded.problems
    line = problem.line("recording with")
    assert "recording with its last good copy from " in line and str(home.last_good_config()) in line
    assert str(home.config_file) in line and "\n" not in line


def test_the_copy_is_kept_only_from_a_file_that_parsed_and_validated(home: Paths) -> None:
    copy = home.last_good_config()
    write(home.config_file, GOOD)
    assert load_config_with_fallback(home, None, {}).good[0].copy == copy and not copy.exists()  # loading writes nothing
    record_once(home)
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600 and GOOD in copy.read_text()
    kept = copy.read_bytes()
    for bad in ("[record\n", "[record]\ninput = 'no'\n", "[recrd]\ninput = false\n"):  # not TOML, a bad value, an unknown table
        write(home.config_file, bad)
        record_once(home)
        assert copy.read_bytes() == kept
    write(home.config_file, "[record]\ncoalesce_ms = 3\n")
    record_once(home)
    assert "coalesce_ms = 3" in copy.read_text() and "corp" not in copy.read_text()
    os.utime(home.config_file, (1_000_000_000, 1_000_000_000))
    record_once(home)
    write(home.config_file, "[record\n")
    [problem] = load_config_with_fallback(home, None, {}).problems
    assert "last good copy from 2001-09-09 01:46 UTC" in problem.stand_in  # the good file's own time


def test_loading_with_a_fallback_creates_nothing(home: Paths, project: Path, tmp_path: Path) -> None:
    write(home.config_file, GOOD)
    write(project / PROJECT_FILE_NAME, "[record]\ninput = false\n")
    before = tree(tmp_path)
    loaded = load_config_with_fallback(home, project, {})
    assert [g.source for g in loaded.good] == [home.config_file, project / PROJECT_FILE_NAME]
    write(home.config_file, "[record\n")
    load_config_with_fallback(home, project, {})
    assert tree(tmp_path) == before


def test_a_copy_of_another_file_or_one_that_no_longer_validates_is_not_used(home: Paths, tmp_path: Path) -> None:
    write(home.config_file, GOOD)
    record_once(home)
    other = Paths(home=home.home, config_file=tmp_path / "elsewhere" / "config.toml")  # SHELLKEEP_CONFIG moved
    write(other.config_file, "[record\n")
    assert load_config_with_fallback(other, None, {}).config.record.detail == "metadata"
    copy = home.last_good_config()
    copy.write_text(copy.read_text() + "[recrd]\n")  # a key this version no longer knows
    write(home.config_file, "[record\n")
    loaded = load_config_with_fallback(home, None, {})
    assert loaded.config.record.detail == "metadata" and loaded.config.redact.patterns == ()


def test_a_broken_project_file_falls_back_alone_and_a_good_user_file_applies_in_full(home: Paths, project: Path) -> None:
    write(home.config_file, GOOD)
    proj = write(project / PROJECT_FILE_NAME, "[redact]\npatterns = [{ name = 'p', pattern = 'p_[0-9]{8}' }]\n")
    record_once(home, project)
    assert home.last_good_config(project).is_file() and home.last_good_config(project) != home.last_good_config()
    write(proj, "[record]\ndetail = 'conversation'\n[record\n")
    loaded = load_config_with_fallback(home, project, {})
    [problem] = loaded.problems
    assert PROJECT_FILE_NAME in str(problem.error) and "its last good copy" in problem.stand_in
    assert loaded.config.record.coalesce_ms == 9 and loaded.config.encryption.key_file == "/keys/k"
    assert loaded.config.redact.patterns == (CORP, RedactPattern("p", "p_[0-9]{8}"))
    home.last_good_config(project).unlink()
    loaded = load_config_with_fallback(home, project, {})
    assert loaded.config.record == RecordConfig(input=False, coalesce_ms=9, detail="metadata", env="none")
    assert loaded.config.redact.patterns == (CORP,) and "your own settings and the strictest" in loaded.problems[0].stand_in


def test_a_good_project_file_cannot_loosen_the_strictest_settings_of_a_broken_user_file(
    home: Paths, project: Path
) -> None:
    write(home.config_file, "[record\n")
    write(project / PROJECT_FILE_NAME, "[record]\ndetail = 'conversation'\ncoalesce_ms = 7\n")
    config = load_config_with_fallback(home, project, {}).config
    assert (config.record.detail, config.record.input, config.record.coalesce_ms) == ("metadata", False, 7)


def test_a_good_config_loads_the_same_with_a_fallback_or_not(home: Paths) -> None:
    write(home.config_file, "[record]\ncoalesce_ms = 9\n[redact]\nenabled = false\n")
    loaded = load_config_with_fallback(home, None, {})
    assert (loaded.config, loaded.problems) == (load_config(home, None, {}), ())


def test_a_bad_variable_or_flag_is_left_out_and_said(home: Paths) -> None:
    loaded = load_config_with_fallback(home, None, {"SHELLKEEP_RECORD_COALESCE_MS": "x"}, {"record.flush_interval_ms": 0})
    assert loaded.config == Config() and len(loaded.problems) == 2
    assert loaded.problems[0].line("using").endswith("; using the settings without it")


def test_a_recording_warns_once_per_broken_file(home: Paths, project: Path) -> None:
    from shellkeep.app.run_request import load_settings

    write(home.config_file, GOOD)
    assert load_settings(home, project, warn=pytest.fail, env={}).redact_config is not None
    assert home.last_good_config().is_file()  # the recording kept the copy
    write(home.config_file, GOOD + "title = \n")
    write(project / PROJECT_FILE_NAME, "[record\n")
    warnings: list[str] = []
    settings = load_settings(home, project, warn=warnings.append, env={})
    assert [w.split(" in ")[0] for w in warnings] == ["invalid toml", "invalid toml"], warnings
    assert "; recording with its last good copy from " in warnings[0]
    assert "; recording with your own settings and the strictest privacy settings" in warnings[1]
    assert settings.redact_config is not None and CORP in settings.redact_config.patterns  # still redacted
    assert (settings.detail, settings.record_input) == ("metadata", False)


def test_arrays_nested_too_deeply_are_a_config_error_not_a_crash(home: Paths) -> None:
    write(home.config_file, "[record]\ninput = false\n[redact]\nallowlist = " + "[" * 5000 + "\n")
    with pytest.raises(ConfigError, match="invalid toml in .*: arrays or tables nested too deeply; fix it"):
        load_config(home, None, {})
    loaded = load_config_with_fallback(home, None, {})
    assert loaded.config.record.input is False and len(loaded.problems) == 1
