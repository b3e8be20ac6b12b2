"""The environment a session ran in: recorded at its start, shown, and given back on resume.

Real ``shellkeep run`` of real programs (python3, node); sessions resumed for real where the
program must see the variables. ``record.env`` none / agent / all and the include and exclude
lists; secrets never on disk in clear, with encryption on and off, and named on resume when
missing or different; ``--env current``; a session pulled from another machine (a real
``sync push``/``sync pull`` through a file:// share) whose paths are mapped, a missing one
left out, and whose edited ``meta.json`` cannot run code through ``NODE_OPTIONS``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.e2e.test_secrets import stored_views, wait_for_housekeeping
from tests.helpers import SK as SK_ARGV
from tests.helpers import invoke_sk, meta_of, run_sk, session_folders, wait_for_background

pytestmark = pytest.mark.timeout(240)

PY_QUIET = (sys.executable, "-c", "print('ran')")
SHELL_QUIET = ("bash", "-c", "echo ran")
"""A shell, where any agent may be started: the variables of every adapter are kept."""


def _config(paths: Paths, text: str) -> None:
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text)


def _record(*argv: str, env: dict[str, str], cwd: Path | None = None) -> dict[str, object]:
    """Record ``argv`` with ``shellkeep run`` (no terminal); return the new session's meta.json."""
    before = set(session_folders(_paths(env)))
    result = run_sk("run", "--", *argv, env=env, cwd=cwd)
    assert result.returncode == 0, result.stderr.decode()
    [new] = [f for f in session_folders(_paths(env)) if f not in before]
    return meta_of(new.parent)


def _paths(env: dict[str, str]) -> Paths:
    return Paths(Path(env["SHELLKEEP_HOME"]), Path(env["SHELLKEEP_CONFIG"]))


def _base_env() -> dict[str, str]:
    """This test's environment without any variable an agent adapter names (a clean start)."""
    keep = ("PATH", "HOME", "LANG", "SHELLKEEP_HOME", "SHELLKEEP_CONFIG", "PYTHON_KEYRING_BACKEND")
    return {k: v for k, v in os.environ.items() if k in keep}


# -- record.env: none / agent / all, include and exclude -------------------------------------------


def test_agent_scope_keeps_the_agents_variables_and_the_common_ones_never_shellkeeps(home: Paths) -> None:
    env = {
        **_base_env(),
        "CLAUDE_CONFIG_DIR": "/srv/claude-work",
        "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
        "HTTPS_PROXY": "http://proxy.example:3128",
        "LC_TIME": "en_GB.UTF-8",
        "TERM": "xterm-256color",
        "UNRELATED_VARIABLE": "x",
        "SHELLKEEP_RECORD_TITLE": "titled",
    }
    meta = _record(*SHELL_QUIET, env=env)
    recorded = meta["env"]
    assert isinstance(recorded, dict) and recorded["scope"] == "agent"
    values = recorded["values"]
    for name in ("CLAUDE_CONFIG_DIR", "OPENAI_BASE_URL", "HTTPS_PROXY", "LC_TIME", "TERM", "PATH"):
        assert values[name] == env[name], name
    assert "UNRELATED_VARIABLE" not in values
    assert not any(name.startswith("SHELLKEEP_") for name in values)  # neither its settings nor its session
    # A program no adapter knows keeps the common ones only.
    plain = _record(*PY_QUIET, env=env)["env"]
    assert isinstance(plain, dict)
    assert plain["values"]["HTTPS_PROXY"] == env["HTTPS_PROXY"] and "CLAUDE_CONFIG_DIR" not in plain["values"]


