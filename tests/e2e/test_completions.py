"""Tab completion in real bash, zsh and fish in ptys, loaded by the installed ``shellkeep init`` snippet."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.e2e.test_shell_init import SHELLS, Shell, _install, _start_in, user  # noqa: F401 - user is a fixture
from tests.helpers import invoke_sk, run_sk, session_folders, wait_until


@pytest.fixture
def completing(user: dict[str, str], home: Paths, tmp_path: Path) -> dict[str, str]:  # noqa: F811
    """The user's environment with this venv's ``shellkeep`` on PATH (the scripts call it at each TAB)."""
    env = dict(user)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    zshrc = Path(env["ZDOTDIR"]) / ".zshrc"
    zshrc.write_text("autoload -Uz compinit && compinit -u\n")  # zsh completion needs compinit (compdef)
    return env


_ESCAPES = re.compile(rb"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>])")
"""Colour, cursor and title sequences: fish and zsh draw a candidate's typed part in bold."""


def _tab(sh: Shell, typed: str, *wanted: str) -> str:
    """Type ``typed`` and TAB twice (bash lists on the second), wait for each ``wanted`` on screen; clear the line."""
    start = len(sh.harness.output)
    sh.harness.write(typed.encode() + b"\t\t")

    def shown() -> str:
        sh.harness.read_some(0.05)
        return _ESCAPES.sub(b"", bytes(sh.harness.output[start:])).decode("utf-8", "replace")

    try:
        wait_until(lambda: all(w in shown() for w in wanted), timeout_s=30)
    except TimeoutError:
        raise AssertionError(f"{wanted!r} not all on screen after TAB TAB: {shown()!r}") from None
    finally:
        sh.harness.write(b"\x05\x15")  # Ctrl-E, Ctrl-U: the end of the line, then delete it all
    text = shown()
    sh.run("true")  # the prompt is back, the line empty
    return text


@pytest.mark.parametrize("shell", SHELLS)
def test_tab_completes_session_ids_config_keys_and_options(
    shell: str, completing: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    recorded = run_sk("run", "--", "true", env=completing)
    assert recorded.returncode == 0, recorded.stderr
    [meta] = session_folders(home)
    session_id = meta.parent.name
    _install(shell, completing)
    project = tmp_path / "proj"
    project.mkdir()
    sh = _start_in(shell, completing, project)
    _tab(sh, "shellkeep show ", session_id)
    _tab(sh, "shellkeep config get re", "record.flush_interval_ms")
    out = _tab(sh, "shellkeep resume --", "--no-screen")
    assert "--pick" in out
    sh.close()


def _complete(env: dict[str, str], words: str) -> list[str]:
    """Ask shellkeep for bash's completions of the command line ``words`` (the last word is completed)."""
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    done = run_sk(env={**env, "COMP_WORDS": words, "COMP_CWORD": str(cword), "_SHELLKEEP_COMPLETE": "bash_complete"})
    assert done.returncode == 0, done.stderr
    return [line.partition(",")[2] for line in done.stdout.decode().splitlines()]


def test_session_names_agents_and_values_complete_and_a_missing_index_still_gives_ids(
    completing: dict[str, str], home: Paths
) -> None:
    assert run_sk("run", "--name", "fix-login", "--", "true", env=completing).returncode == 0
    [meta] = session_folders(home)
    assert invoke_sk("ls", env=completing).returncode == 0  # builds the index: the name is known
    assert _complete(completing, "shellkeep show fix") == ["fix-login"]
    assert _complete(completing, "shellkeep export 2") == [meta.parent.name]
    assert "claude" in _complete(completing, "shellkeep ls --agent cl")
    assert _complete(completing, "shellkeep ls --status fin") == ["finished"]
    home.index.unlink()
    assert _complete(completing, "shellkeep show ") == [meta.parent.name]  # from the folders alone
    assert not home.index.exists()  # completion builds nothing


@pytest.mark.parametrize("shell", SHELLS)
def test_without_shellkeep_on_path_the_snippet_defines_it_and_tab_still_completes(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path  # noqa: F811
) -> None:
    env = dict(user)  # a venv not activated: no 'shellkeep' on PATH
    env["PATH"] = ":".join(d for d in env["PATH"].split(":") if not (Path(d) / "shellkeep").exists())
    (Path(env["ZDOTDIR"]) / ".zshrc").write_text("autoload -Uz compinit && compinit -u\n")
    recorded = run_sk("run", "--", "true", env=env)
    assert recorded.returncode == 0, recorded.stderr
    [meta] = session_folders(home)
    _install(shell, env)
    project = tmp_path / "proj"
    project.mkdir()
    sh = _start_in(shell, env, project)
    assert "shellkeep, version" in sh.run("shellkeep --version")  # the command the notice names works
    _tab(sh, "shellkeep show ", meta.parent.name)
    sh.close()
    on_path = {**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    sh = _start_in(shell, on_path, project)
    out = sh.run("type shellkeep")
    assert "function" not in out and str(Path(sys.executable).parent / "shellkeep") in out  # on PATH: left alone
    sh.close()


def test_fish_lists_sessions_newest_first(completing: dict[str, str], home: Paths, tmp_path: Path) -> None:
    for _ in range(2):
        assert run_sk("run", "--", "true", env=completing).returncode == 0
    started = {f.parent.name: json.loads(f.read_text())["started_at"] for f in session_folders(home)}
    older, newer = sorted(started, key=started.__getitem__)  # ids of one second sort by their random end
    _install("fish", completing)
    project = tmp_path / "proj"
    project.mkdir()
    sh = _start_in("fish", completing, project)
    # fish elides the start the two share, keeping a character of it: '…-7708d  (true finished)', or '…708d'
    # when both ends begin '77'. What is left of each id past the shared start is always on screen.
    shared = len(os.path.commonprefix([older, newer]))
    newer_shown, older_shown = f"{newer[shared:]}  (", f"{older[shared:]}  ("
    shown = _tab(sh, "shellkeep show 2", newer_shown, older_shown)
    assert shown.index(newer_shown) < shown.index(older_shown)
    sh.close()
