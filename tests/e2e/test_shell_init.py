"""``shellkeep init``: real bash, zsh and fish in ptys, with the installed snippet loaded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, run_sk, session_folders, wait_until

SHELLS = ["bash", "zsh", "fish"]

FAKE_AGENT = """#!/bin/sh
echo "fakeagent up in session ${SHELLKEEP_SESSION:-none} with $*"
read line
echo "fakeagent heard $line"
"""


class Shell:
    """An interactive shell in a pty; ``run`` types a command and waits until it has run."""

    def __init__(self, harness: PtyHarness) -> None:
        self.harness = harness
        self._marks = 0

    def run(self, command: str, timeout_s: float = 30.0) -> str:
        """Type ``command``, wait for it to end; return what the terminal showed meanwhile."""
        self._marks += 1
        start = len(self.harness.output)
        # The quotes keep the echo of the typed line from matching: only the output does.
        self.harness.write(f"{command}; echo @@'done'{self._marks}\r".encode())
        self.harness.expect(f"@@done{self._marks}".encode(), timeout_s)
        return bytes(self.harness.output[start:]).decode("utf-8", "replace")

    def close(self) -> None:
        self.harness.write(b"exit\r")
        self.harness.finish()


@pytest.fixture
def user(tmp_path: Path, home: Paths) -> dict[str, str]:
    """The environment of a user with a fake agent on PATH and ``shell.wrap = ["fakeagent"]``."""
    user_home = tmp_path / "user"
    user_home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "fakeagent"
    agent.write_text(FAKE_AGENT)
    agent.chmod(0o755)
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[shell]\nwrap = ["fakeagent", "notinstalled"]\n')
    env = {
        "HOME": str(user_home),
        "ZDOTDIR": str(user_home),
        "XDG_CONFIG_HOME": str(user_home / ".config"),
        "XDG_DATA_HOME": str(user_home / ".local" / "share"),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SHELLKEEP_HOME": str(home.home),
        "SHELLKEEP_CONFIG": str(home.config_file),
        "TERM": "xterm",
        "PS1": "$ ",
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    for name in ("PYTHONPATH", "VIRTUAL_ENV"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _install(shell: str, env: dict[str, str]) -> None:
    done = run_sk("init", shell, "--install", env=env)
    assert done.returncode == 0, done.stderr


def _project(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "sub").mkdir()
    return folder


@pytest.mark.parametrize("shell", SHELLS)
def test_a_wrapped_program_is_recorded_and_command_runs_it_bare(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    _install(shell, user)
    project = _project(tmp_path, "web")
    sh = _start_in(shell, user, project)
    sh.harness.write(b"fakeagent 'two words' --flag\r")
    sh.harness.expect(b"fakeagent up in session 20")
    sh.harness.write(b"ping\r")
    sh.harness.expect(b"fakeagent heard ping")
    wait_until(lambda: json.loads(session_folders(home)[0].read_text()).get("exit_code") == 0 if session_folders(home) else False)
    [meta_file] = session_folders(home)
    meta = json.loads(meta_file.read_text())
    assert meta["command"] == ["fakeagent", "two words", "--flag"]
    assert meta["project_root"] == str(project.resolve())

    out = sh.run("command fakeagent bare </dev/null")
    assert "fakeagent up in session none with bare" in out
    out = sh.run("notinstalled")  # listed in shell.wrap but not on PATH: no function, the shell's own error
    assert "not found" in out or "Unknown command" in out
    sh.close()
    assert len(session_folders(home)) == 1


@pytest.mark.parametrize("shell", SHELLS)
def test_inside_a_recorded_session_the_function_runs_the_program_bare(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    _install(shell, user)
    project = _project(tmp_path, "api")
    sh = _start_in(shell, user, project, argv=(*SK, "run", "--", shell, "-i"))
    out = sh.run("fakeagent inner </dev/null")
    [meta_file] = wait_until(lambda: session_folders(home))  # type: ignore[misc]  # the recorded shell's
    outer = meta_file.parent.name
    assert f"fakeagent up in session {outer} with inner" in out
    sh.close()
    assert [f.parent.name for f in session_folders(home)] == [outer]


@pytest.mark.parametrize("shell", SHELLS)
def test_the_cd_notice_names_an_interrupted_session_and_nothing_else(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    _install(shell, user)
    project = _project(tmp_path, "shop")
    other = tmp_path / "other"
    other.mkdir()
    recording = _start_in(shell, user, project)
    recording.harness.write(b"fakeagent\r")
    recording.harness.expect(b"fakeagent up in session 20")
    [meta_file] = wait_until(lambda: session_folders(home))  # type: ignore[misc]
    meta = wait_until(lambda: (m := json.loads(meta_file.read_text())).get("child_pid") and m)
    assert isinstance(meta, dict)

    sh = _start_in(shell, user, other)
    assert "interrupted" not in sh.run("cd sub 2>/dev/null; cd ../shop/sub")  # running: nothing to say
    os.kill(int(meta["pid"]), signal.SIGKILL)  # the recorder dies without a word
    wait_until(lambda: not Path(f"/proc/{meta['pid']}").exists() or _zombie(int(meta["pid"])))
    assert "interrupted" not in sh.run(f"cd {other}")
    out = sh.run(f"cd {project}/sub")
    assert out.count("interrupted session") == 1
    assert f"shellkeep: 1 interrupted session in this project (newest: fakeagent, " in out
    assert f"resume with 'shellkeep resume {meta['id']}'" in out
    assert "interrupted" not in sh.run("cd ..")  # the same project: said once
    assert "interrupted" not in sh.run(f"cd {other}")
    sh.close()
    recording.harness.write(b"exit\r")
    recording.harness.finish()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _start_in(shell: str, env: dict[str, str], cwd: Path, argv: tuple[str, ...] = ()) -> Shell:
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        if shutil.which(shell) is None:
            pytest.skip(f"{shell} is not installed (.ci/run installs it)")
        sh = Shell(PtyHarness.start(argv or (shell, "-i"), env={**env, "PWD": str(cwd)}, cols=200, rows=50))
    finally:
        os.chdir(previous)
    sh.run("true")  # the rc file has been read
    return sh
