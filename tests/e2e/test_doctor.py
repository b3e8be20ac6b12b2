"""``shellkeep doctor`` on real folders, files and programs: a data folder made unwritable with
chmod, a config file that is not TOML, an index cut to garbage, stand-in agents on PATH that
print their versions, rc files with and without the ``shellkeep init`` block."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from shellkeep.app.doctor import INIT_MARKER
from shellkeep.store.paths import Paths
from tests.helpers import invoke_sk, run_sk, wait_for_background

pytestmark = pytest.mark.usefixtures("no_os_keyring")


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A HOME of the test's own (no rc file yet) and stand-in agents on PATH: claude prints a
    version its adapter knows, codex one it does not."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, version in (("claude", "2.1.197 (Claude Code)"), ("codex", "codex-cli 9.9.9")):
        (bin_dir / name).write_text(f"#!{sys.executable}\nprint({version!r})\n")
        (bin_dir / name).chmod(0o755)
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("ZDOTDIR", "XDG_CONFIG_HOME")}
    return {**env, "HOME": str(user_home), "SHELL": "/bin/bash", "PATH": f"{bin_dir}:{os.environ['PATH']}"}


def doctor(env: dict[str, str], *args: str) -> tuple[int, dict[str, dict[str, str]], bytes]:
    """Run ``shellkeep doctor --json``; return its status, the checks by name and stderr."""
    result = invoke_sk("doctor", "--json", *args, env=env)
    checks = {c["check"]: c for c in json.loads(result.stdout)}
    return result.returncode, checks, result.stderr


def test_a_healthy_install_is_ok_with_the_fixes_for_what_is_missing(home: Paths, user_env: dict[str, str]) -> None:
    assert run_sk("run", "--", "true", env=user_env).returncode == 0
    wait_for_background(home)
    code, checks, stderr = doctor(user_env)
    assert code == 0 and stderr == b""
    assert {c["status"] for name, c in checks.items() if name not in ("agent codex", "shell integration")} == {"ok"}
    assert checks["data folder"]["detail"].endswith("(mode 0700)")
    assert "healthy, 1 session" in checks["index"]["detail"] and "1 sessions" not in checks["index"]["detail"]
    assert checks["sessions"] == {"check": "sessions", "status": "ok", "detail": "1 session, every meta.json readable", "fix": ""}
    assert "no key file" in checks["key storage"]["detail"] and "0 keys" not in checks["key storage"]["detail"]
    assert checks["agent claude"]["detail"].startswith("2.1.197 at ")
    assert checks["agent codex"]["status"] == "warn" and "9.9.9" in checks["agent codex"]["detail"]
    assert "0.171.0" in checks["agent codex"]["detail"]  # the version it was tested with
    assert checks["shell integration"] == {
        "check": "shell integration", "status": "warn", "detail": "not installed", "fix": "shellkeep init bash --install",
    }  # fmt: skip

    text = invoke_sk("doctor", env=user_env)
    assert text.returncode == 0
    lines = text.stdout.decode().splitlines()
    assert len(lines) == len(checks) and all(line.split()[0] in ("ok", "warn", "fail") for line in lines)
    assert "warn  shell integration  not installed; fix: shellkeep init bash --install" in text.stdout.decode()


@pytest.mark.parametrize(
    ("rc", "shell"),
    [(".bashrc", "bash"), ("zdot/.zshrc", "zsh"), (".config/fish/config.fish", "fish")],
    ids=["bash", "zsh-in-zdotdir", "fish"],
)
def test_the_init_block_in_an_rc_file_counts_as_installed(user_env: dict[str, str], rc: str, shell: str) -> None:
    user_env["ZDOTDIR"] = str(Path(user_env["HOME"]) / "zdot")
    path = Path(user_env["HOME"]) / rc
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"export A=1\n# {INIT_MARKER}\neval \"$(shellkeep init {shell})\"\n# <<< shellkeep init <<<\n")
    code, checks, _ = doctor(user_env)
    assert code == 0
    assert checks["shell integration"]["status"] == "ok" and f"{shell} ({path})" in checks["shell integration"]["detail"]


def test_an_unwritable_data_folder_fails_with_exit_1(home: Paths, user_env: dict[str, str]) -> None:
    assert run_sk("run", "--", "true", env=user_env).returncode == 0
    wait_for_background(home)
    home.home.chmod(0o500)
    try:
        code, checks, stderr = doctor(user_env)
    finally:
        home.home.chmod(0o700)
    assert code == 1
    assert checks["data folder"]["status"] == "fail" and "mode 0500" in checks["data folder"]["detail"]
    assert checks["data folder"]["fix"] == f"chmod 700 '{home.home}'"
    assert stderr.count(b"\n") == 1 and b"checks failed" in stderr


def test_a_broken_config_fails_naming_the_file(home: Paths, user_env: dict[str, str]) -> None:
    home.config_file.parent.mkdir(parents=True)
    home.config_file.write_text("[record\ninput = false\n")
    code, checks, stderr = doctor(user_env)
    assert code == 1 and b"Traceback" not in stderr
    assert checks["config"]["status"] == "fail" and str(home.config_file) in checks["config"]["detail"]
    assert checks["config"]["fix"] == "run 'shellkeep config edit'"
    home.config_file.write_text('[prices."m"]\noutput = 1.0\n')
    code, checks, _ = doctor(user_env)
    assert code == 1 and "needs input" in checks["config"]["detail"]


def test_a_damaged_index_fails_and_doctor_leaves_it_as_it_was(home: Paths, user_env: dict[str, str]) -> None:
    assert run_sk("run", "--", "true", env=user_env).returncode == 0
    wait_for_background(home)
    size = home.index.stat().st_size
    with home.index.open("r+b") as fh:  # keep the header, overwrite the pages after it
        fh.seek(100)
        fh.write(b"\xff" * (size - 100))
    damaged = home.index.read_bytes()
    code, checks, _ = doctor(user_env)
    assert code == 1
    assert checks["index"]["status"] == "fail" and checks["index"]["fix"] == "run 'shellkeep reindex'"
    assert home.index.read_bytes() == damaged


def test_a_data_folder_that_is_a_file_is_a_fail_not_an_error(home: Paths, user_env: dict[str, str]) -> None:
    home.home.parent.mkdir(parents=True, exist_ok=True)
    home.home.write_text("a file where the data folder should be")
    code, checks, stderr = doctor(user_env)
    assert code == 1 and checks["data folder"]["status"] == "fail" and "is not a folder" in checks["data folder"]["detail"]
    assert checks["index"]["status"] == "ok" and stderr.count(b"\n") == 1


def test_an_agent_that_does_not_answer_its_version_is_a_warning(user_env: dict[str, str], tmp_path: Path) -> None:
    hanging = tmp_path / "bin" / "gemini"
    hanging.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(600)\n")
    hanging.chmod(0o755)
    broken = tmp_path / "bin" / "qwen"
    broken.write_text("#!/bin/sh\necho 'no version here' >&2\nexit 3\n")
    broken.chmod(0o755)
    code, checks, _ = doctor(user_env)
    assert code == 0
    assert checks["agent gemini"]["status"] == "warn" and "did not answer within 5s" in checks["agent gemini"]["detail"]
    assert checks["agent qwen"]["status"] == "warn" and "gave no version (exit 3)" in checks["agent qwen"]["detail"]
    assert "gemini" not in checks["agents"]["detail"] and "aider" in checks["agents"]["detail"]


def test_a_damaged_meta_json_is_a_warning_naming_the_folder(home: Paths, user_env: dict[str, str]) -> None:
    assert run_sk("run", "--", "true", env=user_env).returncode == 0
    assert run_sk("run", "--", "true", env=user_env).returncode == 0
    wait_for_background(home)
    folder = sorted(home.projects.glob("*/*/meta.json"))[0].parent
    (folder / "meta.json").write_text('{"id": "cut')  # cut mid-write
    code, checks, _ = doctor(user_env)
    assert code == 0
    check = checks["sessions"]
    assert check["status"] == "warn" and str(folder) in check["detail"] and check["detail"].startswith("1 session cannot be read")
    assert check["fix"] == f"restore {folder / 'meta.json'} from a backup, or move {folder} out of the data folder"


@pytest.fixture
def read_only_home(home: Paths, tmp_path: Path) -> Iterator[Path]:
    """A real read-only bind mount of the data folder (needs root); yields the mount point."""
    home.home.mkdir(parents=True, exist_ok=True)
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "--bind", str(home.home), str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here (needs root)")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_read_only_data_folder_is_named_so_and_ls_and_stats_still_read(
    home: Paths, user_env: dict[str, str], read_only_home: Path, tmp_path: Path
) -> None:
    for _ in range(2):
        assert run_sk("run", "--", "echo", "hi", env=user_env).returncode == 0
    wait_for_background(home)
    assert invoke_sk("stats", env=user_env).returncode == 0  # the index is up to date, usage summed
    env = {**user_env, "SHELLKEEP_HOME": str(read_only_home)}
    code, checks, _ = doctor(env)
    assert code == 1
    assert checks["data folder"]["status"] == "fail" and "the file system is read-only" in checks["data folder"]["detail"]
    assert "chmod" not in checks["data folder"]["fix"] and "remount" in checks["data folder"]["fix"]
    assert checks["index"]["status"] == "ok" and "healthy, 2 sessions" in checks["index"]["detail"]
    marked = invoke_sk("mark", "x", "--last", env=env)
    assert marked.returncode == 1 and b"the file system is read-only" in marked.stderr and b"reindex" not in marked.stderr
    listed = invoke_sk("ls", "--all-sessions", env=env)
    assert listed.returncode == 0 and len(listed.stdout.decode().splitlines()) == 1 + 2 and listed.stderr == b""
    assert invoke_sk("stats", env=env).returncode == 0

    # A session recorded since: the index would need a write; ls reads the folders, saying why once.
    subprocess.run(["umount", str(read_only_home)], check=True)
    assert run_sk("run", "--", "echo", "new", env=user_env).returncode == 0
    wait_for_background(home)
    home.index.unlink()  # and no index at all: nothing to read it from
    subprocess.run(["mount", "--bind", str(home.home), str(read_only_home)], check=True)
    subprocess.run(["mount", "-o", "remount,bind,ro", str(read_only_home)], check=True)
    listed = invoke_sk("ls", "--all-sessions", env=env)
    assert listed.returncode == 0 and len(listed.stdout.decode().splitlines()) == 1 + 3  # the header, then a row per session
    [said] = [line for line in listed.stderr.decode().splitlines() if "index" in line]
    assert "the file system is read-only" in said and "reindex" not in said
    stats = invoke_sk("stats", env=env)
    assert b"reindex" not in stats.stderr and (stats.returncode == 0 or b"the file system is read-only" in stats.stderr)


@pytest.mark.parametrize(
    ("printed", "status", "says"),
    [
        ("0.61.0", "ok", "(a version shellkeep knows)"),
        ("0.59.0", "ok", "older than or between the tested versions 0.57.0, 0.61.0"),
        ("0.62.0", "warn", "is newer than the versions shellkeep was tested with (0.57.0, 0.61.0)"),
    ],
    ids=["tested", "between", "newer"],
)
def test_an_agent_newer_than_its_adapter_was_tested_with_is_a_warning(
    user_env: dict[str, str], tmp_path: Path, printed: str, status: str, says: str
) -> None:
    gemini = tmp_path / "bin" / "gemini"
    gemini.write_text(f"#!{sys.executable}\nprint({printed!r})\n")  # as 'gemini --version' prints it
    gemini.chmod(0o755)
    code, checks, _ = doctor(user_env)
    assert code == 0
    assert checks["agent gemini"]["status"] == status and says in checks["agent gemini"]["detail"]
    assert ("upgrade shellkeep" in checks["agent gemini"]["fix"]) == (status == "warn")


def test_a_key_in_a_plain_file_inside_the_data_folder_is_a_warning_and_one_outside_is_ok(
    home: Paths, user_env: dict[str, str], tmp_path: Path
) -> None:
    # No keyring here: 'key init' puts the key into <data>/keys/keys.json and warns once.
    assert b"plain file inside the data folder" in invoke_sk("key", "init", env=user_env).stderr
    code, checks, _ = doctor(user_env)
    assert code == 0
    key = checks["key storage"]
    assert key["status"] == "warn" and "plain file inside the data folder" in key["detail"]
    assert key["fix"].startswith("keep it apart: 'shellkeep key export FILE'")

    outside = tmp_path / "elsewhere" / "keys.json"
    export = tmp_path / "export.json"
    assert invoke_sk("key", "export", str(export), env=user_env).returncode == 0
    env = {**user_env, "SHELLKEEP_ENCRYPTION_KEY_FILE": str(outside)}
    assert invoke_sk("key", "import", str(export), env=env).returncode == 0
    _, checks, _ = doctor(env)
    assert checks["key storage"]["status"] == "ok" and str(outside) in checks["key storage"]["detail"]
