"""``shellkeep init``: real bash, zsh and fish in ptys, with the installed snippet loaded."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, run_sk, session_folders, wait_until

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
    wait_until(lambda: home.notices.exists() and meta["id"] in home.notices.read_text())  # written just after meta.json

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
    assert "interrupted" not in sh.run(f"cd {project}/sub")  # back again, nothing new: once per shell
    assert "interrupted" not in sh.run(f"cd {other}")

    sh.harness.write(f"cd {project}; {shlex.join(SK)} resume {meta['id']}\r".encode())  # resumed: no longer waiting
    sh.harness.expect(b"fakeagent up in session 20", times=1)
    sh.harness.write(b"done\r")
    sh.harness.expect(b"fakeagent heard done")
    wait_until(lambda: [json.loads(f.read_text()).get("status") for f in session_folders(home)] == ["interrupted", "finished"])
    assert "interrupted" not in sh.run(f"cd {other}; cd {project}")
    resumed_as = json.loads(session_folders(home)[1].read_text())["id"]
    listed = invoke_sk("ls", cwd=project).stdout.decode()
    assert f"{meta['id']}  " in listed and f"resumed as {resumed_as}" in listed, listed
    sh.close()
    recording.close()


def _wait_for_recorders_to_end(paths: Paths) -> None:
    for meta_file in session_folders(paths):
        pid = int(json.loads(meta_file.read_text())["pid"])
        wait_until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid))


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


def _processes_started(shell: str, env: dict[str, str], script: str, cwd: Path, log: Path) -> int:
    """Run ``shell -i -c script`` under strace; return how many processes it started (threads aside)."""
    subprocess.run(
        ["strace", "-f", "-qq", "-e", "trace=fork,vfork,clone,clone3", "-o", str(log), shell, "-i", "-c", script],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=True,
    )
    return sum(1 for line in log.read_text().splitlines() if "CLONE_THREAD" not in line and "(" in line)


@pytest.mark.parametrize("shell", SHELLS)
def test_starting_and_changing_directory_start_no_process_when_there_is_nothing_to_say(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    if shutil.which("strace") is None or subprocess.run(["strace", "-o", os.devnull, "true"]).returncode != 0:
        pytest.skip("strace is not usable here (.ci/run installs it)")
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    busy = _project(tmp_path, "busy")  # a session running there: its recorder is alive
    cut = _project(tmp_path, "cut")  # and one interrupted elsewhere
    quiet = _project(tmp_path, "quiet")
    _install(shell, user)
    recording = _start_in(shell, user, busy)
    recording.harness.write(b"fakeagent\r")
    recording.harness.expect(b"fakeagent up in session 20")
    wait_until(lambda: home.notices.exists() and "running" in home.notices.read_text())
    # The program kills its recorder once the session is in the notice file.
    kill_recorder = f'until grep -q "$SHELLKEEP_SESSION" {home.notices}; do sleep 0.02; done; kill -9 $PPID'
    done = subprocess.run([*SK, "run", "--", "sh", "-c", kill_recorder], cwd=cut, env=user, capture_output=True, timeout=60)
    assert done.returncode != 0
    wait_until(lambda: home.notices.read_text().count("\n") == 3)  # the header and both sessions
    script = f"cd {quiet}/sub; cd {busy}; cd {tmp_path}; exit"

    with_snippet = _processes_started(shell, user, script, quiet, tmp_path / "with.strace")
    rc = Path(run_sk("init", shell, "--uninstall", env=user).stderr.decode().split(" from ")[-1].strip())
    assert rc.read_text() == ""
    bare = _processes_started(shell, user, script, quiet, tmp_path / "bare.strace")
    assert with_snippet == bare == 0
    # and the check itself can fail: there is something to say in the project cut short
    _install(shell, user)
    said = subprocess.run([shell, "-i", "-c", f"cd {cut}; exit"], env=user, cwd=quiet, capture_output=True, timeout=60)
    assert b"1 interrupted session in this project" in said.stderr
    recording.harness.write(b"bye\r")
    recording.harness.expect(b"fakeagent heard bye")
    _wait_for_recorders_to_end(home)  # else the shell's next line could reach the ending recorder
    recording.close()


@pytest.mark.parametrize("shell", SHELLS)
def test_the_installed_snippet_is_rewritten_once_the_config_changes(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    _install(shell, user)
    snippet = home.shell_dir / f"init.{shell}"
    assert "function fakeagent" in snippet.read_text() or f"fakeagent {{" in snippet.read_text()
    home.config_file.write_text('[shell]\nwrap = ["otheragent"]\nnotice = false\n')
    os.utime(home.config_file, ns=(snippet.stat().st_mtime_ns + 10**9,) * 2)  # newer, whatever the clock's grain
    subprocess.run([shell, "-i", "-c", "exit"], env=user, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    text = snippet.read_text()
    assert "otheragent" in text and "fakeagent" not in text
    assert not any(hook in text for hook in ("chpwd_functions", "--on-variable PWD", "function cd"))  # notice = false


@pytest.mark.parametrize("shell", SHELLS)
def test_a_notice_line_that_lacks_fields_is_skipped(shell: str, user: dict[str, str], home: Paths, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    _install(shell, user)
    project = _project(tmp_path, "torn")
    root = str(project.resolve())
    home.notices.write_text(
        f"# shellkeep notices 1\n{root}\tcut\n{root}\tcut\t-\t-\t-\t1700000000\tfakeagent\t20240101-aaaa\n{root}\tcut\t7\n"
    )
    said = subprocess.run([shell, "-i", "-c", f"cd {project}; exit"], env=user, cwd=tmp_path, capture_output=True, timeout=60)
    lines = [line for line in said.stderr.decode().splitlines() if "interrupted" in line]
    assert lines == [
        "shellkeep: 1 interrupted session in this project (newest: fakeagent, "
        + lines[0].partition("fakeagent, ")[2].partition(")")[0]
        + "); resume with 'shellkeep resume 20240101-aaaa'"
    ]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_failed_refresh_says_why_once_and_is_not_retried_until_the_config_changes(
    shell: str, user: dict[str, str], home: Paths, tmp_path: Path
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    _install(shell, user)
    snippet = home.shell_dir / f"init.{shell}"
    before = snippet.read_text()
    home.config_file.write_text("[shell\nwrap = 3\n")  # broken: the refresh fails
    os.utime(home.config_file, ns=(snippet.stat().st_mtime_ns + 10**9,) * 2)

    def start() -> str:
        done = subprocess.run([shell, "-i", "-c", "exit"], env=user, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        return "\n".join(line for line in done.stderr.decode().splitlines() if "shellkeep" in line)

    first = start()
    assert first.count("\n") == 0 and str(home.config_file) in first
    assert "keeps its last version until the config changes" in first
    assert snippet.read_text() == before  # the last good snippet is still loaded
    assert start() == ""  # not retried: no Python at this start
    os.utime(home.config_file, ns=(snippet.stat().st_mtime_ns + 10**9,) * 2)  # edited again
    assert "keeps its last version" in start()


@pytest.mark.parametrize("shell", SHELLS)
def test_a_project_path_that_is_not_utf8_gets_its_notice(shell: str, user: dict[str, str], home: Paths, tmp_path: Path) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed (.ci/run installs it)")
    _install(shell, user)
    project = Path(os.fsdecode(bytes(tmp_path) + b"/bad\xffproj"))
    project.mkdir()
    kill_recorder = f'until grep -q "$SHELLKEEP_SESSION" {home.notices}; do sleep 0.02; done; kill -9 $PPID'
    done = subprocess.run([*SK, "run", "--", "sh", "-c", kill_recorder], cwd=project, env=user, capture_output=True, timeout=60)
    assert done.returncode != 0
    assert bytes(project) in home.notices.read_bytes()  # the exact bytes, as $PWD holds them
    said = subprocess.run([shell, "-i", "-c", b"cd " + bytes(project) + b"; exit"], env=user, cwd=tmp_path, capture_output=True, timeout=60)
    assert b"1 interrupted session in this project" in said.stderr