def test_none_all_include_and_exclude(home: Paths) -> None:
    env = {**_base_env(), "CODEX_HOME": "/srv/codex", "MYTOOL_MODE": "fast", "MYTOOL_LEVEL": "3", "OTHER": "o"}
    assert _record(*PY_QUIET, env={**env, "SHELLKEEP_RECORD_ENV": "none"})["env"] is None

    every = _record(*PY_QUIET, env={**env, "SHELLKEEP_RECORD_ENV": "all"})["env"]
    assert isinstance(every, dict) and every["scope"] == "all"
    assert {"CODEX_HOME", "MYTOOL_MODE", "MYTOOL_LEVEL", "OTHER"} <= set(every["values"])
    assert not any(name.startswith("SHELLKEEP_") for name in every["values"])

    _config(home, '[record]\nenv_include = ["MYTOOL_*"]\nenv_exclude = ["MYTOOL_LEVEL", "CODEX_*"]\n')
    chosen = _record(*PY_QUIET, env=env)["env"]
    assert isinstance(chosen, dict)
    assert chosen["values"]["MYTOOL_MODE"] == "fast"
    assert "MYTOOL_LEVEL" not in chosen["values"] and "CODEX_HOME" not in chosen["values"] and "OTHER" not in chosen["values"]

    _config(home, '[record]\nenv = "everything"\n')
    refused = invoke_sk("config", "validate")
    assert refused.returncode == 2 and b"record.env" in refused.stderr and b"Traceback" not in refused.stderr


# -- resume: applied, --env current, dry run ----------------------------------------------------------


