"""``shellkeep mcp install``: each agent's settings file gets the documented entry, once.

In process (``invoke_sk``) with a HOME of each test's own: the file an agent reads holds the
shape its own ``mcp add`` writes; a second install changes no byte; ``--uninstall`` removes
shellkeep's entry alone (a user's other server, other settings and a comment in Codex's TOML
stay), and the file and folders install made when nothing else is in them; a broken file or a foreign entry named ``shellkeep`` is refused with one line and left
untouched; ``--all`` goes to the agents set up here only.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from shellkeep.config.toml import toml_loads
from tests.helpers import invoke_sk

AGENTS = ("claude", "codex", "gemini", "qwen", "opencode", "copilot")
OVERRIDES = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "COPILOT_HOME", "XDG_CONFIG_HOME")


def settings_file(agent: str, home: Path) -> Path:
    """Return where ``agent`` keeps its user MCP servers under ``home`` (no override set)."""
    return home / {
        "claude": ".claude.json",
        "codex": ".codex/config.toml",
        "gemini": ".gemini/settings.json",
        "qwen": ".qwen/settings.json",
        "opencode": ".config/opencode/opencode.json",
        "copilot": ".copilot/mcp-config.json",
    }[agent]


def server_table(agent: str, doc: dict[str, object]) -> dict[str, object]:
    """Return the servers' table of ``agent``'s parsed settings."""
    key = {"codex": "mcp_servers", "opencode": "mcp"}.get(agent, "mcpServers")
    table = doc[key]
    assert isinstance(table, dict)
    return table


def pinned() -> dict[str, str]:
    """Return the variables an entry carries in this test: the ``home`` fixture sets both."""
    return {name: os.environ[name] for name in ("SHELLKEEP_HOME", "SHELLKEEP_CONFIG")}


def expected_entry(agent: str, argv: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Return the entry ``agent``'s own ``mcp add`` writes for ``argv`` and ``env`` (``--env``,
    seen with the pinned CLIs; OpenCode's ``environment`` from its documentation)."""
    exe, args = argv[0], argv[1:]
    env = pinned() if env is None else env
    variables = {"env": env} if env else {}
    return {
        "claude": {"type": "stdio", "command": exe, "args": args, "env": env},
        "codex": {"command": exe, "args": args, **variables},
        "gemini": {"command": exe, "args": args, **variables},
        "qwen": {"command": exe, "args": args, **variables},
        "opencode": {"type": "local", "command": argv, **({"environment": env} if env else {}), "enabled": True},
        "copilot": {"type": "local", "command": exe, "args": args, **variables, "tools": ["*"]},
    }[agent]


def parse(agent: str, path: Path) -> dict[str, object]:
    """Return ``path`` parsed as the agent reads it (TOML for Codex, JSON for the rest)."""
    text = path.read_text()
    return toml_loads(text) if agent == "codex" else json.loads(text)


def user_settings(agent: str) -> str:
    """Return a settings file a user already has: another server and another setting."""
    if agent == "codex":
        return '# my codex settings\nmodel = "o3"  # the one I pay for\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--stdio"]\n'
    other = {"type": "local", "command": ["docs-server"]} if agent == "opencode" else {"command": "docs-server", "args": []}
    return json.dumps({"theme": "dark", "mcpOther": 1, ("mcp" if agent == "opencode" else "mcpServers"): {"docs": other}}, indent=2)


@pytest.fixture
def agent_home(tmp_path: Path) -> Path:
    """Return an empty HOME for the agents' settings."""
    home = tmp_path / "agent-home"
    home.mkdir()
    return home


def sk_env(home: Path, path_dir: Path | None = None, **extra: str) -> dict[str, str]:
    """Return this process's environment with ``home`` as HOME, no agent override, PATH ``path_dir``."""
    env = {k: v for k, v in os.environ.items() if k not in OVERRIDES}
    env.update(HOME=str(home), PATH=str(path_dir or home / "no-bin"), **extra)
    return env


def sk(home: Path, *args: str, unset: tuple[str, ...] = (), **extra: str) -> tuple[int, str, str]:
    """Run ``shellkeep mcp install ARGS`` in process under ``home`` (``unset``: variables left
    out); return status, stdout, stderr."""
    env = {k: v for k, v in sk_env(home, **extra).items() if k not in unset}
    done = invoke_sk("mcp", "install", *args, env=env)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def this_shellkeep() -> str:
    """Return the console script of the shellkeep under test (beside the test's Python)."""
    return str(Path(sys.executable).parent / "shellkeep")


