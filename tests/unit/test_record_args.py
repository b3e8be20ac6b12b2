"""The click-free reading of ``shellkeep``, ``shellkeep PROGRAM`` and ``shellkeep run`` (cli/record.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shellkeep.cli.main import main
from shellkeep.cli.record import COMMANDS, RunArgs, parse_run_args


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], RunArgs()),
        (["--"], RunArgs()),
        (["claude", "--model", "x", "-c"], RunArgs(argv=("claude", "--model", "x", "-c"))),
        (["claude", "--name", "n"], RunArgs(argv=("claude", "--name", "n"))),
        (["--", "ls", "-la"], RunArgs(argv=("ls", "-la"))),
        (["--", "run"], RunArgs(argv=("run",))),
        (["run", "--", "true"], RunArgs(argv=("true",))),
        (["run", "true", "--name", "x"], RunArgs(argv=("true", "--name", "x"))),
        (["run", "--name", "fix", "--", "claude"], RunArgs(argv=("claude",), name="fix")),
        (["run", "--name=fix", "--title=T", "--no-input", "--no-redact", "--", "vim"],
         RunArgs(argv=("vim",), name="fix", title="T", no_input=True, no_redact=True)),
        (["run", "--title", "--", "--", "x"], RunArgs(argv=("x",), title="--")),
        (["run"], RunArgs()),
        (["run", "--restart", "on-failure:2", "--", "claude"], RunArgs(argv=("claude",), restart="on-failure:2")),
        (["run", "--restart=no", "sh"], RunArgs(argv=("sh",), restart="no")),
        (["run", "-q", "--", "true"], RunArgs(argv=("true",), quiet=True)),
        (["run", "--quiet", "--name", "n", "true"], RunArgs(argv=("true",), name="n", quiet=True)),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_plain_forms_are_recorded_without_click(args: list[str], expected: RunArgs) -> None:
    assert parse_run_args(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ["-v", "claude"],
        ["--help"],
        ["-V"],
        ["ls"],
        ["show", "--last"],
        ["run", "--help"],
        ["run", "--bogus", "--", "x"],
        ["run", "--name"],
        ["run", "--restart"],
        ["run", "--no-input=yes", "x"],
        ["run", "--", "-x"],
    ],
    ids=" ".join,
)
def test_everything_else_goes_to_click(args: list[str]) -> None:
    assert parse_run_args(args) is None


def test_every_command_of_the_click_group_is_known_to_the_fast_path() -> None:
    """A command missing from COMMANDS would be run as a program named like it."""
    assert sorted(main.list_commands(None)) == sorted(COMMANDS)  # type: ignore[arg-type]


def test_click_reads_the_forms_the_fast_path_leaves_to_it() -> None:
    result = CliRunner().invoke(main, ["run", "--bogus", "--", "x"])
    assert result.exit_code == 2
    assert "no such option: --bogus" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--", "true"],
        ["true", "--name", "x"],
        ["--name", "fix", "--", "claude"],
        ["--name=fix", "--title=T", "--no-input", "--no-redact", "--", "vim"],
        ["--title", "--", "--", "x"],
        ["--no-input", "bash", "-l"],
        ["--restart", "on-failure", "--", "claude"],
        ["--restart=on-failure:5", "--name", "x", "codex"],
        ["-q", "--", "true"],
        ["--quiet", "--no-input", "sh"],
        [],
    ],
    ids=lambda value: " ".join(value) or "nothing",
)
def test_run_options_read_as_click_reads_them(args: list[str]) -> None:
    from shellkeep.cli.run import run

    params = run.make_context("run", list(args)).params
    assert parse_run_args(["run", *args]) == RunArgs(**params)
