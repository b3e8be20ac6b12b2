"""Fixtures for driving real agent CLIs against loopback stand-in model servers.

Binaries: ``claude_bin`` / ``codex_bin`` come from ``SHELLKEEP_TEST_CLAUDE`` /
``SHELLKEEP_TEST_CODEX`` when set, else from the CI npm caches ``scripts/test`` fills:
``~/.cache/shellkeep-ci/npm`` holds the pinned versions (Claude Code 2.1.197, Codex
0.165.0) and ``~/.cache/shellkeep-ci/npm-newest`` the newest on npm when last checked
(2026-12-02: Claude Code 2.1.332; 2026-12-03: Codex 0.171.0). Every agent test runs once per
distinct version (the test id names it).
``gemini_bin`` / ``qwen_bin`` (``SHELLKEEP_TEST_GEMINI`` / ``SHELLKEEP_TEST_QWEN``) come from the
same prefixes: Gemini CLI 0.57.0 and Qwen Code 0.23.4 pinned, 0.61.0 and 0.24.4 the newest on npm
on 2026-12-03.
Else the binary comes from ``PATH``; a test that needs a missing one is skipped with the reason.

Each test gets its own HOME (with the agent's first-run screens answered), its own
``SHELLKEEP_HOME``, a project folder, and a started stand-in; ``agent_env`` /
``codex_env`` are complete environments (nothing is inherited from the test process).
Processes left behind that use the test's HOME (Codex's app-server daemon) are ended at
teardown.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator, Sequence

import pytest

from shellkeep.asciicast.model import TermSize
from tests.home_guard import real_home

from .agent_processes import reap
from .screen_driver import DEFAULT_SIZE, ScreenDriver
from .standin_anthropic import AnthropicStandin
from .standin_gemini import GeminiStandin
from .standin_chat import ChatStandin
from .standin_openai import OpenAIStandin

# A fake key: Claude Code remembers approved keys by their last 20 characters.
TEST_API_KEY = "sk-ant-test-shellkeep-standin-0123456789ABCDEFGHIJ"
TEST_OPENAI_KEY = "sk-test-shellkeep-standin-openai"
CODEX_KEY_ENV = "SHELLKEEP_STANDIN_OPENAI_KEY"
CI_CACHE = real_home() / ".cache" / "shellkeep-ci"
"""Where ``scripts/test`` installs the pinned agent CLIs: under the real home, kept before the
suite switched HOME to a temporary folder (tests/home_guard.py)."""
CI_NPM_PREFIX = CI_CACHE / "npm"
CI_NPM_NEWEST_PREFIX = CI_CACHE / "npm-newest"
CLAUDE_VERSIONS = {"2.1.197": CI_NPM_PREFIX, "2.1.332": CI_NPM_NEWEST_PREFIX}
"""Claude Code versions the suite runs against (pinned, newest), by the npm prefix holding each."""
CODEX_PINNED, CODEX_NEWEST = "0.165.0", "0.171.0"
CODEX_VERSIONS = {CODEX_NEWEST: CI_NPM_NEWEST_PREFIX, CODEX_PINNED: CI_NPM_PREFIX}
"""Codex CLI versions the suite runs against, by the npm prefix holding each: one entry while
the newest on npm is the pinned version (the pinned prefix wins), two once they differ."""
GEMINI_VERSIONS = {"0.57.0": CI_NPM_PREFIX, "0.61.0": CI_NPM_NEWEST_PREFIX}
"""Gemini CLI versions the suite runs against (pinned older, newest on 2026-12-03), by npm prefix."""
TEST_GEMINI_KEY = "test-gemini-key-shellkeep-standin"
QWEN_VERSIONS = {"0.23.4": CI_NPM_PREFIX, "0.24.4": CI_NPM_NEWEST_PREFIX}
"""Qwen Code versions the suite runs against (pinned older, newest on 2026-12-03), by npm prefix."""


def _version_key(version: str) -> tuple[int, ...]:
    """Return a dotted version as numbers, to order ``2.1.99`` before ``2.1.197``."""
    return tuple(int(part) for part in version.split("."))


def _versions_to_run(env_var: str, versions: dict[str, Path]) -> list[str]:
    """Return every version in ``versions``, or only the newest when ``env_var`` names one binary
    (it runs once, under the newest's id)."""
    ordered = sorted(versions, key=_version_key)
    return ordered[-1:] if os.environ.get(env_var) else ordered


def _find_binary(env_var: str, name: str, package: str, prefix: Path = CI_NPM_PREFIX) -> Path:
    """Return the agent binary named by *env_var*, in the CI npm cache *prefix*, or on PATH.

    Skips the test, saying where it looked, when there is none.
    """
    explicit = os.environ.get(env_var)
    if explicit:
        if not Path(explicit).is_file():
            pytest.skip(f"{env_var}={explicit!r} is not a file")
        return Path(explicit)
    cached = prefix.expanduser() / "node_modules" / ".bin" / name
    if cached.exists():
        return cached
    found = shutil.which(name)
    if found is None:
        pytest.skip(
            f"{name} not found: set {env_var}, or run 'npm install --prefix {CI_NPM_PREFIX} "
            f"{package}', or put {name} on PATH"
        )
    return Path(found)


def _search_path(*binaries: Path) -> str:
    """Return a PATH with the binaries' folders (and node's) before the system defaults."""
    folders = [str(b.parent) for b in binaries]
    node = shutil.which("node")
    if node:
        folders.append(str(Path(node).parent))
    folders += os.defpath.strip(":").split(":") + ["/usr/local/bin", "/usr/bin", "/bin"]
    return ":".join(dict.fromkeys(f for f in folders if f))


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_CLAUDE", CLAUDE_VERSIONS), ids=lambda v: f"claude-{v}")
def claude_bin(request: pytest.FixtureRequest) -> Path:
    """Return the Claude Code CLI to test (once per version in ``CLAUDE_VERSIONS``), or skip."""
    version: str = request.param
    prefix = CLAUDE_VERSIONS[version]
    return _find_binary("SHELLKEEP_TEST_CLAUDE", "claude", f"@anthropic-ai/claude-code@{version}", prefix)


@pytest.fixture(scope="session")
def claude_version(claude_bin: Path) -> tuple[int, ...]:
    """Return the version of ``claude_bin`` (``claude --version``) as a tuple of numbers."""
    import subprocess

    out = subprocess.run([str(claude_bin), "--version"], capture_output=True, text=True, timeout=60).stdout
    return tuple(int(part) for part in out.split()[0].split("."))


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_CODEX", CODEX_VERSIONS), ids=lambda v: f"codex-{v}")
def codex_bin(request: pytest.FixtureRequest) -> Path:
    """Return the Codex CLI to test (once per version in ``CODEX_VERSIONS``), or skip.

    Skips also when node, which its launcher (``codex.js``) needs, is missing.
    """
    version: str = request.param
    prefix = CODEX_VERSIONS[version]
    found = _find_binary("SHELLKEEP_TEST_CODEX", "codex", f"@openai/codex@{version}", prefix)
    if found.resolve().suffix == ".js" and shutil.which("node") is None:
        pytest.skip("codex's launcher (codex.js) needs node, which is not on PATH")
    return found


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_GEMINI", GEMINI_VERSIONS), ids=lambda v: f"gemini-{v}")
def gemini_bin(request: pytest.FixtureRequest) -> Path:
    """Return the Gemini CLI to test (once per version in ``GEMINI_VERSIONS``), or skip."""
    version: str = request.param
    found = _find_binary("SHELLKEEP_TEST_GEMINI", "gemini", f"@google/gemini-cli@{version}", GEMINI_VERSIONS[version])
    if shutil.which("node") is None:
        pytest.skip("gemini needs node, which is not on PATH")
    return found


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_QWEN", QWEN_VERSIONS), ids=lambda v: f"qwen-{v}")
def qwen_bin(request: pytest.FixtureRequest) -> Path:
    """Return the Qwen Code CLI to test (once per version in ``QWEN_VERSIONS``), or skip."""
    version: str = request.param
    found = _find_binary("SHELLKEEP_TEST_QWEN", "qwen", f"@qwen-code/qwen-code@{version}", QWEN_VERSIONS[version])
    if shutil.which("node") is None:
        pytest.skip("qwen needs node, which is not on PATH")
    return found


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """Return the project folder (its real path) the agent runs in.

    It is ``tmp_path/project``, the folder the suite-wide ``home`` fixture (if any) made and
    changed into; it is made here when missing.
    """
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return Path(os.path.realpath(project))


@pytest.fixture
def shellkeep_home(tmp_path: Path) -> Path:
    """Return the ``SHELLKEEP_HOME`` for the agent's environment.

    The suite-wide ``home`` fixture's folder when it set one under ``tmp_path``, else
    ``tmp_path/home``.
    """
    configured = os.environ.get("SHELLKEEP_HOME")
    if configured and Path(configured).is_relative_to(tmp_path):
        return Path(configured)
    return tmp_path / "home"


@pytest.fixture
def anthropic_standin() -> Iterator[AnthropicStandin]:
    """Yield a started Anthropic Messages API stand-in on loopback."""
    with AnthropicStandin() as standin:
        yield standin


@pytest.fixture
def openai_standin() -> Iterator[OpenAIStandin]:
    """Yield a started OpenAI Responses API stand-in on loopback."""
    with OpenAIStandin() as standin:
        yield standin


def claude_state(project_dirs: Sequence[Path], api_key: str = TEST_API_KEY) -> dict[str, object]:
    """Return a ``~/.claude.json`` that skips Claude Code's first-run screens.

    Onboarding and theme choice are marked done, *api_key* is approved (by its last 20
    characters) and each project folder (real path) is trusted.
    """
    return {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "autoUpdates": False,
        "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
        "projects": {
            os.path.realpath(p): {
                "hasTrustDialogAccepted": True,
                "hasCompletedProjectOnboarding": True,
            }
            for p in project_dirs
        },
    }


def claude_config_dir(folder: Path, project_dirs: Sequence[Path]) -> Path:
    """Make *folder* a ``CLAUDE_CONFIG_DIR`` holding a ``.claude.json`` from ``claude_state``; return it.

    Claude Code keeps its settings file in ``CLAUDE_CONFIG_DIR`` when that is set.
    """
    folder.mkdir()
    (folder / ".claude.json").write_text(json.dumps(claude_state(project_dirs), indent=2))
    return folder


@pytest.fixture
def claude_home(tmp_path: Path, project_dir: Path) -> Iterator[Path]:
    """Yield a temporary HOME holding a ``.claude.json`` made by ``claude_state``."""
    home = tmp_path / "claude-home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps(claude_state([project_dir]), indent=2))
    yield home
    reap(home)


@pytest.fixture
def agent_env(
    claude_home: Path,
    anthropic_standin: AnthropicStandin,
    claude_bin: Path,
    shellkeep_home: Path,
) -> dict[str, str]:
    """Return the whole environment for running Claude Code against the stand-in."""
    return {
        "HOME": str(claude_home),
        "ANTHROPIC_API_KEY": TEST_API_KEY,
        "ANTHROPIC_BASE_URL": anthropic_standin.base_url,
        "DISABLE_AUTOUPDATER": "1",
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "PATH": _search_path(claude_bin),
    }


GEMINI_SETTINGS = {
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
}
"""``~/.gemini/settings.json`` that skips the auth and trust screens and the update check.

Session retention is left at Gemini CLI's default: the trap it sets after a resume (the
transcript deleted at the next start) is what shellkeep must protect against."""


@pytest.fixture
def gemini_standin() -> Iterator[GeminiStandin]:
    """Yield a started Gemini API stand-in on loopback."""
    with GeminiStandin() as standin:
        yield standin


@pytest.fixture
def gemini_home(tmp_path: Path) -> Iterator[Path]:
    """Yield a temporary HOME whose ``.gemini/settings.json`` is ``GEMINI_SETTINGS``."""
    home = tmp_path / "gemini-home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS, indent=2))
    yield home
    reap(home)


@pytest.fixture
def gemini_env(
    gemini_home: Path, gemini_standin: GeminiStandin, gemini_bin: Path, shellkeep_home: Path
) -> dict[str, str]:
    """Return the whole environment for running Gemini CLI against the stand-in.

    Gemini CLI relaunches itself (two node processes on the pty): left as it is, so that a
    crash and a hangup are tested with the whole process group.
    """
    return {
        "HOME": str(gemini_home),
        "GEMINI_API_KEY": TEST_GEMINI_KEY,
        "GOOGLE_GEMINI_BASE_URL": gemini_standin.base_url,
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "PATH": _search_path(gemini_bin),
    }


QWEN_SETTINGS = {
    "general": {"enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "security": {"auth": {"selectedType": "openai"}},
    "ui": {"autoModeAcknowledged": True, "enableFollowupSuggestions": False,
           "enableUserFeedback": False, "enableWelcomeBack": False},
    "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
}
"""``~/.qwen/settings.json``: no update check (``npm view``), one model request per prompt."""


@pytest.fixture
def qwen_home(tmp_path: Path) -> Iterator[Path]:
    """Yield a temporary HOME whose ``.qwen/settings.json`` is ``QWEN_SETTINGS``."""
    home = tmp_path / "qwen-home"
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text(json.dumps(QWEN_SETTINGS, indent=2))
    yield home
    reap(home)


@pytest.fixture
def qwen_env(qwen_home: Path, openai_standin: OpenAIStandin, qwen_bin: Path, shellkeep_home: Path) -> dict[str, str]:
    """Return the whole environment for running Qwen Code against the OpenAI stand-in.

    Qwen Code runs three node processes on the pty (entry, cli.js, its relaunch): left as it
    is, so that a crash and a hangup are tested with the whole process group.
    """
    return {
        "HOME": str(qwen_home),
        "OPENAI_API_KEY": TEST_OPENAI_KEY,
        "OPENAI_BASE_URL": openai_standin.api_base,
        "OPENAI_MODEL": openai_standin.model,
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "PATH": _search_path(qwen_bin),
    }


def codex_config(api_base: str, project_dirs: Sequence[Path], model: str) -> str:
    """Return a Codex ``config.toml`` that points it at a stand-in and trusts the projects."""
    lines = [
        f'model = "{model}"',
        'model_provider = "standin"',
        "",
        "[model_providers.standin]",
        'name = "standin"',
        f'base_url = "{api_base}"',
        'wire_api = "responses"',
        f'env_key = "{CODEX_KEY_ENV}"',
    ]
    for project in project_dirs:
        lines += ["", f'[projects."{os.path.realpath(project)}"]', 'trust_level = "trusted"']
    return "\n".join(lines) + "\n"


@pytest.fixture
def codex_home(tmp_path: Path, project_dir: Path, openai_standin: OpenAIStandin) -> Iterator[Path]:
    """Yield a temporary HOME whose ``.codex/config.toml`` points Codex at the stand-in.

    At teardown every process using this HOME (Codex's app-server daemon) is ended and the
    copy of the Codex binary the daemon installs under ``.codex/packages`` (about 400 MB) is
    removed.
    """
    home = tmp_path / "codex-home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        codex_config(openai_standin.api_base, [project_dir], openai_standin.model)
    )
    yield home
    reap(home)
    shutil.rmtree(home / ".codex" / "packages", ignore_errors=True)


@pytest.fixture
def codex_env(
    codex_home: Path, openai_standin: OpenAIStandin, codex_bin: Path, shellkeep_home: Path
) -> dict[str, str]:
    """Return the whole environment for running Codex against the stand-in."""
    return {
        "HOME": str(codex_home),
        "CODEX_HOME": str(codex_home / ".codex"),
        CODEX_KEY_ENV: TEST_OPENAI_KEY,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "SHELLKEEP_HOME": str(shellkeep_home),
        "PATH": _search_path(codex_bin),
    }


@pytest.fixture
def drive(tmp_path: Path) -> Iterator[Callable[..., ScreenDriver]]:
    """Yield a factory that starts a program under a ``ScreenDriver``; all are closed after.

    Call it as ``drive(argv, env=..., cwd=..., size=TermSize(120, 40))``. What each program
    printed is kept in ``tmp_path/screen-<n>.log`` for post-mortems.
    """
    drivers: list[ScreenDriver] = []

    def start(
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: dict[str, str],
        cwd: Path,
        size: TermSize = DEFAULT_SIZE,
        answer_queries: bool = True,
    ) -> ScreenDriver:
        driver = ScreenDriver(
            [os.fspath(a) for a in argv], env=env, cwd=cwd, size=size,
            log_path=tmp_path / f"screen-{len(drivers)}.log", answer_queries=answer_queries,
        )
        drivers.append(driver)
        return driver

    yield start
    for driver in drivers:
        driver.close()


# -- OpenCode and Copilot CLI (the chat-completions stand-in: standin_chat.py) -----------------

OPENCODE_VERSIONS = {"1.17.19": CI_NPM_PREFIX, "1.18.33": CI_NPM_NEWEST_PREFIX}
"""OpenCode versions the suite runs against (pinned, newest on 2026-12-03), by npm prefix."""
COPILOT_VERSIONS = {"1.0.88": CI_NPM_PREFIX, "1.0.102": CI_NPM_NEWEST_PREFIX}
"""Copilot CLI versions the suite runs against (pinned, newest on 2026-12-03), by npm prefix."""


def _versioned_binary(request: pytest.FixtureRequest, versions: dict[str, Path], env_var: str, name: str, package: str) -> Path:
    """Return the binary of the version ``request.param`` names (see ``_find_binary``)."""
    version: str = request.param
    return _find_binary(env_var, name, f"{package}@{version}", versions[version])


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_OPENCODE", OPENCODE_VERSIONS), ids=lambda v: f"opencode-{v}")
def opencode_bin(request: pytest.FixtureRequest) -> Path:
    """Return the OpenCode CLI to test (once per version in ``OPENCODE_VERSIONS``), or skip."""
    return _versioned_binary(request, OPENCODE_VERSIONS, "SHELLKEEP_TEST_OPENCODE", "opencode", "opencode-ai")


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_COPILOT", COPILOT_VERSIONS), ids=lambda v: f"copilot-{v}")
def copilot_bin(request: pytest.FixtureRequest) -> Path:
    """Return the Copilot CLI to test (once per version in ``COPILOT_VERSIONS``), or skip (also without node)."""
    found = _versioned_binary(request, COPILOT_VERSIONS, "SHELLKEEP_TEST_COPILOT", "copilot", "@github/copilot")
    if shutil.which("node") is None:
        pytest.skip("copilot's launcher (npm-loader.js) needs node, which is not on PATH")
    return found


@pytest.fixture
def chat_standin() -> Iterator[ChatStandin]:
    """Yield a started OpenAI Chat Completions stand-in on loopback."""
    with ChatStandin() as standin:
        yield standin


# -- aider: from PyPI (aider-chat), each version in its own venv that .ci/run makes -------------
CI_AIDER_VENVS = {
    "0.85.5": CI_CACHE / "aider-venv-0.85.5",
    "0.86.2": CI_CACHE / "aider-venv",
}
"""aider versions the suite runs against (an older one, the newest on PyPI on 2026-12-03), by venv."""


@pytest.fixture(scope="session", params=_versions_to_run("SHELLKEEP_TEST_AIDER", CI_AIDER_VENVS), ids=lambda v: f"aider-{v}")
def aider_bin(request: pytest.FixtureRequest) -> Path:
    """Return the aider to test (once per version in ``CI_AIDER_VENVS``), or skip.

    ``SHELLKEEP_TEST_AIDER`` names one binary instead (it runs once); else the venv's
    ``bin/aider``; else ``aider`` on PATH.
    """
    version: str = request.param
    explicit = os.environ.get("SHELLKEEP_TEST_AIDER")
    if explicit:
        if not Path(explicit).is_file():
            pytest.skip(f"SHELLKEEP_TEST_AIDER={explicit!r} is not a file")
        return Path(explicit)
    venv = CI_AIDER_VENVS[version].expanduser()
    if (venv / "bin" / "aider").exists():
        return venv / "bin" / "aider"
    found = shutil.which("aider")
    if found is None:
        pytest.skip(
            f"aider not found: set SHELLKEEP_TEST_AIDER, or run 'python3 -m venv {CI_AIDER_VENVS[version]} && "
            f"{CI_AIDER_VENVS[version]}/bin/pip install aider-chat=={version}' (.ci/run does), or put aider on PATH"
        )
    return Path(found)


_VERSIONED = {
    "claude_bin": CLAUDE_VERSIONS,
    "codex_bin": CODEX_VERSIONS,
    "gemini_bin": GEMINI_VERSIONS,
    "qwen_bin": QWEN_VERSIONS,
    "opencode_bin": OPENCODE_VERSIONS,
    "copilot_bin": COPILOT_VERSIONS,
    "aider_bin": CI_AIDER_VENVS,
}
"""The fixtures that run a test once per agent version, with the versions they take."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run a test marked ``newest_only`` with each agent's newest version alone (the older one
    deselected, not skipped): a variant of a behaviour that a sibling test already proves on
    every version, kept off the suite's time."""
    older: list[pytest.Item] = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.get_closest_marker("newest_only") is None:
            continue
        if any(name in params and params[name] != max(versions, key=_version_key) for name, versions in _VERSIONED.items()):
            older.append(item)
    if older:
        config.hook.pytest_deselected(items=older)
        dropped = {id(item) for item in older}
        items[:] = [item for item in items if id(item) not in dropped]
