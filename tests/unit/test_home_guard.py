"""The suite keeps out of the user's home, and in CI no test skips (tests/home_guard.py, tests/conftest.py).

The check that fails the run is proven on a folder standing in for the real home: a program
started with it as HOME writes the dotfiles a real run once wrote, and the comparison names each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import home_guard


def test_every_test_process_has_a_temporary_home_and_xdg_folders() -> None:
    real = home_guard.real_home()
    home = Path(os.environ["HOME"])
    assert home != real and not home.is_relative_to(real)
    for var, relative in home_guard.XDG_FOLDERS.items():
        assert os.environ[var] == str(home / relative) and Path(os.environ[var]).is_dir()
    assert Path(os.environ["XDG_RUNTIME_DIR"]).stat().st_mode & 0o777 == 0o700
    out = subprocess.run(
        ["sh", "-c", 'echo "$HOME"; echo "$XDG_CONFIG_HOME"'], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(home), os.environ["XDG_CONFIG_HOME"]]


def _write_as_user(home: Path, script: str) -> None:
    """Run ``script`` in a shell whose HOME is ``home``, as a program the suite starts would."""
    subprocess.run(["sh", "-c", script], env={**os.environ, "HOME": str(home)}, check=True)


def test_the_check_names_each_dotfile_a_program_wrote_in_the_home(tmp_path: Path) -> None:
    home = tmp_path / "stand-in-home"
    (home / ".config" / "fish").mkdir(parents=True)
    (home / ".cache" / "shellkeep-ci" / "npm").mkdir(parents=True)
    (home / ".bash_history").write_text("ls\n")
    before = home_guard.snapshot(home)
    assert home_guard.changes(before, home_guard.snapshot(home)) == []

    _write_as_user(
        home,
        'echo "shellkeep ls" >> "$HOME/.bash_history"; : > "$HOME/.python_history"; '
        'mkdir -p "$HOME/.gemini" && echo {} > "$HOME/.gemini/projects.json"; '
        ': > "$HOME/.config/fish/config.fish"; mkdir -p "$HOME/.cache/chromium"; '
        ': > "$HOME/.cache/shellkeep-ci/npm/package.json"',
    )
    assert home_guard.changes(before, home_guard.snapshot(home)) == [
        "changed .bash_history",
        "created .cache/chromium",
        "created .config/fish/config.fish",
        "created .gemini",
        "created .gemini/projects.json",
        "created .python_history",
    ]  # the pinned agent CLIs' cache is the suite's to fill: not named


def test_the_check_sees_a_rewrite_of_the_same_size_and_a_removal(tmp_path: Path) -> None:
    home = tmp_path / "stand-in-home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}\n")
    (home / ".zsh_history").write_text("a\n")
    os.utime(home / ".claude" / "settings.json", ns=(0, 0))
    before = home_guard.snapshot(home)
    _write_as_user(home, 'printf "[]\\n" > "$HOME/.claude/settings.json"; rm "$HOME/.zsh_history"')
    assert home_guard.changes(before, home_guard.snapshot(home)) == [
        "changed .claude/settings.json",
        "removed .zsh_history",
    ]


def test_the_run_fails_when_a_test_writes_in_the_home_it_was_given(tmp_path: Path) -> None:
    # An inner pytest run whose "real home" is a stand-in: its one test writes a history line
    # there through a program given that home, and the run fails naming the file.
    home = tmp_path / "stand-in-home"
    home.mkdir()
    test = tmp_path / "test_writes_home.py"
    test.write_text(
        "import os, subprocess\n"
        "def test_writes() -> None:\n"
        "    real = os.environ['SHELLKEEP_TEST_REAL_HOME']\n"
        "    subprocess.run(['sh', '-c', 'echo x >> \"$HOME/.bash_history\"'], env={**os.environ, 'HOME': real}, check=True)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in (home_guard.REAL_HOME_VAR, "PYTEST_XDIST_WORKER", "SHELLKEEP_TEST_HOME_CHECK")}
    env["HOME"] = str(home)
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "--rootdir", str(tmp_path), str(test)],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert f"the tests changed the real home {home}" in result.stdout and "created .bash_history" in result.stdout
    assert (home / ".bash_history").read_text() == "x\n"
    assert sorted(p.name for p in home.iterdir()) == [".bash_history"]  # its temporary HOME was elsewhere


def test_with_ci_set_a_skip_is_a_failure_naming_its_reason(tmp_path: Path) -> None:
    test = tmp_path / "test_skips.py"
    test.write_text("import pytest\ndef test_skips() -> None:\n    pytest.skip('chromium is not installed')\n")
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", "--rootdir", str(tmp_path), str(test)]
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_XDIST_WORKER")}
    local = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout
    ci = subprocess.run(argv, cwd=root, env={**env, "CI": "true"}, capture_output=True, text=True, timeout=120)
    assert ci.returncode == 1 and "1 failed" in ci.stdout, ci.stdout
    assert "skipped in CI, where no test may skip: chromium is not installed" in ci.stdout
