"""Settings, precedence, validation and writing of config.toml: shellkeep/config/ (a broken file: test_config_fallback.py)."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from shellkeep.config import (
    ENV_VARS,
    PROJECT_FILE_NAME,
    Config,
    RecordConfig,
    RedactPattern,
    RetentionConfig,
    check_config_file,
    config_keys,
    create_config_file,
    explain_config,
    get_config_value,
    load_config,
    parse_size,
    render_config_template,
    set_config_value,
)
from shellkeep.config.keys import specs as _specs
from shellkeep.errors import ConfigError
from shellkeep.store.paths import Paths
from tests.config_files import project, tree, write  # noqa: F401 (project: a fixture)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"


# ----------------------------------------------------------------- defaults and the example


def test_defaults_without_any_file(home: Paths, project: Path) -> None:
    assert load_config(home, project, {}) == Config()
    assert Config().record.flush_interval_ms == 250 and Config().resume.exchanges == 5


def test_example_config_parses_to_the_defaults_and_lists_every_key(tmp_path: Path) -> None:
    assert load_config(Paths(home=tmp_path, config_file=EXAMPLE), None, {}) == Config()
    text = EXAMPLE.read_text()
    doc = tomllib.loads(text)
    for key, spec in _specs().items():
        *section, name = key.split(".")  # a nested table's key has three parts: export.otlp.endpoint
        if spec.default is None:  # unset by default: shown commented out, with an example
            assert f"\n# {name} = " in text, f"{key} is not documented"
        else:
            table = doc
            for part in section:
                table = table[part]
            assert table[name] is not None, f"{key} is not in the example"
    tables = [f.metadata.get("section", f.name).split(".")[0] for f in dataclasses.fields(Config)]
    assert list(doc) == tables


def test_example_config_is_the_generated_template() -> None:
    assert EXAMPLE.read_text() == render_config_template(), (
        "config.example.toml is out of date; regenerate it with: python -c "
        "\"from shellkeep.config import render_config_template as r; "
        "open('config.example.toml', 'w').write(r())\""
    )


def test_loading_creates_nothing(home: Paths, project: Path, tmp_path: Path) -> None:
    write(project / PROJECT_FILE_NAME, "[record]\ninput = false\n")
    before = tree(tmp_path)
    load_config(home, project, {"SHELLKEEP_RECORD_TITLE": "t"}, {"record.coalesce_ms": 9})
    explain_config(home, project, {})
    assert tree(tmp_path) == before


# ----------------------------------------------------------------- precedence


def test_each_layer_overrides_the_one_before_and_names_its_source(home: Paths, project: Path) -> None:
    user = write(home.config_file, "[record]\nflush_interval_ms = 100\ncoalesce_ms = 1\ntitle = 'u'\n")
    proj = write(project / PROJECT_FILE_NAME, "[record]\ncoalesce_ms = 2\ntitle = 'p'\ninput = false\n")
    env = {"SHELLKEEP_RECORD_TITLE": "from-env", "SHELLKEEP_RECORD_INPUT": "yes"}
    flags = {"record.input": False, "record.idle_time_limit": None}  # None: flag not given
    config = load_config(home, project, env, flags)
    assert config.record == RecordConfig(
        input=False, flush_interval_ms=100, coalesce_ms=2, title="from-env"
    )
    sources = {e.key: e.source for e in explain_config(home, project, env, flags)}
    assert sources["record.flush_interval_ms"] == str(user)
    assert sources["record.coalesce_ms"] == str(proj)
    assert sources["record.title"] == "SHELLKEEP_RECORD_TITLE"
    assert sources["record.input"] == "flag"
    assert sources["record.idle_time_limit"] == "default"
    assert list(sources) == list(config_keys())


def test_project_patterns_are_added_to_the_users(home: Paths, project: Path) -> None:
    write(home.config_file, "[redact]\npatterns = [{ name = 'a', pattern = 'a_[0-9]{8}' }]\n")
    proj = write(project / PROJECT_FILE_NAME, "[redact]\npatterns = [{ name = 'b', pattern = 'b_[0-9]{8}' }]\n")
    config = load_config(home, project, {})
    assert config.redact.patterns == (RedactPattern("a", "a_[0-9]{8}"), RedactPattern("b", "b_[0-9]{8}"))
    entry = next(e for e in explain_config(home, project, {}) if e.key == "redact.patterns")
    assert entry.source == f"{home.config_file} + {proj}"


@pytest.mark.parametrize(
    "line",
    ["[sync]\nurl = 's3://evil/x'", "[redact]\nenabled = false", "[redact]\nallowlist = ['.*']",
     "[retention]\nauto_gc = true", "[encryption]\nkey_file = '/tmp/k'", "[record]\ninput = true",
     "[record]\ndetail = 'full'", "[notify]\nurl = 'https://evil.example/x'", "[notify]\ncommand = 'curl evil'",
     "[notify]\ndesktop = true"],
    ids=["sync", "redact-off", "allowlist", "auto-gc", "encryption", "input-back-on", "detail-full", "notify-url",
         "notify-command", "notify-desktop"],
)
def test_a_project_file_cannot_weaken_privacy(home: Paths, project: Path, line: str) -> None:
    proj = write(project / PROJECT_FILE_NAME, line + "\n")
    with pytest.raises(ConfigError) as err:
        load_config(home, project, {})
    message = str(err.value)
    assert "project file" in message and str(proj) in message
    assert "shellkeep config set" in message
    write(home.config_file, line + "\n")  # the same line is fine in the user's own file
    proj.unlink()
    load_config(home, project, {})


def test_a_project_file_may_make_the_privacy_keys_stricter(home: Paths, project: Path) -> None:
    write(project / PROJECT_FILE_NAME, "[record]\ninput = false\ndetail = 'conversation'\n")
    config = load_config(home, project, {})
    assert (config.record.input, config.record.detail) == (False, "conversation")


def test_env_vars_follow_one_naming_scheme_and_parse_like_set(home: Paths) -> None:
    for var, key in ENV_VARS.items():
        assert var == "SHELLKEEP_" + key.upper().replace(".", "_")
        assert key in config_keys() and _specs()[key].kind not in ("strings", "patterns")
    env = {"SHELLKEEP_RECORD_INPUT": "off", "SHELLKEEP_RECORD_IDLE_TIME_LIMIT": "1.5",
           "SHELLKEEP_RESUME_EXCHANGES": "3", "SHELLKEEP_SYNC_URL": "", "SHELLKEEP_HOME": "/x"}
    config = load_config(home, None, env)
    assert (config.record.input, config.record.idle_time_limit, config.resume.exchanges) == (False, 1.5, 3)
    assert config.sync.url == ""  # empty means unset


# ----------------------------------------------------------------- validation errors

BAD_FILES = [
    ("[record]\ninptu = true\n", ["record.inptu", "did you mean 'record.input'?"]),
    ("[recrod]\ninput = true\n", ["[recrod]", "did you mean 'record'?"]),
    ("input = true\n", ["'input'", "record.input"]),
    ("[record]\ninput = 'no'\n", ["record.input", "true or false", "'no'"]),
    ("[record]\nflush_interval_ms = 0\n", ["record.flush_interval_ms", "an integer >= 1", "got 0"]),
    ("[record]\nflush_interval_ms = 2.5\n", ["record.flush_interval_ms", "an integer >= 1"]),
    ("[record]\nidle_time_limit = -1\n", ["record.idle_time_limit", "a number > 0"]),
    ("[record]\nmin_free_mb = true\n", ["record.min_free_mb", "an integer >= 0", "got true"]),
    ("[retention]\nmax_total_size = '5 parsecs'\n", ["retention.max_total_size", '"5GB"']),
    ("[redact]\nallowlist = 'x'\n", ["redact.allowlist", "a list of strings"]),
    ("[redact]\nallowlist = ['a[b']\n", ["redact.allowlist", "'a[b'"]),
    ("[redact]\npatterns = [{ name = 'x', pattern = '(' }]\n", ["redact.patterns", "rule 'x'"]),
    ("[redact]\npatterns = [{ name = 'x', pattern = 'a*' }]\n", ["redact.patterns", "empty text"]),
    ("[redact]\npatterns = [{ name = 'x y', pattern = 'a' }]\n", ["redact.patterns", "'x y'"]),
    ("[redact]\npatterns = [{ name = 'x', patern = 'a' }]\n", ["redact.patterns[0].patern", "did you mean"]),
    ("[redact]\npatterns = [{ name = 'x' }]\n", ["redact.patterns[0].pattern", "a non-empty string"]),
    ("[notify]\nevents = ['waiting', 'done']\n", ["notify.events", "'finished'", "not 'done'"]),
    ("[notify]\nformat = 'xml'\n", ["notify.format", "one of 'text', 'json'", "'xml'"]),
    ("[notify]\nurl = 'ntfy.sh/topic'\n", ["notify.url", "an http:// or https:// URL"]),
    ("[notify]\nwaiting_delay_s = -1\n", ["notify.waiting_delay_s", "a number >= 0"]),
    ("[notify]\nurl = 'ftp://host/x'\n", ["notify.url", "an http:// or https:// URL", "'ftp://host/x'"]),
    ("[notify]\nurl = 'https://ntfy.sh/my topic'\n", ["notify.url", "without spaces", "'https://ntfy.sh/my topic'"]),
    ("[notify]\ncommand = '  '\n", ["notify.command", "a command line", "'  '"]),
    ("[notify]\ncommand = \"say 'hi\"\n", ["notify.command", "its quotes closed", "\"say 'hi\""]),
    ("[sync]\nurl = \"ftp://host/x\"\n", ["sync.url", "a storage URL such as s3://bucket/prefix", "'ftp://host/x'"]),
    ("record = 1\n", ["'record'", "[record] table"]),
    ("[record]\ninput = true\ntitle = \n", ["invalid toml", "line 3"]),
    ("[record]\ninput = tru\n", ["invalid toml", "line 2, column 9"]),
]


@pytest.mark.parametrize(
    ("text", "fragments"),
    BAD_FILES,
    ids=["typo", "table-typo", "no-table", "bool", "range", "float-for-int", "negative", "bool-for-int",
         "size", "not-a-list", "bad-allow-regex", "bad-regex", "empty-match", "bad-name", "pattern-typo",
         "missing-pattern", "notify-event", "notify-format", "notify-url", "notify-delay", "notify-url-scheme",
         "notify-url-space", "notify-command-blank", "notify-command-quote", "sync-url", "table-is-value",
         "toml-end", "toml-column"],
)
def test_a_bad_file_is_one_line_naming_file_key_and_expectation(
    home: Paths, text: str, fragments: list[str]
) -> None:
    write(home.config_file, text)
    with pytest.raises(ConfigError) as err:
        load_config(home, None, {})
    message = str(err.value)
    assert "\n" not in message and not message.endswith(".")
    assert str(home.config_file) in message
    for fragment in fragments:
        assert fragment in message
    with pytest.raises(ConfigError):
        check_config_file(home.config_file)


def test_bad_env_var_and_bad_flag_are_named(home: Paths) -> None:
    with pytest.raises(ConfigError, match=r"environment variable SHELLKEEP_RECORD_INPUT: record.input must be"):
        load_config(home, None, {"SHELLKEEP_RECORD_INPUT": "maybe"})
    with pytest.raises(ConfigError, match=r"command-line flag: record.coalesce_ms must be an integer >= 0"):
        load_config(home, None, {}, {"record.coalesce_ms": -3})
    with pytest.raises(ConfigError, match=r"unknown config key 'record.titel'; did you mean 'record.title'\?"):
        load_config(home, None, {}, {"record.titel": "x"})


def test_unreadable_or_non_utf8_file(home: Paths) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_bytes(b"[record]\ntitle = '\xff'\n")
    with pytest.raises(ConfigError, match="not valid utf-8"):
        load_config(home, None, {})
    home.config_file.unlink()
    home.config_file.mkdir()
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(home, None, {})


# ----------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("text", "size"),
    [("", None), ("  ", None), ("1024", 1024), ("10b", 10), ("1k", 1024), ("500MB", 500 * 2**20),
     ("5GB", 5 * 2**30), ("5 gib", 5 * 2**30), ("1.5G", int(1.5 * 2**30)), ("2TB", 2 * 2**40)],
    ids=repr,
)
def test_parse_size(text: str, size: int | None) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["5 parsecs", "-1GB", "GB", "5GBB", "1e3"], ids=repr)
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_max_total_bytes() -> None:
    assert RetentionConfig(max_total_size="2MB").max_total_bytes == 2 * 2**20
    assert RetentionConfig().max_total_bytes is None


def test_get_config_value(home: Paths) -> None:
    config = load_config(home, None, {"SHELLKEEP_RECORD_COMPRESS": "0"})
    assert get_config_value(config, "record.compress") is False
    assert get_config_value(config, "record.title") is None
    with pytest.raises(ConfigError, match="did you mean 'record.compress'"):
        get_config_value(config, "record.compres")


# ----------------------------------------------------------------- writing


def test_set_creates_a_private_file_in_a_private_folder(home: Paths) -> None:
    assert set_config_value(home.config_file, "record.input", "false") is False
    assert stat.S_IMODE(home.config_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.config_file.parent.stat().st_mode) == 0o700
    assert load_config(home, None, {}).record.input is False


@pytest.mark.parametrize(
    ("key", "raw", "value"),
    [
        ("record.input", "0", False),
        ("record.compress", "Yes", True),
        ("record.flush_interval_ms", "125", 125),
        ("record.idle_time_limit", "2", 2.0),
        ("record.title", 'my "session"', 'my "session"'),
        ("retention.max_total_size", "5GB", "5GB"),
        ("redact.allowlist", "EXAMPLE", ("EXAMPLE",)),
        ("redact.allowlist", '["a", "b+"]', ("a", "b+")),
        ("redact.patterns", "[{ name = 'p', pattern = 'p_[0-9]{4}' }]", (RedactPattern("p", "p_[0-9]{4}"),)),
    ],
    ids=lambda v: str(v),
)
def test_set_converts_to_the_keys_type_and_keeps_other_keys(
    home: Paths, key: str, raw: str, value: object
) -> None:
    write(home.config_file, "[resume]\nexchanges = 9\n")
    assert set_config_value(home.config_file, key, raw) == value
    config = load_config(home, None, {})
    assert get_config_value(config, key) == value
    assert config.resume.exchanges == 9


def test_set_empty_unsets_an_optional_key(home: Paths) -> None:
    set_config_value(home.config_file, "record.title", "t")
    assert set_config_value(home.config_file, "record.title", "") is None
    assert load_config(home, None, {}).record.title is None
    assert "record" not in tomllib.loads(home.config_file.read_text())


@pytest.mark.parametrize(
    ("key", "raw", "fragment"),
    [("record.inpt", "1", "did you mean 'record.input'?"), ("record.input", "maybe", "true or false"),
     ("record.coalesce_ms", "-1", "an integer >= 0"), ("redact.patterns", "[1", "TOML array"),
     ("record.flush_interval_ms", "", "an integer >= 1")],
    ids=["unknown", "bool", "range", "toml", "empty"],
)
def test_set_refuses_bad_input_and_leaves_the_file_alone(
    home: Paths, key: str, raw: str, fragment: str
) -> None:
    original = "# mine\n[record]\ncoalesce_ms = 3\n"
    write(home.config_file, original)
    with pytest.raises(ConfigError, match=fragment.replace("?", r"\?")):
        set_config_value(home.config_file, key, raw)
    assert home.config_file.read_text() == original
    assert [p.name for p in home.config_file.parent.iterdir()] == ["config.toml"]


def test_set_refuses_to_rewrite_an_invalid_file(home: Paths) -> None:
    write(home.config_file, "[record]\nbogus = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'record.bogus'"):
        set_config_value(home.config_file, "record.input", "true")


def test_set_follows_a_symlinked_config(home: Paths, tmp_path: Path) -> None:
    target = write(tmp_path / "dotfiles" / "shellkeep.toml", "[resume]\nexchanges = 2\n")
    home.config_file.parent.mkdir(parents=True)
    home.config_file.symlink_to(target)
    set_config_value(home.config_file, "resume.exchanges", "4")
    assert home.config_file.is_symlink()
    assert "exchanges = 4" in target.read_text()


def test_create_config_file_writes_the_commented_template_once(home: Paths) -> None:
    assert create_config_file(home.config_file) is True
    text = home.config_file.read_text()
    assert text == render_config_template(commented=True)
    assert load_config(home, None, {}) == Config()
    assert stat.S_IMODE(home.config_file.stat().st_mode) == 0o600
    home.config_file.write_text("[record]\ninput = false\n")
    assert create_config_file(home.config_file) is False
    assert load_config(home, None, {}).record.input is False


def test_user_file_permissions_are_not_needed_to_be_loose(home: Paths) -> None:
    set_config_value(home.config_file, "sync.url", "s3://bucket/x")
    mode = os.stat(home.config_file).st_mode
    assert not mode & (stat.S_IRWXG | stat.S_IRWXO)


def test_a_project_file_sets_retention_limits_for_its_project(home: Paths, project: Path) -> None:
    write(project / PROJECT_FILE_NAME, "[retention]\nmax_sessions = 3\nmax_age_days = 30\n")
    config = load_config(home, project, {})
    assert (config.retention.max_sessions, config.retention.max_age_days) == (3, 30)
    assert load_config(home, None, {}).retention.max_sessions == 0  # the user's own limits


def test_without_any_config_layer_run_uses_the_config_defaults(tmp_path: Path) -> None:
    """run skips loading config when no layer exists; its defaults must be the config's."""
    from shellkeep.config import ENV_VARS, Config
    from shellkeep.app.run_request import _CONFIG_ENV_PREFIXES, load_settings, settings_from_config

    assert all(name.startswith(_CONFIG_ENV_PREFIXES) for name in ENV_VARS)
    paths = Paths(home=tmp_path / "home", config_file=tmp_path / "none" / "config.toml")
    project = tmp_path / "checkout"
    project.mkdir()
    fast = load_settings(paths, project, warn=pytest.fail, env={})
    assert fast == dataclasses.replace(settings_from_config(Config()), redact_config=None)
    # Any one layer makes it load the config.
    slow = load_settings(paths, project, warn=pytest.fail, env={"SHELLKEEP_RECORD_INPUT": "false"})
    assert slow.record_input is False
    (project / PROJECT_FILE_NAME).write_text("[record]\ninput = false\n")
    assert load_settings(paths, project, warn=pytest.fail, env={}).record_input is False


