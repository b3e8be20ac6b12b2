"""``shellkeep config`` path, show, get, set, edit and validate: shellkeep/cli/config.py."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from shellkeep.cli.main import main
from shellkeep.config import PROJECT_FILE_NAME, config_keys, render_config_template
from shellkeep.errors import ShellkeepError
from shellkeep.store.paths import Paths


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}
)
@click.pass_context
def _entry(ctx: click.Context) -> None:
    """Run the real CLI and report errors the way ``shellkeep.cli.main:entry`` does."""
    try:
        main.main(args=ctx.args, prog_name="shellkeep", standalone_mode=False)
    except ShellkeepError as exc:
        click.echo(f"shellkeep: {exc}", err=True)
        ctx.exit(exc.exit_code)


def sk(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run ``shellkeep config ARGS`` in-process."""
    return CliRunner().invoke(_entry, ["config", *args], env=env)


def assert_one_line_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("shellkeep: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.mark.parametrize("name", ["path", "show", "get", "set", "edit", "validate"])
def test_every_subcommand_has_help_ending_with_an_example(name: str) -> None:
    result = CliRunner().invoke(main, ["config", name, "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "Example: shellkeep config" in text or "Example: EDITOR=nano shellkeep config" in text


def test_path_prints_the_user_config_file(home: Paths) -> None:
    result = sk("path")
    assert result.exit_code == 0 and result.stdout == f"{home.config_file}\n"
    assert not home.config_file.exists()


def test_show_lists_every_key_with_its_source(home: Paths) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("[record]\ncoalesce_ms = 7\n")
    Path(PROJECT_FILE_NAME).write_text("[resume]\nexchanges = 2\n")
    result = sk("show", env={"SHELLKEEP_RECORD_INPUT": "0"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(" = ")[0] for line in lines] == list(config_keys())
    text = result.stdout
    assert f"record.coalesce_ms = 7" in text and f"# {home.config_file}" in text
    assert f"# {Path.cwd() / PROJECT_FILE_NAME}" in text
    assert "record.input = false" in text and "# SHELLKEEP_RECORD_INPUT" in text
    assert "record.title = (unset)" in text and "# default" in text


def test_show_json_is_one_object_of_value_and_source(home: Paths) -> None:
    result = sk("show", "--json", env={"SHELLKEEP_RECORD_TITLE": "t"})
    assert result.exit_code == 0 and result.stderr == ""
    data = json.loads(result.stdout)
    assert list(data) == list(config_keys())
    assert all(set(v) == {"value", "source"} for v in data.values())
    assert data["record.title"] == {"value": "t", "source": "SHELLKEEP_RECORD_TITLE"}
    assert data["record.idle_time_limit"] == {"value": None, "source": "default"}
    assert data["redact.patterns"] == {"value": [], "source": "default"}


def test_set_then_get(home: Paths) -> None:
    result = sk("set", "record.flush_interval_ms", "100")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "record.flush_interval_ms = 100" in result.stderr
    assert stat.S_IMODE(home.config_file.stat().st_mode) == 0o600
    assert sk("get", "record.flush_interval_ms").stdout == "100\n"
    assert sk("set", "redact.patterns", "[{ name = 'p', pattern = 'p_\\d+' }]").exit_code == 0
    assert sk("get", "redact.patterns").stdout == "[{ name = \"p\", pattern = 'p_\\d+' }]\n"
    unset = sk("get", "record.title")
    assert unset.exit_code == 0 and unset.stdout == ""
    sk("set", "record.title", "my title")
    assert sk("get", "record.title").stdout == "my title\n"


def test_get_unknown_key_is_one_line_with_a_suggestion() -> None:
    assert_one_line_error(sk("get", "record.flush_interval"), "did you mean 'record.flush_interval_ms'?")


def test_set_bad_value_is_one_line_and_changes_nothing(home: Paths) -> None:
    sk("set", "record.input", "false")
    before = home.config_file.read_text()
    assert_one_line_error(sk("set", "record.input", "nope"), "record.input must be true or false")
    assert_one_line_error(sk("set", "recrod.input", "1"), "did you mean 'record.input'?")
    assert home.config_file.read_text() == before


def test_set_refuses_a_bad_notify_url_or_command_up_front(home: Paths) -> None:
    assert sk("set", "notify.url", "https://ntfy.sh/topic").exit_code == 0
    before = home.config_file.read_text()
    assert_one_line_error(sk("set", "notify.url", "ftp://host/x"), "notify.url must be an http:// or https:// URL")
    assert_one_line_error(sk("set", "notify.url", "https://ntfy.sh/a b"), "without spaces")
    assert_one_line_error(sk("set", "notify.command", "   "), "notify.command must be a command line")
    assert_one_line_error(sk("set", "notify.command", "say 'hi"), "notify.command must be a command line with its quotes closed")
    assert home.config_file.read_text() == before


def test_set_and_validate_refuse_a_sync_url_every_sync_command_refuses(home: Paths) -> None:
    assert sk("set", "sync.url", "file:///mnt/share").exit_code == 0
    before = home.config_file.read_text()
    for url in ("s3://", "gs://", "s3:///prefix"):
        assert_one_line_error(sk("set", "sync.url", url), "sync.url must be a storage URL naming a bucket")
    assert_one_line_error(sk("set", "sync.url", "file://relative/path"), "sync.url must be a file:// URL with an absolute path")
    assert home.config_file.read_text() == before
    home.config_file.write_text('[sync]\nurl = "file://relative/path"\n')  # edited by hand
    assert_one_line_error(sk("validate"), "sync.url", "absolute path")


def test_set_takes_a_value_that_starts_with_a_dash(home: Paths) -> None:
    # "-1" is a value, not an option: it reaches the setting's own check.
    assert_one_line_error(sk("set", "notify.waiting_delay_s", "-1"), "notify.waiting_delay_s must be a number >= 0, got -1")
    result = sk("set", "notify.command", "--loud")
    assert result.exit_code == 0, result.output
    assert sk("get", "notify.command").stdout == "--loud\n"
    assert_one_line_error(sk("set", "--bogus", "1"), "unknown config key '--bogus'")


def test_validate_ok_and_broken(home: Paths) -> None:
    result = sk("validate")
    assert not home.config_file.exists()
    assert result.exit_code == 0 and result.stdout == f"ok: {home.config_file} (no such file: the defaults apply)\n"
    sk("set", "resume.exchanges", "3")
    Path(PROJECT_FILE_NAME).write_text("[record]\ninput = false\n")
    result = sk("validate")
    assert result.stdout == f"ok: {home.config_file}\nok: {Path.cwd() / PROJECT_FILE_NAME}\n"
    home.config_file.write_text("[resume]\nexchanges = 'x'\n")
    assert_one_line_error(sk("validate"), str(home.config_file), "resume.exchanges", "an integer >= 0")
    home.config_file.write_text("[resume\n")
    assert_one_line_error(sk("validate"), str(home.config_file), "line 1")
    assert_one_line_error(sk("show"), "invalid toml")


def _editor(tmp_path: Path, old: str, new: str) -> str:
    """Return an $EDITOR command that replaces ``old`` by ``new`` in the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import pathlib, sys\n"
        "f = pathlib.Path(sys.argv[1])\n"
        f"f.write_text(f.read_text().replace({old!r}, {new!r}))\n"
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def test_edit_creates_the_documented_file_opens_the_editor_and_checks(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    result = sk("edit", env={"EDITOR": _editor(tmp_path, "# exchanges = 5", "exchanges = 1")})
    assert result.exit_code == 0, result.output
    assert result.stdout == f"ok: {home.config_file}\n"
    template = render_config_template(commented=True)
    assert home.config_file.read_text() == template.replace("# exchanges = 5", "exchanges = 1")
    assert sk("get", "resume.exchanges").stdout == "1\n"

    result = sk("edit", env={"EDITOR": _editor(tmp_path, "exchanges = 1", "exchange = 1")})
    assert_one_line_error(result, "unknown key 'resume.exchange'", str(home.config_file))
    assert "exchange = 1" in home.config_file.read_text()  # what the user wrote is kept
