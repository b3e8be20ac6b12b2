"""Contracts users and scripts rely on: exit codes, --help, --json fields, a light start-up."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from shellkeep import errors
from shellkeep.cli.main import COMMANDS, main
from shellkeep.cli.record import SHORT_HELP
from shellkeep.store.paths import resolve_paths
from shellkeep.store.session import SessionMeta
from tests.helpers import SK, run_sk, wait_for_background


@pytest.mark.parametrize(
    ("cls", "code"),
    [
        (errors.ShellkeepError, 1),
        (errors.UserInputError, 2),
        (errors.SessionNotFound, 2),
        (errors.AmbiguousSession, 2),
        (errors.ConfigError, 2),
        (errors.DataError, 3),
        (errors.InternalError, 70),
        (errors.AgentNotFound, 127),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_exit_code_table(cls: type[errors.ShellkeepError], code: int) -> None:
    assert cls.exit_code == code


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=str)
def test_every_command_has_help_ending_with_an_example(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output
    assert "shellkeep" in result.output.split("Example:")[1]


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=str)
def test_each_stored_short_help_is_the_commands_own(name: str) -> None:
    # The group's --help and completion print SHORT_HELP without importing the command.
    command = main.get_command(click.Context(main), name)
    assert command is not None and sorted(SHORT_HELP) == sorted(COMMANDS)
    assert SHORT_HELP[name] == command.get_short_help_str(limit=10**6)
    stand_in = click.Command(name, help=SHORT_HELP[name])
    for limit in (20, 45, 59, 100):  # 45: completion; 59: --help at 80 columns
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_what_help_shows_without_loading_app_is_apps_own() -> None:
    # stats --help and serve --help show these without importing the app layer.
    from shellkeep.app.serve import DEFAULT_PORT
    from shellkeep.app.stats import USAGE_GROUPS
    from shellkeep.cli import serve, stats

    assert stats.GROUPS == USAGE_GROUPS
    assert serve.PORT == DEFAULT_PORT


def test_top_level_help_and_version() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0 and "Example:" in result.output
    version = run_sk("--version")
    assert version.returncode == 0 and version.stdout.startswith(b"shellkeep, version ")


def test_unknown_session_is_one_line_and_exit_2() -> None:
    result = run_sk("show", "nope")
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.startswith(b"shellkeep: no session matches 'nope'")
    assert result.stderr.count(b"\n") == 1


def test_ambiguous_prefix_is_exit_2() -> None:
    for _ in range(2):
        run_sk("run", "--", "true")
    prefix = json.loads(run_sk("ls", "--json").stdout)[0]["id"][:4]
    result = run_sk("show", prefix)
    assert result.returncode == 2
    assert b"matches 2 sessions" in result.stderr and result.stderr.count(b"\n") == 1


def test_usage_error_is_exit_2() -> None:
    result = run_sk("ls", "--no-such-flag")
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr


def test_json_field_names_are_the_documented_ones() -> None:
    run_sk("run", "--name", "n1", "--", "true")
    wait_for_background(resolve_paths())  # the upkeep renames the recording it compresses (cast changes)
    listed = json.loads(run_sk("ls", "--json").stdout)
    shown = json.loads(run_sk("show", "n1", "--json").stdout)
    fields = {f.name for f in dataclasses.fields(SessionMeta)} - {"extra"}
    assert isinstance(listed, list) and set(listed[0]) == fields
    assert isinstance(shown, dict) and set(shown) == fields | {"in_flight"}  # show adds the files in flight
    assert shown.pop("in_flight") is None  # not in a git work tree: no snapshot
    assert shown == listed[0]


HEAVY = ("pyte", "rich", "sqlite3", "_sqlite3", "cryptography", "tomli_w", "asciinema", "mcp", "starlette", "uvicorn", "obstore")


def test_run_imports_no_heavy_module_before_the_child_runs() -> None:
    """pyte and friends may load once the child has exited (exchanges), never before it runs."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "shellkeep", "run", "--", "true"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 0
    # -X importtime prints each module as its import completes, in order; ptyprocess is
    # imported inside spawn(), right before the fork, so what precedes it loaded before the child.
    order = [line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if line.startswith("import time:")]
    assert "ptyprocess" in order and "shellkeep.app.record" in order
    before_child = order[: order.index("ptyprocess")]
    assert not {m for m in before_child if m.split(".")[0] in HEAVY}
    # The plain forms of run skip click, logging loads only for a warning; typing loads once
    # the child runs, before the session's threads (app.recording: their dataclasses need it whole).
    assert not {"click", "logging"} & set(order) and "typing" not in before_child
    assert not {m for m in order if m.split(".")[0] in OTLP_SDK}