def test_resume_gives_the_program_its_recorded_variables_unless_env_current(home: Paths, tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-work"
    config_dir.mkdir()
    probe = 'echo "seen:${CLAUDE_CONFIG_DIR:--}:${LC_TIME:--}"'
    env = {**_base_env(), "CLAUDE_CONFIG_DIR": str(config_dir), "LC_TIME": "C"}
    meta = _record("bash", "-c", probe, env=env)
    today = _base_env()  # a new terminal without them

    planned = run_sk("resume", str(meta["id"]), "--dry-run", env=today)
    out, err = planned.stdout.decode(), planned.stderr.decode()
    assert planned.returncode == 0, err
    assert f"with: CLAUDE_CONFIG_DIR={config_dir}\n" in out and "with: LC_TIME=C\n" in out
    assert err.count("environment: ") == 1 and "environment: restored CLAUDE_CONFIG_DIR, LC_TIME" in err

    resumed = run_sk("resume", str(meta["id"]), "--no-screen", env=today)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert f"seen:{config_dir}:C".encode() in resumed.stdout

    kept = run_sk("resume", str(meta["id"]), "--no-screen", "--env", "current", env=today)
    assert kept.returncode == 0, kept.stderr.decode()
    assert b"seen:-:-" in kept.stdout
    assert "environment: today's kept (--env current); recorded differs in CLAUDE_CONFIG_DIR, LC_TIME" in kept.stderr.decode()

    wrong = run_sk("resume", str(meta["id"]), "--env", "both", env=today)
    assert wrong.returncode == 2 and b"Traceback" not in wrong.stderr


# -- secrets: never on disk in clear, named on resume ----------------------------------------------


@pytest.mark.parametrize("encrypt", [False, True], ids=["plain", "encrypted"])
def test_secret_values_never_reach_the_disk_and_resume_names_the_missing_and_the_different(
    home: Paths, monkeypatch: pytest.MonkeyPatch, no_os_keyring: None, encrypt: bool
) -> None:
    if encrypt:
        pytest.importorskip("cryptography")
        assert invoke_sk("key", "init").returncode == 0
        assert invoke_sk("config", "set", "encryption.encrypt", "true").returncode == 0
    api_key = "sk-test-" + secrets.token_hex(20)  # a secret by its name
    password = secrets.token_hex(12)
    token_value = "ghp_" + secrets.token_hex(18)  # a secret by its content, as the redaction rules see it
    config = home.config_file.read_text() if home.config_file.exists() else ""
    _config(home, config.replace("[record]\n", "") + '\n[record]\nenv_include = ["DEPLOY_NOTE", "SERVICE_PASSWORD", "ANTHROPIC_*"]\n')
    env = {
        **_base_env(),
        "PYTHON_KEYRING_BACKEND": os.environ.get("PYTHON_KEYRING_BACKEND", ""),
        "ANTHROPIC_API_KEY": api_key,
        "SERVICE_PASSWORD": password,
        "DEPLOY_NOTE": f"token={token_value}",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
    }
    digest = hashlib.sha256(api_key.encode()).hexdigest()
    probe = f"import hashlib, os; print('key-' + ('same' if hashlib.sha256(os.environ.get('ANTHROPIC_API_KEY', '').encode()).hexdigest() == '{digest}' else 'other'))"
    meta = _record(sys.executable, "-c", probe, env=env)
    recorded = meta["env"]
    assert isinstance(recorded, dict)
    assert set(recorded["secrets"]) == {"ANTHROPIC_API_KEY", "SERVICE_PASSWORD", "DEPLOY_NOTE"}
    assert not {"ANTHROPIC_API_KEY", "SERVICE_PASSWORD", "DEPLOY_NOTE"} & set(recorded["values"])
    assert ("sealed" in recorded) == encrypt
    fingerprint_key = home.home / "env-fingerprint.key"
    assert fingerprint_key.stat().st_mode & 0o777 == 0o600

    shown = invoke_sk("show", str(meta["id"]))
    how = "(secret, sealed)" if encrypt else "(secret, fingerprint)"
    assert f"  ANTHROPIC_API_KEY {how}\n".encode() in shown.stdout
    assert b"  ANTHROPIC_BASE_URL=http://127.0.0.1:9/\n" in shown.stdout
    as_json = json.loads(invoke_sk("show", str(meta["id"]), "--json").stdout)
    assert set(as_json["env"]["secrets"]) == {"ANTHROPIC_API_KEY", "SERVICE_PASSWORD", "DEPLOY_NOTE"}

    # Today: the key is not set, the password is another one.
    today = {k: v for k, v in env.items() if k not in ("ANTHROPIC_API_KEY", "DEPLOY_NOTE")}
    today["SERVICE_PASSWORD"] = "changed-" + password
    planned = run_sk("resume", str(meta["id"]), "--dry-run", env=today)
    said = planned.stderr.decode()
    assert planned.returncode == 0, said
    if encrypt:  # sealed: given back
        assert "secrets restored: ANTHROPIC_API_KEY, DEPLOY_NOTE" in said
        assert b"with: ANTHROPIC_API_KEY=(secret)\n" in planned.stdout
    else:  # a fingerprint only: named
        assert "secrets missing: ANTHROPIC_API_KEY, DEPLOY_NOTE" in said
    assert "secrets differ today (today's kept): SERVICE_PASSWORD" in said
    resumed = run_sk("resume", str(meta["id"]), "--no-screen", env=today)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert (b"key-same" if encrypt else b"key-other") in resumed.stdout
    for output in (planned.stdout, planned.stderr, resumed.stderr, shown.stdout):
        for value in (api_key, password, token_value):
            assert value.encode() not in output

    wait_for_background(home)
    wait_for_housekeeping(home)
    assert invoke_sk("search", "zzznothing").returncode in (0, 1)  # the index is a file under the data folder too
    needles = [s for v in (api_key, password, token_value) for s in (v, base64.b64encode(v.encode()).decode())]
    looked = 0
    for path, text in stored_views(home.home):
        looked += 1
        for needle in needles:
            assert needle not in text, f"secret {needle!r} stored in {path}"
    assert looked > 10 and any(p.name == "index.sqlite3" for p in home.home.iterdir())

    if encrypt:  # a key rotation drops the old key: the sealed values are sealed anew first
        before = meta_of(Path(str(meta["cast"])).parent)["env"]["sealed"]
        rotated = invoke_sk("key", "rotate", "--json")
        assert rotated.returncode == 0 and json.loads(rotated.stdout)["dropped_keys"], rotated.stderr
        assert meta_of(Path(str(meta["cast"])).parent)["env"]["sealed"] != before
        again = run_sk("resume", str(meta["id"]), "--dry-run", env=today)
        assert "secrets restored: ANTHROPIC_API_KEY, DEPLOY_NOTE" in again.stderr.decode(), again.stderr


# -- a session pulled from another machine ----------------------------------------------------------


REMOTE = "https://github.com/acme/orchard.git"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@e", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


def _node_injection(tmp_path: Path) -> tuple[Path, str]:
    """Return a marker file and the NODE_OPTIONS that would make node create it at start."""
    marker = tmp_path / "injected.marker"
    script = tmp_path / "x.js"
    script.write_text(f"require('fs').writeFileSync({json.dumps(str(marker))}, 'ran');\n")
    return marker, f"--require {script}"


def _set_recorded(folder: Path, **values: str) -> None:
    """Edit ``meta.json`` as one who can write the bucket (or the data folder) would."""
    meta = json.loads((folder / "meta.json").read_text())
    meta["env"]["values"].update(values)
    (folder / "meta.json").write_text(json.dumps(meta))


def test_a_pulled_session_maps_its_paths_and_never_runs_code_from_its_environment(home: Paths, tmp_path: Path) -> None:
    checkout = tmp_path / "desk" / "orchard"
    checkout.mkdir(parents=True)
    _git(checkout, "init", "-q", "-b", "main")
    _git(checkout, "remote", "add", "origin", REMOTE)
    _git(checkout, "commit", "-q", "--allow-empty", "-m", "first")
    (checkout / "gem").mkdir()
    clone = tmp_path / "laptop" / "src" / "orchard"
    subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True, capture_output=True)
    _git(clone, "remote", "set-url", "origin", REMOTE)
    (clone / "gem").mkdir()
    home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
    (home_a / ".claude-work").mkdir(parents=True)
    (home_b / ".claude-work").mkdir(parents=True)
    env_a = {
        **_base_env(),
        "HOME": str(home_a),
        "CLAUDE_CONFIG_DIR": str(home_a / ".claude-work"),  # under A's home: B's home here
        "GEMINI_CLI_HOME": str(checkout / "gem"),  # inside the project: B's clone here
        "CODEX_HOME": str(checkout / "codex-state"),  # B's clone has none: left out
    }
    data_b = tmp_path / "laptop" / "data"
    env_b = {**_base_env(), "HOME": str(home_b), "SHELLKEEP_HOME": str(data_b), "SHELLKEEP_CONFIG": str(tmp_path / "laptop" / "c.toml")}
    share = (tmp_path / "share").as_uri()
    marker, injection = _node_injection(tmp_path)

    meta = _record("bash", "-c", "node -e \"console.log('orchard node ran')\"", env=env_a, cwd=checkout)
    wait_for_background(home)  # the upkeep adds the root commit
    assert invoke_sk("sync", "push", "--remote", share, env=env_a, cwd=checkout).returncode == 0
    assert invoke_sk("sync", "pull", "--remote", share, env=env_b, cwd=clone).returncode == 0
    [pulled] = [f.parent for f in (data_b / "remotes").rglob("meta.json")]
    _set_recorded(pulled, NODE_OPTIONS=injection, LD_PRELOAD="/tmp/evil.so", PATH=f"/tmp/evil-bin:{env_b['PATH']}")

    planned = run_sk("resume", str(meta["id"]), "--dry-run", env=env_b, cwd=clone)
    out, err = planned.stdout.decode(), planned.stderr.decode()
    assert planned.returncode == 0, err
    assert f"with: CLAUDE_CONFIG_DIR={home_b / '.claude-work'}\n" in out
    assert f"with: GEMINI_CLI_HOME={clone / 'gem'}\n" in out
    assert "CODEX_HOME" not in out and "NODE_OPTIONS" not in out and "LD_PRELOAD" not in out and "evil-bin" not in out
    [line] = [x for x in err.splitlines() if "environment: " in x]
    assert f"not applied (recorded on another machine, could run code): LD_PRELOAD=/tmp/evil.so NODE_OPTIONS={injection} PATH=/tmp/evil-bin:" in line
    assert f"left out (no such path here): CODEX_HOME={checkout / 'codex-state'}" in line

    # The mark of a pulled session edited away does not make it this machine's: it is refused.
    marked = (pulled / "meta.json").read_text()
    unmarked = json.loads(marked)
    del unmarked["remote"]
    (pulled / "meta.json").write_text(json.dumps(unmarked))
    refused = run_sk("resume", str(meta["id"]), "--no-screen", env=env_b, cwd=clone)
    assert refused.returncode == 2 and refused.stderr.count(b"\n") == 1 and not marker.exists(), refused.stderr
    (pulled / "meta.json").write_text(marked)

    resumed = run_sk("resume", str(meta["id"]), "--no-screen", "--yes", env=env_b, cwd=clone)  # a pulled one: confirmed
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert b"orchard node ran" in resumed.stdout  # node did run, in B's clone
    assert not marker.exists()  # and the archive's NODE_OPTIONS did not run in it

    # The same edit to a session recorded on this machine is the user's own: applied.
    [own] = [f.parent for f in session_folders(home) if f.parent.name == meta["id"]]
    _set_recorded(own, NODE_OPTIONS=injection)
    local = run_sk("resume", str(meta["id"]), "--no-screen", env=env_a, cwd=checkout)
    assert local.returncode == 0, local.stderr.decode()
    assert marker.read_text() == "ran"