def test_a_nested_table_loads_sets_and_refuses_like_the_others(tmp_path: Path) -> None:
    """[export.otlp] is a table inside [export]: its keys are export.otlp.<name>."""
    path = tmp_path / "config.toml"
    path.write_text('[export.otlp]\nendpoint = "http://127.0.0.1:4318/v1/traces"\nheaders = ["x-team=a"]\n')
    config = load_config(Paths(home=tmp_path, config_file=path), None, {})
    assert (config.export_otlp.endpoint, config.export_otlp.headers, config.export_otlp.content) == (
        "http://127.0.0.1:4318/v1/traces", ("x-team=a",), False,
    )  # fmt: skip
    assert set_config_value(path, "export.otlp.content", "true") is True
    assert tomllib.loads(path.read_text())["export"]["otlp"]["content"] is True
    for text, message in [
        ('[export.otlp]\nendpoint = "ftp://x"\n', "export.otlp.endpoint must be an http:// or https:// URL"),
        ("[export.otlp]\nheaders = [\"no-value\"]\n", 'export.otlp.headers must be a list of "name=value" HTTP headers'),
        ("[export.otlpp]\n", "unknown table [export.otlpp]"),
        ("[export.otlp]\nendpont = \"\"\n", "did you mean 'export.otlp.endpoint'?"),
    ]:
        path.write_text(text)
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(Paths(home=tmp_path, config_file=path), None, {})
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".shellkeep.toml").write_text('[export.otlp]\nendpoint = "http://evil.example/v1/traces"\n')
    path.write_text("")
    with pytest.raises(ConfigError, match="cannot be set in a project file"):
        load_config(Paths(home=tmp_path, config_file=path), project, {})


def test_a_fifo_in_place_of_the_config_file_is_refused_not_read(tmp_path: Path) -> None:
    """A FIFO (or a device) where config.toml should be would block every command on its read."""
    from shellkeep.config.toml import read_document

    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=r"config file '.*config\.toml' is not a regular file; fix it"):
        read_document(fifo, "fix it")