@pytest.mark.parametrize("agent", AGENTS)
def test_install_writes_the_agents_shape_once_and_uninstall_removes_only_it(agent: str, agent_home: Path) -> None:
    path = settings_file(agent, agent_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(user_settings(agent))
    path.chmod(0o644)
    before = parse(agent, path)

    code, out, err = sk(agent_home, agent)
    assert (code, err) == (0, "")
    assert out == f"{agent}: added 'shellkeep' to {path}\n"
    doc = parse(agent, path)
    argv = [this_shellkeep(), "mcp"]
    assert os.path.isabs(argv[0]) and os.access(argv[0], os.X_OK)
    assert server_table(agent, doc)["shellkeep"] == expected_entry(agent, argv)
    assert server_table(agent, doc)["docs"] == server_table(agent, before)["docs"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    if agent == "codex":
        assert path.read_text().startswith(user_settings(agent))  # comments and tables as they were

    written = path.read_bytes()
    code, out, err = sk(agent_home, agent)
    assert (code, out, err) == (0, f"{agent}: 'shellkeep' already in {path}; nothing changed\n", "")
    assert path.read_bytes() == written

    code, out, err = sk(agent_home, agent, "--uninstall")
    assert (code, out, err) == (0, f"{agent}: removed 'shellkeep' from {path}\n", "")
    assert parse(agent, path) == before
    if agent == "codex":
        assert path.read_text() == user_settings(agent)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644

    code, out, _ = sk(agent_home, agent, "--uninstall")
    assert (code, out) == (0, f"{agent}: no 'shellkeep' in {path}; nothing to remove\n")


@pytest.mark.parametrize("agent", AGENTS)
def test_uninstall_leaves_what_install_found(agent: str, agent_home: Path) -> None:
    """On a HOME without the agent's folder, install then uninstall leave nothing behind but the
    XDG config folder (every program's, never removed); where the folder holds something else,
    only the file that held shellkeep's entry alone goes."""
    path = settings_file(agent, agent_home)
    for other in (None, path.parent / "state.json"):
        if other is not None:
            other.parent.mkdir(parents=True, exist_ok=True)
            other.write_text("{}")
        assert sk(agent_home, agent)[0] == 0 and path.is_file()
        code, out, err = sk(agent_home, agent, "--uninstall")
        assert (code, out, err) == (0, f"{agent}: removed 'shellkeep' from {path}\n", "")
        assert sorted(str(p.relative_to(agent_home)) for p in agent_home.rglob("*")) == (
            ([".config"] if agent == "opencode" else []) if other is None else sorted({str(other.relative_to(agent_home)), *map(str, other.relative_to(agent_home).parents)} - {"."})
        )


@pytest.mark.parametrize("agent", AGENTS)
def test_install_makes_the_file_where_the_agents_override_points(agent: str, agent_home: Path) -> None:
    overrides = {
        "CLAUDE_CONFIG_DIR": str(agent_home / "cc"),
        "CODEX_HOME": str(agent_home / "cx"),
        "GEMINI_CLI_HOME": str(agent_home / "gm"),
        "QWEN_HOME": str(agent_home / "qw"),
        "COPILOT_HOME": str(agent_home / "cp"),
        "XDG_CONFIG_HOME": str(agent_home / "xdg"),
    }
    path = agent_home / {
        "claude": "cc/.claude.json",
        "codex": "cx/config.toml",
        "gemini": "gm/.gemini/settings.json",
        "qwen": "qw/settings.json",
        "opencode": "xdg/opencode/opencode.json",
        "copilot": "cp/mcp-config.json",
    }[agent]
    code, out, err = sk(agent_home, agent, "--all-projects", "--remote", **overrides)
    assert (code, err) == (0, ""), err
    assert out == f"{agent}: added 'shellkeep' to {path}\n"
    entry = server_table(agent, parse(agent, path))["shellkeep"]
    assert entry == expected_entry(agent, [this_shellkeep(), "mcp", "--all-projects", "--remote"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not settings_file(agent, agent_home).exists()


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_changed_option_updates_the_entry_and_keeps_the_users_additions(agent: str, agent_home: Path) -> None:
    path = settings_file(agent, agent_home)
    assert sk(agent_home, agent)[0] == 0
    if agent == "codex":
        path.write_text(path.read_text().replace('args = ["mcp"]\n', 'args = ["mcp"]\ntool_timeout_sec = 30\n'))
    else:
        doc = json.loads(path.read_text())
        doc["mcpServers"]["shellkeep"]["timeout"] = 30
        path.write_text(json.dumps(doc))
    code, out, _ = sk(agent_home, agent, "--remote")
    assert (code, out) == (0, f"{agent}: updated 'shellkeep' in {path}\n")
    entry = server_table(agent, parse(agent, path))["shellkeep"]
    assert isinstance(entry, dict)
    assert entry["args"] == ["mcp", "--remote"]
    assert entry["tool_timeout_sec" if agent == "codex" else "timeout"] == 30


BROKEN = {
    "claude": '{"mcpServers": {',
    "codex": '# mine\n[mcp_servers.shellkeep\ncommand = "x"\n',
    "gemini": "// a comment\n{}",
    "qwen": "[1, 2]",
    "opencode": '{"mcp": ["not", "a", "table"]}',
    "copilot": b"\xff\xfe{}",
}


@pytest.mark.parametrize("agent", AGENTS)
def test_a_broken_settings_file_is_refused_and_left_untouched(agent: str, agent_home: Path) -> None:
    path = settings_file(agent, agent_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    content = BROKEN[agent]
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for args in ((agent,), (agent, "--uninstall")):
        code, out, err = sk(agent_home, *args)
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"shellkeep: {agent}: ") and f"'{path}'" in err and "Traceback" not in err, err
        assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temporary file left


@pytest.mark.parametrize("agent", ["claude", "codex", "opencode"])
def test_a_foreign_entry_named_shellkeep_is_not_clobbered(agent: str, agent_home: Path) -> None:
    path = settings_file(agent, agent_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    if agent == "codex":
        path.write_text('[mcp_servers.shellkeep]\ncommand = "node"\nargs = ["keeper.js"]\n')
    else:
        entry = {"type": "local", "command": ["node", "keeper.js"]} if agent == "opencode" else {"command": "node", "args": ["keeper.js"]}
        path.write_text(json.dumps({"mcp" if agent == "opencode" else "mcpServers": {"shellkeep": entry}}))
    content = path.read_bytes()
    for args in ((agent,), (agent, "--uninstall")):
        code, out, err = sk(agent_home, *args)
        assert (code, out) == (1, "")
        assert f"already has an MCP server named 'shellkeep' that is not shellkeep's ('node keeper.js')" in err, err
        assert path.read_bytes() == content


def test_an_entry_of_another_shellkeep_copy_is_taken_as_ours(agent_home: Path) -> None:
    path = settings_file("gemini", agent_home)
    path.parent.mkdir(parents=True)
    old = {"command": "/opt/old-venv/bin/shellkeep", "args": ["mcp", "--remote"]}
    path.write_text(json.dumps({"mcpServers": {"shellkeep": old}}))
    code, out, _ = sk(agent_home, "gemini")
    assert (code, out) == (0, f"gemini: updated 'shellkeep' in {path}\n")
    assert json.loads(path.read_text())["mcpServers"]["shellkeep"]["command"] == this_shellkeep()
    assert sk(agent_home, "gemini", "--uninstall")[0] == 0
    assert not path.parent.exists()  # nothing but its entry was there


def test_a_symlinked_settings_file_is_written_through_its_link(agent_home: Path) -> None:
    dotfiles = agent_home / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"theme": "dark"}')
    link = settings_file("qwen", agent_home)
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    assert sk(agent_home, "qwen")[0] == 0
    assert link.is_symlink()
    assert json.loads(dotfiles.read_text())["mcpServers"]["shellkeep"]["args"] == ["mcp"]


def test_all_goes_to_the_agents_set_up_here_only(agent_home: Path, tmp_path: Path) -> None:
    (agent_home / ".codex").mkdir()  # a settings folder
    (agent_home / ".claude.json").write_text("{}")  # a settings file
    bin_dir = tmp_path / "bin"  # a program on PATH
    bin_dir.mkdir()
    copilot = bin_dir / "copilot"
    copilot.write_text("#!/bin/sh\n")
    copilot.chmod(0o755)
    done = invoke_sk("mcp", "install", "--all", env=sk_env(agent_home, bin_dir))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert [line.split(":")[0] for line in lines] == ["claude", "codex", "copilot"]
    assert not (agent_home / ".gemini").exists() and not (agent_home / ".config" / "opencode").exists()
    again = invoke_sk("mcp", "install", "--all", "--uninstall", env=sk_env(agent_home, bin_dir))
    assert again.returncode == 0 and again.stdout.decode().count("removed 'shellkeep'") == 3


def test_all_with_one_broken_file_does_the_others_and_fails(agent_home: Path) -> None:
    (agent_home / ".gemini").mkdir()
    (agent_home / ".gemini" / "settings.json").write_text("{")
    (agent_home / ".qwen").mkdir()
    code, out, err = sk(agent_home, "--all")
    assert code == 1
    assert out == f"qwen: added 'shellkeep' to {settings_file('qwen', agent_home)}\n"
    assert err.startswith("shellkeep: gemini: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        pytest.param(("--all",), 1, "no supported agent is set up here", id="all-finds-none"),
        pytest.param((), 2, "name one agent or give --all", id="no-agent"),
        pytest.param(("claude", "--all"), 2, "name one agent or give --all", id="agent-and-all"),
        pytest.param(("aider",), 2, "'aider' is not one of 'claude', 'codex'", id="unsupported-agent"),
        pytest.param(("codex", "--uninstall", "--remote"), 2, "go with an install", id="uninstall-with-options"),
    ],
)
def test_bad_requests_are_one_clear_line(agent_home: Path, args: tuple[str, ...], code: int, says: str) -> None:
    status, out, err = sk(agent_home, *args)
    assert (status, out) == (code, "")
    assert says in err and "Traceback" not in err, err
    assert list(agent_home.iterdir()) == []


@pytest.mark.parametrize("agent", ["claude", "codex", "opencode"])
def test_the_archive_variables_go_with_the_entry_only_when_set(agent: str, agent_home: Path, tmp_path: Path) -> None:
    path = settings_file(agent, agent_home)
    argv = [this_shellkeep(), "mcp"]
    code, out, _ = sk(agent_home, agent, unset=("SHELLKEEP_HOME", "SHELLKEEP_CONFIG"))
    assert code == 0
    assert server_table(agent, parse(agent, path))["shellkeep"] == expected_entry(agent, argv, {})
    other = str(tmp_path / "other-archive")
    code, out, _ = sk(agent_home, agent, unset=("SHELLKEEP_CONFIG",), SHELLKEEP_HOME=other)
    assert (code, out) == (0, f"{agent}: updated 'shellkeep' in {path}\n")
    assert server_table(agent, parse(agent, path))["shellkeep"] == expected_entry(agent, argv, {"SHELLKEEP_HOME": other})
    code, out, _ = sk(agent_home, agent, unset=("SHELLKEEP_HOME", "SHELLKEEP_CONFIG"))
    assert (code, out) == (0, f"{agent}: updated 'shellkeep' in {path}\n")
    assert server_table(agent, parse(agent, path))["shellkeep"] == expected_entry(agent, argv, {})


def test_a_settings_path_that_is_a_folder_is_one_line(agent_home: Path) -> None:
    (agent_home / ".claude.json").mkdir()
    code, out, err = sk(agent_home, "claude")
    assert (code, out) == (1, "")
    assert err == f"shellkeep: claude: cannot change '{agent_home / '.claude.json'}' (Is a directory); check the file, its folder and their permissions\n"


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_read_only_settings_file_is_refused_and_left_untouched(agent: str, agent_home: Path) -> None:
    # Without the owner's write bit the file is the user's to unlock, even for root (who could write it).
    path = settings_file(agent, agent_home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(user_settings(agent))
    path.chmod(0o444)
    for args, change in (((agent,), "add"), ((agent, "--uninstall"), "remove")):
        if change == "remove":  # an entry to remove: installed while the file was writable
            path.chmod(0o644)
            assert sk(agent_home, agent)[0] == 0
            path.chmod(0o444)
        content = path.read_bytes()
        code, out, err = sk(agent_home, *args)
        assert (code, out) == (1, "")
        assert err == (
            f"shellkeep: {agent}: '{path}' is read-only; make it writable (chmod u+w '{path}') to let shellkeep {change} its entry\n"
        )
        assert path.read_bytes() == content and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temporary file left


def test_the_commands_agent_choices_are_the_registrations_agents() -> None:
    # cli/mcp_install.py writes them out so that 'mcp --help' loads no agent module.
    from shellkeep.agents.mcp_config import AGENT_NAMES
    from shellkeep.cli import mcp_install

    assert mcp_install.AGENT_NAMES == AGENT_NAMES