def test_resume_all_gives_each_session_its_environment_and_passes_env_current_on(home: Paths, tmp_path: Path) -> None:
    config_dir = tmp_path / "claude-work"
    config_dir.mkdir()
    crash = 'echo "seen:${CLAUDE_CONFIG_DIR:--}"; kill -9 $$'  # the program dies by a signal: cut short
    env = {**_base_env(), "CLAUDE_CONFIG_DIR": str(config_dir)}
    result = run_sk("run", "--", "bash", "-c", crash, env=env)
    assert b"seen:" + str(config_dir).encode() in result.stdout
    today = _base_env()  # after the reboot: a terminal without it, and outside tmux

    printed = run_sk("resume", "--all", "--print", "--env", "current", env=today)
    assert printed.returncode == 0 and printed.stdout.decode().rstrip().endswith("--env current"), printed.stdout

    first = run_sk("resume", "--all", "--no-screen", env=today)
    assert b"seen:" + str(config_dir).encode() in first.stdout, first.stderr.decode()
    assert b"environment: restored CLAUDE_CONFIG_DIR" in first.stderr
    # The resumed run was cut short too; --all with --env current resumes it in today's environment.
    second = run_sk("resume", "--all", "--no-screen", "--env", "current", env=today)
    assert b"seen:-" in second.stdout, second.stderr.decode()
    assert b"environment: today's kept (--env current); recorded differs in CLAUDE_CONFIG_DIR" in second.stderr