OTLP_SDK = ("opentelemetry", "google", "requests")


def test_run_with_the_otlp_export_on_never_imports_its_sdk() -> None:
    """The export runs in the upkeep process after the session; the recorder never loads the SDK."""
    paths = resolve_paths()
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text('[export.otlp]\nendpoint = "http://127.0.0.1:9/v1/traces"\ntimeout_s = 1\n')
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "shellkeep", "run", "--", "true"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 0
    order = [line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if line.startswith("import time:")]
    assert "shellkeep.app.record" in order and "shellkeep.config" in order  # the config was read
    assert not {m for m in order if m.split(".")[0] in OTLP_SDK}
    wait_for_background(paths)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"], ids=str)
def test_completion_scripts_are_the_generated_ones(shell: str) -> None:
    """completions/ holds what click generates; regenerate with scripts/update-completions."""
    from pathlib import Path

    generated = subprocess.run(
        [*SK], env={**__import__("os").environ, "_SHELLKEEP_COMPLETE": f"{shell}_source"}, capture_output=True, timeout=60
    )
    assert generated.returncode == 0
    shipped = Path(__file__).parents[2] / "completions" / f"shellkeep.{shell}"
    assert shipped.read_bytes() == generated.stdout


@pytest.mark.parametrize(
    ("args", "code", "start"),
    [
        (["ls", "--status", "bogus"], 2, b"shellkeep: invalid value for '--status'"),
        (["run", "--bogus", "--", "echo"], 2, b"shellkeep: no such option: --bogus"),
        (["run", "--", "/etc/passwd"], 126, b"shellkeep: /etc/passwd: permission denied"),
        (["run", "--", "/tmp"], 126, b"shellkeep: /tmp: is a directory"),
        (["show", "--last", "extra"], 2, b"shellkeep: give a SESSION or --last, not both"),
        (["export", "x", "--format", "pdf"], 2, b"shellkeep: invalid value for '--format'"),
        (["run", "--name"], 2, b"shellkeep: option '--name' requires an argument; see 'shellkeep run --help'"),
        (["--bogus"], 2, b"shellkeep: no such option '--bogus' (did you mean '--verbose'?); see 'shellkeep --help'"),
        (["replay", "./no/such.cast"], 2, b"shellkeep: no such file: ./no/such.cast"),
        (["lsit"], 127, b"shellkeep: lsit: command not found (did you mean 'ls'?)\n"),
        (["serach", "foo"], 127, b"shellkeep: serach: command not found (did you mean 'search'?)\n"),
        (["-v", "lsit"], 127, b"shellkeep: lsit: command not found (did you mean 'ls'?)\n"),
        (["nosuchagent"], 127, b"shellkeep: nosuchagent: command not found\n"),
    ],
    ids=["bad-choice", "unknown-run-option", "not-executable", "directory", "ref-and-last", "bad-format",
         "missing-value", "did-you-mean", "replay-missing-file", "mistyped-command", "mistyped-command-args",
         "mistyped-after-option", "unknown-program"],
)
def test_user_mistakes_are_one_line_with_the_right_status(args: list[str], code: int, start: bytes) -> None:
    result = run_sk(*args)
    assert result.returncode == code
    assert result.stderr.startswith(start)
    assert result.stderr.count(b"\n") == 1 and b"Traceback" not in result.stderr


def test_a_data_folder_that_is_a_file_is_exit_3(home, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    monkeypatch.setenv("SHELLKEEP_HOME", str(not_a_folder))
    result = run_sk("ls")
    assert result.returncode == 3
    assert result.stderr.count(b"\n") == 1 and b"is not a folder" in result.stderr


@pytest.mark.parametrize("group", ["key", "config", "sync"])
def test_a_bare_command_group_prints_its_help(group: str) -> None:
    result = run_sk(group)
    assert result.returncode == 2
    assert result.stdout.startswith(f"Usage: shellkeep {group} [OPTIONS] COMMAND".encode())
    assert b"Commands:" in result.stdout and result.stderr == b""