def test_the_picker_resumes_with_the_recorded_environment(home: Paths, tmp_path: Path) -> None:
    pytest.importorskip("textual")
    from shellkeep.termsize import TermSize
    from tests.agents.screen_driver import ScreenDriver

    config_dir = tmp_path / "picked-claude-dir"
    config_dir.mkdir()
    env = {**_base_env(), "CLAUDE_CONFIG_DIR": str(config_dir)}
    # Lasting over a second: the picker leaves out sessions shorter than that with no input.
    _record("bash", "-c", 'echo "seen:${CLAUDE_CONFIG_DIR:--}"; exec sleep 1.2', env=env)
    today = {**_base_env(), "TERM": "xterm-256color"}  # the picker takes its size from the pty
    with ScreenDriver([*SK_ARGV, "resume", "--pick"], env=today, cwd=Path.cwd(), echo=True, size=TermSize(140, 30)) as picker:
        picker.wait_for_screen("seen:", 30)  # the session's last screen, in the preview
        picker.press("enter")
        picker.wait_for_screen("environment: restored CLAUDE_CONFIG_DIR", 30)
        assert picker.wait_exit(30) == 0
        assert picker.text().count(f"seen:{config_dir}") >= 1
    resumed = [meta_of(f.parent) for f in session_folders(home) if meta_of(f.parent).get("parent")]
    assert len(resumed) == 1 and resumed[0]["env"]["values"]["CLAUDE_CONFIG_DIR"] == str(config_dir)


def test_short_secret_words_keep_their_values_off_the_disk_with_encryption_off(home: Paths) -> None:
    mysql_pwd, github_pat = "mysql" + secrets.token_hex(10), "pat" + secrets.token_hex(10)
    env = {**_base_env(), "SHELLKEEP_RECORD_ENV": "all", "MYSQL_PWD": mysql_pwd, "GITHUB_PAT_X": github_pat, "SPINNER": "dots"}
    meta = _record("sh", "-c", "echo ran", env=env)
    recorded = meta["env"]
    assert isinstance(recorded, dict) and "sealed" not in recorded  # encryption off: a fingerprint only
    assert {"MYSQL_PWD", "GITHUB_PAT_X"} <= set(recorded["secrets"])
    assert recorded["values"]["SPINNER"] == "dots" and "PATH" in recorded["values"]  # only whole parts count
    planned = run_sk("resume", str(meta["id"]), "--dry-run", env={**env, "MYSQL_PWD": mysql_pwd + "x"})
    assert planned.returncode == 0, planned.stderr.decode()
    assert "secrets differ today (today's kept): MYSQL_PWD" in planned.stderr.decode()
    wait_for_background(home)
    looked = 0
    for path, text in stored_views(home.home):
        looked += 1
        for needle in (mysql_pwd, github_pat):
            assert needle not in text, f"secret {needle!r} stored in {path}"
    for output in (planned.stdout, planned.stderr):
        assert mysql_pwd.encode() not in output and github_pat.encode() not in output
    assert looked > 3


def test_an_empty_secret_is_no_secret_and_never_missing(home: Paths) -> None:
    """``X_TOKEN=`` (set, empty) is kept as the value it is: no fingerprint, not "missing" on resume."""
    _config(home, '[record]\nenv_include = ["X_TOKEN"]\n')
    env = {**_base_env(), "X_TOKEN": ""}
    meta = _record(*PY_QUIET, env=env)
    recorded = meta["env"]
    assert isinstance(recorded, dict)
    assert "X_TOKEN" not in (recorded.get("secrets") or {})
    assert isinstance(recorded["values"], dict) and recorded["values"]["X_TOKEN"] == ""
    planned = run_sk("resume", str(meta["id"]), "--dry-run", env=_base_env())
    assert planned.returncode == 0, planned.stderr
    assert b"secrets missing" not in planned.stderr


def test_an_empty_secret_recorded_by_an_older_version_is_never_missing(home: Paths) -> None:
    """A meta.json where ``X_TOKEN=`` was fingerprinted as a secret (before empty values were kept
    as values): resume does not name it missing; a set one is still named."""
    from shellkeep.vault.env_secrets import fingerprint, fingerprint_key

    _config(home, '[record]\nenv_include = ["X_TOKEN", "Y_TOKEN"]\n')
    env = {**_base_env(), "X_TOKEN": "", "Y_TOKEN": "y-" + secrets.token_hex(8)}
    _record(*PY_QUIET, env=env)
    wait_for_background(home)
    wait_for_housekeeping(home)  # the upkeep after the run writes meta.json too
    [folder] = [f.parent for f in session_folders(_paths(env))]
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    recorded = meta["env"]
    assert isinstance(recorded, dict) and isinstance(recorded["values"], dict) and isinstance(recorded["secrets"], dict)
    key = fingerprint_key(_paths(env), create=False)
    assert key is not None
    del recorded["values"]["X_TOKEN"]
    recorded["secrets"]["X_TOKEN"] = fingerprint(key, "X_TOKEN", "")
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    planned = run_sk("resume", str(meta["id"]), "--dry-run", env=_base_env())
    assert planned.returncode == 0, planned.stderr
    assert b"secrets missing: Y_TOKEN\n" in planned.stderr or b"secrets missing: Y_TOKEN;" in planned.stderr, planned.stderr
